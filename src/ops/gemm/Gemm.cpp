#include "ops/gemm/Gemm.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

TileOpPtr GemmOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region a = a_, b = b_, c = c_;
    for (Region* r : {&a, &b, &c})
        for (auto& e : r->starts) e = fn(e);
    return std::make_shared<GemmOp>(a, b, c, transA_, transB_, policy_, clearAccum_);
}

std::string GemmOp::str() const {
    std::string extra;
    if (transA_) extra += ", transpose_A = true";
    if (transB_) extra += ", transpose_B = true";
    if (policy_ == GemmPolicy::FullRow) extra += ", policy = full_row";
    if (policy_ == GemmPolicy::FullCol) extra += ", policy = full_col";
    if (clearAccum_) extra += ", clear_accum = true";
    return fmt::format("gemm({}, {}, {}{})", regionString(a_), regionString(b_), regionString(c_), extra);
}

namespace {

// A fragment operand is first written to shared memory, where every thread can read it.
Region stage(LowerContext& ctx, const Region& operand, std::vector<Stmt>& steps, SourceLoc loc) {
    if (operand.buffer->scope != MemScope::Fragment) return operand;
    const auto& f = ctx.layoutOf(operand.buffer);
    Buffer local = ctx.localBuffer(operand.buffer);
    Buffer shaped = ctx.scratch(operand.buffer->name + "_stage", operand.buffer->dtype, f.shape());
    steps.push_back(barrier(loc));
    steps.push_back(fragmentLoop(ctx, f, 1, indexNames(f.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
        return store(shaped, idx, load(local, {slot}));
    }));
    steps.push_back(barrier(loc));
    Region r = operand;
    r.buffer = shaped;
    return r;
}

} // namespace

Stmt GemmOp::lower(LowerContext& ctx, SourceLoc loc) const {
    const auto& L = ctx.layoutOf(c_.buffer);
    Buffer acc = ctx.localBuffer(c_.buffer);
    DType accType = acc->dtype;
    std::vector<Stmt> steps{opComment(str(), loc)};
    Region a = stage(ctx, a_, steps, loc);
    Region b = stage(ctx, b_, steps, loc);
    std::vector<int64_t> aTile = a.squeezedExtents();
    int64_t K = transA_ ? aTile.at(0) : aTile.at(1);

    if (clearAccum_)
        steps.push_back(fragmentLoop(ctx, L, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
            return store(acc, {slot}, zero(accType));
        }));
    VarPtr kk = ctx.freshVar("kk");
    std::vector<size_t> cDims = tileDims(c_);
    Stmt update = fragmentLoop(ctx, L, 1, indexNames(L.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
        Expr i = idx[cDims.at(0)], j = idx[cDims.at(1)];
        Expr k = Expr(kk);
        Expr av = load(a.buffer, regionIndices(a, transA_ ? std::vector<Expr>{k, i} : std::vector<Expr>{i, k}));
        Expr bv = load(b.buffer, regionIndices(b, transB_ ? std::vector<Expr>{j, k} : std::vector<Expr>{k, j}));
        // 16-bit accumulators add in f32 and round once per step.
        DType math = isFloat(accType) && dtypeBits(accType) < 32 ? DType::F32 : accType;
        Expr sum = cast(math, load(acc, {slot})) + cast(math, av) * cast(math, bv);
        return store(acc, {slot}, cast(accType, sum));
    });
    steps.push_back(forLoop(kk, intImm(0), intImm(K), ForKind::Serial, update));
    return simplify(seq(steps, loc), ctx.bounds());
}

} // namespace tlc::ops
