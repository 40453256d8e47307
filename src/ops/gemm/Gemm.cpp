#include "ops/gemm/Gemm.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/gemm/GemmPlan.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

TileOpPtr GemmOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    auto out = std::make_shared<GemmOp>(*this);
    for (Region* r : {&out->a_, &out->b_, &out->c_})
        for (auto& e : r->starts) e = fn(e);
    if (out->rows_) out->rows_ = fn(out->rows_);
    return out;
}

TileOpPtr GemmOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    auto out = std::make_shared<GemmOp>(*this);
    out->a_ = fn(a_);
    out->b_ = fn(b_);
    out->c_ = fn(c_);
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withGroupInFlight() const {
    auto out = std::make_shared<GemmOp>(*this);
    out->groupInFlight_ = true;
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withGroupPart(GroupPart part) const {
    auto out = std::make_shared<GemmOp>(*this);
    out->groupInFlight_ = true;
    out->groupPart_ = part;
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withTurn(int64_t warpgroups, int64_t firstBarrier, bool wait, bool pass) const {
    auto out = std::make_shared<GemmOp>(*this);
    out->turnWarpgroups_ = warpgroups;
    out->turnBarrier_ = firstBarrier;
    out->turnWait_ = wait;
    out->turnPass_ = pass;
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withoutWait() const {
    auto out = std::make_shared<GemmOp>(*this);
    out->noWait_ = true;
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withReusedB() const {
    auto out = std::make_shared<GemmOp>(*this);
    out->reuseB_ = true;
    return out;
}

std::shared_ptr<const GemmOp> GemmOp::withRows(Expr rows) const {
    auto out = std::make_shared<GemmOp>(*this);
    out->rows_ = std::move(rows);
    return out;
}

std::string GemmOp::str() const {
    std::string extra;
    if (transA_) extra += ", transpose_A = true";
    if (transB_) extra += ", transpose_B = true";
    if (policy_ == GemmPolicy::FullRow) extra += ", policy = full_row";
    if (policy_ == GemmPolicy::FullCol) extra += ", policy = full_col";
    if (clearAccum_) extra += ", clear_accum = true";
    if (reuseB_) extra += ", reuse_packed_B = true";
    if (rows_) extra += ", rows = " + printExpr(rows_);
    return fmt::format("gemm({}, {}, {}{})", regionString(a_), regionString(b_), regionString(c_), extra);
}

namespace {

// A fragment operand is first written to shared memory, where every thread can read it.
Region stage(LowerContext& ctx, const Region& operand, std::vector<Stmt>& steps, SourceLoc loc) {
    if (operand.buffer->scope != MemScope::Fragment) return operand;
    const auto& f = ctx.layoutOf(operand.buffer);
    Buffer local = ctx.localBuffer(operand.buffer);
    Buffer shaped = ctx.scratch(operand.buffer->name + "_stage", operand.buffer->dtype, f.shape());
    // Read back eight rows at a time like any tensor-core operand: swizzled the same way
    // (wgmma's lowering gives its staged tiles its own layout instead).
    if (ctx.target.has(Feature::Ldmatrix) && f.rank() == 2)
        ctx.swizzleForTensorCores(shaped, "staging " + operand.buffer->name);
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
    GemmPlan plan = planGemm(*this, ctx);
    if (plan.kind == GemmPlan::Kind::Wgmma) {
        // The rs form takes a 16-bit A fragment in the accumulator layout of this split.
        std::vector<int64_t> shape = matrixExtents(a_);
        bool aFromRegisters = a_.buffer->scope == MemScope::Fragment && plan.wgmma->registerA && !transA_ &&
                              a_.coversWholeBuffer() && shape.size() == 2 &&
                              ctx.layoutOf(a_.buffer).sameAs(wgmmaAccumulator(shape[0], shape[1], ctx.threads, plan.warpsM, 1));
        Region a = aFromRegisters ? a_ : stage(ctx, a_, steps, loc);
        Region b = stage(ctx, b_, steps, loc);
        return lowerWgmma(ctx, loc, a, b, aFromRegisters, std::move(steps), plan);
    }
    if (plan.kind == GemmPlan::Kind::MmaSm80) {
        // The rs form reads A where it is; other fragment operands are staged.
        OperandForm aFrom = aForm(ctx, plan);
        Region a = aFrom == OperandForm::Registers ? a_ : stage(ctx, a_, steps, loc);
        Region b = stage(ctx, b_, steps, loc);
        return lowerMma(ctx, loc, a, b, aFrom, std::move(steps), plan);
    }
    if (plan.kind == GemmPlan::Kind::Mfma) {
        // Fragment operands are staged: MFMA's A layout is not its accumulator's.
        Region a = stage(ctx, a_, steps, loc);
        Region b = stage(ctx, b_, steps, loc);
        return lowerMfma(ctx, loc, a, b, std::move(steps), plan);
    }
    if (auto micro = lowerCpu(ctx, loc, steps)) return *micro;
    Region a = stage(ctx, a_, steps, loc);
    Region b = stage(ctx, b_, steps, loc);
    return lowerSimt(ctx, loc, a, b, std::move(steps));
}

Stmt GemmOp::lowerSimt(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, std::vector<Stmt> steps) const {
    const auto& L = ctx.layoutOf(c_.buffer);
    Buffer acc = ctx.localBuffer(c_.buffer);
    DType accType = acc->dtype;
    std::vector<int64_t> aTile = matrixExtents(a);
    int64_t K = transA_ ? aTile.at(0) : aTile.at(1);
    if (clearAccum_)
        steps.push_back(fragmentLoop(ctx, L, 1, {}, [&](const Expr& slot, const std::vector<Expr>&) {
            return store(acc, {slot}, zero(accType));
        }));
    VarPtr kk = ctx.freshVar("kk");
    std::vector<size_t> cDims = L.rank() == c_.rank() ? matrixDims(c_) : std::vector<size_t>{0, 1};
    Stmt update = fragmentLoop(ctx, L, 1, indexNames(L.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
        Expr i = idx[cDims.at(0)], j = idx[cDims.at(1)];
        Expr k = Expr(kk);
        Expr av = load(a.buffer, matrixIndices(a, transA_ ? std::vector<Expr>{k, i} : std::vector<Expr>{i, k}));
        Expr bv = load(b.buffer, matrixIndices(b, transB_ ? std::vector<Expr>{j, k} : std::vector<Expr>{k, j}));
        // 16-bit accumulators add in f32 and round once per step.
        DType math = isFloat(accType) && dtypeBits(accType) < 32 ? DType::F32 : accType;
        Expr sum = cast(math, load(acc, {slot})) + cast(math, av) * cast(math, bv);
        return store(acc, {slot}, cast(accType, sum));
    });
    steps.push_back(forLoop(kk, intImm(0), intImm(K), ForKind::Serial, update));
    return simplify(seq(steps, loc), ctx.bounds());
}

// mma.sync (sm80 and later), per k-step of one instruction: each warp loads its A and B
// fragments in the instruction's layout and issues one mma per 16 x 8 tile of its part of C.
// PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k32": lane = 4 * group + t, with P input
// elements per register (2 for 16-bit types, 4 for 8-bit), A element r sits at row
// group + 8 * (r / P % 2), column P * t + r % P + 4P * (r / 2P); B element r at row (k)
// P * t + r % P + 4P * (r / P), column group.
//
// Operands come, in order of preference, from registers (an A fragment already in the
// accumulator layout: the `rs` form), from shared memory with ldmatrix (whole 16-byte rows
// along k, or 16-bit types with .trans), or element by element.
Stmt GemmOp::lowerMma(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, OperandForm aFrom,
                      std::vector<Stmt> steps, const GemmPlan& plan) const {
    const MmaInstruction& inst = *plan.mma;
    Buffer acc = ctx.localBuffer(c_.buffer);
    std::vector<int64_t> cTile = matrixExtents(c_), aTile = matrixExtents(a_);
    int64_t M = cTile[0], N = cTile[1];
    int64_t K = transA_ ? aTile.at(0) : aTile.at(1);
    int64_t P = inst.perRegister(), aElems = 4 * P, bElems = 2 * P;
    if (clearAccum_) {
        VarPtr s = ctx.freshVar("s");
        steps.push_back(forLoop(s, intImm(0), intImm(acc->shape[0].as<IntImm>()->value), ForKind::Unroll,
                                store(acc, {Expr(s)}, zero(acc->dtype))));
    }
    VarPtr lane = ctx.freshVar("lane"), warpRow = ctx.freshVar("warp_row"), warpCol = ctx.freshVar("warp_col");
    Expr L = Expr(lane), group = L / 4, t = L % 4;
    Expr rowBase = Expr(warpRow) * (M / plan.warpsM), colBase = Expr(warpCol) * (N / plan.warpsN);
    VarPtr kk = ctx.freshVar("kk"), mi = ctx.freshVar("mi"), nj = ctx.freshVar("nj"), r = ctx.freshVar("r");
    Expr k0 = Expr(kk) * inst.k, R = Expr(r);
    auto addressOf = [](const Buffer& buf, const std::vector<Expr>& i) {
        return call("address_of", DType::I64, {load(buf, i)});
    };
    // Lane addresses for ldmatrix: lanes 8i..8i+7 give the rows of matrix i.
    Expr matrix = L / 8, row8 = L % 8;
    int64_t chunk = 16 / dtypeBytes(inst.a);  // elements in one 16-byte row

    std::vector<Stmt> step;
    std::vector<Buffer> registers;
    // A: registers, ldmatrix or elements.
    std::function<Expr(const Expr&)> aPointer;
    if (aFrom == OperandForm::Registers) {
        Buffer held = ctx.localBuffer(a_.buffer);
        // Two neighbouring accumulator tiles (8 columns each) are one A tile of 16 columns.
        aPointer = [&, held](const Expr& m) { return addressOf(held, {(m * (K / 8) + Expr(kk) * 2) * 4}); };
    } else {
        Buffer aFrag = makeBuffer(ctx.freshName(a_.buffer->name + "_frag"), a.buffer->dtype, MemScope::Local,
                                  {intImm(plan.tilesM * aElems)});
        registers.push_back(aFrag);
        Expr mBase = rowBase + Expr(mi) * 16;
        auto at = [&](const Expr& m, const Expr& k) {
            return matrixIndices(a, transA_ ? std::vector<Expr>{k, m} : std::vector<Expr>{m, k});
        };
        Stmt load;
        if (aFrom == OperandForm::Ldmatrix) {
            // Matrices: (rows 0-7, k 0..), (rows 8-15, k 0..), (rows 0-7, k + chunk), (rows 8-15, k + chunk).
            std::vector<Expr> src = transA_ ? at(mBase + matrix % 2 * 8, k0 + matrix / 2 * 8 + row8)
                                            : at(mBase + matrix % 2 * 8 + row8, k0 + matrix / 2 * chunk);
            load = evaluate(call(transA_ ? "ldmatrix_x4_trans" : "ldmatrix_x4", DType::I32,
                                 {addressOf(aFrag, {Expr(mi) * aElems}), addressOf(a.buffer, src)}));
        } else {
            Expr m = mBase + group + R / P % 2 * 8, k = k0 + t * P + R % P + R / (2 * P) * (4 * P);
            load = forLoop(r, intImm(0), intImm(aElems), ForKind::Unroll,
                           store(aFrag, {Expr(mi) * aElems + R}, ir::load(a.buffer, at(m, k))));
        }
        step.push_back(forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll, load));
        aPointer = [&, aFrag](const Expr& m) { return addressOf(aFrag, {m * aElems}); };
    }
    // B: ldmatrix (two n-tiles per x4, a last odd one with x2) or elements.
    Buffer bFrag = makeBuffer(ctx.freshName(b_.buffer->name + "_frag"), b.buffer->dtype, MemScope::Local,
                              {intImm(plan.tilesN * bElems)});
    registers.push_back(bFrag);
    auto atB = [&](const Expr& k, const Expr& n) {
        return matrixIndices(b, transB_ ? std::vector<Expr>{n, k} : std::vector<Expr>{k, n});
    };
    if (bForm(ctx) == OperandForm::Ldmatrix) {
        auto ldB = [&](const Expr& firstTile, int64_t tiles) {
            Expr i = tiles == 2 ? matrix : matrix % 2, nBase = colBase + firstTile * 8;
            // Matrices: (n-tile 0, k 0..), (n-tile 0, k + chunk), (n-tile 1, k 0..), (n-tile 1, k + chunk).
            std::vector<Expr> src = transB_ ? atB(k0 + i % 2 * chunk, nBase + i / 2 * 8 + row8)
                                            : atB(k0 + i % 2 * 8 + row8, nBase + i / 2 * 8);
            std::string name = fmt::format("ldmatrix_x{}{}", 2 * tiles, transB_ ? "" : "_trans");
            return evaluate(call(name, DType::I32, {addressOf(bFrag, {firstTile * bElems}), addressOf(b.buffer, src)}));
        };
        if (plan.tilesN / 2 > 0)
            step.push_back(forLoop(nj, intImm(0), intImm(plan.tilesN / 2), ForKind::Unroll, ldB(Expr(nj) * 2, 2)));
        if (plan.tilesN % 2) step.push_back(ldB(intImm(plan.tilesN - 1), 1));
    } else {
        Expr k = k0 + t * P + R % P + R / P * (4 * P), n = colBase + Expr(nj) * 8 + group;
        step.push_back(forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll,
                               forLoop(r, intImm(0), intImm(bElems), ForKind::Unroll,
                                       store(bFrag, {Expr(nj) * bElems + R}, ir::load(b.buffer, atB(k, n))))));
    }
    Stmt mma = evaluate(call(inst.helper, DType::I32,
                             {addressOf(acc, {(Expr(mi) * plan.tilesN + Expr(nj)) * 4}), aPointer(Expr(mi)),
                              addressOf(bFrag, {Expr(nj) * bElems})}));
    step.push_back(forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll,
                           forLoop(nj, intImm(0), intImm(plan.tilesN), ForKind::Unroll, mma)));
    // Registers are indexed by constants only: with A in registers, k-steps unroll too.
    ForKind kLoop = aFrom == OperandForm::Registers ? ForKind::Unroll : ForKind::Serial;
    Stmt body = forLoop(kk, intImm(0), intImm(K / inst.k), kLoop, seq(step));
    for (auto it = registers.rbegin(); it != registers.rend(); ++it) body = allocate(*it, body);
    Expr tx = ctx.tx();
    body = letStmt(lane, tx % 32, letStmt(warpRow, tx / 32 % plan.warpsM, letStmt(warpCol, tx / 32 / plan.warpsM, body)));
    steps.push_back(body);
    return simplify(seq(steps, loc), ctx.bounds());
}

GemmOp::OperandForm GemmOp::aForm(const LowerContext& ctx, const GemmPlan& plan) const {
    if (a_.buffer->scope == MemScope::Fragment) {
        std::vector<int64_t> shape = matrixExtents(a_);
        bool inAccumulatorLayout =
            !transA_ && plan.mma->perRegister() == 2 && a_.coversWholeBuffer() && shape.size() == 2 &&
            shape[0] % (16 * plan.warpsM) == 0 && shape[1] % 16 == 0 &&
            ctx.layoutOf(a_.buffer).sameAs(mmaAccumulator(shape[0], shape[1], ctx.threads, plan.warpsM, 1));
        if (inAccumulatorLayout) return OperandForm::Registers;
    }
    // A fragment operand that is not is staged through shared memory as a whole tile.
    return ldmatrixFits(ctx, a_, !transA_) ? OperandForm::Ldmatrix : OperandForm::Elements;
}

GemmOp::OperandForm GemmOp::bForm(const LowerContext& ctx) const {
    return ldmatrixFits(ctx, b_, transB_) ? OperandForm::Ldmatrix : OperandForm::Elements;
}

// ldmatrix reads whole 16-byte rows from shared memory: rows along k (`kContiguous`) work
// for every type, rows across k need .trans, which moves 16-bit elements only.
bool GemmOp::ldmatrixFits(const LowerContext& ctx, const Region& operand, bool kContiguous) {
    if (!ctx.target.has(Feature::Ldmatrix)) return false;
    int bytes = dtypeBytes(operand.buffer->dtype);
    if (!kContiguous && bytes != 2) return false;
    if (operand.buffer->scope == MemScope::Fragment) return true;  // staged as a whole tile
    if (operand.buffer->scope != MemScope::Shared || operand.buffer->shape.empty()) return false;
    int64_t chunk = 16 / bytes;
    size_t last = operand.buffer->shape.size() - 1;
    auto rowLength = asConstInt(operand.buffer->shape[last]);
    return rowLength && *rowLength % chunk == 0 && knownMultiple(operand.starts[last]) % chunk == 0;
}

} // namespace tlc::ops
