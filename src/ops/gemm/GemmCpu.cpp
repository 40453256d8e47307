// gemm on the cpu target: one call of the runtime's register-blocked micro-kernel
// (tl::gemm_tile in tl_cpu_gemm.h, section gemm) on the whole tiles, when they are laid out as it
// reads them; other forms keep the plain loops of lowerSimt.
#include "ops/gemm/Gemm.h"

#include "ir/Simplify.h"
#include "layout/Fragment.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

namespace {

// Where an operand tile starts and its row stride, when its two tile dimensions are rows and
// the contiguous last dimension of the buffer that holds it.
struct TileView {
    Buffer buffer;
    std::vector<Expr> start;
    Expr rowStride;
};

std::optional<TileView> viewOf(LowerContext& ctx, const Region& r) {
    std::vector<size_t> dims = matrixDims(r);
    const Buffer& b = r.buffer;
    if (dims.size() != 2 || dims[1] != b->shape.size() - 1) return std::nullopt;
    if (b->scope == MemScope::Global) {  // a tensor's tile (forward-copies: the tile lies inside it)
        const int64_t* unit = asConstInt(b->strides.back());
        if (!unit || *unit != 1) return std::nullopt;
        return TileView{b, r.starts, b->strides[dims[0]]};
    }
    // A shared tile's rows as apply-shared-layouts will store them: padded rows are longer; a
    // swizzled or boxed tile is not rows with a stride at all (the element loops read it).
    int64_t pad = 0;
    if (auto l = ctx.sharedLayouts.find(b.get()); b->scope == MemScope::Shared && l != ctx.sharedLayouts.end()) {
        if (!l->second.swizzle.isIdentity() || l->second.boxCols) return std::nullopt;
        pad = l->second.padElems;
    }
    int64_t stride = 1;
    for (size_t d = dims[0] + 1; d < b->shape.size(); ++d) {
        auto extent = asConstInt(b->shape[d]);
        if (!extent) return std::nullopt;
        stride *= *extent + (d + 1 == b->shape.size() ? pad : 0);
    }
    if (b->scope == MemScope::Shared) return TileView{b, r.starts, intImm(stride)};
    if (b->scope != MemScope::Fragment || !r.coversWholeBuffer()) return std::nullopt;
    // A cpu fragment is its storage when it is the whole tile, row-major.
    if (!isCpuTile(ctx, ctx.layoutOf(b))) return std::nullopt;
    return TileView{ctx.localBuffer(b), std::vector<Expr>{intImm(0)}, intImm(stride)};
}

} // namespace

bool cpuMicroKernelTypes(DType a, DType b, DType c) {
    if (a != b) return false;
    if (a == DType::I8) return c == DType::I32;
    return c == DType::F32 && (a == DType::F32 || a == DType::BF16 || a == DType::F16);
}

std::optional<Stmt> GemmOp::lowerCpu(LowerContext& ctx, SourceLoc loc, std::vector<Stmt>& steps) const {
    if (ctx.target.backend != Backend::Cpu) return std::nullopt;
    std::string subject = fmt::format("gemm({}, {}, {})", a_.buffer->name, b_.buffer->name, c_.buffer->name);
    if (!cpuMicroKernelTypes(a_.buffer->dtype, b_.buffer->dtype, c_.buffer->dtype)) {
        ctx.decide(subject, "element loops", "lowering",
                   fmt::format("the cpu micro-kernel takes f32, bf16 or f16 inputs with f32 accumulators, or i8 with "
                               "i32, not {} x {} -> {}", dtypeName(a_.buffer->dtype), dtypeName(b_.buffer->dtype),
                               dtypeName(c_.buffer->dtype)), loc);
        return std::nullopt;
    }
    auto a = viewOf(ctx, a_), b = viewOf(ctx, b_), c = viewOf(ctx, c_);
    if (!a || !b || !c || c_.buffer->scope != MemScope::Fragment) {
        ctx.decide(subject, "element loops", "lowering",
                   "the cpu micro-kernel needs 2-d tiles whose last dimension is contiguous", loc);
        return std::nullopt;
    }
    std::vector<int64_t> cTile = matrixExtents(c_), aTile = matrixExtents(a_);
    int64_t M = cTile[0], N = cTile[1], K = transA_ ? aTile[0] : aTile[1];
    ctx.decide(subject, "tl::gemm_tile (register-blocked micro-kernel)", "lowering",
               fmt::format("{} x {} x {} tiles; the vector width follows the C++ compiler's flags", M, N, K), loc);
    if (clearAccum_)
        steps.push_back(fragmentLoop(ctx, ctx.layoutOf(c_.buffer), 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
            return store(c->buffer, {slot}, zero(c_.buffer->dtype));
        }));
    auto addressOf = [](const TileView& v) { return call("address_of", DType::I64, {load(v.buffer, v.start)}); };
    // B read in place from a tensor the kernel never writes: its packed tile kept for the blocks
    // that read it after this one (reuse-packed-b chose the order they run in).
    const bool reuse = reuseB_ && b->buffer->scope == MemScope::Global;
    std::vector<Expr> args{intImm(M),      intImm(N),   intImm(K),      intImm(transA_ ? 1 : 0), intImm(transB_ ? 1 : 0),
                           addressOf(*a),  a->rowStride, addressOf(*b), b->rowStride,           addressOf(*c),
                           c->rowStride};
    if (rows_) args.push_back(rows_);  // a tile at A's edge: C's first rows only
    steps.push_back(evaluate(call(reuse ? "gemm_tile_reused_b" : "gemm_tile", DType::I32, args)));
    return simplify(seq(steps, loc), ctx.bounds());
}

} // namespace tlc::ops
