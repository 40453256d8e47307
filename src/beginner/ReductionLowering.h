// The lowering of reductions over a dimension (Reductions.cpp: the statements and the checks;
// ReductionViews.cpp: the tensors' tiles and elements; ReductionPasses.cpp: the passes over the
// chunks, the online form). Internal to src/beginner.
#pragma once

#include "ast/AST.h"
#include "beginner/Names.h"
#include "beginner/Statements.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::beginner::reduce_impl {

using namespace ast;

// What a tensor's dimension is in the row kernel: the kept tiled dimension (one block of it per
// grid index), the reduced one (walked in chunks), a batch dimension (one per grid index) or a
// broadcast 1.
enum class Role { Kept, Red, Batch, One };

struct Reduction {
    std::string op;  // sum, mean, max, min
    ExprPtr arg;     // `let`s inlined; inner reductions still calls
    int dim = 0;     // as written (negative counts from the end)
    std::string key; // the call's text: one reduction per distinct call
    std::string frag, src;
    SourceRange range;
    int level = 1;   // 1 + the deepest reduction its operand reads: its pass
    // The online form (ReductionPasses.cpp): a sum or mean of `exp(A - max(A, dim = d))` shares
    // the maximum's pass, `onlineMax` that maximum's key; a maximum read so keeps its value
    // before each chunk (`prev`) and the value the chunk's terms subtract (`use`: 0 while -inf).
    std::string onlineMax, prev, use;
};

struct View {
    const Param* param = nullptr;
    std::string tile;
    std::vector<Role> roles;
};

inline std::string text(const Expr& e) { return printExpr(e); }
inline bool isOne(const Expr& e) {
    const auto* one = e.as<IntLit>();
    return one && one->value == 1;
}

inline std::optional<int> intValue(const Expr& e) {
    if (const auto* i = e.as<IntLit>()) return int(i->value);
    if (const auto* u = e.as<Unary>(); u && u->op == UnaryOp::Neg)
        if (const auto* i = u->operand->as<IntLit>()) return -int(i->value);
    return std::nullopt;
}

class Lowerer {
public:
    Lowerer(Kernel& k, DiagnosticEngine& diags) : k_(k), diags_(diags) {}
    bool run();

private:
    Kernel& k_;
    DiagnosticEngine& diags_;
    bool ok_ = true;
    std::set<std::string> used_;
    std::vector<Step> steps_;
    std::vector<Reduction> reds_;
    std::vector<const Expr*> space_;
    size_t rank_ = 0, dim_ = 0, kept_ = 0, red_ = 0;  // kept_, red_: tiled indices (0 or 1)
    bool rowMode_ = false;
    std::string acc_ = "f32";
    std::string vars_[2], blocks_[2] = {"block_M", "block_N"}, bk_, bb_, c_;
    std::map<std::string, View> full_, row_;  // views by tensor name, in each frame
    // The kernel's one matrix product, read only inside reductions over its last dimension: a
    // GEMM per chunk of the reduced dimension, its accumulator the reductions' operand.
    const Expr* mm_ = nullptr;
    const Param* mmA_ = nullptr;
    const Param* mmB_ = nullptr;
    bool mmTA_ = false, mmTB_ = false;
    // A batched product ([B, M, K] @ [K, N] and the like): B, the space's first dimension (one
    // block per index, the grid's second); an operand of batch 1 is read at index 0.
    const Expr* mmBatch_ = nullptr;
    // A product operand's dimension: its rows (0) or columns (1) as the GEMM reads it.
    const Expr& mmDim(const Param& p, bool transposed, int d) const {
        const size_t r = p.type.dims.size();
        return *p.type.dims[r - 2 + size_t(transposed ? 1 - d : d)];
    }
    std::string mmAcc_, mmAShared_, mmBShared_, mmBlockK_, mmStages_, mmThreads_;
    int inReduction_ = 0;

    const Param* tensor(const std::string& name) const { return tensorNamed(k_, name); }
    void error(SourceRange r, const std::string& what, const std::string& why) {
        diags_.report(DiagId::err_whole_tensor_form, r, what, why);
        ok_ = false;
    }
    std::string fresh(const std::string& base) { return freshName(used_, base); }
    void findReductions(const Expr& e, const std::set<std::string>& assignedBefore);
    void product(const Expr& e);
    bool readsProduct(const Expr& e) const;
    std::vector<const Expr*> shapeOf(const Expr& arg) const;
    std::string gemmPass();
    // The passes over the chunks of the reduced dimension `R`, one per level of nesting.
    std::string reductionPasses(const std::string& R, const std::string& chunks);
    std::optional<std::vector<Role>> align(const Param& p, bool row, SourceRange at);
    Role roleOf(size_t r) const { return r + 2 < rank_ ? Role::Batch : r == dim_ ? Role::Red : Role::Kept; }
    View& view(const std::string& name, bool row, SourceRange at);
    std::string region(const View& v) const;
    std::string element(const View& v) const;
    std::string extents(const View& v) const;
    // `e` as text at one element (of the tile, or of the row in the row pass): tensors as their
    // views' elements (recorded in `reads`), reductions as their fragments' entries.
    std::string rewrite(const Expr& e, bool row, std::vector<std::string>& reads, SourceRange at);
    std::string copiesIn(const std::vector<std::string>& names, bool row, const std::set<std::string>& skip);
};

// `exp(A - max(A, dim = d))`: the maximum's call, else null (the online form's operand).
const Call* onlineMaxOf(const Expr& arg);

} // namespace tlc::beginner::reduce_impl
