#include "ops/gemm/Gemm.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/gemm/GemmPlan.h"

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
    std::vector<Stmt> steps{comment(str(), loc)};
    Region a = stage(ctx, a_, steps, loc);
    Region b = stage(ctx, b_, steps, loc);
    GemmPlan plan = planGemm(*this, ctx);
    if (plan.kind == GemmPlan::Kind::MmaSm80) return lowerMma(ctx, loc, a, b, std::move(steps), plan);
    return lowerSimt(ctx, loc, a, b, std::move(steps));
}

Stmt GemmOp::lowerSimt(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, std::vector<Stmt> steps) const {
    const auto& L = ctx.layoutOf(c_.buffer);
    Buffer acc = ctx.localBuffer(c_.buffer);
    DType accType = acc->dtype;
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

// mma.sync m16n8k16 (sm80 and later): per k-step of 16, each warp loads its A and B
// fragments from shared memory in the instruction's layout (PTX ISA, "Matrix Fragments for
// mma.m16n8k16": lane = 4 * group + t; A holds rows group and group + 8, columns 2t, 2t + 1 and
// those + 8; B holds rows 2t, 2t + 1 and those + 8 of column group), then issues one mma per
// 16 x 8 tile of its part of C.
Stmt GemmOp::lowerMma(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, std::vector<Stmt> steps,
                      const GemmPlan& plan) const {
    Buffer acc = ctx.localBuffer(c_.buffer);
    std::vector<int64_t> cTile = c_.squeezedExtents(), aTile = a.squeezedExtents();
    int64_t M = cTile[0], N = cTile[1];
    int64_t K = transA_ ? aTile.at(0) : aTile.at(1);
    if (clearAccum_) {
        VarPtr s = ctx.freshVar("s");
        steps.push_back(forLoop(s, intImm(0), intImm(acc->shape[0].as<IntImm>()->value), ForKind::Unroll,
                                store(acc, {Expr(s)}, zero(acc->dtype))));
    }
    Expr tx = ctx.tx();
    VarPtr lane = ctx.freshVar("lane"), warpRow = ctx.freshVar("warp_row"), warpCol = ctx.freshVar("warp_col");
    Expr group = Expr(lane) / 4, t = Expr(lane) % 4;
    Expr rowBase = Expr(warpRow) * (M / plan.warpsM), colBase = Expr(warpCol) * (N / plan.warpsN);
    Buffer aFrag = makeBuffer(ctx.freshName(a_.buffer->name + "_frag"), a.buffer->dtype, MemScope::Local,
                              {intImm(plan.tilesM * 8)});
    Buffer bFrag = makeBuffer(ctx.freshName(b_.buffer->name + "_frag"), b.buffer->dtype, MemScope::Local,
                              {intImm(plan.tilesN * 4)});
    VarPtr kk = ctx.freshVar("kk"), mi = ctx.freshVar("mi"), nj = ctx.freshVar("nj"), r = ctx.freshVar("r");
    Expr k0 = Expr(kk) * 16;
    auto elementA = [&](const Expr& row, const Expr& col) {
        return load(a.buffer, regionIndices(a, transA_ ? std::vector<Expr>{col, row} : std::vector<Expr>{row, col}));
    };
    auto elementB = [&](const Expr& kRow, const Expr& n) {
        return load(b.buffer, regionIndices(b, transB_ ? std::vector<Expr>{n, kRow} : std::vector<Expr>{kRow, n}));
    };
    Expr R = Expr(r);
    // a0..a7: rows group (+8 for a2, a3, a6, a7), columns 2t + (0, 1) (+8 for a4..a7).
    Stmt loadA = forLoop(r, intImm(0), intImm(8), ForKind::Unroll,
                         store(aFrag, {Expr(mi) * 8 + R},
                               elementA(rowBase + Expr(mi) * 16 + group + (R / 2 % 2) * 8, k0 + t * 2 + R % 2 + R / 4 * 8)));
    // b0..b3: rows 2t + (0, 1) (+8 for b2, b3) of column group.
    Stmt loadB = forLoop(r, intImm(0), intImm(4), ForKind::Unroll,
                         store(bFrag, {Expr(nj) * 4 + R},
                               elementB(k0 + t * 2 + R % 2 + R / 2 * 8, colBase + Expr(nj) * 8 + group)));
    std::string instruction = a.buffer->dtype == DType::BF16 ? "mma_m16n8k16_f32_bf16" : "mma_m16n8k16_f32_f16";
    auto addressOf = [](const Buffer& buf, const Expr& i) { return call("address_of", DType::I64, {load(buf, {i})}); };
    Stmt mma = evaluate(call(instruction, DType::I32,
                             {addressOf(acc, (Expr(mi) * plan.tilesN + Expr(nj)) * 4), addressOf(aFrag, Expr(mi) * 8),
                              addressOf(bFrag, Expr(nj) * 4)}));
    Stmt step = seq({forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll, loadA),
                     forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll, loadB),
                     forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll,
                             forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll, mma))});
    Stmt body = forLoop(kk, intImm(0), intImm(K / 16), ForKind::Serial, step);
    body = allocate(aFrag, allocate(bFrag, body));
    body = letStmt(lane, tx % 32, letStmt(warpRow, tx / 32 % plan.warpsM, letStmt(warpCol, tx / 32 / plan.warpsM, body)));
    steps.push_back(body);
    return simplify(seq(steps, loc), ctx.bounds());
}

} // namespace tlc::ops
