// The elementwise lowering of whole-tensor kernels (WholeTensor.cpp; the views it reads,
// transposes, permutations and slices, in Views.cpp): one grid over tiles of the result, a tile
// per operand, one `parallel` loop computing every statement. Internal to src/beginner.
#pragma once

#include "ast/AST.h"
#include "beginner/Names.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tlc::beginner::elementwise {

using namespace ast;

inline std::string text(const Expr& e) { return printExpr(e); }

class Lowering {
public:
    Lowering(Kernel& k, DiagnosticEngine& diags) : k_(k), diags_(diags) {}

    bool run();

private:
    // A tensor as the expression reads it: whole, transposed or permuted, or a slice.
    struct Operand {
        const Param* param = nullptr;
        std::string tile;  // its tile's name
        // Per dimension of the view: the tensor's dimension (permutations), and its extent.
        std::vector<size_t> perm;
        std::vector<ExprPtr> dims;
        // Per dimension of the tensor: a slice's start (null: 0).
        std::vector<ExprPtr> lo;
        bool sliced = false;
        // Per dimension of the view: the result dimension it aligns with, or -1 when it is a
        // broadcast 1.
        std::vector<int> toResult;
        SourceRange at;  // where the source reads it first
    };

    Kernel& k_;
    DiagnosticEngine& diags_;
    std::vector<const Expr*> resultDims_;  // the assigned tensors' shape
    std::map<std::string, Operand> operands_;  // views read or written, by their text (a tensor's: its name)
    std::vector<std::string> order_;           // their first mention
    std::set<std::string> lets_;              // whole-tensor intermediates
    std::set<std::string> assigned_;
    std::set<std::string> readBeforeAssigned_;
    std::set<std::string> used_;               // every name in the kernel, for fresh names
    bool ok_ = true;
    // The kernel's matrix product `A @ B`, at most one: a GEMM whose accumulator the rest of
    // the expression reads element by element (the fused epilogue).
    const Binary* matmul_ = nullptr;
    const Param* matA_ = nullptr;
    const Param* matB_ = nullptr;
    bool transA_ = false, transB_ = false;  // `transpose(A) @ B` and the like: the GEMM's operand layouts
    std::string acc_;
    std::vector<StmtPtr> requires_;  // a slice's bounds, checked at launch
    // `X [B, M, K] @ W [K, N]` with X's rows folded into one GEMM of B * M rows: views of rank 2
    // of X and of the operands of rank 3 (by tensor name), their `let`s, and B * M.
    std::map<std::string, std::string> rowsView_;
    std::vector<StmtPtr> views_;
    ExprPtr foldedRows_;

    const Param* tensor(const std::string& name) const { return tensorNamed(k_, name); }
    template <typename... Args> void error(SourceRange r, DiagId id, const Args&... args) {
        diags_.report(id, r, args...);
        ok_ = false;
    }
    std::string fresh(const std::string& base) { return freshName(used_, base); }
    void collectNames(const Block& b);
    void collectOperands(const Expr& e);
    void addView(const Expr& e);
    const Param* matOperand(const Expr& e, bool& transposed);
    bool alignOperand(Operand& op, SourceRange at);
    bool checkMatmulShape();
    // Folds the batch of a batched A and a matrix B into A's rows where the epilogue's operands
    // allow (each of the result's shape, or the same for every row); else notes why not.
    bool foldRows();
    const std::string& tensorOrView(const std::string& name) const {
        auto it = rowsView_.find(name);
        return it == rowsView_.end() ? name : it->second;
    }
    ExprPtr elementOf(const Expr& e, const std::vector<std::string>& vars);
    ExprPtr tileAccess(const std::string& name, const std::vector<std::string>& vars, SourceRange r);
};

} // namespace tlc::beginner::elementwise
