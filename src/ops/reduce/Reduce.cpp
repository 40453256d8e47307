#include "ops/reduce/Reduce.h"

#include "ir/Simplify.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"
#include "ops/parallel/Parallel.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tlc::ops {

using namespace ir;

const char* reduceName(ReduceKind k) {
    switch (k) {
    case ReduceKind::Max: return "reduce_max";
    case ReduceKind::Min: return "reduce_min";
    case ReduceKind::Sum: return "reduce_sum";
    case ReduceKind::AbsSum: return "reduce_abssum";
    case ReduceKind::AbsMax: return "reduce_absmax";
    }
    return "reduce";
}

TileOpPtr ReduceOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    std::optional<ElementProducer> p = producer_;
    if (p) p->value = fn(p->value);
    auto op = std::make_shared<ReduceOp>(mapRegion(src_, fn), mapRegion(dst_, fn), kind_, dim_, clear_, std::move(p));
    if (prefetchNext_) op->prefetchNext_ = mapRegion(*prefetchNext_, fn);
    if (fill_) op->fill_ = ReduceFill{mapRegion(fill_->from, fn), fill_->tile, fill_->storesTile};
    return op;
}

std::shared_ptr<const ReduceOp> ReduceOp::withPrefetchNext(Region next) const {
    auto op = std::make_shared<ReduceOp>(*this);
    op->prefetchNext_ = std::move(next);
    return op;
}

std::shared_ptr<const ReduceOp> ReduceOp::withFill(ReduceFill fill) const {
    auto op = std::make_shared<ReduceOp>(*this);
    op->fill_ = std::move(fill);
    return op;
}

Stmt ReduceOp::prefetchAt(const std::vector<Expr>& offsets, int64_t count) const {
    const Region& next = *prefetchNext_;
    const int64_t lineElements = std::max<int64_t>(1, 64 / dtypeBytes(next.buffer->dtype));
    std::vector<Stmt> lines;
    for (int64_t k = 0; k < count; k += lineElements) {
        std::vector<Expr> o = offsets;
        o.back() = o.back() + k;
        lines.push_back(evaluate(call("prefetch", DType::I32,
                                      {call("address_of", DType::I64, {load(next.buffer, regionIndices(next, o))})})));
    }
    return ifThenElse(tileInside(next), seq(lines));
}

std::vector<const Region*> ReduceOp::reads() const {
    std::vector<const Region*> regions = {&src_, &dst_};
    if (producer_)
        for (const auto& r : producer_->reads) regions.push_back(&r);
    if (fill_) regions.push_back(&fill_->from);
    return regions;
}

std::vector<const Region*> ReduceOp::writes() const {
    std::vector<const Region*> regions = {&dst_};
    if (producer_ && producer_->stores) regions.push_back(&src_);
    if (fill_ && fill_->storesTile) regions.push_back(&fill_->tile);
    return regions;
}

std::string ReduceOp::str() const {
    std::string source = regionString(src_);
    if (producer_) source = producerString(src_.buffer, *producer_);
    return fmt::format("{}({}, {}, dim = {}{}{})", reduceName(kind_), source, regionString(dst_), dim_,
                       clear_ ? "" : ", clear = false",
                       prefetchNext_ ? ", prefetch = " + regionString(*prefetchNext_) : "") +
           (!fill_ ? ""
            : fill_->storesTile
                ? fmt::format(" (filling {} from {})", fill_->tile.buffer->name, regionString(fill_->from))
                : fmt::format(" (reading {} in place of {})", regionString(fill_->from), fill_->tile.buffer->name));
}

Expr ReduceOp::identity(ReduceKind kind, DType t) {
    bool fl = isFloat(t);
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::AbsSum:
    case ReduceKind::AbsMax: return zero(t);
    case ReduceKind::Max:
        return fl ? floatImm(-std::numeric_limits<double>::infinity(), t)
                  : intImm(isSigned(t) ? -(int64_t(1) << (dtypeBits(t) - 1)) : 0, t);
    case ReduceKind::Min:
        return fl ? floatImm(std::numeric_limits<double>::infinity(), t)
                  : intImm(isSigned(t) ? (int64_t(1) << (dtypeBits(t) - 1)) - 1
                                       : (dtypeBits(t) >= 64 ? INT64_MAX : (int64_t(1) << dtypeBits(t)) - 1), t);
    }
    return zero(t);
}

Expr ReduceOp::combine(ReduceKind kind, const Expr& acc, const Expr& value) {
    switch (kind) {
    case ReduceKind::Max:
    case ReduceKind::AbsMax: return maxExpr(acc, value);
    case ReduceKind::Min: return minExpr(acc, value);
    case ReduceKind::Sum:
    case ReduceKind::AbsSum: return acc + value;
    }
    return acc;
}

namespace {
bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
} // namespace

std::vector<Expr> ReduceOp::destinationIndices(const layout::Fragment& S, const layout::Fragment& D,
                                               const std::vector<Expr>& source) const {
    // The kept dimensions other than 1, in order, and 0 in the destination's dimensions of
    // extent 1 (it may keep the reduced one: [1, N] from [M, N] along 0).
    std::vector<Expr> keptValues, out;
    for (size_t d = 0; d < S.rank(); ++d)
        if (d != size_t(dim_) && S.shape()[d] != 1) keptValues.push_back(source[d]);
    for (size_t d = 0, next = 0; d < D.rank(); ++d) out.push_back(D.shape()[d] == 1 ? intImm(0) : keptValues.at(next++));
    return out;
}

Expr ReduceOp::element(const Expr& value, DType acc) const {
    Expr v = cast(acc, value);
    return kind_ == ReduceKind::AbsSum || kind_ == ReduceKind::AbsMax ? call("abs", acc, {v}) : v;
}

// One lane's step of lowerCpuRows: `lanes[lane] = lanes[lane] op v`. A float max or min is
// written `v > acc ? v : acc` (one vmaxps; tl::fmax compares twice, ors and blends), which is
// tl::fmax(acc, v) wherever acc is not NaN: a NaN v compares false and is skipped, as tl::fmax
// skips it. A lane starts at -inf (+inf) and only ever takes such a v, so it never is NaN.
Stmt ReduceOp::laneStep(LowerContext& ctx, const Buffer& lanes, const Expr& lane, const Expr& v, DType acc) const {
    Expr accumulated = load(lanes, {lane});
    const bool selects = isFloat(acc) && kind_ != ReduceKind::Sum && kind_ != ReduceKind::AbsSum;
    if (!selects) return store(lanes, {lane}, combine(kind_, accumulated, v));
    VarPtr value;  // v is read twice: computed once
    Expr once = v;
    if (!v.as<Var>() && !v.as<Load>()) {
        value = ctx.freshVar("m", acc);
        once = Expr(value);
    }
    Expr better = kind_ == ReduceKind::Min ? once < accumulated : accumulated < once;
    Stmt step = store(lanes, {lane}, select(better, once, accumulated));
    return value ? letStmt(value, v, step) : step;
}

// On the cpu, a reduction along the rows of a whole tile keeps kLanes partial results per row
// and combines them at the end: each lane is its own chain, so the C++ compiler vectorises the
// loop without reordering any one chain's operations (which it may not do for floats). 16 lanes
// are one AVX-512 vector of f32. max and min, whose result does not depend on the order, take 64
// where the row is a multiple of 64: four independent vector chains instead of one, since each
// step of tl::fmax (compare, then select) waits several cycles for the last.
std::optional<Stmt> ReduceOp::lowerCpuRows(LowerContext& ctx, const layout::Fragment& S, const layout::Fragment& D,
                                           const Buffer& src, const Buffer& part, DType acc) const {
    size_t last = S.rank() - 1;
    if (!isCpuTile(ctx, S) || !isCpuTile(ctx, D) || size_t(dim_) != last || S.shape()[last] % 16 != 0)
        return std::nullopt;
    const int64_t N = S.shape()[last];
    const bool orderFree = kind_ == ReduceKind::Max || kind_ == ReduceKind::Min || kind_ == ReduceKind::AbsMax;
    const int64_t kLanes = orderFree && N % 64 == 0 ? 64 : 16;
    Buffer lanes = makeBuffer(ctx.freshName(dst_.buffer->name + "_lanes"), acc, MemScope::Local, {intImm(kLanes)});
    std::vector<VarPtr> rowVars;
    std::vector<std::string> names = indexNames(S.rank());
    for (size_t d = 0; d < last; ++d) rowVars.push_back(ctx.freshVar(names[d]));
    Expr rowStart = intImm(0);
    for (size_t d = 0; d < last; ++d) rowStart = rowStart * S.shape()[d] + Expr(rowVars[d]);
    std::vector<Expr> rowIndices(rowVars.begin(), rowVars.end());
    rowIndices.push_back(intImm(0));  // the reduced dimension
    Expr target = D.localOf(destinationIndices(S, D, rowIndices));
    VarPtr lane = ctx.freshVar("v"), chunk = ctx.freshVar(names[last]);
    Expr column = Expr(chunk) * kLanes + Expr(lane);
    // A source element's offsets over the tile dimensions of a tensor region of the source's
    // shape (the fill's, the prefetch's): the row variables without unit dimensions, then `at`.
    auto tileOffsets = [&](const Expr& at) {
        std::vector<Expr> offsets;
        for (size_t d = 0; d < last; ++d)
            if (S.shape()[d] != 1) offsets.push_back(Expr(rowVars[d]));
        offsets.push_back(at);
        return offsets;
    };
    // The element of the fill's tensor this step reads; in place of the tile's, where the tile
    // is not stored (the producer reads the tile only at the element it computes).
    std::optional<Expr> fromElement;
    if (fill_) fromElement = load(fill_->from.buffer, regionIndices(fill_->from, tileOffsets(column)));
    const Buffer fillTile = fill_ ? ctx.localBuffer(fill_->tile.buffer) : nullptr;
    auto inPlace = [&](const Expr& e) {
        if (!fill_ || fill_->storesTile) return e;
        return replaceLoads(e, fillTile.get(), [&](const Load*) { return *fromElement; });
    };
    Expr v = element(inPlace(load(src, {rowStart * N + column})), acc);
    VarPtr stored;  // the value in the source's type, where the producer also stores it
    std::optional<Expr> produced;
    if (producer_) {  // the value the producer would have stored there
        std::vector<Expr> at(rowVars.begin(), rowVars.end());
        at.push_back(column);
        produced = producedAt(ctx, *producer_, at);
        if (!produced) return std::nullopt;
        produced = inPlace(*produced);
        v = element(*produced, acc);
        if (producer_->stores) {
            stored = ctx.freshVar("e", src->dtype);
            v = element(Expr(stored), acc);  // the value as the tile holds it
        }
    }
    Stmt step = laneStep(ctx, lanes, Expr(lane), v, acc);
    if (stored)
        step = letStmt(stored, cast(src->dtype, *produced), seq({store(src, {rowStart * N + column}, Expr(stored)), step}));
    if (fill_ && fill_->storesTile)  // the element of the fragment this step reads, from the tensor first
        step = seq({store(fillTile, {rowStart * N + column}, *fromElement), step});
    auto overLanes = [&](Stmt s, ForKind kind = ForKind::Serial) {
        return forLoop(lane, intImm(0), intImm(kLanes), kind, s);
    };
    // `omp simd`: g++ would otherwise unroll the lanes and not vectorise max/min.
    Stmt chunkStep = overLanes(step, ForKind::Vectorized);
    if (prefetchNext_) chunkStep = seq({prefetchAt(tileOffsets(Expr(chunk) * kLanes), kLanes), chunkStep});
    std::vector<Stmt> steps = {
        overLanes(store(lanes, {Expr(lane)}, identity(kind_, acc))),
        forLoop(chunk, intImm(0), intImm(N / kLanes), ForKind::Serial, chunkStep),
    };
    int64_t combined = kLanes;
    if (kLanes > 16) {  // 64 lanes into the first 16, one vector step each (any order: max and min)
        Expr folded = load(lanes, {Expr(lane)});
        for (int64_t k = 16; k < kLanes; k += 16) folded = combine(kind_, folded, load(lanes, {Expr(lane) + k}));
        steps.push_back(forLoop(lane, intImm(0), intImm(16), ForKind::Vectorized, store(lanes, {Expr(lane)}, folded)));
        combined = 16;
    }
    steps.push_back(forLoop(lane, intImm(0), intImm(combined), ForKind::Serial,
                            store(part, {target}, combine(kind_, load(part, {target}), load(lanes, {Expr(lane)})))));
    Stmt row = allocate(lanes, seq(steps));
    for (size_t d = last; d-- > 0;) row = forLoop(rowVars[d], intImm(0), intImm(S.shape()[d]), ForKind::Serial, row);
    return simplify(row, ctx.bounds());
}

Stmt ReduceOp::lower(LowerContext& ctx, SourceLoc loc) const {
    const auto& S = ctx.layoutOf(src_.buffer);
    const auto& D = ctx.layoutOf(dst_.buffer);
    Buffer src = ctx.localBuffer(src_.buffer), dst = ctx.localBuffer(dst_.buffer);
    DType acc = dtypeBits(dst->dtype) < 32 && isFloat(dst->dtype) ? DType::F32 : dst->dtype;
    Buffer part = makeBuffer(ctx.freshName(dst_.buffer->name + "_part"), acc, MemScope::Local, {intImm(D.locals())});
    std::vector<Stmt> steps;
    steps.push_back(comment(str(), loc));
    steps.push_back(fragmentLoop(ctx, D, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
        return store(part, {slot}, identity(kind_, acc));
    }));
    // 1. What this thread holds (on the cpu, whole rows at a time where it can).
    std::optional<Stmt> held = lowerCpuRows(ctx, S, D, src, part, acc);
    if (!held && producer_) steps.insert(steps.begin() + 1, producerLoop(ctx, *producer_, src_, loc));  // fill the source after all
    if (!held && fill_)  // the copy the fill took over, first
        steps.insert(steps.begin() + 1, CopyOp(fill_->from, fill_->tile).lower(ctx, loc));
    if (!held) held = fragmentLoop(ctx, S, 1, indexNames(S.rank()), [&](const Expr& slot, const std::vector<Expr>&) {
        // The destination slot from the source slot's own formula, so that it folds to an
        // expression of the slot alone (register arrays need constant indices once unrolled).
        VarBounds bounds = ctx.bounds();
        if (const Var* v = slot.as<Var>()) bounds.push_back({v, Interval{0, S.locals() - 1}});
        Expr target = simplify(D.localOf(destinationIndices(S, D, S.indicesAt(ctx.tx(), slot))), bounds);
        return store(part, {target}, combine(kind_, load(part, {target}), element(load(src, {slot}), acc)));
    });
    steps.push_back(*held);
    // 2. Across the threads that hold parts of the same row: shuffles inside each warp, then,
    // where a row's threads span warps, one partial per warp through shared memory.
    std::vector<layout::Term> inWarp, acrossWarps;
    bool splittable = true;
    for (const auto& t : S.dims()[dim_]) {
        if (!t.onThread) continue;
        if (!isPowerOfTwo(t.extent) || !isPowerOfTwo(t.stride)) splittable = false;
        if (t.stride * t.extent <= ctx.warpSize) {
            inWarp.push_back(t);
        } else if (t.stride >= ctx.warpSize) {
            acrossWarps.push_back(t);
        } else {  // a counter that runs past the warp: its low digits are lanes, the rest warps
            int64_t lanes = ctx.warpSize / t.stride;
            inWarp.push_back({true, t.stride, lanes, t.scale});
            acrossWarps.push_back({true, t.stride * lanes, t.extent / lanes, t.scale * lanes});
        }
    }
    if (!splittable) {  // no shuffles: every thread's partial goes through shared memory
        inWarp.clear();
        acrossWarps.clear();
        for (const auto& t : S.dims()[dim_])
            if (t.onThread) acrossWarps.push_back(t);
    }
    if (!inWarp.empty()) {
        steps.push_back(fragmentLoop(ctx, D, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
            std::vector<Stmt> shuffles;
            for (const auto& t : inWarp)
                for (int64_t offset = t.stride; offset < t.stride * t.extent; offset *= 2)
                    shuffles.push_back(store(part, {slot}, combine(kind_, load(part, {slot}),
                                                                   call("shfl_xor", acc, {load(part, {slot}), intImm(offset), intImm(ctx.warpSize)}))));
            return seq(shuffles);
        }));
    }
    if (!acrossWarps.empty()) {
        int64_t group = 1;
        Expr g;  // this thread's position among the partials of a row
        for (const auto& t : acrossWarps) {
            Expr c = (ctx.tx() / t.stride) % t.extent;
            g = g ? g + c * group : c;
            group *= t.extent;
        }
        // After the shuffles every lane of a warp's part of the row holds its result: the first writes it.
        Expr writer = boolImm(true);
        for (const auto& t : inWarp) writer = logicalAnd(writer, binary(BinaryOp::Eq, (ctx.tx() / t.stride) % t.extent, intImm(0)));
        writer = simplify(writer, ctx.bounds());
        int64_t rows = 1;
        for (int64_t e : D.shape()) rows *= e;
        // Transient: barriers before and after, and nothing kept for the next run of the reduction.
        Buffer buf = ctx.scratch(dst_.buffer->name + "_red", acc, {rows * group}, true);
        auto flatOf = [&](const std::vector<Expr>& idx) {
            Expr flat = intImm(0);
            for (size_t d = 0; d < idx.size(); ++d) flat = flat * D.shape()[d] + idx[d];
            return flat;
        };
        steps.push_back(barrier(loc));
        steps.push_back(fragmentLoop(ctx, D, 1, indexNames(D.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
            Stmt st = store(buf, {flatOf(idx) * group + g}, load(part, {slot}));
            return asConstInt(writer) && *asConstInt(writer) ? st : ifThenElse(writer, st);
        }));
        steps.push_back(barrier(loc));
        steps.push_back(fragmentLoop(ctx, D, 1, indexNames(D.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
            VarPtr p = ctx.freshVar("p");
            Stmt gather = store(part, {slot}, combine(kind_, load(part, {slot}), load(buf, {flatOf(idx) * group + Expr(p)})));
            // Every partial, this thread's own included, is in the scratch buffer.
            return seq({store(part, {slot}, identity(kind_, acc)),
                        forLoop(p, intImm(0), intImm(group), ForKind::Serial, gather)});
        }));
        steps.push_back(barrier(loc));
    }
    // 3. Into the destination.
    steps.push_back(fragmentLoop(ctx, D, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
        Expr v = load(part, {slot});
        if (!clear_) v = combine(kind_, cast(acc, load(dst, {slot})), v);
        return store(dst, {slot}, cast(dst->dtype, v));
    }));
    Stmt body = seq(steps, loc);
    return allocate(part, simplify(body, ctx.bounds()), loc);
}

} // namespace tlc::ops
