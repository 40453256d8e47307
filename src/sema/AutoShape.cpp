// alloc_shared(auto, dtype) and alloc_fragment(auto, dtype): a buffer whose shape is the extent
// of the first copy into or out of it (`copy(A[by * 128 : +128, k * 32 : +32], A_s)` makes A_s
// [128, 32]). Unit dimensions of the region are dropped (`X[i, 0 : +1024]` gives [1024]).
#include "sema/Checker.h"

#include <fmt/format.h>

#include <set>

namespace tlc::sema {

using namespace ast;

namespace {

std::optional<int64_t> bytesOf(const Type& t) {
    int64_t n = 1;
    for (const auto& e : t.shape) n *= *e.value;
    return (n * dtypeBits(t.dtype) + 7) / 8;
}

} // namespace

bool KernelChecker::isAutoShapeArg(const Expr& e) {
    const auto* n = e.as<Name>();
    return n && n->name == "auto";
}

void KernelChecker::declareAutoShape(Decl* decl, const LetStmt& let) { autoShapes_[decl] = {decl, &let, nullptr}; }

KernelChecker::AutoShape* KernelChecker::pendingAutoShape(const Expr& e) {
    const auto* n = e.as<Name>();
    if (!n || !n->decl) return nullptr;
    auto it = autoShapes_.find(n->decl);
    return it != autoShapes_.end() && !it->second.filledBy ? &it->second : nullptr;
}

bool KernelChecker::resolveAutoShapes(Call& c, Builtin id) {
    bool ok = true;
    std::set<const AutoShape*> reported;  // gemm(A_s, A_s, C): once
    for (const Expr* arg : c.boundArgs) {
        if (!arg) continue;
        AutoShape* pending = pendingAutoShape(*arg);
        if (!pending || !reported.insert(pending).second) continue;
        const std::string& name = pending->let->name;
        if (id != Builtin::Copy) {
            diags_.report(DiagId::err_auto_shape_undetermined, arg->range, name,
                          fmt::format("nothing before this '{}' determines it: copy a region of known extents into "
                                      "or out of it first",
                                      c.callee));
            diags_.note(pending->let->nameRange, "declared here with 'auto'");
            ok = false;
            continue;
        }
        const Expr& other = arg == c.boundArgs[0] ? *c.boundArgs[1] : *c.boundArgs[0];
        const Type& t = other.type;
        std::string why;
        if (pendingAutoShape(other)) why = "both operands of this copy wait for their shapes";
        else if (t.kind == Type::Kind::Region && t.extentsFromOtherOperand)
            why = fmt::format("'{}' is a single point, which does not say how much to copy; give it slices such as "
                              "'X[i : +64, j : +32]'",
                              brief(other));
        Shape shape;
        for (const Extent& e : t.shape) {
            if (!why.empty()) break;
            if (!e.isConstant()) why = fmt::format("the extents of '{}' are not all constants: {}", brief(other),
                                                   shapeString(t.shape));
            else if (*e.value != 1) shape.push_back(e);
        }
        if (why.empty() && shape.empty() && !t.shape.empty()) shape.push_back(Extent::constant(1));
        if (why.empty() && shape.empty()) why = fmt::format("'{}' has no extents", brief(other));
        if (!why.empty()) {
            diags_.report(DiagId::err_auto_shape_undetermined, arg->range, name, why);
            diags_.note(pending->let->nameRange, "declared here with 'auto'");
            ok = false;
            continue;
        }
        pending->decl->type.shape = shape;
        pending->filledBy = &c;
        const_cast<Expr*>(arg)->type.shape = shape;
        for (auto& a : sharedAllocs_)
            if (a.let == pending->let) a.bytes = bytesOf(pending->decl->type);
    }
    return ok;
}

bool KernelChecker::autoShapeConflict(Call& c, Expr& src, Expr& dst) {
    for (Expr* e : {&src, &dst}) {
        const auto* n = e->as<Name>();
        if (!n || !n->decl) continue;
        auto it = autoShapes_.find(n->decl);
        if (it == autoShapes_.end() || !it->second.filledBy || it->second.filledBy == &c) continue;
        const Expr& other = e == &src ? dst : src;
        diags_.report(DiagId::err_auto_shape_conflict, c.calleeRange, it->second.let->name,
                      shapeString(e->type.shape), it->second.filledBy->range.begin.line, shapeString(other.type.shape),
                      brief(other));
        diags_.note(it->second.filledBy->range, "the copy that determined it");
        return true;
    }
    return false;
}

void KernelChecker::finishAutoShapes() {
    // A buffer used before any copy determined it was reported at that use.
    for (const auto& [decl, a] : autoShapes_)
        if (!a.filledBy && !a.decl->used)
            diags_.report(DiagId::err_auto_shape_undetermined, a.let->nameRange, a.let->name,
                          "no copy into or out of it determines it");
}

} // namespace tlc::sema
