// gemm as MFMA (CDNA2 gfx90a, CDNA3 gfx942): waves of 64 lanes split C in 16 x 16 tiles; per
// k-step of one instruction each wave loads its A and B registers from shared memory (or from
// a fragment operand's staging tile) in the instruction's layout and issues one v_mfma per
// tile of its part of C. The layouts: GemmPlan.h, MfmaInstruction.
#include "ops/gemm/GemmMfma.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/gemm/Gemm.h"

namespace tlc::ops {

using namespace ir;

namespace {

// Whether a lane's P elements of an operand are one vector read: k is the stored rows'
// dimension and every read starts on a multiple of P (the row length and the region's start),
// so that the P elements stay inside one 16-byte chunk under any swizzle or padding.
bool vectorReads(const Region& r, bool kLast, int64_t P) {
    if (!kLast || P == 1 || r.buffer->scope != MemScope::Shared || r.buffer->shape.empty()) return false;
    size_t last = r.buffer->shape.size() - 1;
    auto rowLength = asConstInt(r.buffer->shape[last]);
    return rowLength && *rowLength % P == 0 && knownMultiple(r.starts[last]) % P == 0;
}

} // namespace

Stmt GemmOp::lowerMfma(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, std::vector<Stmt> steps,
                       const GemmPlan& plan) const {
    const MfmaInstruction& inst = *plan.mfma;
    Buffer acc = ctx.localBuffer(c_.buffer);
    std::vector<int64_t> cTile = matrixExtents(c_), aTile = matrixExtents(a_);
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
    auto kAt = [&](const Expr& rr) { return Expr(kk) * inst.k + L / 16 * P + rr; };
    Expr across = L % 16;
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
    auto aAt = [&](const Expr& rr) {
        return matrixIndices(a, transA_ ? std::vector<Expr>{kAt(rr), m} : std::vector<Expr>{m, kAt(rr)});
    };
    auto bAt = [&](const Expr& rr) {
        return matrixIndices(b, transB_ ? std::vector<Expr>{n, kAt(rr)} : std::vector<Expr>{kAt(rr), n});
    };
    // A lane's P elements: one vector read where k is contiguous, else one element at a time.
    auto fill = [&](const VarPtr& tile, int64_t tiles, const Buffer& frag, const Region& operand,
                    const std::function<std::vector<Expr>(const Expr&)>& at, bool kLast) {
        Stmt move = vectorReads(operand, kLast, P)
                        ? store(frag, {Expr(tile) * P}, load(operand.buffer, at(intImm(0)), int(P)))
                        : forLoop(r, intImm(0), intImm(P), ForKind::Unroll,
                                  store(frag, {Expr(tile) * P + Expr(r)}, load(operand.buffer, at(Expr(r)))));
        return forLoop(tile, intImm(0), intImm(tiles), ForKind::Unroll, move);
    };
    std::vector<Stmt> step;
    step.push_back(fill(mi, plan.tilesM, aFrag, a, aAt, !transA_));
    step.push_back(fill(nj, plan.tilesN, bFrag, b, bAt, transB_));
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

std::optional<layout::SharedAccess> mfmaOperandAccess(const GemmOp& op, const GemmPlan& plan, const Buffer& shared,
                                                      const LowerContext& ctx) {
    bool isA = op.a().buffer.get() == shared.get();
    const Region& r = isA ? op.a() : op.b();
    if (plan.kind != GemmPlan::Kind::Mfma || !trailingTileShape(r)) return std::nullopt;
    size_t rank = r.rank();
    const MfmaInstruction& inst = *plan.mfma;
    int64_t P = inst.perLane(), tiles = isA ? plan.tilesM : plan.tilesN;
    // The operand's stored dimensions: [m or n, k] unless transposed (A) or [k, n] (B).
    bool kLast = isA ? !op.transposeA() : op.transposeB();
    layout::SharedAccess a;
    a.what = op.str() + (isA ? " (A)" : " (B)");
    a.lanes = ctx.target.warpSize;
    a.warps = std::max<int64_t>(1, ctx.threads / a.lanes);
    // Lane l: row (column) l % 16 of each 16-wide tile, k from P * (l / 16); P consecutive
    // elements in one read where the lowering vectorises them, one at a time otherwise.
    bool vector = vectorReads(r, kLast, P);
    a.vec = vector ? P : 1;
    a.steps = vector ? tiles : tiles * P;
    a.element = [rank, kLast, vector, P](int64_t lane, int64_t step) {
        int64_t tile = vector ? step : step / P, r = vector ? 0 : step % P;
        int64_t across = tile * 16 + lane % 16, k = P * (lane / 16) + r;
        std::vector<int64_t> index(rank, 0);
        index[rank - 2] = kLast ? across : k;
        index[rank - 1] = kLast ? k : across;
        return index;
    };
    return a;
}

} // namespace tlc::ops
