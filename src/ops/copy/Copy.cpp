#include "ops/copy/Copy.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/copy/Epilogue.h"
#include "ops/parallel/Parallel.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::ops {

using namespace ir;

namespace {
// How many element loads of global memory a thread of a general variant has in flight in one
// copy (issue 45): enough to cover the latency with the block's other threads, few enough that
// hipcc and ptxas keep them, their addresses and a gemm's accumulators in registers.
constexpr int64_t kElementLoadBatch = 16;

// The decision log's entry for a copy: how wide its moves are and why, and whether they go
// through cp.async (--explain). A pipeline's copies of one statement log once (same place).
void explainMoves(LowerContext& ctx, SourceLoc loc, const CopyOp& op, int64_t vec, DType type, std::string why,
                  const std::string& async) {
    std::string subject = fmt::format("{}({}, {})", op.name(), op.src().buffer->name, op.dst().buffer->name);
    if (ctx.target.backend == Backend::Cpu) {
        ctx.decide(subject, "element loops", "lowering", "on the cpu the C++ compiler vectorises the plain loops", loc);
        return;
    }
    std::string width = vec > 1 ? fmt::format("{} x {} ({} bytes)", vec, dtypeName(type), vec * dtypeBytes(type))
                                : std::string("1 element");
    if (ctx.generalShapes && vec == 1 &&
        (op.src().buffer->scope == MemScope::Global || op.dst().buffer->scope == MemScope::Global))
        why = "the general variant assumes nothing of the tensors' row lengths or alignment: one element at a time";
    ctx.decide(subject, width + (async.empty() ? "" : ", cp.async"), "lowering",
               async.empty() ? why : why + "; " + async, loc);
}

// The cpu's form of a whole fragment stored into a tensor whose rows are contiguous, the tile
// inside the tensor and the types equal: one `tl::store_row` per row, which writes past the
// caches when the launch's result is large (tl_cpu.h, streaming_stores). With a producer (the
// fragment computed as it is stored, any types) each row goes a cache line at a time: the
// line's values computed into a small local array (a vector loop), then `tl::store_line`,
// past the caches on the same condition, and one fence after the rows. Nothing when the copy
// does not fit that form.
std::optional<Stmt> cpuRowStores(LowerContext& ctx, SourceLoc loc, const CopyOp& op) {
    const Region& frag = op.src();
    const Region& mem = op.dst();
    const std::optional<ElementProducer>& producer = op.producer();
    if (ctx.target.backend != Backend::Cpu || frag.buffer->scope != MemScope::Fragment ||
        mem.buffer->scope != MemScope::Global || !frag.coversWholeBuffer() ||
        (!producer && frag.buffer->dtype != mem.buffer->dtype))
        return std::nullopt;
    const auto& f = ctx.layoutOf(frag.buffer);
    std::vector<size_t> fragDims = tileDims(frag);
    if (!isCpuTile(ctx, f) || fragDims.empty() || fragDims.back() != frag.rank() - 1 || !contiguousTensorRows(mem))
        return std::nullopt;
    const int64_t rowLength = frag.extents.back();
    const int64_t elemBytes = dtypeBytes(mem.buffer->dtype);
    if (rowLength * elemBytes < 64) return std::nullopt;  // under a cache line: plain loops
    const int64_t lineLength = 64 / std::max<int64_t>(elemBytes, 1);
    if (producer && !storesWholeLines(frag, mem)) return std::nullopt;
    Expr resultBytes = intImm(elemBytes, DType::I64);
    for (const auto& extent : mem.buffer->shape) resultBytes = resultBytes * cast(DType::I64, extent);
    Buffer local = ctx.localBuffer(frag.buffer);
    std::vector<std::string> names = indexNames(frag.rank());
    std::vector<VarPtr> rowVars;
    std::vector<Expr> rowStart;  // a row's first element in the fragment
    for (size_t d = 0; d + 1 < frag.rank(); ++d) {
        rowVars.push_back(ctx.freshVar(names[d]));
        rowStart.push_back(Expr(rowVars.back()));
    }
    rowStart.push_back(intImm(0));
    auto tensorIndices = [&](const std::vector<Expr>& at) {  // at: fragment indices
        std::vector<Expr> tileOffsets;
        for (size_t d : fragDims) tileOffsets.push_back(at[d]);
        return regionIndices(mem, tileOffsets);
    };
    auto tensorAddress = [&](const std::vector<Expr>& at) {
        return call("address_of", DType::I64, {load(mem.buffer, tensorIndices(at))});
    };
    const std::string subject = fmt::format("{}({}, {})", op.name(), frag.buffer->name, mem.buffer->name);
    if (!producer) {
        Stmt row = evaluate(call("store_row", DType::I32,
                                 {tensorAddress(rowStart),
                                  call("address_of", DType::I64, {load(local, {flatIndex(frag.buffer, rowStart)})}),
                                  intImm(rowLength), resultBytes}));
        for (size_t d = rowVars.size(); d-- > 0;)
            row = forLoop(rowVars[d], intImm(0), intImm(frag.extents[d]), ForKind::Serial, row);
        ctx.decide(subject, "tl::store_row per row", "lowering",
                   "rows of a whole fragment into a tensor with contiguous rows: non-temporal stores when the launch "
                   "writes more than the last-level cache holds",
                   loc);
        return simplify(row, ctx.bounds());
    }
    const DType fragType = frag.buffer->dtype, memType = mem.buffer->dtype;
    // Stores the value at fragment indices `at` into target[targetIdx] (and into the fragment
    // where it has other uses), or nothing when a fragment the value reads is not a cpu tile.
    auto produce = [&](const std::vector<Expr>& at, const Buffer& target,
                       const std::vector<Expr>& targetIdx) -> std::optional<Stmt> {
        std::optional<Expr> value = producedAt(ctx, *producer, at);
        if (!value) return std::nullopt;
        if (!producer->stores) return store(target, targetIdx, cast(memType, cast(fragType, *value)));
        VarPtr element = ctx.freshVar("e", fragType);  // the value as the fragment holds it
        return letStmt(element, cast(fragType, *value),
                       seq({store(local, {flatIndex(frag.buffer, at)}, Expr(element)),
                            store(target, targetIdx, cast(memType, Expr(element)))}));
    };
    // Whole lines from the row's first 64-byte boundary (non-temporal stores need it), `head`
    // elements in, then the elements before it and after the last whole line.
    VarPtr head = ctx.freshVar("head"), lines = ctx.freshVar("lines");
    VarPtr chunk = ctx.freshVar(names.back()), lane = ctx.freshVar("v"), k = ctx.freshVar("k"),
           column = ctx.freshVar(names.back());
    std::vector<Expr> at = rowStart, lineStart = rowStart, restAt = rowStart;
    lineStart.back() = Expr(head) + Expr(chunk) * lineLength;
    at.back() = lineStart.back() + Expr(lane);
    restAt.back() = Expr(column);
    Buffer line = makeBuffer(ctx.freshName(mem.buffer->name + "_line"), memType, MemScope::Local, {intImm(lineLength)});
    std::optional<Stmt> lineStep = produce(at, line, {Expr(lane)});
    std::optional<Stmt> restStep = produce(restAt, mem.buffer, tensorIndices(restAt));
    if (!lineStep || !restStep) return std::nullopt;
    VarPtr streams = ctx.freshVar(mem.buffer->name + "_streams", DType::Bool);
    Stmt chunkStep = seq({forLoop(lane, intImm(0), intImm(lineLength), ForKind::Vectorized, *lineStep),
                          evaluate(call("store_line", DType::I32,
                                        {tensorAddress(lineStart), call("address_of", DType::I64, {load(line, {intImm(0)})}),
                                         Expr(streams)}))});
    Expr wholeLines = Expr(lines) * lineLength;
    Stmt rest = forLoop(k, intImm(0), intImm(rowLength) - wholeLines, ForKind::Serial,
                        letStmt(column, select(Expr(k) < Expr(head), Expr(k), Expr(k) + wholeLines), *restStep));
    Stmt row = letStmt(head, call("line_head", DType::I32, {tensorAddress(rowStart), intImm(rowLength)}),
                       letStmt(lines, (intImm(rowLength) - Expr(head)) / lineLength,
                               seq({allocate(line, forLoop(chunk, intImm(0), Expr(lines), ForKind::Serial, chunkStep)),
                                    rest})));
    for (size_t d = rowVars.size(); d-- > 0;)
        row = forLoop(rowVars[d], intImm(0), intImm(frag.extents[d]), ForKind::Serial, row);
    ctx.decide(subject, fmt::format("computed and stored a cache line ({} elements) at a time", lineLength), "lowering",
               fmt::format("the parallel loop before the copy fills {} for it: each line's values go from registers "
                           "to the tensor, past the caches when the launch writes more than the last-level cache "
                           "holds, without a pass over the fragment{}",
                           frag.buffer->name, producer->stores ? " (which is stored too: it has other uses)" : ""),
               loc);
    return simplify(letStmt(streams, call("streams", DType::Bool, {resultBytes}),
                            seq({row, evaluate(call("store_fence", DType::I32, {Expr(streams)}))})),
                    ctx.bounds());
}

} // namespace

bool storesWholeLines(const Region& frag, const Region& mem) {
    std::vector<size_t> fragDims = tileDims(frag);
    const int64_t elemBytes = dtypeBytes(mem.buffer->dtype);
    return !fragDims.empty() && fragDims.back() == frag.rank() - 1 && contiguousTensorRows(mem) &&
           64 % elemBytes == 0 && (frag.extents.back() * elemBytes) % 64 == 0;
}

const CopyOp* plainCopy(const Stmt& s) {
    const TileOpStmt* t = s.as<TileOpStmt>();
    const auto* c = t ? dynamic_cast<const CopyOp*>(t->op.get()) : nullptr;
    return c && !c->async() && !c->tmaBarrier() ? c : nullptr;
}

TileOpPtr CopyOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    auto c = std::make_shared<CopyOp>(mapRegion(src_, fn), mapRegion(dst_, fn), async_);
    if (tmaBarrier_) c->tmaBarrier_ = mapRegion(*tmaBarrier_, fn);
    c->tmaElected_ = tmaElected_;
    c->tmaMulticast_ = tmaMulticast_;
    c->producer_ = producer_;
    if (c->producer_) c->producer_->value = fn(c->producer_->value);
    c->elementMoves_ = elementMoves_;
    return c;
}

TileOpPtr CopyOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    if (producer_) return nullptr;  // its value names the source's buffer: moving the tile would not
    auto c = std::make_shared<CopyOp>(fn(src_), fn(dst_), async_);
    c->tmaBarrier_ = tmaBarrier_;
    c->tmaElected_ = tmaElected_;
    c->tmaMulticast_ = tmaMulticast_;
    c->elementMoves_ = elementMoves_;
    return c;
}

const Region* CopyOp::asyncFillTile() const {
    const bool fill = src_.buffer->scope == MemScope::Global && dst_.buffer->scope == MemScope::Shared &&
                      !producer_ && !tmaBarrier_;
    return fill ? &dst_ : nullptr;
}

std::vector<const Region*> CopyOp::reads() const {
    std::vector<const Region*> regions = {&src_};
    if (producer_)
        for (const auto& r : producer_->reads) regions.push_back(&r);
    return regions;
}

std::vector<const Region*> CopyOp::writes() const {
    std::vector<const Region*> regions = {&dst_};
    if (producer_ && producer_->stores) regions.push_back(&src_);
    return regions;
}

std::shared_ptr<const CopyOp> CopyOp::withProducer(ElementProducer producer) const {
    auto c = std::make_shared<CopyOp>(*this);
    c->producer_ = std::move(producer);
    return c;
}

std::shared_ptr<const CopyOp> CopyOp::withElementMoves() const {
    auto c = std::make_shared<CopyOp>(*this);
    c->elementMoves_ = true;
    return c;
}

std::shared_ptr<const CopyOp> CopyOp::withTma(Region barrier, bool elected, int64_t multicast) const {
    auto c = std::make_shared<CopyOp>(src_, dst_, true);
    c->tmaBarrier_ = std::move(barrier);
    c->tmaElected_ = elected;
    c->tmaMulticast_ = multicast;
    return c;
}

std::string CopyOp::str() const {
    const char* name = tmaBarrier_ ? "copy_tma" : async_ ? "copy_async" : "copy";
    std::string source = producer_ ? producerString(src_.buffer, *producer_) : regionString(src_);
    std::string text = fmt::format("{}({}, {}", name, source, regionString(dst_));
    if (tmaBarrier_) text += fmt::format(", barrier = {}[{}]", tmaBarrier_->buffer->name, printExpr(tmaBarrier_->starts[0]));
    if (tmaMulticast_ > 1) text += fmt::format(", multicast = {}", tmaMulticast_);
    return text + ")";
}

// The fused form where the tile lies inside the tensor; elsewhere (and off the cpu's form) the
// producer's loop fills the fragment, then the plain copy.
Stmt CopyOp::lowerProduced(LowerContext& ctx, SourceLoc loc) const {
    CopyOp plain(src_, dst_);
    auto apart = [&](bool edge) { return seq({producerLoop(ctx, *producer_, src_, loc), plain.lowerMoves(ctx, loc, edge)}, loc); };
    Expr inside = simplify(tileInside(dst_), ctx.bounds());
    const int64_t* known = asConstInt(inside);
    std::optional<Stmt> fused = known && !*known ? std::nullopt : cpuRowStores(ctx, loc, *this);
    if (!fused) return apart(false);
    Stmt rows = seq({comment(str(), loc), *fused}, loc);
    return known ? rows : ifThenElse(inside, rows, apart(true), loc);
}

Stmt CopyOp::lower(LowerContext& ctx, SourceLoc loc) const {
    if (tmaBarrier_) return seq({comment(str(), loc), lowerTma(ctx)}, loc);
    if (producer_) return lowerProduced(ctx, loc);
    return lowerMoves(ctx, loc, false);
}

Stmt CopyOp::lowerMoves(LowerContext& ctx, SourceLoc loc, bool edge) const {
    if (auto staged = lowerStagedStore(*this, ctx, loc)) return *staged;
    bool srcFrag = src_.buffer->scope == MemScope::Fragment;
    bool dstFrag = dst_.buffer->scope == MemScope::Fragment;
    std::vector<int64_t> tile = src_.squeezedExtents();
    // `assumeInside`: the whole tile lies inside the tensors, so no element needs its guard.
    auto lowerBody = [&](bool assumeInside) {
        auto bounded = [&](const Buffer& b, const std::vector<Expr>& idx, int64_t lanes) {
            return assumeInside ? boolImm(true) : inBounds(b, idx, lanes);
        };
        Stmt body;

        if (std::optional<Stmt> rows = assumeInside ? cpuRowStores(ctx, loc, *this) : std::nullopt) {
            body = *rows;
        } else if (srcFrag && dstFrag) {
            // Same layout (inference guarantees it): slot by slot, converting.
            Buffer s = ctx.localBuffer(src_.buffer), d = ctx.localBuffer(dst_.buffer);
            const auto& f = ctx.layoutOf(src_.buffer);
            body = fragmentLoop(ctx, f, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
                return store(d, {slot}, cast(d->dtype, load(s, {slot})));
            });
        } else if (srcFrag || dstFrag) {
            // Each thread moves the elements it holds; vectors where the layout keeps elements of
            // the last dimension in consecutive slots.
            const Region& frag = srcFrag ? src_ : dst_;
            const Region& mem = srcFrag ? dst_ : src_;
            const auto& f = ctx.layoutOf(frag.buffer);
            Buffer local = ctx.localBuffer(frag.buffer);
            // A converting move vectorises on the memory side's type (see moveElements).
            int64_t vec = elementMoves_ ? 1
                                        : std::min(f.vectorWidth(),
                                                   vectorWidthFor(ctx, mem, f.vectorWidth(), mem.buffer->dtype));
            // Part of the fragment (a copy of the overlap with a smaller region): the slots outside
            // the region are skipped, whole vectors at a time.
            const bool partial = !frag.coversWholeBuffer();
            while (partial && vec > 1 && (frag.extents.back() % vec != 0 || knownMultiple(frag.starts.back()) % vec != 0))
                vec /= 2;
            explainMoves(ctx, loc, *this, vec, mem.buffer->dtype,
                         elementMoves_ ? std::string("the registers were written an element at a time (a general "
                                                     "variant's prefetch): moved the same way")
                                       : fmt::format("each thread holds {} consecutive elements of a row in the "
                                                     "fragment's layout, and the memory side allows {}",
                                                     f.vectorWidth(), vec),
                         "");
            body = fragmentLoop(ctx, f, vec, indexNames(f.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
                // Fragment indices are the tile offsets over its own non-unit dimensions.
                std::vector<Expr> tileOffsets;
                for (size_t d : tileDims(frag)) tileOffsets.push_back(partial ? idx[d] - frag.starts[d] : idx[d]);
                std::vector<Expr> memIdx = regionIndices(mem, tileOffsets);
                Expr valid = bounded(mem.buffer, memIdx, vec);
                Expr inside = boolImm(true);
                for (size_t d = 0; partial && d < idx.size(); ++d)
                    inside = logicalAnd(inside, logicalAnd(idx[d] >= frag.starts[d], idx[d] < frag.starts[d] + frag.extents[d]));
                inside = simplify(inside, ctx.bounds());
                auto onlyInside = [&](Stmt s) { return asConstInt(inside) && *asConstInt(inside) ? s : ifThenElse(inside, s); };
                if (srcFrag) {
                    Stmt move = moveElements(mem.buffer, memIdx, local, {slot}, vec);
                    // Replicas hold the same values: one of them writes.
                    Expr writer = f.replicas() > 1 ? binary(BinaryOp::Eq, f.replicaOf(ctx.tx()), intImm(0)) : boolImm(true);
                    Expr cond = simplify(logicalAnd(logicalAnd(writer, inside), valid), ctx.bounds());
                    return asConstInt(cond) && *asConstInt(cond) ? move : ifThenElse(cond, move);
                }
                return onlyInside(moveElements(local, {slot}, mem.buffer, memIdx, vec, valid));
            });
        } else {
            // Memory to memory: the tile's elements spread over the threads.
            int64_t inner = tile.empty() ? 1 : tile.back();
            int64_t vec = std::min(vectorWidthFor(ctx, src_, inner, src_.buffer->dtype),
                                   vectorWidthFor(ctx, dst_, inner, dst_.buffer->dtype));
            if (src_.buffer->dtype != dst_.buffer->dtype) vec = 1;
            // Global to shared in 16-byte pieces goes through cp.async where the target has it.
            bool async = ctx.target.has(Feature::CpAsync) && src_.buffer->scope == MemScope::Global &&
                         dst_.buffer->scope == MemScope::Shared && vec * dtypeBytes(src_.buffer->dtype) == 16;
            explainMoves(ctx, loc, *this, vec, src_.buffer->dtype,
                         vec > 1 ? fmt::format("the widest move of at most 16 bytes that divides the rows ({} elements) "
                                               "and the starts of both sides",
                                               inner)
                                 : "no wider move divides the rows and the starts of both sides, or the types differ",
                         async ? (async_ ? "cp.async: the target has cp_async, the pieces are 16 bytes, and the pipeline "
                                           "waits for them a stage later"
                                         : "cp.async: the target has cp_async and the pieces are 16 bytes")
                               : "");
            auto element = [&](const std::vector<Expr>& off) {
                std::vector<Expr> s = regionIndices(src_, off), d = regionIndices(dst_, off);
                Expr valid = bounded(src_.buffer, s, vec);
                if (async) {
                    auto copy = [&](const std::vector<Expr>& from, const Expr& ok) {
                        return evaluate(call("cp_async_16", DType::I32,
                                             {call("address_of", DType::I64, {load(dst_.buffer, d)}),
                                              call("address_of", DType::I64, {load(src_.buffer, from)}), ok}));
                    };
                    if (asConstInt(valid)) return copy(s, valid);
                    // Out of range nothing is read: point at the tensor's start rather than past its end.
                    VarPtr inRange = ctx.freshVar("in_range", DType::Bool);
                    std::vector<Expr> safe;
                    for (const auto& i : s) safe.push_back(select(Expr(inRange), i, intImm(0)));
                    return letStmt(inRange, valid, copy(safe, Expr(inRange)));
                }
                Stmt move = moveElements(dst_.buffer, d, src_.buffer, s, vec, valid);
                Expr writable = bounded(dst_.buffer, d, vec);
                return asConstInt(writable) && *asConstInt(writable) ? move : ifThenElse(writable, move);
            };
            // Into a local (per-thread) buffer every thread moves the whole tile: each holds its own
            // copy. (Out of one, the threads share the moves, as for shared memory: every thread
            // writing the whole destination would race.)
            // A general variant's element loads of global memory go in batches: every element of a
            // large tile in flight at once would hold a register (and an address) each, and spill.
            const bool elementLoads = ctx.generalShapes && vec == 1 && src_.buffer->scope == MemScope::Global;
            body = dst_.buffer->scope == MemScope::Local
                           ? perThreadLoop(ctx, tile, vec, indexNames(tile.size()), element)
                           : distributedLoop(ctx, tile, vec, indexNames(tile.size()), element, {}, false,
                                             elementLoads ? kElementLoadBatch : 0);
            // A pipelined copy leaves committing and waiting to the pipeline; any other waits for its
            // own copies here, before the barrier that publishes them (batch-async-waits keeps one
            // wait for copies one after another).
            if (async && !async_) body = seq({body, evaluate(call("cp_async_wait_all", DType::I32, {}))});
        }
        return body;
    };
    Stmt body = lowerBody(false);
    // On the cpu a tile that lies inside the tensors takes loops without guards, which the C++
    // compiler vectorises without masks; only the tiles at the edges test each element.
    if (ctx.target.backend == Backend::Cpu && !edge) {
        Expr inside = simplify(logicalAnd(tileInside(src_), tileInside(dst_)), ctx.bounds());
        if (!asConstInt(inside)) body = ifThenElse(inside, lowerBody(true), body);
    }
    return seq({comment(str(), loc), body}, loc);
}

} // namespace tlc::ops
