#include "ops/im2col/Im2Col.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

Im2ColOp::Im2ColOp(Buffer img, Region col, Expr nhwStep, Expr cStep, Im2ColParams p)
    : col_(std::move(col)), nhwStep_(std::move(nhwStep)), cStep_(std::move(cStep)), p_(p) {
    img_.buffer = std::move(img);
    img_.starts.assign(img_.buffer->shape.size(), intImm(0));
    img_.extents.assign(img_.buffer->shape.size(), 1);
}

TileOpPtr Im2ColOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region c = col_;
    for (auto& s : c.starts) s = fn(s);
    return std::make_shared<Im2ColOp>(img_.buffer, c, fn(nhwStep_), fn(cStep_), p_);
}

TileOpPtr Im2ColOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    return std::make_shared<Im2ColOp>(img_.buffer, fn(col_), nhwStep_, cStep_, p_);
}

std::string Im2ColOp::str() const {
    return fmt::format("im2col({}, {}, {}, {}, kernel = {}, stride = {}, dilation = {}, pad = {})", img_.buffer->name,
                       regionString(col_), printExpr(nhwStep_), printExpr(cStep_), p_.kernel, p_.stride, p_.dilation,
                       p_.pad);
}

Stmt Im2ColOp::lower(LowerContext& ctx, SourceLoc loc) const {
    const Buffer& img = img_.buffer;
    const Buffer& col = col_.buffer;
    std::vector<int64_t> tile = matrixExtents(col_);  // [block_M, block_K] (sema: 2-D)
    const int64_t BM = tile[0], BK = tile[1];
    const int64_t K = p_.kernel, S = p_.stride, D = p_.dilation, P = p_.pad;
    Expr H = img->shape[1], W = img->shape[2], C = img->shape[3];
    // Output extents: floor((H + 2P - D(K - 1) - 1) / S) + 1, never negative: (H + c) / S with
    // c = 2P - D(K - 1) - 1 + S, clamped at 0 only when c can make it negative.
    const int64_t c = 2 * P - D * (K - 1) - 1 + S;
    auto outExtent = [&](const Expr& in) {
        Expr num = in + intImm(c);
        if (c < 0) num = maxExpr(num, intImm(0));
        return simplify(S == 1 ? num : num / intImm(S));
    };
    Expr OH = outExtent(H), OW = outExtent(W);

    // Vectors of channels: consecutive columns are consecutive channels of one tap when C is a
    // multiple of the vector (checked at launch), and the shared side allows it.
    const DType type = img->dtype;
    int64_t vec = 1;
    if (type == col->dtype && dtypeBits(type) >= 8 && ctx.vectorizeGlobal()) {
        vec = std::min<int64_t>(16 / dtypeBytes(type), vectorWidthFor(ctx, col_, BK, type));
        while (vec > 1 && BK % vec != 0) vec /= 2;
    }
    if (vec > 1) {
        std::vector<Expr> rowMajor = rowMajorStrides(img->shape);
        bool contiguous = true;
        for (size_t d = 0; d < rowMajor.size(); ++d) contiguous = contiguous && equal(rowMajor[d], img->strides[d]);
        const int64_t* unit = asConstInt(img->strides[3]);
        if (!unit || *unit != 1) {
            vec = 1;
        } else {
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
    }
    ctx.decide(fmt::format("im2col({}, {})", img->name, col->name),
               ctx.target.backend == Backend::Cpu ? "element loops"
               : vec > 1 ? fmt::format("{} x {} ({} bytes)", vec, dtypeName(type), vec * dtypeBytes(type))
                         : std::string("1 element"),
               "lowering",
               ctx.target.backend == Backend::Cpu ? "on the cpu the C++ compiler vectorises the plain loops"
               : vec > 1 ? "consecutive columns of a tile row are consecutive channels of one filter tap when the "
                           "channel count is a multiple of the vector (checked at launch)"
                         : "the types differ, or no vector divides the tile's rows and the shared side",
               loc);

    Stmt body = distributedLoop(ctx, tile, vec, {"i", "j"}, [&](const std::vector<Expr>& off) {
        Expr m = nhwStep_ * BM + off[0];
        Expr k = cStep_ * BK + off[1];
        Expr ohw = OH * OW;
        Expr n = m / ohw, r = m % ohw;
        Expr h = (r / OW) * S + (k / (C * K)) * D - P;
        Expr w = (r % OW) * S + ((k / C) % K) * D - P;
        Expr valid = logicalAnd(m < img->shape[0] * ohw, k < C * (K * K));
        valid = logicalAnd(valid, logicalAnd(logicalAnd(h >= intImm(0), h < H), logicalAnd(w >= intImm(0), w < W)));
        std::vector<Expr> from = {n, h, w, k % C};
        return moveElements(col, matrixIndices(col_, off), img, from, vec, simplify(valid, ctx.bounds()));
    });
    return seq({comment(str(), loc), body}, loc);
}

} // namespace tlc::ops
