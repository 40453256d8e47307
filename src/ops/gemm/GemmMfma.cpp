// gemm as MFMA (CDNA2 gfx90a, CDNA3 gfx942): waves of 64 lanes split C in 16 x 16 tiles; per
// k-step of one instruction each wave loads its A and B registers from shared memory (or from
// a fragment operand's staging tile) in the instruction's layout and issues one v_mfma per
// tile of its part of C. The layouts: GemmPlan.h, MfmaInstruction.
#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmPlan.h"

namespace tlc::ops {

using namespace ir;

Stmt GemmOp::lowerMfma(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, std::vector<Stmt> steps,
                       const GemmPlan& plan) const {
    const MfmaInstruction& inst = *plan.mfma;
    Buffer acc = ctx.localBuffer(c_.buffer);
    std::vector<int64_t> cTile = c_.squeezedExtents(), aTile = a_.squeezedExtents();
    int64_t M = cTile[0], N = cTile[1];
    int64_t K = transA_ ? aTile.at(0) : aTile.at(1);
    int64_t P = inst.perLane(), wave = ctx.target.warpSize;
    if (clearAccum_) {
        VarPtr s = ctx.freshVar("s");
        steps.push_back(forLoop(s, intImm(0), intImm(acc->shape[0].as<IntImm>()->value), ForKind::Unroll,
                                store(acc, {Expr(s)}, zero(acc->dtype))));
    }
    VarPtr lane = ctx.freshVar("lane"), waveRow = ctx.freshVar("wave_row"), waveCol = ctx.freshVar("wave_col");
    VarPtr kk = ctx.freshVar("kk"), mi = ctx.freshVar("mi"), nj = ctx.freshVar("nj"), r = ctx.freshVar("r");
    Expr L = Expr(lane);
    // Lane l reads row (A) or column (B) l % 16 and k = k0 + P * (l / 16) + r.
    Expr k = Expr(kk) * inst.k + L / 16 * P + Expr(r), across = L % 16;
    // A single wave along a dimension has no coordinate there.
    Expr rowBase = plan.warpsM == 1 ? intImm(0) : Expr(waveRow) * (M / plan.warpsM);
    Expr colBase = plan.warpsN == 1 ? intImm(0) : Expr(waveCol) * (N / plan.warpsN);
    auto addressOf = [](const Buffer& buf, const std::vector<Expr>& i) {
        return call("address_of", DType::I64, {load(buf, i)});
    };
    Buffer aFrag = makeBuffer(ctx.freshName(a_.buffer->name + "_frag"), a.buffer->dtype, MemScope::Local,
                              {intImm(plan.tilesM * P)});
    Buffer bFrag = makeBuffer(ctx.freshName(b_.buffer->name + "_frag"), b.buffer->dtype, MemScope::Local,
                              {intImm(plan.tilesN * P)});
    Expr m = rowBase + Expr(mi) * 16 + across, n = colBase + Expr(nj) * 16 + across;
    std::vector<Expr> aAt = regionIndices(a, transA_ ? std::vector<Expr>{k, m} : std::vector<Expr>{m, k});
    std::vector<Expr> bAt = regionIndices(b, transB_ ? std::vector<Expr>{n, k} : std::vector<Expr>{k, n});
    std::vector<Stmt> step;
    step.push_back(forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll,
                           forLoop(r, intImm(0), intImm(P), ForKind::Unroll,
                                   store(aFrag, {Expr(mi) * P + Expr(r)}, load(a.buffer, aAt)))));
    step.push_back(forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll,
                           forLoop(r, intImm(0), intImm(P), ForKind::Unroll,
                                   store(bFrag, {Expr(nj) * P + Expr(r)}, load(b.buffer, bAt)))));
    Stmt mfma = evaluate(call(inst.helper, DType::I32,
                              {addressOf(acc, {(Expr(mi) * plan.tilesN + Expr(nj)) * 4}),
                               addressOf(aFrag, {Expr(mi) * P}), addressOf(bFrag, {Expr(nj) * P})}));
    step.push_back(forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll,
                           forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll, mfma)));
    Stmt body = forLoop(kk, intImm(0), intImm(K / inst.k), ForKind::Serial, seq(step));
    body = allocate(aFrag, allocate(bFrag, body));
    Expr tx = ctx.tx();
    if (plan.warpsN > 1) body = letStmt(waveCol, tx / wave / plan.warpsM, body);
    if (plan.warpsM > 1) body = letStmt(waveRow, tx / wave % plan.warpsM, body);
    body = letStmt(lane, tx % wave, body);
    steps.push_back(body);
    return simplify(seq(steps, loc), ctx.bounds());
}

} // namespace tlc::ops
