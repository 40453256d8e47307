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
#include "beginner/Names.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tlc::beginner {

using namespace ast;

namespace {
namespace reduce_impl {

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
};

struct View {
    const Param* param = nullptr;
    std::string tile;
    std::vector<Role> roles;
};

struct Step {
    const Param* target;
    std::optional<BinaryOp> op;
    ExprPtr value;
};

std::string text(const Expr& e) { return printExpr(e); }
bool isOne(const Expr& e) {
    const auto* one = e.as<IntLit>();
    return one && one->value == 1;
}

std::optional<int> intValue(const Expr& e) {
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
    std::map<std::string, ExprPtr> lets_;
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
    std::string mmAcc_, mmAShared_, mmBShared_, mmBlockK_, mmStages_, mmThreads_;
    int inReduction_ = 0;

    const Param* tensor(const std::string& name) const { return tensorNamed(k_, name); }
    void error(SourceRange r, const std::string& what, const std::string& why) {
        diags_.report(DiagId::err_whole_tensor_form, r, what, why);
        ok_ = false;
    }
    std::string fresh(const std::string& base) { return freshName(used_, base); }
    ExprPtr inlineLets(const Expr& e) const { return beginner::inlineLets(e, lets_); }
    void findReductions(const Expr& e, const std::set<std::string>& assignedBefore);
    void product(const Expr& e);
    bool readsProduct(const Expr& e) const;
    std::vector<const Expr*> shapeOf(const Expr& arg) const;
    std::string gemmPass();
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
        inner(*arg);
        if (level > 1 && readsProduct(*arg)) {
            error(e.range, key,
                  fmt::format("it reduces the product '{}' after another reduction of the same rows, which would run "
                              "the GEMM once per pass; compute the product into a tensor in a kernel of its own "
                              "first ('P = {};'), or write it at the developer level (an online form, as "
                              "samples/flash_attention.tl rescales its sums)",
                              text(*mm_), text(*mm_)));
            return;
        }
        reds_.push_back(Reduction{c.callee, cloneSyntax(*arg), *dim, key, fresh(c.callee + "_" + firstTensor),
                                  fresh(c.callee + "_" + firstTensor + "_src"), e.range, level});
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
        return p && p->type.dims.size() == 2 ? p : nullptr;
    };
    mmA_ = operand(*b.lhs, mmTA_);
    mmB_ = operand(*b.rhs, mmTB_);
    if (!mmA_ || !mmB_) {
        error(e.range, text(e),
              "a product inside a reduction multiplies two 2-D tensor parameters, each as it is or transposed "
              "('sum(X @ transpose(W), dim = 1)'); compute other operands, and batched products, into a tensor "
              "in a kernel of its own first");
        return;
    }
    const auto& ad = mmA_->type.dims;
    const auto& bd = mmB_->type.dims;
    if (text(*ad[mmTA_ ? 0 : 1]) != text(*bd[mmTB_ ? 1 : 0])) {
        error(e.range, text(e),
              fmt::format("'{}' [{}, {}] @ '{}' [{}, {}]: the inner dimensions differ; a GEMM is [M, K] @ [K, N]",
                          text(*b.lhs), text(*ad[mmTA_ ? 1 : 0]), text(*ad[mmTA_ ? 0 : 1]), text(*b.rhs),
                          text(*bd[mmTB_ ? 1 : 0]), text(*bd[mmTB_ ? 0 : 1])));
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

// The shape a reduction runs over: the product's [M, N] where it reads it, else the widest
// tensor its operand reads.
std::vector<const Expr*> Lowerer::shapeOf(const Expr& arg) const {
    std::vector<const Expr*> out;
    if (readsProduct(arg)) {
        out.push_back(mmA_->type.dims[mmTA_ ? 1 : 0].get());
        out.push_back(mmB_->type.dims[mmTB_ ? 0 : 1].get());
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

// NumPy's broadcasting against the space (row = false) or against the reduced shape, where a
// tensor of one dimension fewer is the reduced shape without its 1 (as `y: f32[M]`).
std::optional<std::vector<Role>> Lowerer::align(const Param& p, bool row, SourceRange at) {
    const auto& dims = p.type.dims;
    std::vector<Role> roles;
    const bool dropped = row && dims.size() + 1 == rank_;
    if (dims.size() > rank_) {
        diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, "count", dims.size(), rank_,
                      "an operand has at most the dimensions of the reductions' operands");
        ok_ = false;
        return std::nullopt;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
        const size_t r = dropped ? (d < dim_ ? d : d + 1) : rank_ - dims.size() + d;
        if (row && r == dim_) {
            if (isOne(*dims[d])) {
                roles.push_back(Role::One);
                continue;
            }
            error(at, p.name,
                  fmt::format("it is read whole (dimension {} is {}) where the result is reduced over that "
                              "dimension; reduce it (sum(..., dim = {})) or assign a tensor of the whole shape",
                              d, text(*dims[d]), dim_));
            return std::nullopt;
        }
        if (text(*dims[d]) == text(*space_[r])) roles.push_back(roleOf(r));
        else if (isOne(*dims[d])) roles.push_back(Role::One);
        else {
            diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, d, text(*dims[d]), text(*space_[r]),
                          "broadcasting needs equal sizes or 1");
            ok_ = false;
            return std::nullopt;
        }
    }
    return roles;
}

View& Lowerer::view(const std::string& name, bool row, SourceRange at) {
    auto& views = row ? row_ : full_;
    if (auto it = views.find(name); it != views.end()) return it->second;
    const Param& p = *tensor(name);
    auto roles = align(p, row, at);
    return views[name] = View{&p, fresh(name + (row ? "_row" : "_tile")), roles.value_or(std::vector<Role>{})};
}

std::string Lowerer::region(const View& v) const {
    std::string subs;
    bool tiled = false;
    for (Role r : v.roles) tiled = tiled || r != Role::Batch;
    for (size_t d = 0; d < v.roles.size(); ++d) {
        std::string s;
        switch (v.roles[d]) {
        case Role::Batch: s = !tiled && d + 1 == v.roles.size() ? bb_ + " : +1" : bb_; break;
        case Role::One: s = "0 : +1"; break;
        case Role::Kept: s = fmt::format("{} * {} : +{}", bk_, blocks_[kept_], blocks_[kept_]); break;
        case Role::Red: s = fmt::format("{} * {} : +{}", c_, blocks_[red_], blocks_[red_]); break;
        }
        subs += (subs.empty() ? "" : ", ") + s;
    }
    return fmt::format("{}[{}]", v.param->name, subs);
}

// The tile's extents and the element at the loop variables; a tensor of batch dimensions only
// takes a one-element tile.
std::string Lowerer::extents(const View& v) const {
    std::string out;
    for (Role r : v.roles)
        if (r != Role::Batch) out += (out.empty() ? "" : ", ") + (r == Role::One ? std::string("1") : blocks_[r == Role::Kept ? kept_ : red_]);
    return out.empty() ? "1" : out;
}

std::string Lowerer::element(const View& v) const {
    std::string out;
    for (Role r : v.roles)
        if (r != Role::Batch) out += (out.empty() ? "" : ", ") + (r == Role::One ? std::string("0") : vars_[r == Role::Kept ? kept_ : red_]);
    return fmt::format("{}[{}]", v.tile, out.empty() ? "0" : out);
}

std::string Lowerer::rewrite(const Expr& e, bool row, std::vector<std::string>& reads, SourceRange at) {
    ExprPtr out = cloneSyntax(e);
    replaceIn(out, [&](ExprPtr& x) {
        std::string with;
        if (const auto* n = x->as<Name>(); n && tensor(n->name)) {
            with = element(view(n->name, row, at));
            if (std::find(reads.begin(), reads.end(), n->name) == reads.end()) reads.push_back(n->name);
        } else if (const auto* c = x->as<Call>(); c && isReductionCall(*c)) {
            const std::string key = text(*x);
            for (const auto& r : reds_)
                if (r.key == key) with = fmt::format("{}[{}]", r.frag, vars_[kept_]);
        } else if (const auto* b = x->as<Binary>(); b && b->op == BinaryOp::MatMul) {
            with = fmt::format("{}[{}, {}]", mmAcc_, vars_[0], vars_[1]);  // the chunk's GEMM
        }
        if (with.empty()) return false;
        x = std::make_unique<Name>(x->range, with);  // printed as written: the text is parsed again
        return true;
    });
    return text(*out);
}

std::string Lowerer::copiesIn(const std::vector<std::string>& names, bool row, const std::set<std::string>& skip) {
    std::string out;
    for (const auto& n : names)
        if (!skip.count(n)) {
            const View& v = (row ? row_ : full_).at(n);
            out += fmt::format("copy({}, {});\n", region(v), v.tile);
        }
    return out;
}

// The GEMM of chunk c of the product's columns into the accumulator: A's row block and B's
// column chunk through a pipelined loop over K (tiles in the tensors' layouts).
std::string Lowerer::gemmPass() {
    const std::string k = fresh("k");
    auto corner = [](bool t, const std::string& r, const std::string& c) { return t ? c + ", " + r : r + ", " + c; };
    const std::string K = text(*mmA_->type.dims[mmTA_ ? 0 : 1]);
    return fmt::format("clear({acc});\n"
                       "for {k} in pipelined(ceildiv({K}, {bk}), stages = {st}) {{\n"
                       "copy({A}[{ac}], {As});\ncopy({B}[{bc}], {Bs});\ngemm({As}, {Bs}, {acc}{ta}{tb});\n}}\n",
                       fmt::arg("acc", mmAcc_), fmt::arg("k", k), fmt::arg("K", K), fmt::arg("bk", mmBlockK_),
                       fmt::arg("st", mmStages_), fmt::arg("A", mmA_->name), fmt::arg("B", mmB_->name),
                       fmt::arg("As", mmAShared_), fmt::arg("Bs", mmBShared_),
                       fmt::arg("ac", corner(mmTA_, bk_ + " * " + blocks_[0], k + " * " + mmBlockK_)),
                       fmt::arg("bc", corner(mmTB_, k + " * " + mmBlockK_, c_ + " * " + blocks_[1])),
                       fmt::arg("ta", mmTA_ ? ", transpose_A = true" : ""), fmt::arg("tb", mmTB_ ? ", transpose_B = true" : ""));
}

bool Lowerer::run() {
    for (const auto& tp : k_.templateParams) used_.insert(tp.name);
    for (const auto& p : k_.params) {
        used_.insert(p.name);
        for (const auto& d : p.type.dims) forEachName(d.get(), [&](const Name& n) { used_.insert(n.name); });
        if (p.type.dtype == "f64") acc_ = "f64";
    }
    used_.insert({"block_M", "block_N"});
    SourceRange at = k_.range;
    bool first = true;
    for (const auto& s : k_.body->stmts) {
        if (s->kind == StmtKind::Require) continue;
        if (first) at = s->range;
        first = false;
        if (const auto* l = s->as<LetStmt>()) {
            used_.insert(l->name);
            lets_[l->name] = inlineLets(*l->value);
            continue;
        }
        const auto* a = s->as<AssignStmt>();
        const auto* target = a ? a->target->as<Name>() : nullptr;
        const Param* p = target ? tensor(target->name) : nullptr;
        if (!p) {
            diags_.report(DiagId::err_whole_tensor_stmt, s->range);
            ok_ = false;
            continue;
        }
        forEachName(a->value.get(), [&](const Name& n) { used_.insert(n.name); });
        steps_.push_back(Step{p, a->op, inlineLets(*a->value)});
    }
    for (const auto& [n, v] : lets_) forEachName(v.get(), [&](const Name& x) { used_.insert(x.name); });
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

    // A pass over the chunks per level of nesting: the reductions that read none of each other
    // share one (`max(X, dim = 0)` and `mean(X, dim = 0)` read X once), inner levels first.
    std::string passes;
    int levels = 0;
    for (const auto& r : reds_) levels = std::max(levels, r.level);
    for (int level = 1; level <= levels; ++level) {
        std::vector<std::string> reads;
        std::string inits, sources, reduces, means;
        bool gemm = false;
        for (const auto& r : reds_) {
            if (r.level != level) continue;
            gemm = gemm || readsProduct(*r.arg);
            const std::string value = rewrite(*r.arg, false, reads, r.range);
            const auto* cast = r.arg->as<Call>();
            const bool inAcc = cast && cast->callee == acc_;  // `sum(f32(X), ...)`: converted already
            const char* identity = r.op == "max" ? "-inf" : r.op == "min" ? "inf" : "0.0";
            inits += r.op == "max" || r.op == "min" ? fmt::format("fill({}, {});\n", r.frag, identity) : fmt::format("clear({});\n", r.frag);
            sources += fmt::format("{}[{}, {}] = {} * {} + {} < {} ? {} : {};\n", r.src, vars_[0], vars_[1], c_, blocks_[red_],
                                   vars_[red_], R, inAcc ? value : acc_ + "(" + value + ")", identity);
            reduces += fmt::format("reduce_{}({}, {}, dim = {}, clear = false);\n", r.op == "mean" ? "sum" : r.op, r.src, r.frag, red_);
            if (r.op == "mean")
                means += fmt::format("{0}[{1}] = {0}[{1}] / {2}({3});\n", r.frag, vars_[kept_], acc_, R);
        }
        passes += inits + fmt::format("for {} in serial({}) {{\n{}{}", c_, chunks, gemm ? gemmPass() : "",
                                      copiesIn(reads, false, {}));
        passes += fmt::format("for ({}, {}) in parallel({}, {}) {{\n{}}}\n{}}}\n", vars_[0], vars_[1], blocks_[0], blocks_[1],
                              sources, reduces);
        if (!means.empty()) passes += fmt::format("for {} in parallel({}) {{\n{}}}\n", vars_[kept_], blocks_[kept_], means);
    }
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
} // namespace

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
