// Reductions over a dimension in whole-tensor kernels: `sum`, `mean`, `max` and `min` with a
// `dim`, whose result keeps the reduced dimension as 1 (PyTorch's keepdim), so that it
// broadcasts back into an elementwise expression:
//
//     kernel center(X: f32[M, N], Y: f32[M, N]) { Y = X - max(X, dim = 1); }
//     kernel row_sum(X: f16[M, N], y: f32[M]) { y = sum(f32(X), dim = 1); }
//
// Every reduction of a kernel runs over one shape (the space, rank 2 or 3) and one of its last
// two dimensions. The kernel becomes a row kernel, as the row-kernel templates
// (KernelTemplates.cpp): one block per `block_M` rows (`block_N` columns when the first of the
// two is reduced), the reduced dimension walked in chunks of the other block size (both
// `auto`), a pass per level of nesting, inner ones first, each computing every reduction of its
// level (f32 accumulators, f64 when a tensor is f64; elements past the end masked with the
// reduction's identity), then a pass that writes: over the chunks again when the assigned
// tensors have the space's shape, or once per row when they have the reduced shape (the 1 kept
// or dropped: `y: f32[M]`).
//
// The kernel is written as .tl text with the author's names and parsed (instantiate).
#include "beginner/Reductions.h"

#include "ast/Clone.h"
#include "beginner/KernelTemplates.h"
#include "beginner/ReductionLowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tlc::beginner {

using namespace ast;

namespace reduce_impl {

void Lowerer::findReductions(const Expr& e, const std::set<std::string>& assignedBefore) {
    switch (e.kind) {
    case ExprKind::Index:
        error(e.range, text(e),
              "a kernel with reductions reads whole tensors; slice into a tensor of its own in another kernel "
              "first, or write it at the developer level");
        return;
    case ExprKind::Call: {
        const auto& c = *e.as<Call>();
        static const std::set<std::string> kOwnKernel = {"transpose", "permute", "softmax", "layernorm", "rmsnorm"};
        if (kOwnKernel.count(c.callee)) {
            error(e.range, text(e),
                  "not in a kernel with reductions; compute it into a tensor in a kernel of its own first (or "
                  "write the reductions by hand as 'exp(X - max(X, dim = 1))' and the like)");
            return;
        }
        const bool reduction = isReductionCall(c);
        inReduction_ += reduction;
        for (const auto& a : c.args) findReductions(*a.value, assignedBefore);
        inReduction_ -= reduction;
        if (!reduction) return;
        const Expr* arg = nullptr;
        std::optional<int> dim;
        bool form = true;
        for (const auto& a : c.args) {
            if (a.keyword.empty() && !arg) arg = a.value.get();
            else if (a.keyword == "dim" && !dim) form = (dim = intValue(*a.value)).has_value();
            else form = false;
        }
        if (!form || !arg) {
            error(e.range, text(e),
                  fmt::format("write '{}(X, dim = d)': one tensor expression and a constant dimension", c.callee));
            return;
        }
        if (!dim) {
            error(e.range, text(e),
                  fmt::format("a reduction of every element; give the dimension ('{}(X, dim = 1)'), or write a full "
                              "reduction at the developer level (samples/reduce_sum.tl)",
                              c.callee));
            return;
        }
        std::string firstTensor;
        forEachName(arg, [&](const Name& n) {
            if (!tensor(n.name)) return;
            if (firstTensor.empty()) firstTensor = n.name;
            if (assignedBefore.count(n.name))
                error(e.range, text(e),
                      fmt::format("it reads '{}', assigned by an earlier statement, and reductions run before the "
                                  "statements; compute '{}' in a kernel of its own first",
                                  n.name, n.name));
        });
        const std::string key = text(e);
        for (const auto& r : reds_)
            if (r.key == key) return;
        if (firstTensor.empty()) {
            error(e.range, key, "a reduction reads a tensor");
            return;
        }
        int level = 1;
        std::function<void(const Expr&)> inner = [&](const Expr& x) {
            if (const auto* ic = x.as<Call>()) {
                for (const auto& r : reds_)
                    if (r.key == text(x)) level = std::max(level, r.level + 1);
                for (const auto& a : ic->args) inner(*a.value);
            } else if (const auto* u = x.as<Unary>()) {
                inner(*u->operand);
            } else if (const auto* b = x.as<Binary>()) {
                inner(*b->lhs);
                inner(*b->rhs);
            } else if (const auto* t = x.as<Ternary>()) {
                inner(*t->cond);
                inner(*t->thenExpr);
                inner(*t->elseExpr);
            }
        };
        // The online form: a sum of `exp(A - max(A))` in its maximum's pass (ReductionPasses.cpp).
        std::string onlineMax;
        if (const Call* m = (c.callee == "sum" || c.callee == "mean") ? onlineMaxOf(*arg) : nullptr)
            for (auto& r : reds_)
                if (r.key == text(*m)) {
                    onlineMax = r.key;
                    if (r.prev.empty()) {
                        r.prev = fresh(r.frag + "_prev");
                        r.use = fresh(r.frag + "_use");
                    }
                    // A's own reductions, if any, are the maximum's inner levels.
                    level = r.level;
                }
        if (onlineMax.empty()) inner(*arg);
        if (level > 1 && readsProduct(*arg)) {
            error(e.range, key,
                  fmt::format("it reduces the product '{}' after another reduction of the same rows, which would run "
                              "the GEMM once per pass; compute the product into a tensor in a kernel of its own "
                              "first ('P = {};'), or write it at the developer level; a sum of 'exp({} - max({}, dim "
                              "= 1))' is the one such form lowered (online, in one pass)",
                              text(*mm_), text(*mm_), text(*mm_), text(*mm_)));
            return;
        }
        reds_.push_back(Reduction{c.callee, cloneSyntax(*arg), *dim, key, fresh(c.callee + "_" + firstTensor),
                                  fresh(c.callee + "_" + firstTensor + "_src"), e.range, level, onlineMax, "", ""});
        return;
    }
    case ExprKind::Unary: findReductions(*e.as<Unary>()->operand, assignedBefore); return;
    case ExprKind::Binary:
        if (e.as<Binary>()->op == BinaryOp::MatMul) {
            product(e);
            return;
        }
        findReductions(*e.as<Binary>()->lhs, assignedBefore);
        findReductions(*e.as<Binary>()->rhs, assignedBefore);
        return;
    case ExprKind::Ternary:
        findReductions(*e.as<Ternary>()->cond, assignedBefore);
        findReductions(*e.as<Ternary>()->thenExpr, assignedBefore);
        findReductions(*e.as<Ternary>()->elseExpr, assignedBefore);
        return;
    default: return;
    }
}

// `A @ B` inside a reduction: two 2-D tensor parameters, each as it is or transposed, one product
// per kernel (read by any number of its reductions).
void Lowerer::product(const Expr& e) {
    const auto& b = *e.as<Binary>();
    if (!inReduction_) {
        error(e.range, text(e),
              fmt::format("a kernel with reductions reads a product only inside reductions over its last dimension "
                          "(a GEMM per chunk of columns, reduced as it is made: 'y = sum({0}, dim = 1);'); compute "
                          "the reductions into tensors in a kernel of their own first and read them in the "
                          "product's epilogue ('s = max(X, dim = 1);', then 'Y = {0} - s;'), or the product into a "
                          "tensor first ('P = {0};')",
                          text(e)));
        return;
    }
    if (mm_) {
        if (text(*mm_) != text(e))
            error(e.range, text(e),
                  fmt::format("one product per kernel with reductions (the GEMM of each chunk), and this one is "
                              "another than '{}'; compute it into a tensor in a kernel of its own first",
                              text(*mm_)));
        return;
    }
    auto operand = [&](const Expr& x, bool& transposed) -> const Param* {
        const Expr* base = &x;
        if (const auto* c = x.as<Call>(); c && c->callee == "transpose" && c->args.size() == 1 && c->args[0].keyword.empty()) {
            base = c->args[0].value.get();
            transposed = true;
        }
        const auto* n = base->as<Name>();
        const Param* p = n ? tensor(n->name) : nullptr;
        return p && (p->type.dims.size() == 2 || p->type.dims.size() == 3) ? p : nullptr;
    };
    mmA_ = operand(*b.lhs, mmTA_);
    mmB_ = operand(*b.rhs, mmTB_);
    if (!mmA_ || !mmB_) {
        error(e.range, text(e),
              "a product inside a reduction multiplies two tensor parameters of rank 2 or 3 (a batch first), each "
              "as it is or transposed ('sum(X @ transpose(W), dim = 1)'); compute other operands into a tensor in a "
              "kernel of its own first");
        return;
    }
    // NumPy's matmul: a batch dimension of 1, or none, broadcasts; two that are not 1 are equal.
    for (const Param* p : {mmA_, mmB_}) {
        if (p->type.dims.size() != 3 || isOne(*p->type.dims[0])) continue;
        if (mmBatch_ && text(*mmBatch_) != text(*p->type.dims[0])) {
            error(e.range, text(e),
                  fmt::format("the batch dimensions differ ({} and {}); a batched GEMM is [B, M, K] @ [B, K, N], "
                              "a batch of 1 or none broadcasting",
                              text(*mmBatch_), text(*p->type.dims[0])));
            return;
        }
        mmBatch_ = p->type.dims[0].get();
    }
    auto shape = [&](const Param& p, bool t) {
        return fmt::format("{}{}, {}", p.type.dims.size() == 3 ? text(*p.type.dims[0]) + ", " : "",
                           text(mmDim(p, t, 0)), text(mmDim(p, t, 1)));
    };
    if (text(mmDim(*mmA_, mmTA_, 1)) != text(mmDim(*mmB_, mmTB_, 0))) {
        error(e.range, text(e),
              fmt::format("'{}' [{}] @ '{}' [{}]: the inner dimensions differ; a GEMM is [M, K] @ [K, N]", text(*b.lhs),
                          shape(*mmA_, mmTA_), text(*b.rhs), shape(*mmB_, mmTB_)));
        return;
    }
    mm_ = &e;
}

// Whether `e` reads the product itself (not through an inner reduction's result).
bool Lowerer::readsProduct(const Expr& e) const {
    if (!mm_) return false;
    switch (e.kind) {
    case ExprKind::Call:
        if (isReductionCall(*e.as<Call>())) return false;
        for (const auto& a : e.as<Call>()->args)
            if (readsProduct(*a.value)) return true;
        return false;
    case ExprKind::Unary: return readsProduct(*e.as<Unary>()->operand);
    case ExprKind::Binary:
        return e.as<Binary>()->op == BinaryOp::MatMul || readsProduct(*e.as<Binary>()->lhs) || readsProduct(*e.as<Binary>()->rhs);
    case ExprKind::Ternary:
        return readsProduct(*e.as<Ternary>()->cond) || readsProduct(*e.as<Ternary>()->thenExpr) ||
               readsProduct(*e.as<Ternary>()->elseExpr);
    default: return false;
    }
}

// The shape a reduction runs over: the product's [M, N] ([B, M, N]) where it reads it, else the widest
// tensor its operand reads.
std::vector<const Expr*> Lowerer::shapeOf(const Expr& arg) const {
    std::vector<const Expr*> out;
    if (readsProduct(arg)) {
        if (mmBatch_) out.push_back(mmBatch_);
        out.push_back(&mmDim(*mmA_, mmTA_, 0));
        out.push_back(&mmDim(*mmB_, mmTB_, 1));
        return out;
    }
    const Param* w = nullptr;
    forEachName(&arg, [&](const Name& n) {
        if (const Param* p = tensor(n.name); p && (!w || p->type.dims.size() > w->type.dims.size())) w = p;
    });
    if (w)
        for (const auto& d : w->type.dims) out.push_back(d.get());
    return out;
}

bool Lowerer::run() {
    Statements scan = scanStatements(k_, {"block_M", "block_N"}, diags_);
    used_ = std::move(scan.used);
    steps_ = std::move(scan.steps);
    acc_ = scan.acc;
    ok_ = scan.ok;
    const SourceRange at = scan.at;
    for (auto& st : steps_) desugarLogSumExp(st.value);  // `let`s inlined: `m + log(sum(exp(X - m), ...))` seen as written
    std::set<std::string> assigned;
    for (const auto& st : steps_) {
        findReductions(*st.value, assigned);
        assigned.insert(st.target->name);
    }
    if (!ok_ || reds_.empty()) return false;

    // The space: the widest tensor the first reduction reads; every reduction over it and one
    // of its last two dimensions.
    space_ = shapeOf(*reds_[0].arg);
    rank_ = space_.size();
    if (rank_ < 2 || rank_ > 3) {
        error(reds_[0].range, reds_[0].key,
              rank_ < 2 ? "a reduction of a rank-1 tensor is one value for all of it, which one block would compute "
                          "alone; write a full reduction at the developer level (samples/reduce_sum.tl)"
                        : "reductions of rank-2 and rank-3 tensors are lowered; write it at the developer level");
        return false;
    }
    auto spaceText = [&] {
        std::string s;
        for (const Expr* d : space_) s += (s.empty() ? "" : ", ") + text(*d);
        return "[" + s + "]";
    };
    const int wantDim = reds_[0].dim < 0 ? reds_[0].dim + int(rank_) : reds_[0].dim;
    for (const auto& r : reds_) {
        int d = r.dim < 0 ? r.dim + int(rank_) : r.dim;
        std::string shape;
        for (const Expr* x : shapeOf(*r.arg)) shape += (shape.empty() ? "" : ", ") + text(*x);
        if (d < 0 || d >= int(rank_)) {
            error(r.range, r.key, fmt::format("dimension {} of a rank-{} tensor", r.dim, rank_));
        } else if (size_t(d) + 2 < rank_) {
            error(r.range, r.key,
                  fmt::format("a whole-tensor kernel reduces one of the last two dimensions of {}, one row or column "
                              "per block; write a reduction over a batch dimension at the developer level",
                              spaceText()));
        } else if (mm_ && readsProduct(*r.arg) && d != int(rank_) - 1) {
            error(r.range, r.key,
                  fmt::format("a product is reduced over its last dimension, a GEMM per chunk of columns; write the "
                              "transposed product, '{}(transpose({}) @ transpose({}), dim = 1)', whose rows are "
                              "these columns",
                              r.op, text(*mm_->as<Binary>()->rhs), text(*mm_->as<Binary>()->lhs)));
        } else if (d != wantDim || "[" + shape + "]" != spaceText()) {
            error(r.range, r.key,
                  fmt::format("the kernel's reductions run over one shape and one dimension ({}, dimension {}, as "
                              "'{}'); split the kernel",
                              spaceText(), wantDim, reds_[0].key));
        }
    }
    if (!ok_) return false;
    dim_ = size_t(wantDim);
    red_ = dim_ + 2 - rank_;
    kept_ = 1 - red_;

    // The assigned tensors: all of the space's shape, or all of the reduced one.
    const auto& out = steps_[0].target->type.dims;
    auto sameDims = [](const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t d = 0; d < a.size(); ++d)
            if (text(*a[d]) != text(*b[d])) return false;
        return true;
    };
    bool full = out.size() == rank_, reduced = false;
    for (size_t d = 0; full && d < rank_; ++d) full = text(*out[d]) == text(*space_[d]);
    if (!full) {
        reduced = out.size() == rank_ || out.size() + 1 == rank_;
        for (size_t d = 0, r = 0; reduced && d < out.size(); ++d, ++r) {
            if (r == dim_ && out.size() + 1 == rank_) ++r;
            reduced = r == dim_ ? isOne(*out[d]) : text(*out[d]) == text(*space_[r]);
        }
    }
    if (!full && !reduced) {
        error(steps_[0].value->range, steps_[0].target->name,
              fmt::format("a kernel with reductions over {} assigns tensors of that shape or of the reduced one "
                          "(dimension {} as 1, or dropped)",
                          spaceText(), dim_));
        return false;
    }
    for (const auto& st : steps_)
        if (!sameDims(st.target->type.dims, out)) {
            diags_.report(DiagId::err_whole_tensor_result_shape, st.value->range, st.target->name);
            ok_ = false;
        }
    if (!ok_) return false;
    rowMode_ = reduced;

    // Names of the kernel tlc writes.
    vars_[0] = fresh("i");
    vars_[1] = fresh("j");
    bk_ = fresh(kept_ == 0 ? "bm" : "bn");
    c_ = fresh("c");
    if (rank_ == 3) bb_ = fresh("bb");
    if (mm_) {
        mmAcc_ = fresh("acc");
        mmAShared_ = fresh(mmA_->name + "_shared");
        mmBShared_ = fresh(mmB_->name + "_shared");
        mmBlockK_ = fresh("block_K");
        mmStages_ = fresh("stages");
        mmThreads_ = fresh("threads");
    }
    const std::string R = "(" + text(*space_[dim_]) + ")";
    const std::string chunks = fmt::format("ceildiv({}, {})", R, blocks_[red_]);

    std::string passes = reductionPasses(R, chunks);
    // The pass that writes.
    std::vector<std::string> reads;
    std::set<std::string> assignedFirst, done;
    std::string statements;
    for (const auto& st : steps_) {
        const std::string& y = st.target->name;
        std::vector<std::string> stepReads;
        std::string value = rewrite(*st.value, rowMode_, stepReads, st.value->range);
        if (st.op) stepReads.push_back(y);
        for (const auto& n : stepReads)
            if (std::find(reads.begin(), reads.end(), n) == reads.end()) {
                reads.push_back(n);
                if (done.count(n)) assignedFirst.insert(n);  // written before it is read: its tile holds it
            }
        const View& v = view(y, rowMode_, st.value->range);
        statements += fmt::format("{} {}= {};\n", element(v), st.op ? spelling(*st.op) : "", value);
        done.insert(y);
    }
    if (!ok_) return false;
    std::string write, copiesOut;
    for (const auto& n : done) {
        const View& v = (rowMode_ ? row_ : full_).at(n);
        copiesOut += fmt::format("copy({}, {});\n", v.tile, region(v));
    }
    if (rowMode_)
        write = copiesIn(reads, true, assignedFirst) +
                fmt::format("for {} in parallel({}) {{\n{}}}\n", vars_[kept_], blocks_[kept_], statements) + copiesOut;
    else
        write = fmt::format("for {} in serial({}) {{\n{}for ({}, {}) in parallel({}, {}) {{\n{}}}\n{}}}\n", c_, chunks,
                            copiesIn(reads, false, assignedFirst), vars_[0], vars_[1], blocks_[0], blocks_[1], statements,
                            copiesOut);

    // Tiles, then the passes, in one grid.
    std::string allocs;
    for (const auto* views : {&full_, &row_})
        for (const auto& [n, v] : *views)
            allocs += fmt::format("let {} = alloc_fragment([{}], {});\n", v.tile, extents(v), v.param->type.dtype);
    for (const auto& r : reds_) {
        allocs += fmt::format("let {} = alloc_fragment([{}, {}], {});\n", r.src, blocks_[0], blocks_[1], acc_);
        allocs += fmt::format("let {} = alloc_fragment([{}], {});\n", r.frag, blocks_[kept_], acc_);
        for (const std::string* online : {&r.prev, &r.use})
            if (!online->empty()) allocs += fmt::format("let {} = alloc_fragment([{}], {});\n", *online, blocks_[kept_], acc_);
    }
    std::string grid = fmt::format("ceildiv(({}), {})", text(*space_[rank_ - 2 + kept_]), blocks_[kept_]);
    std::string gvars = bk_;
    if (rank_ == 3) {
        grid += ", (" + text(*space_[0]) + ")";
        gvars = "(" + bk_ + ", " + bb_ + ")";
    }
    std::string tileParams = red_ == 0 ? "block_M = auto, block_N = 32" : "block_M = auto, block_N = auto";
    if (mm_) {
        const std::string in = mmA_->type.dtype;
        const std::string accType = in == "i8" || in == "u8" ? "i32" : in == "f64" ? "f64" : "f32";
        allocs += fmt::format("let {} = alloc_shared([{}], {});\nlet {} = alloc_shared([{}], {});\n", mmAShared_,
                              mmTA_ ? mmBlockK_ + ", " + blocks_[0] : blocks_[0] + ", " + mmBlockK_, in, mmBShared_,
                              mmTB_ ? blocks_[1] + ", " + mmBlockK_ : mmBlockK_ + ", " + blocks_[1], mmB_->type.dtype);
        allocs += fmt::format("let {} = alloc_fragment([{}, {}], {});\n", mmAcc_, blocks_[0], blocks_[1], accType);
        grid += ", threads = " + mmThreads_;
        tileParams += fmt::format(", {} = auto, {} = auto, {} = auto", mmBlockK_, mmStages_, mmThreads_);
        k_.notes.push_back(fmt::format("tlc: '{}' is reduced as it is made: one block per {} rows runs the GEMM of "
                                       "each {}-column chunk in turn and reduces its accumulator into the rows' {} "
                                       "values; the product is never stored (no temporary, no atomics).",
                                       text(*mm_), blocks_[0], blocks_[1], acc_));
    }
    const std::string body = fmt::format("\ngrid({}) as {} {{\n{}{}{}}}\n", grid, gvars, allocs, passes, write);
    // Reducing the first tiled dimension (columns), a block's columns are its rows' contiguous
    // run: 32 (a 128-byte line of f32) unless the author says otherwise. The recommender's model
    // counts bytes, not how they coalesce, and picked block_N = 1 there (a column per block).
    return instantiate(k_, at, body, tileParams, {}, diags_);
}

} // namespace reduce_impl

bool isReductionCall(const Call& c) {
    if (c.callee == "sum" || c.callee == "mean") return true;
    if (c.callee != "max" && c.callee != "min") return false;
    size_t positional = 0;
    for (const auto& a : c.args) {
        if (a.keyword == "dim") return true;
        positional += a.keyword.empty();
    }
    return positional == 1;
}

bool hasReduction(const Kernel& k) {
    bool found = false;
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
        if (found) return;
        switch (e.kind) {
        case ExprKind::Call:
            if (isReductionCall(*e.as<Call>())) found = true;
            for (const auto& a : e.as<Call>()->args) walk(*a.value);
            return;
        case ExprKind::Unary: walk(*e.as<Unary>()->operand); return;
        case ExprKind::Binary:
            walk(*e.as<Binary>()->lhs);
            walk(*e.as<Binary>()->rhs);
            return;
        case ExprKind::Ternary:
            walk(*e.as<Ternary>()->cond);
            walk(*e.as<Ternary>()->thenExpr);
            walk(*e.as<Ternary>()->elseExpr);
            return;
        default: return;
        }
    };
    for (const auto& s : k.body->stmts) {
        if (const auto* l = s->as<LetStmt>()) walk(*l->value);
        if (const auto* a = s->as<AssignStmt>()) walk(*a->value);
    }
    return found;
}

bool lowerReductions(Kernel& k, DiagnosticEngine& diags) { return reduce_impl::Lowerer(k, diags).run(); }

} // namespace tlc::beginner