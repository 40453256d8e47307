// gemm as wgmma.mma_async (sm90a): warpgroups of 128 threads split C in 64-row blocks; B, and
// A unless it is a 16-bit fragment already in the accumulator layout (the rs form), are read
// from shared memory through matrix descriptors (PTX ISA, "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate": "Shared Memory Matrix Layout", "Matrix Descriptor Format").
#include "ops/gemm/GemmWgmma.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

namespace {

// The wgmma forms the runtime has (tl_cuda_wgmma.h, section wgmma), as data. f16 accumulators have
// no helper yet: those gemms keep the mma.sync forms.
constexpr WgmmaInstruction kWgmmaForms[] = {
    {DType::F16, DType::F16, DType::F32, 16, "wgmma_m64nNk16_f32_f16", true, true},
    {DType::BF16, DType::BF16, DType::F32, 16, "wgmma_m64nNk16_f32_bf16", true, true},
    {DType::F8E4M3, DType::F8E4M3, DType::F32, 32, "wgmma_m64nNk32_f32_e4m3", false, false},
    {DType::F8E5M2, DType::F8E5M2, DType::F32, 32, "wgmma_m64nNk32_f32_e5m2", false, false},
    {DType::F8E4M3, DType::F8E5M2, DType::F32, 32, "wgmma_m64nNk32_f32_e4m3_e5m2", false, false},
    {DType::F8E5M2, DType::F8E4M3, DType::F32, 32, "wgmma_m64nNk32_f32_e5m2_e4m3", false, false},
    {DType::I8, DType::I8, DType::I32, 32, "wgmma_m64nNk32_s32_s8", false, false},
};

const WgmmaInstruction* findWgmma(DType a, DType b, DType c) {
    for (const auto& w : kWgmmaForms)
        if (w.a == a && w.b == b && w.c == c) return &w;
    return nullptr;
}

bool sameLayout(const LowerContext::SharedLayout& x, const LowerContext::SharedLayout& y) {
    return x.swizzle == y.swizzle && x.padElems == y.padElems && x.boxCols == y.boxCols;
}

// The operand's tile is the whole of its buffer's last two dimensions (a leading version
// index allowed): the descriptors describe the buffer's layout, not a part of it.
bool wholeTrailingTile(const Region& r) {
    size_t rank = r.rank();
    if (rank < 2 || r.buffer->shape.size() != rank) return false;
    for (size_t d = 0; d < rank; ++d) {
        bool trailing = d + 2 >= rank;
        const int64_t* extent = asConstInt(r.buffer->shape[d]);
        const int64_t* start = asConstInt(r.starts[d]);
        if (trailing && (!extent || *extent != r.extents[d] || !start || *start != 0)) return false;
        if (!trailing && r.extents[d] != 1) return false;
    }
    return true;
}

// Why a gemm operand cannot be a wgmma descriptor operand; empty when it can. `mnMajor`: the
// operand's MN dimension is the contiguous one. Fragments are staged into a shared tile of
// their shape (unless A is taken from registers), so only their shape matters.
std::string operandProblem(const char* name, const Region& r, bool mnMajor, const WgmmaInstruction& inst,
                           const LowerContext& ctx) {
    if (mnMajor && !inst.mnMajor)
        return fmt::format("{} is stored {}-major, which {} wgmma cannot read", name, name[0] == 'A' ? "M" : "N",
                           dtypeName(inst.a));
    Buffer b = r.buffer;
    if (b->scope == MemScope::Fragment) {
        if (matrixExtents(r).size() != 2) return fmt::format("{} is not a 2-D tile", name);
        std::vector<Expr> shape;
        for (int64_t e : matrixExtents(r)) shape.push_back(intImm(e));
        b = makeBuffer(b->name, b->dtype, MemScope::Shared, shape);
    } else if (b->scope != MemScope::Shared) {
        return fmt::format("{} is in {} memory", name, scopeName(b->scope));
    } else if (!wholeTrailingTile(r)) {
        return fmt::format("{} is a part of the rows of its shared buffer", name);
    }
    auto wanted = wgmmaSharedLayout(b, "");
    if (!wanted)
        return fmt::format("{}'s rows are not a whole swizzle span (32, 64 or a multiple of 128 bytes, a multiple of "
                           "8 rows)",
                           name);
    auto it = ctx.sharedLayouts.find(r.buffer.get());
    if (it != ctx.sharedLayouts.end() && !sameLayout(it->second, *wanted))
        return fmt::format("{} has another shared layout ({})", name, it->second.reason);
    return "";
}

// A sum's terms as (expression, constant factor): `kk * 32 + mi * 4096 + 64` is (kk, 32),
// (mi, 4096), (1, 64).
void terms(const Expr& e, std::vector<std::pair<Expr, int64_t>>& out) {
    const auto* b = e.as<Binary>();
    if (b && b->op == BinaryOp::Add) {
        terms(b->a, out);
        terms(b->b, out);
        return;
    }
    if (const int64_t* c = asConstInt(e)) {
        out.emplace_back(intImm(1), *c);
        return;
    }
    const int64_t* factor = b && b->op == BinaryOp::Mul ? asConstInt(b->b) : nullptr;
    if (factor) out.emplace_back(b->a, *factor);
    else out.emplace_back(e, 1);
}

// e / d and e % d for a non-negative e, written as a reader would: exactly when every term's
// factor is a multiple of d (`mi * 128` / 128 is `mi`, the remainder 0), as a digit of the one
// variable term when d is a multiple of its factor (`kk * 32` is `kk / 4` and `kk % 4 * 32`).
std::pair<Expr, Expr> divMod(const Expr& e, int64_t d) {
    std::vector<std::pair<Expr, int64_t>> parts;
    terms(simplify(e), parts);
    bool exact = true;
    for (const auto& [x, c] : parts) exact &= c % d == 0;
    if (exact) {
        Expr q = intImm(0);
        for (const auto& [x, c] : parts) q = q + x * (c / d);
        return {simplify(q), intImm(0)};
    }
    if (parts.size() == 1 && d % parts[0].second == 0) {
        auto [x, c] = parts[0];
        return {x / (d / c), x % (d / c) * c};
    }
    return {e / d, e % d};
}

} // namespace

std::optional<LowerContext::SharedLayout> wgmmaSharedLayout(const Buffer& shared, std::string reason) {
    std::vector<int64_t> shape;
    if (!constantShape(shared, shape) || shape.size() < 2) return std::nullopt;
    int64_t rows = shape[shape.size() - 2], cols = shape.back(), bytes = dtypeBytes(shared->dtype);
    int64_t rowBytes = cols * bytes, span = std::min<int64_t>(rowBytes, 128);
    if (rows % 8 != 0 || (span != 32 && span != 64 && span != 128) || rowBytes % span != 0) return std::nullopt;
    LowerContext::SharedLayout l;
    // chunk ^= (row / (128 / S)) % (S / 16): what the hardware's S-byte swizzle does to the
    // address bits [4, 7) from the bits above 7, for rows of S bytes starting 8 * S aligned.
    l.swizzle = layout::bankConflictFreeSwizzle(span / bytes, bytes);
    l.boxCols = rowBytes > 128 ? 128 / bytes : 0;
    l.alignBytes = 8 * span;
    l.reason = std::move(reason);
    return l;
}

std::string planWgmma(const GemmOp& op, const LowerContext& ctx, GemmPlan& plan) {
    DType a = op.a().buffer->dtype, b = op.b().buffer->dtype, c = op.c().buffer->dtype;
    const WgmmaInstruction* inst = findWgmma(a, b, c);
    if (!inst) return fmt::format("no wgmma form for {} x {} -> {}", dtypeName(a), dtypeName(b), dtypeName(c));
    if (ctx.threads % 128 != 0) return fmt::format("{} threads are not whole warpgroups of 128", ctx.threads);
    std::vector<int64_t> cTile = matrixExtents(op.c()), aTile = matrixExtents(op.a());
    int64_t M = cTile[0], N = cTile[1], K = op.transposeA() ? aTile[0] : aTile[1];
    if (op.c().buffer->shape.size() != 2) return "the accumulator is not a 2-D fragment";
    if (K % inst->k != 0) return fmt::format("K = {} is not a multiple of {}", K, inst->k);
    for (auto problem : {operandProblem("A", op.a(), op.transposeA(), *inst, ctx),
                         operandProblem("B", op.b(), !op.transposeB(), *inst, ctx)})
        if (!problem.empty()) return problem;
    // Warpgroups over C: whole 64-row blocks each, and N / warpgroupsN columns in multiples
    // of 64 (the widths the runtime's helpers take); the policy as for mma.sync.
    // Ties go to more warpgroups down: wider instructions, whole rows per warpgroup.
    // Parts of 32 columns (m64n32) only where no 64-column split exists: a 64 x 64 tile over two
    // warpgroups (MLA decode's scores at 256 threads) would otherwise fall back to mma.sync, whose
    // eight warps each read all of A and hold every row's softmax statistics.
    int64_t groups = ctx.threads / 128;
    auto split = chooseWarpSplit(M, N, groups, op.policy(), 64, 64, true);
    if (!split) split = chooseWarpSplit(M, N, groups, op.policy(), 64, 32, true);
    if (!split)
        return fmt::format("{} x {} does not split over {} warpgroup(s) in blocks of 64 rows and 32-column multiples",
                           M, N, groups);
    plan.kind = GemmPlan::Kind::Wgmma;
    plan.wgmma = inst;
    plan.warpsM = split->first;
    plan.warpsN = split->second;
    plan.tilesM = M / (64 * plan.warpsM);
    plan.wgmmaN.clear();
    for (int64_t left = N / plan.warpsN; left > 0;) {
        int64_t width = left >= 256 ? 256 : left >= 128 ? 128 : left >= 64 ? 64 : 32;
        plan.wgmmaN.push_back(width);
        left -= width;
    }
    plan.accumulator = wgmmaAccumulator(M, N, ctx.threads, plan.warpsM, plan.warpsN);
    return "";
}

// Per k-step of the instruction (16 or 32 elements), each warpgroup issues one wgmma per row
// block and instruction width, reading A and B through descriptors made once per gemm and
// advanced to the k-step's, row block's and columns' start. wgmma is asynchronous: the group
// is committed and waited for (wait_group 0) before the gemm ends, so that the accumulators
// are final and the operand tiles may be overwritten after the next barrier, as the
// cp.async pipeline does. A gemm pipeline-loops lets keep its group in flight waits only for
// the previous one (wait_group 1): its loop releases each stage one iteration later and
// drains the last group after the loop (WgmmaDrainOp).
Stmt GemmOp::lowerWgmma(LowerContext& ctx, SourceLoc loc, const Region& a, const Region& b, bool aFromRegisters,
                        std::vector<Stmt> steps, const GemmPlan& plan) const {
    const WgmmaInstruction& inst = *plan.wgmma;
    Buffer acc = ctx.localBuffer(c_.buffer);
    std::vector<int64_t> cTile = matrixExtents(c_), aTile = matrixExtents(a_);
    int64_t M = cTile[0], N = cTile[1], K = transA_ ? aTile[0] : aTile[1];
    int64_t slotsPerBlock = N / plan.warpsN / 2, accSlots = plan.tilesM * slotsPerBlock;
    // Staged fragments are read through descriptors too: their scratch tiles take the layout.
    for (auto [staged, original] : {std::pair{&a, &a_}, std::pair{&b, &b_}})
        if (staged->buffer != original->buffer)
            ctx.sharedLayouts[staged->buffer.get()] =
                *wgmmaSharedLayout(staged->buffer, "wgmma (staged " + original->buffer->name + ")");
    if (clearAccum_) {
        VarPtr s = ctx.freshVar("s");
        steps.push_back(forLoop(s, intImm(0), intImm(accSlots), ForKind::Unroll, store(acc, {Expr(s)}, zero(acc->dtype))));
    }
    auto addressOf = [](const Buffer& buf, const std::vector<Expr>& i) {
        return call("address_of", DType::I64, {load(buf, i)});
    };
    // The warpgroup's part of C (named only when there are several).
    VarPtr wgRow = ctx.freshVar("warpgroup_row"), wgCol = ctx.freshVar("warpgroup_col");
    Expr rowBase = plan.warpsM > 1 ? Expr(wgRow) * (M / plan.warpsM) : intImm(0);
    Expr colBase = plan.warpsN > 1 ? Expr(wgCol) * (N / plan.warpsN) : intImm(0);
    VarPtr kk = ctx.freshVar("kk"), mi = ctx.freshVar("mi");
    Expr k0 = Expr(kk) * inst.k;

    // One descriptor per shared operand (the tile's start), and the byte offset of element
    // (row, col) of the tile in its stored layout at a row that starts an 8-row atom and a
    // column that starts a 16-byte chunk, where the swizzle changes nothing.
    struct Operand {
        VarPtr desc;
        Expr value;
        std::function<Expr(const Expr& row, const Expr& col)> offset;
    };
    auto describe = [&](const Region& r, bool mnMajor) {
        std::vector<int64_t> shape;
        constantShape(r.buffer, shape);
        int64_t rows = shape[shape.size() - 2], bytes = dtypeBytes(r.buffer->dtype);
        int64_t span = std::min<int64_t>(shape.back() * bytes, 128);
        // K-major: 8-row atoms of MN `strideBytes` apart, the leading offset unused (16).
        // MN-major: atoms of 8 K rows `strideBytes` apart, the next `span` bytes of MN one box
        // (rows * span bytes) further.
        int64_t leading = mnMajor ? rows * span : 16, stride = 8 * span;
        Operand op;
        op.desc = ctx.freshVar(r.buffer->name + "_desc", DType::U64);
        op.value = call("make_smem_desc", DType::U64,
                        {addressOf(r.buffer, matrixIndices(r, {intImm(0), intImm(0)})), intImm(span), intImm(leading),
                         intImm(stride)});
        op.offset = [=](const Expr& row, const Expr& col) {
            auto [box, inRow] = divMod(col * bytes, span);
            return box * (rows * span) + row * span + inRow;
        };
        return op;
    };
    std::optional<Operand> descA;
    if (!aFromRegisters) descA = describe(a, transA_);
    Operand descB = describe(b, !transB_);
    // The rs form's A as the instruction reads it: the fragment's 16-bit pairs packed into
    // 32-bit registers before the fence (tl_cuda_wgmma.h, wgmma_pack_operand: packing after it
    // writes registers a wgmma of the group reads, and ptxas serialises the group).
    Buffer packedA;
    Stmt packA;
    if (aFromRegisters) {
        Buffer held = ctx.localBuffer(a_.buffer);
        int64_t registers = plan.tilesM * K / 4;
        packedA = makeBuffer(ctx.freshName(held->name + "_regs"), DType::U32, MemScope::Local, {intImm(registers)});
        packA = evaluate(call("wgmma_pack_operand", DType::I32,
                              {intImm(registers), addressOf(packedA, {intImm(0)}), addressOf(held, {intImm(0)})}));
    }

    std::vector<Stmt> issue;
    int64_t nOffset = 0;
    for (int64_t width : plan.wgmmaN) {
        Expr n0 = colBase + nOffset;
        Expr bOffset = transB_ ? descB.offset(n0, k0) : descB.offset(k0, n0);
        Expr bDesc = call("wgmma_desc_advance", DType::U64, {Expr(descB.desc), bOffset});
        Expr d = addressOf(acc, {Expr(mi) * slotsPerBlock + nOffset / 2});
        Expr scaleD = boolImm(true);
        Expr mma;
        if (aFromRegisters) {
            // The [M, K] fragment in the accumulator layout: k-step kk of row block mi is
            // slots 8 kk .. 8 kk + 7 of the block's K / 2, packed registers 4 kk .. 4 kk + 3
            // of its K / 4.
            Expr aRegs = addressOf(packedA, {Expr(mi) * (K / 4) + Expr(kk) * 4});
            mma = call(std::string(inst.helper) + "_rs", DType::I32,
                       {intImm(width), boolImm(!transB_), d, aRegs, bDesc, scaleD});
        } else {
            Expr m0 = rowBase + Expr(mi) * 64;
            Expr aOffset = transA_ ? descA->offset(k0, m0) : descA->offset(m0, k0);
            Expr aDesc = call("wgmma_desc_advance", DType::U64, {Expr(descA->desc), aOffset});
            std::vector<Expr> args{intImm(width)};
            if (inst.mnMajor) args.insert(args.end(), {boolImm(transA_), boolImm(!transB_)});
            args.insert(args.end(), {d, aDesc, bDesc, scaleD});
            mma = call(std::string(inst.helper) + "_ss", DType::I32, args);
        }
        issue.push_back(evaluate(mma));
        nOffset += width;
    }
    Stmt body = forLoop(kk, intImm(0), intImm(K / inst.k), ForKind::Unroll,
                        forLoop(mi, intImm(0), intImm(plan.tilesM), ForKind::Unroll, seq(issue)));
    Expr accStart = addressOf(acc, {intImm(0)});
    Stmt fenceAcc = evaluate(call("wgmma_fence_operand", DType::I32, {intImm(accSlots), accStart}));
    // A group several gemms share (an unrolled k-loop): the first fences, the last commits and
    // waits, the ones between only issue (same shape, same accumulator: no fence between). A
    // turn of the ping-pong schedule: the wait for it comes after whatever the gemm staged or
    // packed (a block barrier inside the turn would deadlock the warpgroups waiting for it), the
    // next warpgroup's turn starts as soon as the group is committed, before its wait.
    const bool opens = groupPart_ == GroupPart::Whole || groupPart_ == GroupPart::Opens;
    const bool closes = groupPart_ == GroupPart::Whole || groupPart_ == GroupPart::Closes;
    Stmt turnWait, turnPass;
    if (turnWarpgroups_ > 1 && turnWait_ && opens) {
        Expr me = ctx.tx() / 128, threads = intImm(2 * 128);
        turnWait = seq({comment(fmt::format("ping-pong: this warpgroup's turn to issue (named barriers {} .. {})",
                                            turnBarrier_, turnBarrier_ + turnWarpgroups_ - 1)),
                        evaluate(call("named_barrier_sync", DType::I32, {me + turnBarrier_, threads}))});
    }
    if (turnWarpgroups_ > 1 && turnPass_ && closes) {
        Expr me = ctx.tx() / 128, threads = intImm(2 * 128);
        Expr next = turnWarpgroups_ == 2 ? intImm(1 + turnBarrier_) - me : (me + 1) % turnWarpgroups_ + turnBarrier_;
        turnPass = seq({comment("ping-pong: the next warpgroup's turn"),
                        evaluate(call("named_barrier_arrive", DType::I32, {next, threads}))});
    }
    std::vector<Stmt> parts{packA};
    if (opens)
        // Tiles this block's threads wrote (st.shared, cp.async: the generic proxy) are read
        // by wgmma through the async proxy.
        parts.insert(parts.end(), {turnWait, evaluate(call("fence_proxy_async_shared", DType::I32, {})), fenceAcc,
                                   evaluate(call("wgmma_fence", DType::I32, {}))});
    parts.push_back(body);
    if (closes) {
        parts.insert(parts.end(), {evaluate(call("wgmma_commit_group", DType::I32, {})), turnPass});
        if (!noWait_)
            parts.insert(parts.end(), {evaluate(call("wgmma_wait_group", DType::I32, {intImm(groupInFlight_ ? 1 : 0)})),
                                       fenceAcc});
    }
    body = seq(parts);
    if (packedA) body = allocate(packedA, body);
    if (groupInFlight_ || noWait_) ctx.wgmmaInFlight[c_.buffer.get()] = accSlots;
    body = letStmt(descB.desc, descB.value, body);
    if (descA) body = letStmt(descA->desc, descA->value, body);
    Expr warpgroup = ctx.tx() / 128;
    if (plan.warpsN > 1) body = letStmt(wgCol, warpgroup / plan.warpsM, body);
    if (plan.warpsM > 1) body = letStmt(wgRow, warpgroup % plan.warpsM, body);
    steps.push_back(body);
    return simplify(seq(steps, loc), ctx.bounds());
}

TileOpPtr WgmmaDrainOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region c = c_;
    for (auto& e : c.starts) e = fn(e);
    return std::make_shared<WgmmaDrainOp>(c, pending_);
}

TileOpPtr WgmmaDrainOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    return std::make_shared<WgmmaDrainOp>(fn(c_), pending_);
}

// The loop's gemm was lowered before (program order): it says whether a group is in flight.
Stmt WgmmaDrainOp::lower(LowerContext& ctx, SourceLoc loc) const {
    auto it = ctx.wgmmaInFlight.find(c_.buffer.get());
    if (it == ctx.wgmmaInFlight.end()) return seq({}, loc);
    Expr accStart = call("address_of", DType::I64, {load(ctx.localBuffer(c_.buffer), {intImm(0)})});
    return seq({comment(str(), loc), evaluate(call("wgmma_wait_group", DType::I32, {intImm(pending_)}), loc),
                evaluate(call("wgmma_fence_operand", DType::I32, {intImm(it->second), accStart}), loc)},
               loc);
}

} // namespace tlc::ops
