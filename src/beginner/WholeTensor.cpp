// Whole-tensor kernels to tile dataflow. Today's forms are elementwise: every statement assigns
// a tensor parameter (or `let`s an intermediate) an expression of tensors, scalars, literals and
// elementwise functions, and every assigned tensor has one shape. Operands broadcast as NumPy's
// do: dimensions align from the last, and an operand's dimension is the result's or 1. The
// kernel becomes one grid over tiles of the result's last two dimensions (`block_M`, `block_N`,
// both `auto`, so the recommender picks them), one block per index of a third:
//
//     kernel scale_add(X: f32[M, N], b: f32[N], Y: f32[M, N]) { Y = relu(X * 2.0 + b); }
//
// becomes
//
//     kernel scale_add<block_M = auto, block_N = auto>(X: f32[M, N], b: f32[N], Y: f32[M, N]) {
//         grid(ceildiv(M, block_M), ceildiv(N, block_N)) as (bm, bn) {
//             let X_tile = alloc_fragment([block_M, block_N], f32);
//             copy(X[bm * block_M : +block_M, bn * block_N : +block_N], X_tile);
//             ... b_tile ([block_N]), Y_tile ...
//             for (i, j) in parallel(block_M, block_N) {
//                 Y_tile[i, j] = relu(X_tile[i, j] * 2.0 + b_tile[j]);
//             }
//             copy(Y_tile, Y[bm * block_M : +block_M, bn * block_N : +block_N]);
//         }
//     }
//
// An operand may be a view of a tensor parameter: `transpose(X)` / `permute(X, [..])` (its tile
// copied in X's layout, a shared tile when the tiled dimensions change places, and indexed
// permuted) or a slice `X[a:b, :]` (its tile copied from the slice's start). `where(c, a, b)`
// is `c ? a : b` (desugared before). One `A @ B` (either operand transposed; of rank 3, a batch
// the grid's third dimension carries, NumPy's matmul rules, or folded into A's rows where B has
// none: foldRows) is a GEMM whose accumulator the expression reads: the fused epilogue. Kernels with reductions go to Reductions.cpp (a product
// inside them too), or to GemmStatistics.cpp when they feed a product's epilogue; norms, softmax
// and attention to KernelTemplates.cpp; anything else is an
// error naming the sub-expression and what to write at the developer level: never a silently
// slow kernel.
#include "beginner/WholeTensor.h"

#include "ast/Clone.h"
#include "beginner/ElementwiseLowering.h"
#include "beginner/KernelTemplates.h"
#include "beginner/Reductions.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace tlc::beginner {

using namespace ast;

namespace {

// Functions applied element by element (sema checks their arguments later).
const std::set<std::string> kElementwise = {
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "silu", "gelu", "relu", "erf",
    "pow", "min", "max", "clamp", "fast_exp", "fast_exp2", "fast_log", "fast_log2", "fast_tanh"};
// Whole-tensor operations that need more than one element per result, with what to write.
const std::map<std::string, std::string> kNotYet = {
    {"softmax", "a kernel of its own, 'Y = softmax(X);', or reduce_max, exp2 and reduce_sum over a row tile"},
    {"layernorm", "a kernel of its own, 'Y = layernorm(X, g, b, eps = 1e-5);', or a row kernel as tests/corpus/layernorm.tl"},
    {"rmsnorm", "a kernel of its own, 'Y = rmsnorm(X, g, eps = 1e-6);', or a row kernel as samples/rmsnorm.tl"},
    {"matmul", "gemm over tiles (samples/gemm.tl)"}};


// The kernel is whole-tensor when it has no grid and assigns a whole tensor parameter.
bool isWholeTensorKernel(const Kernel& k) {
    bool assignsTensor = false;
    for (const auto& s : k.body->stmts) {
        if (s->kind == StmtKind::Grid) return false;
        if (const auto* a = s->as<AssignStmt>())
            if (const auto* n = a->target->as<Name>())
                for (const auto& p : k.params)
                    if (p.name == n->name && p.type.isTensor()) assignsTensor = true;
    }
    return assignsTensor;
}

void collectExprNames(const Expr& e, std::set<std::string>& out) {
    forEachName(&e, [&](const Name& n) { out.insert(n.name); });
}

} // namespace

namespace elementwise {

void Lowering::collectNames(const Block& b) {
    for (const auto& tp : k_.templateParams) used_.insert(tp.name);
    for (const auto& p : k_.params) {
        used_.insert(p.name);
        for (const auto& d : p.type.dims) collectExprNames(*d, used_);
    }
    for (const auto& s : b.stmts) {
        if (const auto* l = s->as<LetStmt>()) used_.insert(l->name);
        if (const auto* a = s->as<AssignStmt>()) collectExprNames(*a->value, used_);
    }
}

// Every tensor an expression reads; a call that is no elementwise function is an error.
void Lowering::collectOperands(const Expr& e) {
    switch (e.kind) {
    case ExprKind::Name:
        if (tensor(e.as<Name>()->name)) addView(e);
        return;
    case ExprKind::Call: {
        const auto& c = *e.as<Call>();
        if (c.callee == "transpose" || c.callee == "permute") {
            addView(e);
            return;
        }
        if (auto it = kNotYet.find(c.callee); it != kNotYet.end()) {
            error(e.range, DiagId::err_whole_tensor_form, printExpr(e), fmt::format("write it at the developer level: {}", it->second));
            return;
        }
        if (c.callee == "where") {  // one left after desugarWhere: not three operands
            error(e.range, DiagId::err_whole_tensor_form, printExpr(e), "write 'where(cond, a, b)': three operands, no keywords");
            return;
        }
        bool cast = parseDType(c.callee).has_value();
        if (!cast && !kElementwise.count(c.callee)) {
            error(e.range, DiagId::err_whole_tensor_form, printExpr(e),
                  "a whole-tensor kernel applies elementwise functions and casts; write it at the developer level");
            return;
        }
        for (const auto& a : c.args) collectOperands(*a.value);
        return;
    }
    case ExprKind::Index: addView(e); return;
    case ExprKind::Unary: collectOperands(*e.as<Unary>()->operand); return;
    case ExprKind::Binary: {
        const auto& b = *e.as<Binary>();
        if (b.op != BinaryOp::MatMul) {
            collectOperands(*b.lhs);
            collectOperands(*b.rhs);
            return;
        }
        bool ta = false, tb = false;
        const Param* a = matOperand(*b.lhs, ta);
        const Param* w = matOperand(*b.rhs, tb);
        if (!a || !w) {
            error(e.range, DiagId::err_whole_tensor_form, printExpr(e),
                  "'@' multiplies two tensor parameters of rank 2 or 3, each as it is or transposed ('X @ transpose(W)'); "
                  "compute other operands into a tensor first, or write it at the developer level");
        } else if (matmul_) {
            error(e.range, DiagId::err_whole_tensor_form, printExpr(e),
                  "one '@' per whole-tensor kernel (a GEMM and its epilogue); split the kernel, or write it at the "
                  "developer level");
        } else {
            matmul_ = &b;
            matA_ = a;
            matB_ = w;
            transA_ = ta;
            transB_ = tb;
            acc_ = fresh("acc");
        }
        return;
    }
    case ExprKind::Ternary:
        collectOperands(*e.as<Ternary>()->cond);
        collectOperands(*e.as<Ternary>()->thenExpr);
        collectOperands(*e.as<Ternary>()->elseExpr);
        return;
    default: return;
    }
}

// NumPy's broadcasting against the result's shape: from the last dimension, equal or 1.
bool Lowering::alignOperand(Operand& op, SourceRange at) {
    const auto& dims = op.dims;
    const size_t rank = resultDims_.size();
    if (dims.size() > rank) {
        error(at, DiagId::err_whole_tensor_broadcast, op.param->name, "count", dims.size(), rank,
              "an operand has at most the result's dimensions");
        return false;
    }
    op.toResult.assign(dims.size(), -1);
    for (size_t d = 0; d < dims.size(); ++d) {
        size_t r = rank - dims.size() + d;
        const auto* lit = dims[d]->as<IntLit>();
        if (text(*dims[d]) == text(*resultDims_[r])) {
            op.toResult[d] = int(r);
        } else if (op.sliced && !(lit && lit->value == 1)) {
            error(at, DiagId::err_whole_tensor_broadcast, op.param->name, d, text(*dims[d]), text(*resultDims_[r]),
                  fmt::format("a slice's extent is the result's dimension as written: declare it as {}", text(*dims[d])));
            return false;
        } else if (!(lit && lit->value == 1)) {
            error(at, DiagId::err_whole_tensor_broadcast, op.param->name, d, text(*dims[d]), text(*resultDims_[r]),
                  "broadcasting needs equal sizes or 1");
            return false;
        }
    }
    return true;
}

// The tile element of tensor `name` at the result's loop variables.
ExprPtr Lowering::tileAccess(const std::string& name, const std::vector<std::string>& vars, SourceRange r) {
    const Operand& op = operands_.at(name);
    std::vector<Subscript> subs;
    const size_t rank = resultDims_.size(), firstTiled = rank > 2 ? rank - 2 : 0;
    for (size_t d = 0; d < op.perm.size(); ++d) {  // the tile is in the tensor's order
        const int to = op.toResult[size_t(std::find(op.perm.begin(), op.perm.end(), d) - op.perm.begin())];
        if (to >= 0 && size_t(to) < firstTiled) continue;  // a batch dimension: one per block
        Subscript sub;
        sub.point = to < 0 ? ExprPtr(std::make_unique<IntLit>(r, 0)) : ExprPtr(std::make_unique<Name>(r, vars[to - firstTiled]));
        sub.range = r;
        subs.push_back(std::move(sub));
    }
    return std::make_unique<Index>(r, std::make_unique<Name>(r, op.tile), std::move(subs));
}

// `e` at one element: tensors as their tiles' elements, intermediates by name.
ExprPtr Lowering::elementOf(const Expr& e, const std::vector<std::string>& vars) {
    ExprPtr out = cloneSyntax(e);
    std::function<void(ExprPtr&)> walk = [&](ExprPtr& x) {
        switch (x->kind) {
        case ExprKind::Name:
            if (operands_.count(x->as<Name>()->name)) x = tileAccess(x->as<Name>()->name, vars, x->range);
            return;
        case ExprKind::Index: x = tileAccess(text(*x), vars, x->range); return;
        case ExprKind::Call:
            if (x->as<Call>()->callee == "transpose" || x->as<Call>()->callee == "permute") {
                x = tileAccess(text(*x), vars, x->range);
                return;
            }
            for (auto& a : x->as<Call>()->args) walk(a.value);
            return;
        case ExprKind::Unary: walk(x->as<Unary>()->operand); return;
        case ExprKind::Binary:
            if (x->as<Binary>()->op == BinaryOp::MatMul) {  // the kernel's one product: its accumulator
                x = elementAt(std::make_unique<Name>(x->range, acc_), vars, x->range);
                return;
            }
            walk(x->as<Binary>()->lhs);
            walk(x->as<Binary>()->rhs);
            return;
        case ExprKind::Ternary:
            walk(x->as<Ternary>()->cond);
            walk(x->as<Ternary>()->thenExpr);
            walk(x->as<Ternary>()->elseExpr);
            return;
        default: return;
        }
    };
    walk(out);
    return out;
}

// `X [B, M, K] @ W [K, N]` into `[B, M, N]`: X's rows, contiguous, are one matrix of B * M rows,
// and the product one GEMM over them (`view(X, [B * M, K])`), whose tiles run across batch
// indices: a better tile where M is small, and no block of a partial row tile per batch index.
// The epilogue's operands must read the same at a row of the view: those of the result's batch
// and rows ([B, M, L]: viewed as [B * M, L]) and those the same for every row ([N], [1, N],
// [1, 1, N]). One that varies with the row within a batch or with the batch only ([M, N] at row
// % M, [B, 1, N] at row / M) keeps the batch in the grid's third dimension, as do a transposed X
// and views (transposes, slices) among the operands; a note says which.
bool Lowering::foldRows() {
    const SourceRange kr = k_.range;
    const Expr* B = resultDims_[0];
    const Expr* M = resultDims_[1];
    const bool aBatched = matA_->type.dims.size() == 3 && text(*matA_->type.dims[0]) == text(*B);
    const bool bBatched = matB_->type.dims.size() == 3 && text(*matB_->type.dims[0]) == text(*B);
    auto whole = [&](const Param* p, bool batched) {
        return batched ? std::string()
                       : fmt::format(" '{}' is not batched (its batch dimension 1 or missing): every batch index reads "
                                     "all of it.",
                                     p->name);
    };
    auto batchInGrid = [&](const std::string& why) {
        k_.notes.push_back(fmt::format("tlc: '{}' is batched over {}: the grid's third dimension carries the batch (one "
                                       "GEMM per index, its epilogue fused).{}{}",
                                       text(*matmul_), text(*B), whole(matA_, aBatched), whole(matB_, bBatched)));
        if (!why.empty())
            k_.notes.push_back(fmt::format("tlc: the rows of {} are not folded into one GEMM of {} * {} rows: {}.",
                                           matA_->name, text(*B), text(*M), why));
        return false;
    };
    if (!aBatched || bBatched) return batchInGrid("");
    if (transA_) return batchInGrid(fmt::format("'{}' is transposed, its rows not contiguous", matA_->name));
    // A view needs a contiguous row-major tensor: X and every operand of rank 3.
    if (!matA_->type.strides.empty())
        return batchInGrid(fmt::format("'{}' has explicit strides, its rows not one matrix", matA_->name));
    auto isOne = [](const Expr* e) {
        const auto* lit = e ? e->as<IntLit>() : nullptr;
        return !e || (lit && lit->value == 1);
    };
    for (const auto& [key, op] : operands_) {
        const auto& d = op.param->type.dims;
        const size_t n = d.size();
        if (key != op.param->name)
            return batchInGrid(fmt::format("the epilogue reads '{}', a view of a tensor", key));
        if (n == 3 && !op.param->type.strides.empty())
            return batchInGrid(fmt::format("'{}' has explicit strides, its rows not one matrix", key));
        const bool full = n == 3 && text(*d[0]) == text(*B) && text(*d[1]) == text(*M);
        if (!full && !(isOne(n == 3 ? d[0].get() : nullptr) && isOne(n >= 2 ? d[n - 2].get() : nullptr))) {
            std::string shape;
            for (const auto& x : d) shape += (shape.empty() ? "" : ", ") + text(*x);
            return batchInGrid(fmt::format("'{}' [{}] would be indexed by {} in the folded rows; the epilogue's "
                                           "operands index the batch as written",
                                           key, shape, n == 3 && !isOne(d[0].get()) ? "row / " + text(*M) : "row % " + text(*M)));
        }
    }
    foldedRows_ = std::make_unique<Binary>(kr, BinaryOp::Mul, kr, cloneSyntax(*B), cloneSyntax(*M));
    std::string names;
    auto viewOf = [&](const Param& p, const Expr& rows, const Expr& cols) {
        const std::string v = fresh(p.name + "_rows");
        rowsView_[p.name] = v;
        names += (names.empty() ? "" : ", ") + v;
        std::vector<ExprPtr> extents;
        extents.push_back(cloneSyntax(rows));
        extents.push_back(cloneSyntax(cols));
        std::vector<Arg> args;
        args.push_back(Arg{{}, {}, std::make_unique<Name>(kr, p.name)});
        args.push_back(Arg{{}, {}, std::make_unique<List>(kr, std::move(extents))});
        views_.push_back(std::make_unique<LetStmt>(kr, v, kr, std::make_unique<Call>(kr, "view", kr, std::move(args))));
    };
    viewOf(*matA_, *foldedRows_, *matA_->type.dims[2]);
    for (auto& [key, op] : operands_) {
        const auto& d = op.param->type.dims;
        if (d.size() != 3) continue;
        const bool full = text(*d[0]) == text(*B);
        viewOf(*op.param, full ? *foldedRows_ : *d[1], *d[2]);
        op.dims.clear();
        op.dims.push_back(full ? cloneSyntax(*foldedRows_) : cloneSyntax(*d[1]));
        op.dims.push_back(cloneSyntax(*d[2]));
        op.perm = {0, 1};
        op.lo.clear();
        op.lo.resize(2);
    }
    resultDims_ = {foldedRows_.get(), resultDims_[2]};
    k_.notes.push_back(fmt::format("tlc: '{}' is batched over {} and '{}' is not: the rows of {} are folded into one GEMM "
                                   "of {} * {} rows (views of rank 2: {}), whose tiles run across batch indices.",
                                   text(*matmul_), text(*B), matB_->name, matA_->name, text(*B), text(*M), names));
    return true;
}

// NumPy's matmul: A [.., M, K] @ B [.., K, N] is [.., M, N], a transposed operand's last two
// dimensions swapped; an operand's batch dimension is the result's or 1, or it has none.
bool Lowering::checkMatmulShape() {
    const auto& ad = matA_->type.dims;
    const auto& bd = matB_->type.dims;
    const size_t ra = ad.size(), rb = bd.size(), rank = resultDims_.size();
    const Expr* a[2] = {ad[ra - (transA_ ? 1 : 2)].get(), ad[ra - (transA_ ? 2 : 1)].get()};
    const Expr* b[2] = {bd[rb - (transB_ ? 1 : 2)].get(), bd[rb - (transB_ ? 2 : 1)].get()};
    auto batchOk = [&](const std::vector<ExprPtr>& d) {
        if (d.size() < 3) return true;
        const auto* one = d[0]->as<IntLit>();
        return rank == 3 && (text(*d[0]) == text(*resultDims_[0]) || (one && one->value == 1));
    };
    auto shape = [&](const std::vector<ExprPtr>& d, const Expr* const mk[2]) {
        return (d.size() == 3 ? text(*d[0]) + ", " : std::string()) + text(*mk[0]) + ", " + text(*mk[1]);
    };
    std::string result;
    for (const Expr* d : resultDims_) result += (result.empty() ? "" : ", ") + text(*d);
    if (rank < 2 || text(*a[0]) != text(*resultDims_[rank - 2]) || text(*b[1]) != text(*resultDims_[rank - 1]) ||
        text(*a[1]) != text(*b[0]) || !batchOk(ad) || !batchOk(bd)) {
        error(matmul_->range, DiagId::err_whole_tensor_matmul_shape, text(*matmul_->lhs), shape(ad, a), text(*matmul_->rhs),
              shape(bd, b), result);
        return false;
    }
    return true;
}

bool Lowering::run() {
    collectNames(*k_.body);
    const SourceRange kr = k_.range;
    std::vector<StmtPtr> preconditions;
    std::vector<const Stmt*> steps;
    for (auto& s : k_.body->stmts) {
        if (s->kind == StmtKind::Require) {
            preconditions.push_back(std::move(s));
            continue;
        }
        if (const auto* l = s->as<LetStmt>()) {
            collectOperands(*l->value);
            lets_.insert(l->name);
            steps.push_back(s.get());
            continue;
        }
        const auto* a = s->as<AssignStmt>();
        const auto* target = a ? a->target->as<Name>() : nullptr;
        const Param* p = target ? tensor(target->name) : nullptr;
        if (!p) {
            error(s->range, DiagId::err_whole_tensor_stmt);
            continue;
        }
        if (resultDims_.empty()) {
            for (const auto& d : p->type.dims) resultDims_.push_back(d.get());
        } else {
            bool same = p->type.dims.size() == resultDims_.size();
            for (size_t d = 0; same && d < resultDims_.size(); ++d) same = text(*p->type.dims[d]) == text(*resultDims_[d]);
            if (!same) error(target->range, DiagId::err_whole_tensor_result_shape, p->name);
        }
        collectOperands(*a->value);
        if (a->op) collectOperands(*a->target);  // `Y += e` reads Y
        if (!operands_.count(p->name)) {
            Operand op{p, fresh(p->name + "_tile"), {}, {}, {}, false, {}, target->range};
            for (size_t d = 0; d < p->type.dims.size(); ++d) {
                op.perm.push_back(d);
                op.dims.push_back(cloneSyntax(*p->type.dims[d]));
            }
            op.lo.resize(p->type.dims.size());
            operands_[p->name] = std::move(op);
            order_.push_back(p->name);
        }
        assigned_.insert(p->name);
        steps.push_back(s.get());
    }
    for (const auto& [key, op] : operands_)
        if (key != op.param->name && assigned_.count(op.param->name))
            error(op.at, DiagId::err_whole_tensor_form, key,
                  fmt::format("a view of '{}', which the kernel assigns: blocks would read what others write; "
                              "read another tensor",
                              op.param->name));
    if (!ok_) return false;
    size_t rank = resultDims_.size();
    if (matmul_ && !checkMatmulShape()) return false;
    if (matmul_ && rank == 3 && foldRows()) rank = 2;
    if (rank > 3) {
        error(k_.nameRange, DiagId::err_whole_tensor_rank, rank);
        return false;
    }
    for (const auto& name : order_)
        if (!alignOperand(operands_[name], k_.nameRange)) return false;

    // The tile parameters, the grid and its variables.
    auto name = [&](const std::string& n) { return std::make_unique<Name>(kr, n); };
    auto intLit = [&](int64_t v) { return std::make_unique<IntLit>(kr, v); };
    auto binary = [&](BinaryOp op, ExprPtr l, ExprPtr r) { return std::make_unique<Binary>(kr, op, kr, std::move(l), std::move(r)); };
    auto callOf = [&](const std::string& callee, std::vector<ExprPtr> args) {
        std::vector<Arg> as;
        for (auto& e : args) as.push_back(Arg{{}, {}, std::move(e)});
        return std::make_unique<Call>(kr, callee, kr, std::move(as));
    };
    const size_t tiled = std::min<size_t>(rank, 2), firstTiled = rank - tiled;
    std::vector<std::string> blocks, gridVars, loopVars;
    static const char* kBlockNames[] = {"block_M", "block_N"};
    static const char* kGridNames[] = {"bm", "bn"};
    static const char* kLoopNames[] = {"i", "j"};
    for (size_t t = 2 - tiled; t < 2; ++t) {
        blocks.push_back(fresh(kBlockNames[t]));
        gridVars.push_back(fresh(kGridNames[t]));
        loopVars.push_back(fresh(kLoopNames[t]));
    }
    const std::string batchVar = rank > 2 ? fresh("bb") : "";
    std::string blockK, stages, threads;
    if (matmul_) {
        blockK = fresh("block_K");
        stages = fresh("stages");
        threads = fresh("threads");
    }
    for (const auto& b : blocks) k_.templateParams.push_back(TemplateParam{b, kr, "", {}, true, nullptr, nullptr});
    if (matmul_)
        for (const auto& p : {blockK, stages, threads})
            k_.templateParams.push_back(TemplateParam{p, kr, "", {}, true, nullptr, nullptr});
    std::vector<ExprPtr> gridExtents;
    for (size_t t = 0; t < tiled; ++t)
        gridExtents.push_back(callOf("ceildiv", [&] {
            std::vector<ExprPtr> a;
            a.push_back(cloneSyntax(*resultDims_[firstTiled + t]));
            a.push_back(name(blocks[t]));
            return a;
        }()));
    if (rank > 2) gridExtents.push_back(cloneSyntax(*resultDims_[0]));

    // A tensor's region for this block: tiled dimensions by block, batch ones at the block's
    // index, broadcast ones at 0.
    // In the tensor's order, a slice's start added.
    auto region = [&](const Operand& op) {
        std::vector<Subscript> subs;
        for (size_t p = 0; p < op.perm.size(); ++p) {
            const size_t d = size_t(std::find(op.perm.begin(), op.perm.end(), p) - op.perm.begin());
            const int to = op.toResult[d];
            auto at = [&](ExprPtr x) { return op.lo[p] ? binary(BinaryOp::Add, cloneSyntax(*op.lo[p]), std::move(x)) : std::move(x); };
            Subscript sub;
            sub.range = kr;
            if (to >= 0 && size_t(to) >= firstTiled) {
                size_t t = size_t(to) - firstTiled;
                sub.form = Subscript::Form::Length;
                sub.lo = at(binary(BinaryOp::Mul, name(gridVars[t]), name(blocks[t])));
                sub.length = name(blocks[t]);
            } else if (to >= 0) {
                sub.point = at(name(batchVar));
            } else if (d + rank - op.toResult.size() < firstTiled) {
                sub.point = at(intLit(0));  // a broadcast batch dimension
            } else {
                sub.form = Subscript::Form::Length;
                sub.lo = at(intLit(0));
                sub.length = intLit(1);
            }
            subs.push_back(std::move(sub));
        }
        return std::make_unique<Index>(kr, name(tensorOrView(op.param->name)), std::move(subs));
    };
    std::vector<StmtPtr> body;
    if (matmul_) {
        // The GEMM: shared tiles of A and B through a pipelined loop over K into the accumulator.
        auto alloc = [&](const char* kind, const std::string& n, std::vector<ExprPtr> extents, const std::string& dtype) {
            std::vector<Arg> args;
            args.push_back(Arg{{}, {}, std::make_unique<List>(kr, std::move(extents))});
            args.push_back(Arg{{}, {}, name(dtype)});
            return std::make_unique<LetStmt>(kr, n, kr, std::make_unique<Call>(kr, kind, kr, std::move(args)));
        };
        auto pair = [&](ExprPtr x, ExprPtr y) {
            std::vector<ExprPtr> v;
            v.push_back(std::move(x));
            v.push_back(std::move(y));
            return v;
        };
        const std::string aShared = fresh(matA_->name + "_shared"), bShared = fresh(matB_->name + "_shared"), k = fresh("k");
        std::optional<DType> in = parseDType(matA_->type.dtype);
        const char* accType = in && isInteger(*in) ? "i32" : in == DType::F64 ? "f64" : "f32";
        auto ordered = [&](bool swap, ExprPtr x, ExprPtr y) { return swap ? pair(std::move(y), std::move(x)) : pair(std::move(x), std::move(y)); };
        body.push_back(alloc("alloc_shared", aShared, ordered(transA_, name(blocks[0]), name(blockK)), matA_->type.dtype));
        body.push_back(alloc("alloc_shared", bShared, ordered(transB_, name(blockK), name(blocks[1])), matB_->type.dtype));
        body.push_back(alloc("alloc_fragment", acc_, pair(name(blocks[0]), name(blocks[1])), accType));
        std::vector<ExprPtr> clearArgs;
        clearArgs.push_back(name(acc_));
        body.push_back(std::make_unique<ExprStmt>(kr, callOf("clear", std::move(clearArgs))));
        // A tile of an operand: its last two dimensions by range (in the tensor's order), a batch
        // dimension at the block's batch index, or at 0 where it is 1 (broadcast).
        auto tileOf = [&](const Param& p, bool swap, ExprPtr row, ExprPtr col, ExprPtr rows, ExprPtr cols,
                          const std::string& into) {
            if (swap) {
                std::swap(row, col);
                std::swap(rows, cols);
            }
            std::vector<Subscript> subs;
            if (p.type.dims.size() == 3 && !rowsView_.count(p.name)) {
                const auto* one = p.type.dims[0]->as<IntLit>();
                Subscript b;
                b.point = one && one->value == 1 ? ExprPtr(intLit(0)) : ExprPtr(name(batchVar));
                b.range = kr;
                subs.push_back(std::move(b));
            }
            const bool batched = !subs.empty();
            for (auto* x : {&row, &col}) {  // a matrix's tile from its corner, a batch's by ranges
                Subscript sub;
                if (batched) {
                    sub.form = Subscript::Form::Length;
                    sub.length = x == &row ? std::move(rows) : std::move(cols);
                }
                (batched ? sub.lo : sub.point) = std::move(*x);
                sub.range = kr;
                subs.push_back(std::move(sub));
            }
            return std::make_unique<ExprStmt>(
                kr, callOf("copy", pair(std::make_unique<Index>(kr, name(tensorOrView(p.name)), std::move(subs)), name(into))));
        };
        std::vector<StmtPtr> loop;
        loop.push_back(tileOf(*matA_, transA_, binary(BinaryOp::Mul, name(gridVars[0]), name(blocks[0])),
                              binary(BinaryOp::Mul, name(k), name(blockK)), name(blocks[0]), name(blockK), aShared));
        loop.push_back(tileOf(*matB_, transB_, binary(BinaryOp::Mul, name(k), name(blockK)),
                              binary(BinaryOp::Mul, name(gridVars[1]), name(blocks[1])), name(blockK), name(blocks[1]),
                              bShared));
        std::vector<ExprPtr> gemmArgs;
        gemmArgs.push_back(name(aShared));
        gemmArgs.push_back(name(bShared));
        gemmArgs.push_back(name(acc_));
        auto gemm = callOf("gemm", std::move(gemmArgs));
        if (transA_) gemm->args.push_back(Arg{"transpose_A", kr, std::make_unique<BoolLit>(kr, true)});
        if (transB_) gemm->args.push_back(Arg{"transpose_B", kr, std::make_unique<BoolLit>(kr, true)});
        loop.push_back(std::make_unique<ExprStmt>(kr, std::move(gemm)));
        std::vector<Arg> iterArgs;
        const size_t ra = matA_->type.dims.size();
        iterArgs.push_back(Arg{{}, {}, callOf("ceildiv", pair(cloneSyntax(*matA_->type.dims[ra - (transA_ ? 2 : 1)]), name(blockK)))});
        iterArgs.push_back(Arg{"stages", kr, name(stages)});
        std::vector<LoopVar> kVar{{k, kr, nullptr}};
        body.push_back(std::make_unique<ForStmt>(kr, std::move(kVar), std::make_unique<Call>(kr, "pipelined", kr, std::move(iterArgs)),
                                                 std::make_unique<Block>(kr, std::move(loop))));
    }
    for (const auto& n : order_) {
        const Operand& op = operands_[n];
        std::vector<ExprPtr> extents;
        int lastTiled = -1;
        bool crossed = false;  // the tiled dimensions in another order than the loop's
        for (size_t p = 0; p < op.perm.size(); ++p) {
            const size_t d = size_t(std::find(op.perm.begin(), op.perm.end(), p) - op.perm.begin());
            int to = op.toResult[d];
            bool batch = (to >= 0 ? size_t(to) : d + rank - op.toResult.size()) < firstTiled;
            if (batch) continue;
            if (to >= 0) {
                crossed = crossed || to < lastTiled;
                lastTiled = to;
            }
            extents.push_back(to < 0 ? ExprPtr(intLit(1)) : ExprPtr(name(blocks[size_t(to) - firstTiled])));
        }
        std::vector<Arg> args;
        args.push_back(Arg{{}, {}, std::make_unique<List>(kr, std::move(extents))});
        args.push_back(Arg{{}, {}, name(op.param->type.dtype)});
        // A transposed tile is read across the threads' elements: a shared tile.
        const char* kind = crossed ? "alloc_shared" : "alloc_fragment";
        body.push_back(std::make_unique<LetStmt>(kr, op.tile, kr, std::make_unique<Call>(kr, kind, kr, std::move(args))));
    }
    for (const auto& n : order_)
        if (readBeforeAssigned_.count(n) || !assigned_.count(n)) {
            std::vector<ExprPtr> args;
            args.push_back(region(operands_[n]));
            args.push_back(name(operands_[n].tile));
            body.push_back(std::make_unique<ExprStmt>(kr, callOf("copy", std::move(args))));
        }
    // One loop over the tile computes every statement, in order, element by element.
    std::vector<StmtPtr> element;
    for (const Stmt* s : steps) {
        if (const auto* l = s->as<LetStmt>()) {
            element.push_back(std::make_unique<LetStmt>(l->range, l->name, l->nameRange, elementOf(*l->value, loopVars)));
            continue;
        }
        const auto& a = *s->as<AssignStmt>();
        const std::string& target = a.target->as<Name>()->name;
        element.push_back(std::make_unique<AssignStmt>(a.range, tileAccess(target, loopVars, a.target->range), a.op,
                                                       elementOf(*a.value, loopVars)));
    }
    std::vector<LoopVar> vars;
    std::vector<ExprPtr> loopExtents;
    for (size_t t = 0; t < tiled; ++t) {
        vars.push_back({loopVars[t], kr, nullptr});
        loopExtents.push_back(name(blocks[t]));
    }
    body.push_back(std::make_unique<ForStmt>(kr, std::move(vars), callOf("parallel", std::move(loopExtents)),
                                             std::make_unique<Block>(kr, std::move(element))));
    for (const auto& n : order_)
        if (assigned_.count(n)) {
            std::vector<ExprPtr> args;
            args.push_back(name(operands_[n].tile));
            args.push_back(region(operands_[n]));
            body.push_back(std::make_unique<ExprStmt>(kr, callOf("copy", std::move(args))));
        }
    std::vector<LoopVar> gvars;
    for (const auto& g : gridVars) gvars.push_back({g, kr, nullptr});
    if (rank > 2) gvars.push_back({batchVar, kr, nullptr});
    auto launch = callOf("grid", std::move(gridExtents));
    if (matmul_) launch->args.push_back(Arg{"threads", kr, name(threads)});
    auto grid = std::make_unique<GridStmt>(kr, std::move(launch), std::move(gvars), std::make_unique<Block>(kr, std::move(body)));
    std::vector<StmtPtr> top = std::move(preconditions);
    std::set<std::string> required;
    for (auto& r : requires_)
        if (required.insert(text(*r->as<RequireStmt>()->cond)).second) top.push_back(std::move(r));
    for (auto& v : views_) top.push_back(std::move(v));
    top.push_back(std::move(grid));
    k_.body = std::make_unique<Block>(k_.body->range, std::move(top));
    return true;
}

} // namespace elementwise

// A kernel whose one statement (besides `require`s) is `Y = layernorm(...)` and the like.
static const AssignStmt* rowKernelStatement(const Kernel& k) {
    const AssignStmt* only = nullptr;
    for (const auto& s : k.body->stmts) {
        if (s->kind == StmtKind::Require) continue;
        if (only || s->kind != StmtKind::Assign) return nullptr;
        only = s->as<AssignStmt>();
    }
    const auto* call = only ? only->value->as<Call>() : nullptr;
    return (call && isRowKernelCall(*call)) || (only && isAttention(*only)) ? only : nullptr;
}

// NumPy's `where(cond, a, b)` is `cond ? a : b` element by element (broadcast as any operands).
static void desugarWhere(ExprPtr& x) {
    switch (x->kind) {
    case ExprKind::Call: {
        auto& c = *x->as<Call>();
        for (auto& a : c.args) desugarWhere(a.value);
        if (c.callee == "where" && c.args.size() == 3 &&
            std::all_of(c.args.begin(), c.args.end(), [](const Arg& a) { return a.keyword.empty(); }))
            x = std::make_unique<Ternary>(x->range, std::move(c.args[0].value), std::move(c.args[1].value), std::move(c.args[2].value));
        return;
    }
    case ExprKind::Unary: desugarWhere(x->as<Unary>()->operand); return;
    case ExprKind::Binary:
        desugarWhere(x->as<Binary>()->lhs);
        desugarWhere(x->as<Binary>()->rhs);
        return;
    case ExprKind::Ternary:
        desugarWhere(x->as<Ternary>()->cond);
        desugarWhere(x->as<Ternary>()->thenExpr);
        desugarWhere(x->as<Ternary>()->elseExpr);
        return;
    default: return;
    }
}

bool lowerWholeTensorKernels(File& file, DiagnosticEngine& diags, const std::map<std::string, std::string>& defines) {
    bool ok = true;
    for (auto& k : file.kernels) {
        if (!isWholeTensorKernel(*k)) continue;
        for (auto& s : k->body->stmts) {
            if (auto* l = s->as<LetStmt>()) desugarWhere(l->value);
            if (auto* a = s->as<AssignStmt>()) desugarWhere(a->value);
        }
        if (const AssignStmt* one = rowKernelStatement(*k))
            ok = (isAttention(*one) ? lowerAttention(*k, *one, defines, diags) : lowerRowKernel(*k, *one, defines, diags)) && ok;
        else if (hasReduction(*k) && productBesideReductions(*k)) ok = lowerGemmWithStatistics(*k, diags) && ok;
        else if (hasReduction(*k)) ok = lowerReductions(*k, diags) && ok;
        else ok = elementwise::Lowering(*k, diags).run() && ok;
    }
    return ok;
}

} // namespace tlc::beginner
