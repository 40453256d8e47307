// gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum): C += A @ B on tiles. A and B
// in shared memory or fragments, C a fragment. This folder holds the plain SIMT form, correct
// on every target; tensor-core forms slot in beside it, chosen from the target's features.
#pragma once

#include "ir/TileOp.h"

namespace tlc::ops {

enum class GemmPolicy { Square, FullRow, FullCol };

class GemmOp : public ir::TileOp {
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

    ir::Stmt lowerSimt(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b,
                       std::vector<ir::Stmt> steps) const;
    ir::Stmt lowerWgmma(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b, bool aFromRegisters,
                        std::vector<ir::Stmt> steps, const struct GemmPlan& plan) const;
    ir::Stmt lowerMma(LowerContext& ctx, SourceLoc loc, const ir::Region& a, const ir::Region& b, OperandForm aFrom,
                      std::vector<ir::Stmt> steps, const struct GemmPlan& plan) const;

    ir::Region a_, b_, c_;
    bool transA_, transB_;
    GemmPolicy policy_;
    bool clearAccum_;
};

} // namespace tlc::ops
