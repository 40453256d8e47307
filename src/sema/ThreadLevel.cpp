// The expert level: code that says what each thread does (docs/language.md, "The expert
// level"). The block's shape (`threads = (32, 4)`), the thread's position, shuffles, warp and
// block reductions and synchronisation; and the rules that keep such code from deadlocking or
// racing on a GPU: everything the whole block must reach (tile ops, allocations, collectives,
// barriers) is under conditions that are the same in every thread, and an element store to a
// global tensor outside `parallel` loops tells the threads apart by its index or a condition.
#include "sema/Checker.h"

#include <fmt/format.h>

namespace tlc::sema {

using namespace ast;

namespace {

int64_t product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

std::string threadsText(const std::vector<int64_t>& dims) {
    if (dims.size() == 1) return std::to_string(dims[0]);
    std::string out;
    for (int64_t d : dims) out += (out.empty() ? "" : ", ") + std::to_string(d);
    return "(" + out + ")";
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

} // namespace

// `threads = 128` or `threads = (32, 4)`: a positive constant, or a tuple of 1 to 3 of them
// (x fastest, as CUDA's blockDim). The tuple's product is the argument's constant, which is
// what the launch and tile inference use; the grid keeps the dimensions.
void KernelChecker::checkThreadsArg(Call& c, Expr& arg) {
    auto* list = arg.as<List>();
    if (!list) {
        static constexpr BuiltinParam asInt{"threads", ParamKind::ConstInt, std::nullopt, true};
        checkArg(c, builtinInfo(Builtin::Grid), asInt, arg);
        return;
    }
    arg.type = checkList(*list);
    if (list->elements.empty() || list->elements.size() > 3) {
        diags_.report(DiagId::err_threads_shape, arg.range,
                      fmt::format("{} element{}", list->elements.size(), list->elements.size() == 1 ? "" : "s"));
        arg.type = Type::error();
        return;
    }
    bool ok = true, known = true;
    int64_t count = 1;
    Shape extents;
    for (auto& el : list->elements) {
        if (el->type.isError() || !expectInteger(*el, "a thread count")) {
            ok = false;
            continue;
        }
        ConstInt v = requireConstInt(*el, "a thread count", true);
        ok = ok && v.ok();
        known = known && v.known();
        if (v.known()) count = std::min<int64_t>(count * v.value, int64_t(1) << 40);
        extents.push_back(extentOf(*el));
    }
    if (!ok) {
        arg.type = Type::error();
        return;
    }
    arg.type = Type::shapeType(std::move(extents));
    if (known) arg.constant = count;
}

Type KernelChecker::threadBuiltinResult(Call& c, const BuiltinInfo& info) {
    if (gridThreads_.empty() && !gridThreadsPending_) {
        if (!threadsMissingReported_) diags_.report(DiagId::err_thread_level_needs_threads, c.calleeRange, c.callee);
        threadsMissingReported_ = true;
    }
    const Target* target = options_.target;
    const int64_t threads = product(gridThreads_);
    switch (info.id) {
    case Builtin::ThreadId:
        if (auto dim = constIntArg(c, "dim"); dim && !gridThreads_.empty() &&
                                              (*dim < 0 || *dim >= int64_t(gridThreads_.size()))) {
            size_t rank = gridThreads_.size();
            diags_.report(DiagId::err_thread_dim, boundArg(c, "dim")->range, *dim, rank, rank == 1 ? "" : "s",
                          threadsText(gridThreads_), rank - 1);
            return Type::error();
        }
        return Type::scalar(DType::I32);
    case Builtin::LaneId:
    case Builtin::WarpId: return Type::scalar(DType::I32);
    case Builtin::WarpSize:
        if (target) c.constant = int64_t(target->threadWarpSize);
        return Type::scalar(DType::I32);
    case Builtin::SyncThreads:
    case Builtin::SyncWarp: return Type::voidType();
    default: break;
    }
    // Votes take a condition: the mask of the warp's lanes where it holds (lane i is bit i), or
    // whether it holds in any / every lane. Other collectives: a scalar in, the same type out.
    const bool vote = info.id == Builtin::Ballot || info.id == Builtin::Any || info.id == Builtin::All;
    const Expr& value = *c.boundArgs[0];
    DType t = value.type.dtype;
    bool reduction = info.id != Builtin::ShflXor && info.id != Builtin::ShflDown && info.id != Builtin::ShflUp &&
                     info.id != Builtin::ShflIdx;
    if (!vote && (dtypeBits(t) > 64 || dtypeBits(t) < 8 || (reduction && t == DType::Bool))) {
        diags_.report(DiagId::err_collective_value, value.range, c.callee, describe(value));
        return Type::error();
    }
    // The width a collective works over: the one given, or the warp (the block when it is
    // smaller); block reductions work over warps of that default width too, votes over it.
    const int64_t warp = target ? target->threadWarpSize : 64;
    const Expr* width = boundArg(c, "width");
    std::optional<int64_t> w;
    if (width && width->constant) w = asInt(*width->constant);
    else if (!width && !gridThreads_.empty() && target) w = std::min(warp, threads);
    if (w && !(isPowerOfTwo(*w) && *w <= warp && (gridThreads_.empty() || threads % *w == 0))) {
        diags_.report(DiagId::err_collective_width, width ? width->range : c.calleeRange, *w, c.callee, warp,
                      target ? target->name : std::string("(none)"), threads);
        return Type::error();
    }
    if (info.id == Builtin::Ballot) return Type::scalar(DType::U64);
    return Type::scalar(vote ? DType::Bool : t);
}

void KernelChecker::noteSyncPoint(SourceRange range, std::string what) {
    syncPoints_.push_back({range, std::move(what), controls_});
}

std::string KernelChecker::varyingReason(const std::vector<const Expr*>& exprs,
                                         const std::map<const Decl*, Varying>& varying) const {
    for (const Expr* e : exprs) {
        if (const Expr* part = threadVaryingPart(*e, true)) return describeVarying(*part);
        std::set<const Decl*> deps;
        collectDeps(*e, deps);
        for (const Decl* d : deps)
            if (auto it = varying.find(d); it != varying.end())
                return fmt::format("'{}', which {}", d->name, it->second.why);
    }
    return {};
}

void KernelChecker::checkThreadLevel() {
    if (syncPoints_.empty() && threadStores_.empty() && threadAtomics_.empty()) return;
    const std::map<const Decl*, Varying> varying = varyingDecls(true);
    for (ThreadAtomic& a : threadAtomics_) {
        std::vector<const Expr*> all;
        for (const auto& arg : a.call->args) all.push_back(arg.value.get());
        for (const Control& c : a.controls) all.insert(all.end(), c.exprs.begin(), c.exprs.end());
        a.call->perThread = !varyingReason(all, varying).empty();
    }
    for (const SyncPoint& p : syncPoints_)
        for (const Control& c : p.controls) {
            if (c.whileLoop) continue;  // every while's condition is checked (checkWhileConditions)
            std::string why = varyingReason(c.exprs, varying);
            if (why.empty()) continue;
            diags_.report(DiagId::err_divergent_sync, p.range, p.what, c.what, why);
            diags_.note(c.range, "compute the condition from values every thread shares, or move the statement out of it");
            break;
        }
    for (const ThreadStore& s : threadStores_) {
        std::vector<const Expr*> all = s.index;
        for (const Control& c : s.controls) all.insert(all.end(), c.exprs.begin(), c.exprs.end());
        if (!varyingReason(all, varying).empty()) continue;
        diags_.report(DiagId::err_global_store_race, s.range, s.tensor,
                      "it is not inside a 'parallel' loop, and neither its index nor a condition around it "
                      "tells the threads apart, so every thread stores to the same element");
        diags_.note(s.range, "use copy() or atomic_add(), store inside 'for ... in parallel(...)', or index by "
                             "thread_id() (or guard with 'if thread_id() == 0')");
    }
}

} // namespace tlc::sema
