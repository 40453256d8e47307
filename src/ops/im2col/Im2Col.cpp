#include "ops/im2col/Im2Col.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

namespace {

// The output extents of the image: floor((H + 2P - D(K - 1) - 1) / S) + 1, never negative:
// (H + c) / S with c = 2P - D(K - 1) - 1 + S, clamped at 0 only when c can make it negative.
std::pair<Expr, Expr> outputExtents(const Buffer& img, const Im2ColParams& p) {
    const int64_t c = 2 * p.pad - p.dilation * (p.kernel - 1) - 1 + p.stride;
    auto outExtent = [&](const Expr& in) {
        Expr num = in + intImm(c);
        if (c < 0) num = maxExpr(num, intImm(0));
        return simplify(p.stride == 1 ? num : num / intImm(p.stride));
    };
    return {outExtent(img->shape[1]), outExtent(img->shape[2])};
}

// Where row `pixel` of the im2col matrix reads the image: n (or -1 past the last output pixel)
// and the top-left corner (h0, w0) of its window, padding included.
struct RowStart {
    Expr n, h0, w0;
};
RowStart rowStart(const Buffer& img, const Im2ColParams& p, const Expr& pixel) {
    auto [OH, OW] = outputExtents(img, p);
    const Expr ohw = simplify(OH * OW);
    return {simplify(select(pixel < img->shape[0] * ohw, pixel / ohw, intImm(-1))),
            simplify((pixel % ohw) / OW * p.stride - p.pad), simplify((pixel % ohw) % OW * p.stride - p.pad)};
}

// The threads' loop over a [BM, BK] tile in vectors of `vec`: vector it of thread tx starts at
// flat element e = (it * threads + tx) * vec, row i = e / BK, column j = e % BK. Unrolled, so
// that a per-thread table indexed by `it` stays in registers; im2col_rows and the gathers that
// read its table use the same loop. When a round of the threads covers whole rows, a thread's
// vectors share their column: j is bound once, before the loop, so that the compiler sees one
// column (one division by C) for all of them.
Stmt gatherLoop(LowerContext& ctx, int64_t BM, int64_t BK, int64_t vec,
                const std::function<Stmt(const Expr& it, const Expr& i, const Expr& j)>& body) {
    const int64_t vectors = BM * BK / vec, threads = std::max<int64_t>(ctx.threads, 1);
    const int64_t count = (vectors + threads - 1) / threads;
    VarPtr it = ctx.freshVar("it"), e = ctx.freshVar("e"), i = ctx.freshVar("i"), j = ctx.freshVar("j");
    const Expr iter = count == 1 ? intImm(0) : Expr(it);
    const Expr q = simplify(iter * threads + ctx.tx());
    const bool sharedColumn = count > 1 && (threads * vec) % BK == 0;
    Stmt inner = body(iter, Expr(i), Expr(j));
    inner = letStmt(i, Expr(e) / BK, sharedColumn ? inner : letStmt(j, Expr(e) % BK, inner));
    inner = letStmt(e, simplify(q * vec), inner);
    if (vectors % threads != 0) inner = ifThenElse(q < vectors, inner);
    if (count == 1) return inner;
    Stmt loop = forLoop(it, intImm(0), intImm(count), ctx.slotLoopKind(), inner);
    return sharedColumn ? letStmt(j, simplify(ctx.tx() * vec % BK, ctx.bounds()), loop) : loop;
}

} // namespace

int64_t im2colImageVector(LowerContext& ctx, const Buffer& img, DType type, int64_t blockK) {
    if (img->dtype != type || dtypeBits(type) < 8 || !ctx.vectorizeGlobal()) return 1;
    const int64_t* unit = asConstInt(img->strides[3]);
    if (!unit || *unit != 1) return 1;
    int64_t vec = 16 / dtypeBytes(type);
    while (vec > 1 && blockK % vec != 0) vec /= 2;
    return vec;
}

int64_t im2colRowsEntries(const LowerContext& ctx, int64_t blockM, int64_t blockK, int64_t vec) {
    const int64_t threads = std::max<int64_t>(ctx.threads, 1);
    return 3 * ((blockM * blockK / vec + threads - 1) / threads);
}

Im2ColOp::Im2ColOp(Buffer img, Region col, Expr nhwStep, Expr cStep, Im2ColParams p, bool async)
    : col_(std::move(col)), nhwStep_(std::move(nhwStep)), cStep_(std::move(cStep)), p_(p), async_(async) {
    img_.buffer = std::move(img);
    img_.starts.assign(img_.buffer->shape.size(), intImm(0));
    img_.extents.assign(img_.buffer->shape.size(), 1);
}

TileOpPtr Im2ColOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region c = col_;
    for (auto& s : c.starts) s = fn(s);
    auto op = std::make_shared<Im2ColOp>(img_.buffer, c, fn(nhwStep_), fn(cStep_), p_, async_);
    op->rows_ = rows_;
    op->rowsVec_ = rowsVec_;
    return op;
}

TileOpPtr Im2ColOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    auto op = std::make_shared<Im2ColOp>(img_.buffer, fn(col_), nhwStep_, cStep_, p_, async_);
    if (rows_) op->rows_ = fn(*rows_);
    op->rowsVec_ = rowsVec_;
    return op;
}

std::vector<const Region*> Im2ColOp::reads() const {
    std::vector<const Region*> r = {&img_};
    if (rows_) r.push_back(&*rows_);
    return r;
}

std::shared_ptr<const Im2ColOp> Im2ColOp::withRows(Buffer rows, int64_t vec) const {
    auto op = std::make_shared<Im2ColOp>(*this);
    op->rows_ = wholeBuffer(rows);
    op->rowsVec_ = vec;
    return op;
}

const Region* Im2ColOp::asyncFillTile() const {
    return img_.buffer->scope == MemScope::Global && col_.buffer->scope == MemScope::Shared ? &col_ : nullptr;
}

TileOpPtr Im2ColOp::withAsyncIssue() const {
    auto op = std::make_shared<Im2ColOp>(*this);
    op->async_ = true;
    return op;
}

std::string Im2ColOp::str() const {
    return fmt::format("{}({}, {}, {}, {}, kernel = {}, stride = {}, dilation = {}, pad = {}{})",
                       async_ ? "im2col_async" : "im2col", img_.buffer->name, regionString(col_), printExpr(nhwStep_),
                       printExpr(cStep_), p_.kernel, p_.stride, p_.dilation, p_.pad,
                       rows_ ? ", rows = " + rows_->buffer->name : std::string());
}

Stmt Im2ColOp::lower(LowerContext& ctx, SourceLoc loc) const {
    const Buffer& img = img_.buffer;
    const Buffer& col = col_.buffer;
    std::vector<int64_t> tile = matrixExtents(col_);  // [block_M, block_K] (sema: 2-D)
    const int64_t BM = tile[0], BK = tile[1];
    const int64_t K = p_.kernel, D = p_.dilation;
    Expr H = img->shape[1], W = img->shape[2], C = img->shape[3];

    // Vectors of channels: consecutive columns are consecutive channels of one tap when C is a
    // multiple of the vector (checked at launch), and the shared side allows it.
    const DType type = img->dtype;
    int64_t vec = im2colImageVector(ctx, img, col->dtype, BK);
    if (vec > 1) {
        vec = std::min(vec, vectorWidthFor(ctx, col_, BK, type));
        while (vec > 1 && BK % vec != 0) vec /= 2;
    }
    if (vec > 1) {
        std::vector<Expr> rowMajor = rowMajorStrides(img->shape);
        bool contiguous = true;
        for (size_t d = 0; d < rowMajor.size(); ++d) contiguous = contiguous && equal(rowMajor[d], img->strides[d]);
        if (knownMultiple(C) % vec != 0)
            ctx.requireLaunch(binary(BinaryOp::Eq, C % vec, intImm(0)),
                              fmt::format("the channels of {} must be a multiple of {} (vectorised im2col)",
                                          img->name, vec));
        if (!contiguous)
            for (size_t d = 0; d < 3; ++d)
                if (knownMultiple(img->strides[d]) % vec != 0)
                    ctx.requireLaunch(binary(BinaryOp::Eq, img->strides[d] % vec, intImm(0)),
                                      fmt::format("the strides of {} must be multiples of {} (vectorised im2col)",
                                                  img->name, vec));
        ctx.requireAlignment(img, static_cast<int>(vec * dtypeBytes(type)));
    }
    // 16-byte vectors into shared memory go through cp.async where the target has it: nothing
    // passes through registers, and a pipeline's gather runs ahead of its readers.
    const bool cpAsync = vec > 1 && vec * dtypeBytes(type) == 16 && ctx.target.has(Feature::CpAsync) &&
                         ctx.target.backend != Backend::Cpu && col->scope == MemScope::Shared;
    // The rows from im2col_rows' table where it was built for these vectors.
    const bool table = rows_ && rowsVec_ == vec && ctx.target.backend != Backend::Cpu;
    ctx.decide(fmt::format("im2col({}, {})", img->name, col->name),
               ctx.target.backend == Backend::Cpu ? "element loops"
               : vec > 1 ? fmt::format("{} x {} ({} bytes){}", vec, dtypeName(type), vec * dtypeBytes(type),
                                       cpAsync ? ", cp.async" : "")
                         : std::string("1 element"),
               "lowering",
               (ctx.target.backend == Backend::Cpu ? std::string("on the cpu the C++ compiler vectorises the plain loops")
                : vec > 1 ? std::string("consecutive columns of a tile row are consecutive channels of one filter tap "
                                        "when the channel count is a multiple of the vector (checked at launch)") +
                                (!cpAsync ? ""
                                 : async_ ? "; cp.async (zero-filled past the image), the pipeline waits for it a "
                                            "stage later"
                                          : "; cp.async (zero-filled past the image)")
                          : std::string("the types differ, or no vector divides the tile's rows and the shared side")) +
                   (table ? fmt::format("; rows from {}, computed once before the loop", rows_->buffer->name) : ""),
               loc);

    // One vector: its row's start in the image (from the table, or computed here), then the
    // column's filter tap and channel (one division by C; the tap's row and column are
    // divisions by the constant kernel size).
    auto gather = [&](const std::vector<Expr>& to, const Expr& i, const Expr& j, const Expr& it) {
        VarPtr n = ctx.freshVar("img_n"), h0 = ctx.freshVar("img_h0"), w0 = ctx.freshVar("img_w0"),
               tap = ctx.freshVar("tap"), ch = ctx.freshVar("channel");
        const Expr t = Expr(tap);
        Expr h = Expr(h0) + (t / intImm(K)) * D, w = Expr(w0) + (t % intImm(K)) * D;
        Expr valid = logicalAnd(Expr(n) >= intImm(0), t < intImm(K * K));
        valid = logicalAnd(valid, logicalAnd(logicalAnd(h >= intImm(0), h < H), logicalAnd(w >= intImm(0), w < W)));
        valid = simplify(valid, ctx.bounds());
        std::vector<Expr> from = {Expr(n), h, w, Expr(ch)};
        Stmt move;
        if (cpAsync) {
            // Out of the image nothing is read (source size 0): point at its start, not past it.
            VarPtr inRange = ctx.freshVar("in_range", DType::Bool);
            std::vector<Expr> safe;
            for (const auto& e : from) safe.push_back(select(Expr(inRange), e, intImm(0)));
            move = letStmt(inRange, valid,
                           evaluate(call("cp_async_16", DType::I32,
                                         {call("address_of", DType::I64, {load(col, to)}),
                                          call("address_of", DType::I64, {load(img, safe)}), Expr(inRange)})));
        } else {
            move = moveElements(col, to, img, from, vec, valid);
        }
        const Expr k = simplify(cStep_ * BK + j);
        Stmt s = letStmt(ch, simplify(k - t * C), move);
        s = letStmt(tap, simplify(k / C), s);
        RowStart row;
        if (table) {
            const Buffer& rows = rows_->buffer;
            row = {load(rows, {simplify(it * 3)}), load(rows, {simplify(it * 3 + 1)}), load(rows, {simplify(it * 3 + 2)})};
        } else {
            row = rowStart(img, p_, simplify(nhwStep_ * BM + i));
        }
        s = letStmt(w0, row.w0, s);
        s = letStmt(h0, row.h0, s);
        return letStmt(n, row.n, s);
    };
    Stmt body = table ? gatherLoop(ctx, BM, BK, vec,
                                   [&](const Expr& it, const Expr& i, const Expr& j) {
                                       return gather(matrixIndices(col_, {i, j}), i, j, it);
                                   })
                      : distributedLoop(ctx, tile, vec, {"i", "j"}, [&](const std::vector<Expr>& off) {
                            return gather(matrixIndices(col_, off), off[0], off[1], Expr());
                        });
    // A gather outside a pipeline waits for its own cp.async before the barrier that publishes it.
    if (cpAsync && !async_) body = seq({body, evaluate(call("cp_async_wait_all", DType::I32, {}))});
    return seq({comment(str(), loc), body}, loc);
}

Im2ColRowsOp::Im2ColRowsOp(Buffer img, Buffer rows, Expr nhwStep, int64_t blockM, int64_t blockK, int64_t vec,
                           Im2ColParams p)
    : img_(std::move(img)), rows_(wholeBuffer(rows)), nhwStep_(std::move(nhwStep)), blockM_(blockM), blockK_(blockK),
      vec_(vec), p_(p) {}

TileOpPtr Im2ColRowsOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    return std::make_shared<Im2ColRowsOp>(img_, rows_.buffer, fn(nhwStep_), blockM_, blockK_, vec_, p_);
}

TileOpPtr Im2ColRowsOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    return std::make_shared<Im2ColRowsOp>(img_, fn(rows_).buffer, nhwStep_, blockM_, blockK_, vec_, p_);
}

std::string Im2ColRowsOp::str() const {
    return fmt::format("im2col_rows({}, {}, {}, block = [{}, {}], vector = {}, kernel = {}, stride = {}, dilation = {}, "
                       "pad = {})",
                       img_->name, rows_.buffer->name, printExpr(nhwStep_), blockM_, blockK_, vec_, p_.kernel,
                       p_.stride, p_.dilation, p_.pad);
}

Stmt Im2ColRowsOp::lower(LowerContext& ctx, SourceLoc loc) const {
    const Buffer& rows = rows_.buffer;
    Stmt body = gatherLoop(ctx, blockM_, blockK_, vec_, [&](const Expr& it, const Expr& i, const Expr&) {
        RowStart r = rowStart(img_, p_, simplify(nhwStep_ * blockM_ + i));
        return seq({store(rows, {simplify(it * 3)}, r.n), store(rows, {simplify(it * 3 + 1)}, r.h0),
                    store(rows, {simplify(it * 3 + 2)}, r.w0)});
    });
    return seq({comment(str(), loc), body}, loc);
}

} // namespace tlc::ops
