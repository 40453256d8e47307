// Reductions that feed a product's epilogue in whole-tensor kernels:
//
//     kernel rms_proj(X: f16[M, K], W: f16[K, N], Y: f16[M, N]) {
//         Y = X @ W * rsqrt(mean(f32(X) * f32(X), dim = 1) + 1e-6);
//     }
//
// A reduction over the last dimension of a tensor of the product's rows (`[M, L]`, dim 1: a
// value per row, `[M, 1]`) or over the first dimension of a tensor of its columns (`[L, N]`,
// dim 0: `[1, N]`) is a statistic the epilogue broadcasts. The kernel is the GEMM of the
// elementwise lowering (WholeTensor.cpp) with a pass before its K loop: each block computes its
// rows' (columns') statistics over L in chunks of block_R = 32 (f32 accumulators, the chunk's
// elements past L masked with the reduction's identity), then runs the GEMM and the epilogue.
// The pass reads the statistic's operands' rows once more in every block of a row (X's row
// block as much again as the K loop reads of it): the price of one kernel with no temporary.
// Reductions of reductions, of the product itself, or of other shapes are errors saying what to
// write. Written as .tl text with the author's names and parsed (instantiate).
#include "beginner/Reductions.h"

#include "ast/Clone.h"
#include "beginner/KernelTemplates.h"
#include "beginner/Names.h"
#include "beginner/Statements.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tlc::beginner {

using namespace ast;

namespace {
namespace gemm_stats_impl {

std::string text(const Expr& e) { return printExpr(e); }

// Visits every node of `e` (pre-order); `f` returns false to skip a node's operands.
void visit(const Expr& e, const std::function<bool(const Expr&)>& f) {
    if (!f(e)) return;
    switch (e.kind) {
    case ExprKind::Call:
        for (const auto& a : e.as<Call>()->args) visit(*a.value, f);
        return;
    case ExprKind::Unary: visit(*e.as<Unary>()->operand, f); return;
    case ExprKind::Binary:
        visit(*e.as<Binary>()->lhs, f);
        visit(*e.as<Binary>()->rhs, f);
        return;
    case ExprKind::Ternary:
        visit(*e.as<Ternary>()->cond, f);
        visit(*e.as<Ternary>()->thenExpr, f);
        visit(*e.as<Ternary>()->elseExpr, f);
        return;
    default: return;
    }
}

bool isMatMul(const Expr& e) {
    const auto* b = e.as<Binary>();
    return b && b->op == BinaryOp::MatMul;
}

// Where tensors are read: the product's [M, N] tiles (the epilogue), or a statistic's chunks
// of [M, L] (rows) or [L, N] (columns). Per frame dimension: its extent, loop variable, tile
// extent and tile start.
struct Frame {
    std::string id;
    const Expr* dims[2];
    std::string var[2], ext[2], start[2];
};

struct Stat {
    std::string op, key, frag, src, shared;
    ExprPtr arg;
    bool row = true;   // a value per row of the product ([M, L], dim 1), else per column
    const Expr* len = nullptr;  // L
    SourceRange range;
};

struct TileOf {
    const Param* param = nullptr;
    std::string tile;
    std::vector<int> roles;  // per tensor dimension: the frame's dimension, or -1 (a broadcast 1)
};

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
    const Expr* mm_ = nullptr;
    const Param* A_ = nullptr;
    const Param* B_ = nullptr;
    bool tA_ = false, tB_ = false;
    std::vector<Stat> stats_;
    std::map<std::string, TileOf> tiles_;  // by frame id and tensor name
    std::vector<std::string> tileOrder_;
    std::string acc_ = "f32", bm_, bn_, i_, j_, r_, c_, k_var_, gemmAcc_;

    const Param* tensor(const std::string& n) const { return tensorNamed(k_, n); }
    void error(SourceRange at, const std::string& what, const std::string& why) {
        diags_.report(DiagId::err_whole_tensor_form, at, what, why);
        ok_ = false;
    }
    std::string fresh(const std::string& base) { return freshName(used_, base); }
    void collect(const Expr& e, const std::set<std::string>& assignedBefore);
    void statistic(const Call& c, const std::set<std::string>& assignedBefore);
    const Param* operand(const Expr& x, bool& transposed) const;
    TileOf* tileIn(const Frame& f, const std::string& name, SourceRange at);
    std::string region(const Frame& f, const TileOf& t) const;
    std::string element(const Frame& f, const TileOf& t) const;
    std::string rewrite(const Frame& f, const Expr& e, std::vector<std::string>& reads, SourceRange at);
};

const Param* Lowerer::operand(const Expr& x, bool& transposed) const {
    const Expr* base = &x;
    if (const auto* c = x.as<Call>(); c && c->callee == "transpose" && c->args.size() == 1 && c->args[0].keyword.empty()) {
        base = c->args[0].value.get();
        transposed = true;
    }
    const auto* n = base->as<Name>();
    const Param* p = n ? tensor(n->name) : nullptr;
    return p && p->type.dims.size() == 2 ? p : nullptr;
}

void Lowerer::collect(const Expr& e, const std::set<std::string>& assignedBefore) {
    visit(e, [&](const Expr& x) {
        if (isMatMul(x)) {
            const auto& b = *x.as<Binary>();
            if (mm_ && text(*mm_) != text(x)) {
                error(x.range, text(x),
                      fmt::format("one '@' per whole-tensor kernel (a GEMM and its epilogue), and this one is another "
                                  "than '{}'; split the kernel",
                                  text(*mm_)));
                return false;
            }
            if (!mm_) {
                A_ = operand(*b.lhs, tA_);
                B_ = operand(*b.rhs, tB_);
                if (!A_ || !B_) {
                    error(x.range, text(x),
                          "a product whose epilogue reads reductions multiplies two 2-D tensor parameters, each as it "
                          "is or transposed; compute other operands, and batched products, into a tensor first");
                    return false;
                }
                mm_ = &x;
            }
            return false;
        }
        if (const auto* c = x.as<Call>()) {
            if (isReductionCall(*c)) {
                statistic(*c, assignedBefore);
                return false;
            }
            static const std::set<std::string> kOwnKernel = {"transpose", "permute", "softmax", "layernorm", "rmsnorm"};
            if (kOwnKernel.count(c->callee)) {
                error(x.range, text(x), "not in a kernel of a product and reductions; compute it into a tensor in a "
                                        "kernel of its own first");
                return false;
            }
        }
        if (x.kind == ExprKind::Index) {
            error(x.range, text(x), "a kernel of a product and reductions reads whole tensors; slice into a tensor of "
                                    "its own in another kernel first");
            return false;
        }
        return true;
    });
}

// `op(arg, dim = d)`: a statistic of the product's rows or columns, its operand elementwise.
void Lowerer::statistic(const Call& c, const std::set<std::string>& assignedBefore) {
    const std::string key = printExpr(c);
    const Expr* arg = nullptr;
    std::optional<int> dim;
    bool form = true;
    for (const auto& a : c.args) {
        if (a.keyword.empty() && !arg) arg = a.value.get();
        else if (a.keyword == "dim" && !dim) {
            const Expr* v = a.value.get();
            bool neg = false;
            if (const auto* u = v->as<Unary>(); u && u->op == UnaryOp::Neg) v = u->operand.get(), neg = true;
            const auto* lit = v->as<IntLit>();
            if (lit) dim = int(neg ? -lit->value : lit->value);
            form = lit != nullptr;
        } else form = false;
    }
    if (!form || !arg || !dim) {
        error(c.range, key, fmt::format("write '{}(X, dim = d)': one tensor expression and a constant dimension", c.callee));
        return;
    }
    const Param* widest = nullptr;
    bool nested = false, ofProduct = false;
    visit(*arg, [&](const Expr& x) {
        if (isMatMul(x)) ofProduct = true;
        if (x.as<Call>() && isReductionCall(*x.as<Call>())) nested = true;
        if (const auto* n = x.as<Name>())
            if (const Param* p = tensor(n->name)) {
                if (!widest || p->type.dims.size() > widest->type.dims.size()) widest = p;
                if (assignedBefore.count(n->name))
                    error(c.range, key,
                          fmt::format("it reads '{}', assigned by an earlier statement, and the statistics are computed "
                                      "before the product; compute '{}' in a kernel of its own first",
                                      n->name, n->name));
            }
        return true;
    });
    if (ofProduct) {
        error(c.range, key,
              "it reduces a product the kernel also reads element by element: each element would wait for its whole "
              "row of the product (the GEMM run twice); compute the product into a tensor in a kernel of its own "
              "first ('P = X @ W;'), then 'Y = P - max(P, dim = 1);' or 'Y = softmax(P);' in another");
        return;
    }
    if (nested) {
        error(c.range, key,
              "a reduction beside a product reads no other reduction (the statistics are computed in one pass before "
              "the GEMM); compute the inner one into a tensor in a kernel of its own first");
        return;
    }
    for (const auto& s : stats_)
        if (s.key == key) return;
    if (!widest || widest->type.dims.size() != 2) {
        error(c.range, key,
              "a reduction beside a product is a statistic of a 2-D tensor's rows or columns that the product's "
              "epilogue broadcasts ('mean(X * X, dim = 1)' with X [M, K]); compute this one into a tensor first");
        return;
    }
    const std::string frag = fresh(c.callee + "_" + widest->name);
    stats_.push_back(Stat{c.callee, key, frag, fresh(frag + "_src"), fresh(frag + "_s"), cloneSyntax(*arg),
                          *dim == 1 || *dim == -1, nullptr, c.range});
    Stat& s = stats_.back();
    s.len = widest->type.dims[s.row ? 1 : 0].get();
    // Checked against the product's shape once it is known (run).
    if (*dim < -2 || *dim > 1) error(c.range, key, fmt::format("dimension {} of a 2-D tensor", *dim));
}

TileOf* Lowerer::tileIn(const Frame& f, const std::string& name, SourceRange at) {
    const std::string key = f.id + "/" + name;
    if (auto it = tiles_.find(key); it != tiles_.end()) return &it->second;
    const Param& p = *tensor(name);
    const auto& dims = p.type.dims;
    TileOf t{&p, fresh(name + (f.id == "out" ? "_tile" : "_chunk")), {}};
    if (dims.size() > 2) {
        diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, "count", dims.size(), 2,
                      "an operand has at most the product's dimensions");
        ok_ = false;
        return nullptr;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
        const size_t r = 2 - dims.size() + d;
        const auto* one = dims[d]->as<IntLit>();
        if (text(*dims[d]) == text(*f.dims[r])) t.roles.push_back(int(r));
        else if (one && one->value == 1) t.roles.push_back(-1);
        else {
            diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, d, text(*dims[d]), text(*f.dims[r]),
                          "broadcasting needs equal sizes or 1");
            ok_ = false;
            return nullptr;
        }
    }
    tileOrder_.push_back(key);
    return &(tiles_[key] = std::move(t));
}

std::string Lowerer::region(const Frame& f, const TileOf& t) const {
    std::string subs;
    for (int r : t.roles)
        subs += (subs.empty() ? "" : ", ") + (r < 0 ? std::string("0 : +1") : f.start[r] + " : +" + f.ext[r]);
    return fmt::format("{}[{}]", t.param->name, subs);
}

std::string Lowerer::element(const Frame& f, const TileOf& t) const {
    std::string subs;
    for (int r : t.roles) subs += (subs.empty() ? "" : ", ") + (r < 0 ? std::string("0") : f.var[r]);
    return fmt::format("{}[{}]", t.tile, subs.empty() ? "0" : subs);
}

std::string Lowerer::rewrite(const Frame& f, const Expr& e, std::vector<std::string>& reads, SourceRange at) {
    ExprPtr out = cloneSyntax(e);
    replaceIn(out, [&](ExprPtr& x) {
        std::string with;
        if (const auto* n = x->as<Name>(); n && tensor(n->name)) {
            if (const TileOf* t = tileIn(f, n->name, at)) with = element(f, *t);
            if (std::find(reads.begin(), reads.end(), n->name) == reads.end()) reads.push_back(n->name);
        } else if (const auto* c = x->as<Call>(); c && isReductionCall(*c)) {
            for (const auto& s : stats_)
                if (s.key == text(*x)) with = fmt::format("{}[{}]", s.shared, s.row ? i_ : j_);
        } else if (isMatMul(*x)) {
            with = fmt::format("{}[{}, {}]", gemmAcc_, i_, j_);
        }
        if (with.empty()) return false;
        x = std::make_unique<Name>(x->range, with);  // printed as written: the text is parsed again
        return true;
    });
    return text(*out);
}

bool Lowerer::run() {
    Statements scan = scanStatements(k_, {"block_M", "block_N", "block_K", "block_R", "stages", "threads"}, diags_);
    used_ = std::move(scan.used);
    steps_ = std::move(scan.steps);
    acc_ = scan.acc;
    ok_ = scan.ok;
    const SourceRange at = scan.at;
    std::set<std::string> assigned;
    for (const auto& st : steps_) {
        collect(*st.value, assigned);
        assigned.insert(st.target->name);
    }
    if (!ok_ || !mm_ || stats_.empty()) return false;

    // The product's shape, the assigned tensors', and each statistic's place.
    const Expr* M = A_->type.dims[tA_ ? 1 : 0].get();
    const Expr* K = A_->type.dims[tA_ ? 0 : 1].get();
    const Expr* N = B_->type.dims[tB_ ? 0 : 1].get();
    if (text(*K) != text(*B_->type.dims[tB_ ? 1 : 0])) {
        error(mm_->range, text(*mm_), "the inner dimensions of the product differ; a GEMM is [M, K] @ [K, N]");
        return false;
    }
    for (const auto& st : steps_) {
        const auto& d = st.target->type.dims;
        if (d.size() != 2 || text(*d[0]) != text(*M) || text(*d[1]) != text(*N)) {
            error(st.value->range, st.target->name,
                  fmt::format("a kernel of the product '{}' assigns tensors of its shape [{}, {}]", text(*mm_), text(*M),
                              text(*N)));
            return false;
        }
    }
    for (auto& s : stats_) {
        const Expr* kept = nullptr;
        visit(*s.arg, [&](const Expr& x) {
            if (const auto* n = x.as<Name>())
                if (const Param* p = tensor(n->name); p && p->type.dims.size() == 2 && !kept)
                    kept = p->type.dims[s.row ? 0 : 1].get();
            return true;
        });
        if (!kept || text(*kept) != text(s.row ? *M : *N))
            error(s.range, s.key,
                  fmt::format("a reduction beside the product '{}' is a statistic of its rows (a tensor [{}, L] "
                              "reduced over dimension 1) or of its columns ([L, {}] over dimension 0), which its "
                              "epilogue broadcasts; compute this one into a tensor in a kernel of its own first",
                              text(*mm_), text(*M), text(*N)));
    }
    if (!ok_) return false;

    // Names of the kernel tlc writes.
    bm_ = fresh("bm");
    bn_ = fresh("bn");
    i_ = fresh("i");
    j_ = fresh("j");
    r_ = fresh("r");
    c_ = fresh("c");
    k_var_ = fresh("k");
    gemmAcc_ = fresh("acc");
    const std::string aShared = fresh(A_->name + "_shared"), bShared = fresh(B_->name + "_shared");
    Frame out{"out", {M, N}, {i_, j_}, {"block_M", "block_N"}, {bm_ + " * block_M", bn_ + " * block_N"}};

    // The statistics' passes, one per kind (rows or columns) and length L, before the GEMM.
    std::map<std::pair<bool, std::string>, std::vector<Stat*>> groups;
    for (auto& s : stats_) groups[{!s.row, text(*s.len)}].push_back(&s);
    std::string passes, statAllocs, shares;
    for (auto& [group, members] : groups) {
        const bool row = !group.first;
        const Expr* len = members[0]->len;
        const std::string L = "(" + text(*len) + ")";
        Frame f{fmt::format("{}:{}", row ? "row" : "col", text(*len)),
                {row ? M : len, row ? len : N},
                {row ? i_ : r_, row ? r_ : j_},
                {row ? "block_M" : "block_R", row ? "block_R" : "block_N"},
                {row ? bm_ + " * block_M" : c_ + " * block_R", row ? c_ + " * block_R" : bn_ + " * block_N"}};
        std::vector<std::string> reads;
        std::string inits, sources, reduces, means;
        for (Stat* s : members) {
            const std::string value = rewrite(f, *s->arg, reads, s->range);
            const char* identity = s->op == "max" ? "-inf" : s->op == "min" ? "inf" : "0.0";
            inits += s->op == "max" || s->op == "min" ? fmt::format("fill({}, {});\n", s->frag, identity)
                                                       : fmt::format("clear({});\n", s->frag);
            sources += fmt::format("{}[{}, {}] = {} * block_R + {} < {} ? {}({}) : {};\n", s->src, f.var[0], f.var[1], c_, r_,
                                   L, acc_, value, identity);
            reduces += fmt::format("reduce_{}({}, {}, dim = {}, clear = false);\n", s->op == "mean" ? "sum" : s->op, s->src,
                                   s->frag, row ? 1 : 0);
            if (s->op == "mean")
                means += fmt::format("{0}[{1}] = {0}[{1}] / {2}({3});\n", s->frag, row ? i_ : j_, acc_, L);
            statAllocs += fmt::format("let {} = alloc_fragment([{}, {}], {});\nlet {} = alloc_fragment([{}], {});\n", s->src,
                                      f.ext[0], f.ext[1], acc_, s->frag, row ? "block_M" : "block_N", acc_);
            // The epilogue reads the statistic from shared memory: its fragment has the reduction's
            // layout, the epilogue's loop the accumulator's.
            statAllocs += fmt::format("let {} = alloc_shared([{}], {});\n", s->shared, row ? "block_M" : "block_N", acc_);
            shares += fmt::format("copy({}, {});\n", s->frag, s->shared);
        }
        std::string copies;
        for (const auto& n : reads) {
            const TileOf& t = tiles_.at(f.id + "/" + n);
            copies += fmt::format("copy({}, {});\n", region(f, t), t.tile);
        }
        passes += inits + fmt::format("for {} in serial(ceildiv({}, block_R)) {{\n{}for ({}, {}) in parallel({}, {}) {{\n{}}}\n{}}}\n",
                                      c_, L, copies, f.var[0], f.var[1], f.ext[0], f.ext[1], sources, reduces);
        if (!means.empty())
            passes += fmt::format("for {} in parallel({}) {{\n{}}}\n", row ? i_ : j_, row ? "block_M" : "block_N", means);
    }

    // The GEMM, then the epilogue: every statement element by element, in order.
    const std::string in = A_->type.dtype;
    const std::string gemmType = in == "i8" || in == "u8" ? "i32" : in == "f64" ? "f64" : "f32";
    auto corner = [](bool t, const std::string& r, const std::string& c) { return t ? c + ", " + r : r + ", " + c; };
    std::string gemm = fmt::format(
        "clear({acc});\nfor {k} in pipelined(ceildiv({K}, block_K), stages = stages) {{\ncopy({A}[{ac}], {As});\n"
        "copy({B}[{bc}], {Bs});\ngemm({As}, {Bs}, {acc}{ta}{tb});\n}}\n",
        fmt::arg("acc", gemmAcc_), fmt::arg("k", k_var_), fmt::arg("K", text(*K)), fmt::arg("A", A_->name),
        fmt::arg("B", B_->name), fmt::arg("As", aShared), fmt::arg("Bs", bShared),
        fmt::arg("ac", corner(tA_, bm_ + " * block_M", k_var_ + " * block_K")),
        fmt::arg("bc", corner(tB_, k_var_ + " * block_K", bn_ + " * block_N")),
        fmt::arg("ta", tA_ ? ", transpose_A = true" : ""), fmt::arg("tb", tB_ ? ", transpose_B = true" : ""));
    std::vector<std::string> reads;
    std::set<std::string> done, writtenFirst;
    std::string statements;
    for (const auto& st : steps_) {
        std::vector<std::string> stepReads;
        std::string value = rewrite(out, *st.value, stepReads, st.value->range);
        if (st.op) stepReads.push_back(st.target->name);
        for (const auto& n : stepReads)
            if (std::find(reads.begin(), reads.end(), n) == reads.end()) {
                reads.push_back(n);
                if (done.count(n)) writtenFirst.insert(n);  // its tile holds what the statement wrote
            }
        const TileOf* t = tileIn(out, st.target->name, st.value->range);
        if (!t) return false;
        statements += fmt::format("{} {}= {};\n", element(out, *t), st.op ? spelling(*st.op) : "", value);
        done.insert(st.target->name);
    }
    if (!ok_) return false;
    std::string copiesIn, copiesOut, allocs;
    for (const auto& n : reads)
        if (!writtenFirst.count(n)) {
            const TileOf& t = tiles_.at("out/" + n);
            copiesIn += fmt::format("copy({}, {});\n", region(out, t), t.tile);
        }
    for (const auto& n : done) {
        const TileOf& t = tiles_.at("out/" + n);
        copiesOut += fmt::format("copy({}, {});\n", t.tile, region(out, t));
    }
    for (const auto& key : tileOrder_) {
        const TileOf& t = tiles_.at(key);
        std::string ext;
        for (int r : t.roles) {
            std::string e = "1";
            if (r >= 0) {
                const bool isOut = key.rfind("out/", 0) == 0, isRow = key.rfind("row:", 0) == 0;
                e = isOut ? out.ext[r] : isRow ? (r == 0 ? "block_M" : "block_R") : (r == 0 ? "block_R" : "block_N");
            }
            ext += (ext.empty() ? "" : ", ") + e;
        }
        allocs += fmt::format("let {} = alloc_fragment([{}], {});\n", t.tile, ext.empty() ? "1" : ext, t.param->type.dtype);
    }
    allocs += statAllocs;
    allocs += fmt::format("let {} = alloc_shared([{}], {});\nlet {} = alloc_shared([{}], {});\n", aShared,
                          tA_ ? "block_K, block_M" : "block_M, block_K", A_->type.dtype, bShared,
                          tB_ ? "block_N, block_K" : "block_K, block_N", B_->type.dtype);
    allocs += fmt::format("let {} = alloc_fragment([block_M, block_N], {});\n", gemmAcc_, gemmType);
    const std::string body = fmt::format(
        "\ngrid(ceildiv(({}), block_M), ceildiv(({}), block_N), threads = threads) as ({}, {}) {{\n{}{}{}{}{}for ({}, {}) in "
        "parallel(block_M, block_N) {{\n{}}}\n{}}}\n",
        text(*M), text(*N), bm_, bn_, allocs, passes, shares, gemm, copiesIn, i_, j_, statements, copiesOut);
    std::string statList;
    for (const auto& s : stats_) statList += (statList.empty() ? "'" : ", '") + s.key + "'";
    k_.notes.push_back(fmt::format("tlc: the epilogue of '{}' reads {}: each block computes them for its rows or "
                                   "columns in a pass over chunks of block_R before its K loop, reading those rows or "
                                   "columns once more in every block that needs them; no temporary.",
                                   text(*mm_), statList));
    // The statistics' chunks are block_R = 32 columns (rows) wide, not block_K: the recommender
    // sized the GEMM's tiles down to fit [block_M, block_K] f32 chunks beside the accumulator
    // (16 x 64 tiles on sm90 for the RMS-scaled projection); 32 is a 128-byte line of f32.
    return instantiate(k_, at, body,
                       "block_M = auto, block_N = auto, block_K = auto, block_R = 32, stages = auto, threads = auto", {},
                       diags_);
}

} // namespace gemm_stats_impl
} // namespace

// A product read outside reductions, in a kernel with reductions (`let`s followed).
bool productBesideReductions(const Kernel& k) {
    using gemm_stats_impl::isMatMul;
    std::set<std::string> productLets;
    bool found = false;
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
        gemm_stats_impl::visit(e, [&](const Expr& x) {
            if (isMatMul(x)) found = true;
            if (const auto* n = x.as<Name>(); n && productLets.count(n->name)) found = true;
            const auto* c = x.as<Call>();
            return !(c && isReductionCall(*c));
        });
    };
    for (const auto& s : k.body->stmts) {
        if (const auto* l = s->as<LetStmt>()) {
            const bool before = found;
            found = false;
            walk(*l->value);
            if (found) productLets.insert(l->name);
            found = before;
        }
        if (const auto* a = s->as<AssignStmt>()) walk(*a->value);
    }
    return found;
}

bool lowerGemmWithStatistics(Kernel& k, DiagnosticEngine& diags) { return gemm_stats_impl::Lowerer(k, diags).run(); }

} // namespace tlc::beginner
