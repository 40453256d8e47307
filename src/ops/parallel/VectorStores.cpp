// A parallel loop whose body is one store into a global tensor, `C[.., c + j] = value` or
// `atomic_add(C[.., c + j], value)` (under conditions that do not read j, or none), where the
// loop's domain holds neighbouring columns j in neighbouring slots (an mma accumulator's pairs,
// the plain layout's vectors): each thread stores a group of those slots as one vector (2 to 16
// bytes) instead of element by element: one `tl::store_vec`, or for atomic adds one vector
// reduction (`tl::atomic_add_v2`/`_v4`) on targets with `vector_atomic_add`. The tensor's side is what vectorWidthFor allows, as for copies, with
// its launch checks; the general variant, which vectorises no global access, keeps element stores.
#include "ops/parallel/Parallel.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

namespace {

// The lone statement of a body (a sequence of one unwrapped), or an empty statement.
Stmt only(Stmt at) {
    while (const auto* q = at.as<Seq>()) {
        if (q->stmts.size() != 1) return {};
        at = q->stmts[0];
    }
    return at;
}

// The most consecutive slots the domain's iterations can take as one group of columns: a
// power of two dividing the local digit the last dimension starts with (slot l % w is column
// j % w), that every other local digit steps over whole (so the slots of a group differ in
// that digit alone) and that divides the slots. 1 when the layout has none.
int64_t slotGroup(const layout::Fragment& D) {
    const auto& dims = D.dims();
    if (dims.empty() || dims.back().empty()) return 1;
    const layout::Term& inner = dims.back().front();  // scale 1: the dimension's lowest digit
    if (inner.onThread || inner.stride != 1) return 1;
    int64_t w = 1;
    while (inner.extent % (w * 2) == 0) w *= 2;
    for (const auto& terms : dims)
        for (const auto& t : terms)
            while (w > 1 && !t.onThread && &t != &inner && t.stride % w != 0) w /= 2;
    while (w > 1 && D.locals() % w != 0) w /= 2;
    return w;
}

} // namespace

std::optional<Stmt> lowerVectorStores(LowerContext& ctx, const ParallelNest& nest, const VectorStoreLoop& loop) {
    const layout::Fragment& D = loop.domain;
    if (nest.vars.empty()) return std::nullopt;
    const VarPtr& column = nest.vars.back();
    // The author's body: one global store, plain or an f32 atomic add the target has vectors of,
    // under conditions that do not read the column (grouped GEMM's `if (i < actual_rows)`), which
    // every lane of a group meets alike.
    Stmt authored = only(nest.body);
    size_t guards = 0;
    for (; const auto* guard = authored.as<IfThenElse>(); ++guards) {
        if (guard->elseCase || uses(guard->cond, column.get())) return std::nullopt;
        authored = only(guard->thenCase);
    }
    const auto* source = authored.as<Store>();
    if (!source || source->buffer->scope != MemScope::Global) return std::nullopt;
    const Buffer& dst = source->buffer;
    const bool atomic = source->storeKind == StoreKind::AtomicAdd;
    if (source->storeKind != StoreKind::Plain &&
        !(atomic && dst->dtype == DType::F32 && ctx.target.has(Feature::VectorAtomicAdd)))
        return std::nullopt;
    // The same after the loop's rewriting (slots, bounds checks): the author's conditions, then
    // the store under its check or not.
    Stmt lowered = only(loop.body);
    std::vector<const IfThenElse*> conditions;
    for (size_t k = 0; k < guards; ++k) {
        const auto* guard = lowered.as<IfThenElse>();
        if (!guard || guard->elseCase) return std::nullopt;
        conditions.push_back(guard);
        lowered = only(guard->thenCase);
    }
    if (const auto* guard = lowered.as<IfThenElse>(); guard && !guard->elseCase) lowered = only(guard->thenCase);
    const auto* st = lowered.as<Store>();
    if (!st || st->buffer != dst || st->value->lanes != 1) return std::nullopt;

    // Columns: the loop's last variable, the domain's last dimension; the store's last index
    // must step with it, every other index stay.
    int64_t group = slotGroup(D);
    // A loop over part of its domain: a group inside the loop's columns stays inside.
    while (group > 1 && nest.extents.back() % group != 0) group /= 2;
    Expr start = startAlong(st->indices.back(), column.get());
    if (group < 2 || !start) return std::nullopt;
    for (size_t d = 0; d + 1 < st->indices.size(); ++d)
        if (uses(st->indices[d], column.get())) return std::nullopt;
    // The tensor's side: contiguous rows, a start on the vector grid, the launch checks.
    Region row{dst, st->indices, std::vector<int64_t>(st->indices.size(), 1)};
    row.starts.back() = start;
    row.extents.back() = group;
    const int64_t vec = vectorWidthFor(ctx, row, group, dst->dtype);
    if (vec < 2) return std::nullopt;

    // Group g runs slots g * vec + k, k < vec: column j + k of the row slot g * vec holds (the
    // layout says so: slotGroup). Its lets are slot g * vec's; lane k's value is the body's
    // with that slot and column.
    VarPtr g = ctx.freshVar("v");
    VarBounds bounds = loop.bounds;
    bounds.push_back({g.get(), Interval{0, D.locals() / vec - 1}});
    const Expr first = Expr(g) * vec;
    std::vector<Expr> lanes;
    for (int64_t k = 0; k < vec; ++k)
        lanes.push_back(simplify(substitute(st->value, {{loop.slot, first + k}, {column, Expr(column) + k}}), bounds));
    // One call stores the lanes: tl::store_vec(&C[..], a, b, ..) (the values packed into one
    // vector in registers: an array written by elements and read as a vector, hipcc kept in
    // scratch), or tl::atomic_add_v2/_v4(&C[..], a, b, ..).
    std::vector<Expr> at = st->indices;
    std::vector<Expr> args{call("address_of", DType::I64, {load(dst, at)})};
    for (const Expr& lane : lanes) args.push_back(cast(dst->dtype, lane));
    Stmt body = evaluate(call(atomic ? "atomic_add_vec" : "store_vec", DType::I32, args), st->loc);
    // The group's check: the writing replica, the whole vector inside the tensor (the launch
    // check on the last dimension makes vectors end where rows do), the loop's range.
    Expr ok = simplify(logicalAnd(loop.writer, inBounds(dst, at, vec)), bounds);
    if (!(asConstInt(ok) && *asConstInt(ok))) body = ifThenElse(ok, body, {}, st->loc);
    for (size_t k = conditions.size(); k-- > 0;)
        body = ifThenElse(simplify(substitute(conditions[k]->cond, {{loop.slot, first}}), bounds), body, {},
                          conditions[k]->loc);
    if (!(asConstInt(loop.inRange) && *asConstInt(loop.inRange))) body = ifThenElse(loop.inRange, body, {}, nest.loc);
    for (size_t d = nest.vars.size(); d-- > 0;)
        body = letStmt(nest.vars[d], simplify(substitute(loop.binding[d].second, {{loop.slot, first}}), bounds), body,
                       nest.loc);
    Stmt result = forLoop(g, intImm(0), intImm(D.locals() / vec), ctx.slotLoopKind(), body, nest.loc);

    std::string over;
    for (size_t d = 0; d < nest.vars.size(); ++d) over += (d ? ", " : "") + nest.vars[d]->name;
    const int64_t bytes = vec * dtypeBytes(dst->dtype);
    ctx.decide(fmt::format("{} of {} in the parallel loop over {}", atomic ? "atomic adds" : "stores", dst->name, over),
               fmt::format("{} x {} ({} bytes){}", vec, dtypeName(dst->dtype), bytes,
                           atomic ? ", one vector reduction (red.global.add.v" + std::to_string(vec) + ".f32)"
                                  : ", one vector store"),
               "lowering",
               fmt::format("each thread holds columns {} .. {} + {} of a row in consecutive slots (the loop runs as {}), "
                           "and {}'s rows take {}-byte vectors (what the shapes do not show is checked at launch)",
                           column->name, column->name, vec - 1, D.str(), dst->name, bytes),
               nest.loc);
    return simplify(result, ctx.bounds());
}

} // namespace tlc::ops
