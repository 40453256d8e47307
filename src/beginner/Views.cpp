// Views of tensor parameters in whole-tensor kernels: `transpose(X)`, `permute(X, [..])` and
// NumPy's slices as operands of an elementwise expression, and a transposed operand of `@`.
// Each becomes an Operand of the elementwise lowering (ElementwiseLowering.h): the tensor's
// tile, copied in its own layout from the view's start, indexed through the permutation.
#include "beginner/ElementwiseLowering.h"

#include "ast/Clone.h"

#include <optional>

namespace tlc::beginner::elementwise {

// A view of a tensor parameter: `X`, `transpose(X)` (the last two dimensions swapped),
// `permute(X, [2, 0, 1])` (view dimension v is X's dimension dims[v]), `X[a:b, :]` (NumPy's
// slices: bounds static or sizes, negative from the end, missing ones whole). A view of a
// tensor the kernel assigns would read what other blocks write: an error.
void Lowering::addView(const Expr& e) {
    const std::string key = text(e);
    auto notView = [&](const std::string& why) {
        error(e.range, DiagId::err_whole_tensor_form, key, why);
    };
    const Expr* base = &e;
    const Call* call = e.as<Call>();
    const Index* index = e.as<Index>();
    if (call) base = call->args.empty() ? nullptr : call->args[0].value.get();
    if (index) base = index->base.get();
    const Param* p = base && base->as<Name>() ? tensor(base->as<Name>()->name) : nullptr;
    if (!p) {
        notView("transposes, permutations and slices are of tensor parameters; compute other operands into a "
                "tensor first, or write it at the developer level");
        return;
    }
    if (&e == base && !assigned_.count(p->name)) readBeforeAssigned_.insert(p->name);
    if (operands_.count(key)) return;
    const size_t rank = p->type.dims.size();
    Operand op{p, fresh(p->name + (call ? "_t" : index ? "_slice" : "_tile")), {}, {}, {}, false, {}, e.range};
    for (size_t d = 0; d < rank; ++d) op.perm.push_back(d);
    op.lo.resize(rank);
    if (call && call->callee == "transpose") {
        if (call->args.size() != 1 || !call->args[0].keyword.empty() || rank < 2) {
            notView("write 'transpose(X)' of a tensor of rank 2 or 3: its last two dimensions swapped (permute for "
                    "other orders)");
            return;
        }
        std::swap(op.perm[rank - 1], op.perm[rank - 2]);
    } else if (call) {  // permute(X, [..]) or permute(X, dims = [..])
        const List* order = call->args.size() == 2 && (call->args[1].keyword.empty() || call->args[1].keyword == "dims")
                                ? call->args[1].value->as<List>()
                                : nullptr;
        std::vector<bool> seen(rank, false);
        bool ok = order && order->elements.size() == rank;
        for (size_t v = 0; ok && v < rank; ++v) {
            const auto* lit = order->elements[v]->as<IntLit>();
            ok = lit && lit->value >= 0 && size_t(lit->value) < rank && !seen[size_t(lit->value)];
            if (ok) seen[op.perm[v] = size_t(lit->value)] = true;
        }
        if (!ok) {
            notView(fmt::format("write 'permute(X, [..])' with the {} dimensions of X in their new order, each once", rank));
            return;
        }
    }
    for (size_t v = 0; v < rank; ++v) op.dims.push_back(cloneSyntax(*p->type.dims[op.perm[v]]));
    if (index) {
        if (index->subscripts.size() > rank) {
            notView(fmt::format("'{}' has {} dimensions", p->name, rank));
            return;
        }
        for (size_t d = 0; d < index->subscripts.size(); ++d) {
            const Subscript& sub = index->subscripts[d];
            if (sub.form == Subscript::Form::Point) {
                notView("a whole-tensor kernel reads whole tensors and slices ('X[:, a:b]'); write element access "
                        "at the developer level");
                return;
            }
            const Expr& size = *p->type.dims[d];
            auto bound = [&](const Expr* b, bool isLo) -> ExprPtr {
                if (!b) return isLo ? std::make_unique<IntLit>(e.range, 0) : cloneSyntax(size);
                if (const auto* u = b->as<Unary>(); u && u->op == UnaryOp::Neg && u->operand->as<IntLit>()) {
                    // `-c` is `size - c`: c <= size, checked at launch when the size is.
                    if (!size.as<IntLit>())
                        requires_.push_back(std::make_unique<RequireStmt>(
                            e.range, std::make_unique<Binary>(e.range, BinaryOp::Le, e.range, cloneSyntax(*u->operand), cloneSyntax(size))));
                    return std::make_unique<Binary>(e.range, BinaryOp::Sub, e.range, cloneSyntax(size), cloneSyntax(*u->operand));
                }
                return cloneSyntax(*b);
            };
            ExprPtr lo = bound(sub.lo.get(), true);
            ExprPtr hi = sub.form == Subscript::Form::Length
                             ? std::make_unique<Binary>(e.range, BinaryOp::Add, e.range, cloneSyntax(*lo), cloneSyntax(*sub.length))
                             : bound(sub.hi.get(), false);
            const auto* l = lo->as<IntLit>();
            const auto* h = hi->as<IntLit>();
            const auto* n = size.as<IntLit>();
            if ((l && h && l->value > h->value) || (h && n && h->value > n->value)) {
                notView(fmt::format("the slice {}:{} of a dimension of {} is empty or past its end", text(*lo), text(*hi), text(size)));
                return;
            }
            // Bounds that are sizes are checked at launch: `require hi <= N;` (not for `:-1`).
            const bool fromEnd = sub.hi && sub.hi->as<Unary>();
            if (text(*hi) != text(size) && !(h && n) && !fromEnd)
                requires_.push_back(std::make_unique<RequireStmt>(
                    e.range, std::make_unique<Binary>(e.range, BinaryOp::Le, e.range, cloneSyntax(*hi), cloneSyntax(size))));
            // Bounds both counted from the end (`X[-4:-1]`, `X[-1:]`): a constant extent.
            auto endOffset = [&](const Expr& b) -> std::optional<int64_t> {
                if (text(b) == text(size)) return 0;
                const auto* sub = b.as<Binary>();
                const auto* c = sub && sub->op == BinaryOp::Sub && text(*sub->lhs) == text(size) ? sub->rhs->as<IntLit>() : nullptr;
                return c ? std::optional<int64_t>(c->value) : std::nullopt;
            };
            const std::optional<int64_t> loEnd = endOffset(*lo), hiEnd = endOffset(*hi);
            if (loEnd && hiEnd && *loEnd < *hiEnd) {
                notView(fmt::format("the slice {}:{} of a dimension of {} is empty", text(*lo), text(*hi), text(size)));
                return;
            }
            if (!(l && l->value == 0) && !(l && h) && !(loEnd && hiEnd))
                requires_.push_back(std::make_unique<RequireStmt>(
                    e.range, std::make_unique<Binary>(e.range, BinaryOp::Le, e.range, cloneSyntax(*lo), cloneSyntax(*hi))));
            op.dims[d] = l && h            ? ExprPtr(std::make_unique<IntLit>(e.range, h->value - l->value))
                         : loEnd && hiEnd ? ExprPtr(std::make_unique<IntLit>(e.range, *loEnd - *hiEnd))
                         : l && l->value == 0
                             ? std::move(hi)
                             : std::make_unique<Binary>(e.range, BinaryOp::Sub, e.range, std::move(hi), cloneSyntax(*lo));
            if (!(l && l->value == 0)) op.lo[d] = std::move(lo);
        }
        op.sliced = true;
    }
    operands_[key] = std::move(op);
    order_.push_back(key);
}

// An operand of `@`: a tensor parameter of rank 2, or 3 (a batch of matrices), or one
// transposed (its last two dimensions swapped: the GEMM reads it so).
const Param* Lowering::matOperand(const Expr& e, bool& transposed) {
    const Expr* base = &e;
    if (const auto* c = e.as<Call>(); c && c->callee == "transpose" && c->args.size() == 1 && c->args[0].keyword.empty()) {
        base = c->args[0].value.get();
        transposed = true;
    }
    const auto* n = base->as<Name>();
    const Param* p = n ? tensor(n->name) : nullptr;
    return p && (p->type.dims.size() == 2 || p->type.dims.size() == 3) ? p : nullptr;
}

} // namespace tlc::beginner::elementwise
