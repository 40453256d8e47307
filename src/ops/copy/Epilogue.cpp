#include "ops/copy/Epilogue.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/LowerContext.h"
#include "ops/OpUtil.h"
#include "ops/copy/SharedAccess.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

#include <set>

namespace tlc::ops {

using namespace ir;

namespace {

// Global memory moves whole 32-byte sectors.
constexpr int64_t kSectorBytes = 32;

// The share of the bytes of the 32-byte sectors a warp's direct stores touch that they write:
// 1 when the warp writes whole sectors. `vec` consecutive slots go in one store.
double sectorUse(const layout::Fragment& f, int64_t lanes, int64_t vec, int64_t elemBytes) {
    int64_t written = 0, sectors = 0;
    for (int64_t first = 0; first < f.locals(); first += vec) {
        std::set<std::pair<int64_t, int64_t>> touched;  // (row, sector within the row)
        for (int64_t t = 0; t < lanes; ++t) {
            std::vector<int64_t> at = f.elementAt(t, first);
            if (f.holderOf(at).first != t) continue;  // a replica: another thread writes it
            int64_t row = 0;
            for (size_t d = 0; d + 1 < at.size(); ++d) row = row * f.shape()[d] + at[d];
            int64_t byte = at.back() * elemBytes;
            touched.insert({row, byte / kSectorBytes});
            written += vec * elemBytes;
        }
        sectors += int64_t(touched.size());
    }
    return sectors ? double(written) / double(sectors * kSectorBytes) : 1.0;
}

// The tile's 16-byte moves index no register array, so their loop need not be unrolled; kept
// rolled, ptxas does not hoist every vector load ahead of the stores (flash attention, at 255
// registers, spilled when it did).
class Roll : public IRMutator {
protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        if (n->forKind != ForKind::Unroll) return IRMutator::mutateFor(n, self);
        return forLoop(n->var, n->min, n->extent, ForKind::Rolled, mutate(n->body), n->loc, n->pipeline, n->step);
    }
};

} // namespace

std::optional<Stmt> lowerStagedStore(const CopyOp& op, LowerContext& ctx, SourceLoc loc) {
    const Region &src = op.src(), &dst = op.dst();
    if (src.buffer->scope != MemScope::Fragment || dst.buffer->scope != MemScope::Global || ctx.threads <= 1)
        return std::nullopt;
    std::vector<int64_t> tile = src.squeezedExtents();
    const auto& f = ctx.layoutOf(src.buffer);
    if (tile.size() != 2 || f.rank() != 2 || f.shape() != tile) return std::nullopt;
    DType type = dst.buffer->dtype;
    int64_t elemBytes = dtypeBytes(type), vec16 = 16 / std::max<int64_t>(elemBytes, 1);
    if (dtypeBits(type) < 8 || 16 % elemBytes != 0) return std::nullopt;
    // 1. The direct stores waste sector bytes.
    int64_t direct = std::max<int64_t>(1, std::min(f.vectorWidth(), vec16));
    if (sectorUse(f, std::min(ctx.warpSize, ctx.threads), direct, elemBytes) >= 1.0) return std::nullopt;
    // 2. The staging tile fits in bytes that are free here anyway.
    int64_t bytes = tile[0] * tile[1] * elemBytes;
    if (bytes > ctx.sharedHeadroom) return std::nullopt;
    std::string subject = fmt::format("{}({}, {})", op.name(), src.buffer->name, dst.buffer->name);
    std::string wasted = fmt::format("direct {}-element stores fill only part of each 32-byte sector they touch; "
                                     "the tile fits in {} bytes of shared memory free at this point",
                                     direct, ctx.sharedHeadroom);
    // 3. On targets with TMA, one thread stores the tile as boxes (CopyTmaStore.cpp).
    std::string noTma = tmaStoreIssue(dst, tile, ctx);
    if (noTma.empty()) {
        Buffer stage = ctx.scratch(src.buffer->name + "_stage", type, tile);
        // The layout TMA reads, which also spreads the accumulator's writes (eight rows of one
        // 16-byte column) over eight bank groups.
        LowerContext::SharedLayout& chosen = ctx.sharedLayouts[stage.get()];
        chosen = *wgmmaSharedLayout(stage, "TMA store of " + op.str());
        CopyOp in(src, Region{stage, {intImm(0), intImm(0)}, tile});
        int64_t boxCols = chosen.boxCols ? chosen.boxCols : tile[1];
        ctx.decide(subject,
                   fmt::format("staged through shared memory ({}[{}][{}], {}-byte swizzle), stored by TMA as {} "
                               "{} x {} {}",
                               stage->name, tile[0], tile[1], chosen.swizzle.patternBytes(), tile[1] / boxCols, tile[0],
                               boxCols, tile[1] == boxCols ? "box" : "boxes"),
                   "lowering",
                   wasted + "; the target has TMA and the destination is a whole box of a tensor with contiguous "
                            "rows: one thread stores the tile, the edges clipped by TMA, no per-element checks",
                   loc);
        std::string what = fmt::format("{} (through shared memory: {}[{}][{}], then TMA)", op.str(), stage->name,
                                       tile[0], tile[1]);
        // A persistent kernel runs this once per tile: the last tile's stores may still read the
        // staging tile, so thread 0 waits for them before the barrier after which it is written
        // again (not after its own stores: the next tile's mainloop need not wait for them).
        // The staging tile is not transient scratch, so nothing else takes its bytes meanwhile.
        if (ctx.persistentTile) {
            Stmt wait = ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)),
                                   evaluate(call("tma_store_wait_read", DType::I32, {intImm(0)})), {}, loc);
            return seq({comment(what + ", the last tile's stores waited for first", loc), wait, barrier(loc),
                        in.lower(ctx, loc), storeWithTma(stage, dst, ctx, loc, /*deferWait=*/true)},
                       loc);
        }
        return seq({comment(what, loc), barrier(loc), in.lower(ctx, loc), storeWithTma(stage, dst, ctx, loc)}, loc);
    }
    // 4. Otherwise every thread gets at least one whole 16-byte vector, and the destination
    // takes 16-byte vectors (launch checks record what that needs). A general variant, which
    // needs nothing of the destination, stores the staged rows an element at a time: a warp
    // still writes consecutive elements, where the direct stores scatter pieces over rows.
    if (tile[1] % vec16 != 0 || bytes < ctx.threads * 16) return std::nullopt;
    if (!ctx.generalShapes) {
        std::vector<LaunchCheck> before = ctx.launchChecks;
        if (vectorWidthFor(ctx, dst, tile[1], type) != vec16) {
            ctx.launchChecks = before;
            return std::nullopt;
        }
    }

    Buffer stage = ctx.scratch(src.buffer->name + "_stage", type, tile);
    Region whole{stage, {intImm(0), intImm(0)}, tile};
    CopyOp in(src, whole), out(whole, dst);
    // Stored as the bank-conflict cost says (for an mma accumulator: eight rows of one 16-byte
    // column at a time, which a swizzle spreads over eight bank groups).
    std::vector<layout::SharedAccess> accesses;
    for (const CopyOp* c : {&in, &out})
        if (auto a = sharedAccess(*c, stage, ctx)) accesses.push_back(*a);
    layout::LayoutChoice choice = layout::cheapestLayout(tile, elemBytes, accesses, ctx.sharedBanks());
    LowerContext::SharedLayout& chosen = ctx.sharedLayouts[stage.get()];
    chosen.swizzle = choice.layout.swizzle();
    chosen.padElems = choice.layout.pad();
    chosen.reason = choice.reason;
    std::string what = fmt::format("{} (through shared memory: {}[{}][{}])", op.str(), stage->name, tile[0], tile[1]);
    std::string reason = wasted + (ctx.generalShapes ? ", so a warp stores consecutive elements of the rows (the general "
                                                       "variant: no vectors)"
                                                     : ", so every thread stores whole 16-byte vectors")
                         + " without raising the kernel's shared memory";
    if (ctx.target.has(Feature::Tma)) reason += "; not TMA stores: " + noTma;
    ctx.decide(subject,
               fmt::format("staged through shared memory ({}[{}][{}], {})", stage->name, tile[0], tile[1],
                           choice.layout.str()),
               "lowering", reason, loc);
    return seq({comment(what, loc), barrier(loc), in.lower(ctx, loc), barrier(loc), Roll().mutate(out.lower(ctx, loc))},
               loc);
}

} // namespace tlc::ops
