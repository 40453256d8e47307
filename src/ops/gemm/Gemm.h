// gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum): C += A @ B on tiles. A and B
// in shared memory or fragments, C a fragment. This folder holds the plain SIMT form, correct
// on every target; tensor-core forms slot in beside it, chosen from the target's features.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

#include <optional>

namespace tlc::ops {

// Input types the cpu's micro-kernel takes: f32, bf16 or f16 with f32 accumulators (16-bit
// inputs converted, or bf16 through vdpbf16ps), and i8 with exact i32 accumulators (vpdpbusd).
bool cpuMicroKernelTypes(DType a, DType b, DType c);

// Auto: the author left `policy` out; planning chooses (square today) and logs why.
enum class GemmPolicy { Square, FullRow, FullCol, Auto };

class GemmOp : public Op {
public:
    GemmOp(ir::Region a, ir::Region b, ir::Region c, bool transA, bool transB, GemmPolicy policy, bool clearAccum)
        : a_(std::move(a)), b_(std::move(b)), c_(std::move(c)), transA_(transA), transB_(transB), policy_(policy),
          clearAccum_(clearAccum) {}
    const ir::Region& a() const { return a_; }
    const ir::Region& b() const { return b_; }
    const ir::Region& c() const { return c_; }
    bool transposeA() const { return transA_; }
    bool transposeB() const { return transB_; }
    GemmPolicy policy() const { return policy_; }
    bool clearAccum() const { return clearAccum_; }
    // A copy whose wgmma form may leave its group in flight when it ends (wait_group<1>: only
    // the previous group must be done). pipeline-loops grants it to the one gemm of a TMA
    // pipeline that releases each stage one iteration later (docs/lowering.md, "Overlapping
    // wgmma groups"); a wgmma_drain after the loop waits for the last group.
    std::shared_ptr<const GemmOp> withGroupInFlight() const;
    // Where its wgmmas sit in a group several gemms share (a k-loop unrolled so that one group
    // covers several k-tiles, passes/pipeline/Unroll.cpp): Whole opens and closes its own group;
    // Opens fences and issues without committing, Continues only issues, Closes issues, commits
    // and waits. A copy of an in-flight gemm (withGroupInFlight) with that part.
    enum class GroupPart { Whole, Opens, Continues, Closes };
    std::shared_ptr<const GemmOp> withGroupPart(GroupPart part) const;
    GroupPart groupPart() const { return groupPart_; }
    // A copy whose wgmma form issues its group as one turn of `warpgroups` warpgroups that take
    // turns (pipeline-loops' ping-pong schedule, passes/pipeline/PingPong.cpp): warpgroup w waits
    // on named barrier firstBarrier + w before its first wgmma and, once the group is committed,
    // arrives on the next warpgroup's, firstBarrier + (w + 1) % warpgroups (each barrier counts
    // the two warpgroups, 256 threads). Nothing between the two can synchronise the block.
    // `wait` / `pass` false: the turn began at an earlier gemm / goes on to a later one (gemms
    // issued one after the other are one turn).
    std::shared_ptr<const GemmOp> withTurn(int64_t warpgroups, int64_t firstBarrier, bool wait = true,
                                           bool pass = true) const;
    // A copy whose wgmma form issues and commits its group and returns: a wgmma_drain that
    // follows waits for it (the intra-warpgroup overlap, passes/pipeline/Overlap.cpp).
    std::shared_ptr<const GemmOp> withoutWait() const;
    int64_t turnWarpgroups() const { return turnWarpgroups_; }  // 0: no turns
    // A copy that keeps B's packed tile for the launch's other blocks (cpu targets: B a tensor
    // the kernel never writes; passes/ReusePackedB.cpp).
    std::shared_ptr<const GemmOp> withReusedB() const;
    bool reusesB() const { return reuseB_; }
    // A copy that computes only C's first `rows` rows (cpu targets: a tile at A's edge, whose
    // rows from `rows` on are zeros that would add nothing C keeps; passes/ForwardCopies.cpp).
    std::shared_ptr<const GemmOp> withRows(ir::Expr rows) const;
    const ir::Expr& rows() const { return rows_; }  // null: every row

    std::string name() const override { return "gemm"; }
    std::vector<const ir::Region*> reads() const override { return {&a_, &b_, &c_}; }
    std::vector<const ir::Region*> writes() const override { return {&c_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    // Where an mma operand is read from (see lowerMma).
    enum class OperandForm { Registers, Ldmatrix, Elements };
    OperandForm aForm(const LowerContext& ctx, const struct GemmPlan& plan) const;
    OperandForm bForm(const LowerContext& ctx) const;
    static bool ldmatrixFits(const LowerContext& ctx, const ir::Region& operand, bool kContiguous);

    // The cpu's micro-kernel call (GemmCpu.cpp); nothing when the tiles do not fit its form.
    std::optional<ir::Stmt> lowerCpu(LowerContext& ctx, SourceLoc loc, std::vector<ir::Stmt>& steps) const;
    ir::Stmt lowerSimt(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b,
                       std::vector<ir::Stmt> steps) const;
    ir::Stmt lowerWgmma(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b, bool aFromRegisters,
                        std::vector<ir::Stmt> steps, const struct GemmPlan& plan) const;
    ir::Stmt lowerMma(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b, OperandForm aFrom,
                      std::vector<ir::Stmt> steps, const struct GemmPlan& plan) const;
    // CDNA's MFMA (GemmMfma.cpp).
    ir::Stmt lowerMfma(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b,
                       std::vector<ir::Stmt> steps, const struct GemmPlan& plan) const;

    ir::Region a_, b_, c_;
    bool transA_, transB_;
    GemmPolicy policy_;
    bool clearAccum_;
    bool groupInFlight_ = false;
    GroupPart groupPart_ = GroupPart::Whole;
    int64_t turnWarpgroups_ = 0, turnBarrier_ = 0;
    bool turnWait_ = true, turnPass_ = true, noWait_ = false;
    bool reuseB_ = false;
    ir::Expr rows_;
};

// wgmma_drain(C): waits for the wgmma group a gemm into C left in flight (wait_group<0>) and
// fences the accumulator before anything reads it; nothing when that gemm did not leave one
// (another form, or the wait inside it). pipeline-loops puts it after a loop whose gemm may
// keep its group in flight.
class WgmmaDrainOp : public Op {
public:
    // pending: the groups committed after C's that may stay in flight (wait_group<pending>).
    explicit WgmmaDrainOp(ir::Region c, int64_t pending = 0) : c_(std::move(c)), pending_(pending) {}
    std::string name() const override { return "wgmma_drain"; }
    std::vector<const ir::Region*> reads() const override { return {&c_}; }
    std::vector<const ir::Region*> writes() const override { return {&c_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override {
        return "wgmma_drain(" + ir::regionString(c_) + (pending_ ? ", pending = " + std::to_string(pending_) : "") + ")";
    }
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region c_;
    int64_t pending_ = 0;
};

} // namespace tlc::ops
