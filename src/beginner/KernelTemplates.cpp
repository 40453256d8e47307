// Row kernels of the beginner level: `Y = layernorm(X, g, b, eps = 1e-5);`, `Y = rmsnorm(X, g,
// eps = 1e-6);` and `Y = softmax(X);` over the last dimension of [M, N] tensors, each the whole
// of its kernel. They become row kernels that take any N: block_M rows at a time (one block),
// the row in chunks of block_N columns (both `auto`), a pass of reductions over the chunks, then
// a pass that writes (softmax's maximum and sum online, in one pass, as flash attention's;
// layernorm's mean and variance by combining each chunk's). The pass that writes reads the row
// again rather than keeping it on chip, so no row length is refused: X is read twice. A row
// whose length is known when compiling and fits on chip is read once instead (oneReadRowBody).
//
// The kernels are written here as .tl text with the author's names filled in, parsed, and given
// the statement's place in the source (every diagnostic and line comment points at it).
#include "beginner/KernelTemplates.h"

#include "parser/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace tlc::beginner {

using namespace ast;

namespace {

// Every node of a parsed template takes `at` as its place in the author's file.
void placeAt(Expr& e, SourceRange at);
void placeAt(Stmt& s, SourceRange at);

void placeAt(Expr& e, SourceRange at) {
    e.range = at;
    switch (e.kind) {
    case ExprKind::List:
        for (auto& el : e.as<List>()->elements) placeAt(*el, at);
        return;
    case ExprKind::Call:
        e.as<Call>()->calleeRange = at;
        for (auto& a : e.as<Call>()->args) {
            a.keywordRange = at;
            placeAt(*a.value, at);
        }
        return;
    case ExprKind::Index:
        placeAt(*e.as<Index>()->base, at);
        for (auto& s : e.as<Index>()->subscripts) {
            s.range = at;
            for (Expr* part : {s.point.get(), s.lo.get(), s.hi.get(), s.length.get()})
                if (part) placeAt(*part, at);
        }
        return;
    case ExprKind::Unary: placeAt(*e.as<Unary>()->operand, at); return;
    case ExprKind::Binary:
        e.as<Binary>()->opRange = at;
        placeAt(*e.as<Binary>()->lhs, at);
        placeAt(*e.as<Binary>()->rhs, at);
        return;
    case ExprKind::Ternary:
        placeAt(*e.as<Ternary>()->cond, at);
        placeAt(*e.as<Ternary>()->thenExpr, at);
        placeAt(*e.as<Ternary>()->elseExpr, at);
        return;
    default: return;
    }
}

void placeAt(Stmt& s, SourceRange at) {
    s.range = at;
    auto vars = [&](std::vector<LoopVar>& vs) {
        for (auto& v : vs) v.range = at;
    };
    switch (s.kind) {
    case StmtKind::Block:
        for (auto& c : s.as<Block>()->stmts) placeAt(*c, at);
        return;
    case StmtKind::Let:
        s.as<LetStmt>()->nameRange = at;
        placeAt(*s.as<LetStmt>()->value, at);
        return;
    case StmtKind::Assign:
        placeAt(*s.as<AssignStmt>()->target, at);
        placeAt(*s.as<AssignStmt>()->value, at);
        return;
    case StmtKind::ExprStmt: placeAt(*s.as<ExprStmt>()->expr, at); return;
    case StmtKind::For:
        vars(s.as<ForStmt>()->vars);
        placeAt(*s.as<ForStmt>()->iter, at);
        placeAt(*s.as<ForStmt>()->body, at);
        return;
    case StmtKind::Grid:
        vars(s.as<GridStmt>()->vars);
        placeAt(*s.as<GridStmt>()->launch, at);
        placeAt(*s.as<GridStmt>()->body, at);
        return;
    default: return;  // the templates hold nothing else
    }
}

// The passes of each kernel, over chunk tiles of X (`x`) and f32 rows. $X $Y $g $b are the
// author's tensors, $M $N the sizes, $XT $YT $gT $bT their dtypes, $eps the epsilon.
// Layernorm's statistics in one pass (Chan et al.'s pairwise combination): each chunk's mean and
// sum of squared deviations from it, merged into the row's running ones. Not the sum of squares
// less the squared mean, which cancels to noise in f32 when the mean is large beside the spread.
// Columns past N read as zero: masked out of the deviations (a factor of 0 or 1: a select of
// loaded values defeats gcc's vectoriser in the cpu output), `count` the chunk's real columns.
constexpr const char* kLayerNorm = R"(
    grid(ceildiv($M, block_M)) as bm {
        let x = alloc_fragment([block_M, block_N], $XT);
        let g_tile = alloc_fragment([block_N], $gT);
        let b_tile = alloc_fragment([block_N], $bT);
        let y = alloc_fragment([block_M, block_N], $YT);
        let xf = alloc_fragment([block_M, block_N], f32);
        let xd = alloc_fragment([block_M, block_N], f32);
        let chunk_sum = alloc_fragment([block_M], f32);
        let chunk_m2 = alloc_fragment([block_M], f32);
        let mean = alloc_fragment([block_M], f32);
        let m2 = alloc_fragment([block_M], f32);
        let rstd = alloc_fragment([block_M], f32);
        clear(mean);
        clear(m2);
        for c in serial(ceildiv($N, block_N)) {
            let seen = f32(c * block_N);
            let count = f32(min(block_N, $N - c * block_N));
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { xf[i, j] = f32(x[i, j]); }
            reduce_sum(xf, chunk_sum, dim = 1);
            for (i, j) in parallel(block_M, block_N) {
                let d = xf[i, j] - chunk_sum[i] / count;
                xd[i, j] = d * d * (c * block_N + j < $N ? 1.0 : 0.0);
            }
            reduce_sum(xd, chunk_m2, dim = 1);
            for i in parallel(block_M) {
                let delta = chunk_sum[i] / count - mean[i];
                mean[i] = mean[i] + delta * (count / (seen + count));
                m2[i] = m2[i] + chunk_m2[i] + delta * delta * (seen * count / (seen + count));
            }
        }
        for i in parallel(block_M) { rstd[i] = rsqrt(m2[i] / f32($N) + $eps); }
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            copy($g[c * block_N : +block_N], g_tile);
            copy($b[c * block_N : +block_N], b_tile);
            for (i, j) in parallel(block_M, block_N) {
                y[i, j] = $YT((f32(x[i, j]) - mean[i]) * rstd[i] * f32(g_tile[j]) + f32(b_tile[j]));
            }
            copy(y, $Y[bm * block_M : +block_M, c * block_N : +block_N]);
        }
    }
)";

constexpr const char* kRmsNorm = R"(
    grid(ceildiv($M, block_M)) as bm {
        let x = alloc_fragment([block_M, block_N], $XT);
        let g_tile = alloc_fragment([block_N], $gT);
        let y = alloc_fragment([block_M, block_N], $YT);
        let xf = alloc_fragment([block_M, block_N], f32);
        let sumsq = alloc_fragment([block_M], f32);
        let scale = alloc_fragment([block_M], f32);
        clear(sumsq);
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { xf[i, j] = f32(x[i, j]) * f32(x[i, j]); }
            reduce_sum(xf, sumsq, dim = 1, clear = false);
        }
        for i in parallel(block_M) { scale[i] = rsqrt(sumsq[i] / f32($N) + $eps); }
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            copy($g[c * block_N : +block_N], g_tile);
            for (i, j) in parallel(block_M, block_N) { y[i, j] = $YT(f32(x[i, j]) * scale[i] * f32(g_tile[j])); }
            copy(y, $Y[bm * block_M : +block_M, c * block_N : +block_N]);
        }
    }
)";

// The maximum and the sum in one pass (the online normaliser, as flash attention's): each chunk
// raises the running maximum, the sum so far is rescaled by exp(old - new) and the chunk's terms
// added at the new one; then the pass that writes. Columns past N read as zero: masked out of
// the maximum (-inf) and so of the sum (exp(-inf) = 0). While a row has been all -inf so far
// its terms subtract 0 (`max_use`), not -inf: exp(-inf - 0) = 0 where exp(-inf + inf) is NaN.
// A tile per reduction's source: one tile written by both left its stores in the cpu's fused
// loops (unused, -Werror).
constexpr const char* kSoftmax = R"(
    grid(ceildiv($M, block_M)) as bm {
        let x = alloc_fragment([block_M, block_N], $XT);
        let y = alloc_fragment([block_M, block_N], $YT);
        let xm = alloc_fragment([block_M, block_N], f32);
        let xe = alloc_fragment([block_M, block_N], f32);
        let row_max = alloc_fragment([block_M], f32);
        let max_prev = alloc_fragment([block_M], f32);
        let max_use = alloc_fragment([block_M], f32);
        let row_sum = alloc_fragment([block_M], f32);
        fill(row_max, -inf);
        clear(row_sum);
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { xm[i, j] = c * block_N + j < $N ? f32(x[i, j]) : -inf; }
            copy(row_max, max_prev);
            reduce_max(xm, row_max, dim = 1, clear = false);
            for i in parallel(block_M) {
                max_use[i] = row_max[i] == -inf ? 0.0 : row_max[i];
                row_sum[i] = row_sum[i] * exp(max_prev[i] - max_use[i]);
            }
            for (i, j) in parallel(block_M, block_N) { xe[i, j] = exp(xm[i, j] - max_use[i]); }
            reduce_sum(xe, row_sum, dim = 1, clear = false);
        }
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { y[i, j] = $YT(exp(f32(x[i, j]) - row_max[i]) / row_sum[i]); }
            copy(y, $Y[bm * block_M : +block_M, c * block_N : +block_N]);
        }
    }
)";

// Flash attention per (batch, head) with the online softmax (samples/flash_attention.tl): keys
// past S, and after the query when causal, masked; exp2 of scores times log2(e) * scale.
constexpr const char* kAttention = R"(
    grid(ceildiv($S, block_M), $H, $B, threads = threads) as (bx, by, bz) {
        let Q_s = alloc_shared([block_M, $D], $T);
        let K_s = alloc_shared([block_N, $D], $T);
        let V_s = alloc_shared([block_N, $D], $T);
        let s = alloc_fragment([block_M, block_N], f32);
        let p = alloc_fragment([block_M, block_N], $T);
        let acc = alloc_fragment([block_M, $D], f32);
        let m = alloc_fragment([block_M], f32);
        let m_prev = alloc_fragment([block_M], f32);
        let l = alloc_fragment([block_M], f32);
        let l_tile = alloc_fragment([block_M], f32);
        let scale = 1.44269504 * f32($scale);
        copy($Q[bz, bx * block_M : +block_M, by, :], Q_s);
        clear(acc);
        clear(l);
        fill(m, -inf);
        let n_blocks = $causal ? ceildiv((bx + 1) * block_M, block_N) : ceildiv($S, block_N);
        for k in pipelined(n_blocks, stages = stages) {
            copy($K[bz, k * block_N : +block_N, $KH, :], K_s);
            clear(s);
            gemm(Q_s, K_s, s, transpose_B = true, policy = full_row);
            for (i, j) in parallel(block_M, block_N) {
                s[i, j] = k * block_N + j < $S && (!$causal || bx * block_M + i >= k * block_N + j) ? s[i, j] : -inf;
            }
            copy(m, m_prev);
            reduce_max(s, m, dim = 1, clear = false);
            for (i, j) in parallel(block_M, block_N) { s[i, j] = exp2(s[i, j] * scale - m[i] * scale); }
            reduce_sum(s, l_tile, dim = 1);
            for i in parallel(block_M) { l[i] = l[i] * exp2(m_prev[i] * scale - m[i] * scale) + l_tile[i]; }
            for (i, j) in parallel(block_M, $D) { acc[i, j] *= exp2(m_prev[i] * scale - m[i] * scale); }
            copy(s, p);
            copy($V[bz, k * block_N : +block_N, $KH, :], V_s);
            gemm(p, V_s, acc, policy = full_row);
        }
        for (i, j) in parallel(block_M, $D) { acc[i, j] /= l[i]; }
        copy(acc, $O[bz, bx * block_M : +block_M, by, :]);
    }
)";

const Param* tensorParam(const Kernel& k, const Expr& e) {
    const auto* n = e.as<Name>();
    if (!n) return nullptr;
    for (const auto& p : k.params)
        if (p.name == n->name && p.type.isTensor()) return &p;
    return nullptr;
}


} // namespace

bool instantiate(Kernel& k, SourceRange at, std::string body, const std::string& tileParams,
                 const std::vector<std::pair<std::string, std::string>>& fills, DiagnosticEngine& diags) {
    for (const auto& [key, value] : fills)
        for (size_t pos = body.find(key); pos != std::string::npos; pos = body.find(key, pos + value.size()))
            body.replace(pos, key.size(), value);
    std::string params;
    for (const auto& p : k.params) {
        std::string dims;
        for (const auto& d : p.type.dims) dims += (dims.empty() ? "" : ", ") + printExpr(*d);
        params += (params.empty() ? "" : ", ") + p.name + ": " + p.type.dtype + (dims.empty() ? "" : "[" + dims + "]");
    }
    std::string text = fmt::format("kernel {}<{}>({}) {{{}}}\n", k.name, tileParams, params, body);
    SourceFile source(k.name + " (kernel template)", text);
    DiagnosticEngine templateDiags(source);
    std::unique_ptr<File> file = parseFile(source, templateDiags);
    if (!file || file->kernels.size() != 1) throw std::logic_error("kernel template does not parse:\n" + text);
    Kernel& made = *file->kernels[0];
    placeAt(*made.body, at);
    for (auto& tp : made.templateParams) {
        tp.range = at;
        for (const auto& existing : k.templateParams)
            if (existing.name == tp.name) {
                diags.report(DiagId::err_whole_tensor_form, existing.range, tp.name,
                             "the kernel tlc writes names its tile parameters " + tileParams +
                                 "; rename the parameter");
                return false;
            }
    }
    for (auto& tp : made.templateParams) k.templateParams.push_back(std::move(tp));
    std::vector<StmtPtr> top;
    for (auto& st : k.body->stmts)
        if (st->kind == StmtKind::Require) top.push_back(std::move(st));
    for (auto& st : made.body->stmts) top.push_back(std::move(st));
    k.body = std::make_unique<Block>(k.body->range, std::move(top));
    return true;
}

namespace {

// A row that fits on chip, its length known when compiling (a literal, a compile-time parameter
// or a -D'd size, at most kOneReadRow elements): read once into a fragment and kept there for
// every pass, as the developer level writes it (samples/softmax_auto.tl).
constexpr int64_t kOneReadRow = 8192;

// The one-read bodies keep as few [block_M, N] fragments as the developer level does: the row as
// read, an f32 working copy only when the input is not f32, and the result written back into the
// input's fragment (or the working one) when the output dtype is the same; every fragment is a
// row's worth of registers or cache the recommender must fit.
struct RowFragments {
    std::string decls;   // alloc_fragment lines past `x`
    std::string toWork;  // the conversion into the working fragment, if any
    std::string work;    // the f32 fragment the passes read
    std::string out;     // the fragment the result is written to
    std::string outCast; // "$YT" or "" when the result already is in the output's dtype
};

RowFragments rowFragments(const std::string& xType, const std::string& yType) {
    RowFragments f;
    f.work = "x";
    if (xType != "f32") {
        f.work = "xf";
        f.decls += "        let xf = alloc_fragment([block_M, $N], f32);\n";
        f.toWork = "        for (i, j) in parallel(block_M, $N) { xf[i, j] = f32(x[i, j]); }\n";
    }
    if (yType == xType) f.out = "x";
    else if (yType == "f32") f.out = f.work;
    else {
        f.out = "y";
        f.decls += "        let y = alloc_fragment([block_M, $N], $YT);\n";
    }
    f.outCast = yType == "f32" ? "" : "$YT";
    return f;
}

std::string oneReadRowBody(const std::string& kind, const std::string& xType, const std::string& yType) {
    RowFragments f = rowFragments(xType, yType);
    const std::string& w = f.work;
    auto store = [&](const std::string& value) {
        return fmt::format("        for (i, j) in parallel(block_M, $N) {{ {}[i, j] = {}({}); }}\n", f.out, f.outCast, value);
    };
    std::string body = "    grid(ceildiv($M, block_M)) as bm {\n"
                       "        let x = alloc_fragment([block_M, $N], $XT);\n" + f.decls;
    if (kind == "layernorm") {
        body += "        let sq = alloc_fragment([block_M, $N], f32);\n"
                "        let sum = alloc_fragment([block_M], f32);\n"
                "        let var_ = alloc_fragment([block_M], f32);\n"
                "        copy($X[bm * block_M : +block_M, 0 : +$N], x);\n" + f.toWork +
                fmt::format("        reduce_sum({0}, sum, dim = 1);\n"
                            "        for (i, j) in parallel(block_M, $N) {{\n"
                            "            let d = {0}[i, j] - sum[i] / f32($N);\n"
                            "            sq[i, j] = d * d;\n"
                            "        }}\n"
                            "        reduce_sum(sq, var_, dim = 1);\n", w) +
                store(fmt::format("({}[i, j] - sum[i] / f32($N)) * rsqrt(var_[i] / f32($N) + $eps) * f32($g[j]) + f32($b[j])", w));
    } else if (kind == "rmsnorm") {
        body += "        let sq = alloc_fragment([block_M, $N], f32);\n"
                "        let sumsq = alloc_fragment([block_M], f32);\n"
                "        copy($X[bm * block_M : +block_M, 0 : +$N], x);\n" + f.toWork +
                fmt::format("        for (i, j) in parallel(block_M, $N) {{ sq[i, j] = {0}[i, j] * {0}[i, j]; }}\n"
                            "        reduce_sum(sq, sumsq, dim = 1);\n", w) +
                store(fmt::format("{}[i, j] * rsqrt(sumsq[i] / f32($N) + $eps) * f32($g[j])", w));
    } else {
        body += "        let row_max = alloc_fragment([block_M], f32);\n"
                "        let row_sum = alloc_fragment([block_M], f32);\n"
                "        copy($X[bm * block_M : +block_M, 0 : +$N], x);\n" + f.toWork +
                fmt::format("        reduce_max({0}, row_max, dim = 1);\n"
                            "        for (i, j) in parallel(block_M, $N) {{ {0}[i, j] = exp({0}[i, j] - row_max[i]); }}\n"
                            "        reduce_sum({0}, row_sum, dim = 1);\n", w) +
                store(fmt::format("{}[i, j] * (1.0 / row_sum[i])", w));
    }
    body += fmt::format("        copy({}, $Y[bm * block_M : +block_M, 0 : +$N]);\n    }}\n", f.out);
    return body;
}

// The row length when it is known when compiling: a literal, a compile-time parameter's literal
// default, or a -D value.
std::optional<int64_t> compileTimeLength(const Kernel& k, const Expr& e, const std::map<std::string, std::string>& defines) {
    std::string text = printExpr(e);
    if (const auto* n = e.as<Name>()) {
        if (auto d = defines.find(n->name); d != defines.end()) text = d->second;
        else {
            auto tp = std::find_if(k.templateParams.begin(), k.templateParams.end(),
                                   [&](const TemplateParam& t) { return t.name == n->name; });
            if (tp == k.templateParams.end() || !tp->defaultValue) return std::nullopt;
            text = printExpr(*tp->defaultValue);
        }
    }
    if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoll(text);
}

} // namespace

bool isRowKernelCall(const Call& c) { return c.callee == "layernorm" || c.callee == "rmsnorm" || c.callee == "softmax"; }

bool lowerRowKernel(Kernel& k, const AssignStmt& s, const std::map<std::string, std::string>& defines,
                    DiagnosticEngine& diags) {
    const auto& call = *s.value->as<Call>();
    const Param* y = tensorParam(k, *s.target);
    const bool layer = call.callee == "layernorm", rms = call.callee == "rmsnorm";
    const size_t tensors = layer ? 3 : rms ? 2 : 1;
    // Operands: the tensors positionally, `eps` by keyword.
    std::vector<const Param*> in;
    std::string eps = layer ? "1e-5" : "1e-6";
    bool ok = !s.op && y && y->type.dims.size() == 2;
    for (const auto& a : call.args) {
        if (a.keyword == "eps" && (layer || rms)) eps = printExpr(*a.value);
        else if (a.keyword.empty()) in.push_back(tensorParam(k, *a.value));
        else ok = false;
    }
    ok = ok && in.size() == tensors && std::all_of(in.begin(), in.end(), [](const Param* p) { return p != nullptr; });
    const std::string usage = layer ? "'Y = layernorm(X, g, b, eps = 1e-5);' with X and Y [M, N], g and b [N]"
                              : rms ? "'Y = rmsnorm(X, g, eps = 1e-6);' with X and Y [M, N], g [N]"
                                    : "'Y = softmax(X);' with X and Y [M, N] (over the last dimension)";
    if (ok) {
        const auto& yd = y->type.dims;
        ok = in[0]->type.dims.size() == 2 && printExpr(*in[0]->type.dims[0]) == printExpr(*yd[0]) &&
             printExpr(*in[0]->type.dims[1]) == printExpr(*yd[1]);
        for (size_t t = 1; ok && t < tensors; ++t)
            ok = in[t]->type.dims.size() == 1 && printExpr(*in[t]->type.dims[0]) == printExpr(*yd[1]);
    }
    if (!ok) {
        diags.report(DiagId::err_whole_tensor_form, s.range, printExpr(*s.value), "write it as " + usage);
        return false;
    }
    std::optional<int64_t> length = compileTimeLength(k, *y->type.dims[1], defines);
    const bool oneRead = length && *length > 0 && *length <= kOneReadRow;
    std::string body = oneRead ? oneReadRowBody(call.callee, in[0]->type.dtype, y->type.dtype)
                               : (layer ? kLayerNorm : rms ? kRmsNorm : kSoftmax);
    return instantiate(k, s.range, body, oneRead ? "block_M = auto" : "block_M = auto, block_N = auto",
                       {
                           // longer names first ($XT before $X)
                           {"$XT", in[0]->type.dtype},
                           {"$YT", y->type.dtype},
                           {"$gT", tensors > 1 ? in[1]->type.dtype : ""},
                           {"$bT", tensors > 2 ? in[2]->type.dtype : ""},
                           {"$eps", eps},
                           {"$X", in[0]->name},
                           {"$Y", y->name},
                           {"$g", tensors > 1 ? in[1]->name : ""},
                           {"$b", tensors > 2 ? in[2]->name : ""},
                           {"$M", "(" + printExpr(*y->type.dims[0]) + ")"},
                           {"$N", "(" + printExpr(*y->type.dims[1]) + ")"},
                       },
                       diags);
}

// `O = softmax(Q @ transpose(K) * scale, causal = c) @ V;` with Q, K, V, O of one shape
// [B, S, H, D]: the scores' scale (a positive scalar; `/ x` too), and causal or not.
bool isAttention(const AssignStmt& s) {
    const auto* outer = s.value->as<Binary>();
    const auto* sm = outer && outer->op == BinaryOp::MatMul ? outer->lhs->as<Call>() : nullptr;
    return sm && sm->callee == "softmax";
}

bool lowerAttention(Kernel& k, const AssignStmt& s, const std::map<std::string, std::string>& defines,
                    DiagnosticEngine& diags) {
    const auto& outer = *s.value->as<Binary>();
    const auto& sm = *outer.lhs->as<Call>();
    const Param* o = tensorParam(k, *s.target);
    const Param* v = tensorParam(k, *outer.rhs);
    const Expr* scores = nullptr;
    std::string causal = "false";
    bool ok = !s.op && o && v;
    for (const auto& a : sm.args) {
        if (a.keyword.empty() && !scores) scores = a.value.get();
        else if (a.keyword == "causal") causal = printExpr(*a.value);
        else ok = false;
    }
    // The scores: Q @ transpose(K), times or divided by a scale.
    std::string scale = "1.0";
    const Binary* product = scores ? scores->as<Binary>() : nullptr;
    if (product && product->op != BinaryOp::MatMul) {
        const Binary* scaled = product;
        product = nullptr;
        if (scaled->op == BinaryOp::Mul || scaled->op == BinaryOp::Div) {
            const auto* l = scaled->lhs->as<Binary>();
            const auto* r = scaled->rhs->as<Binary>();
            if (l && l->op == BinaryOp::MatMul) {
                product = l;
                scale = scaled->op == BinaryOp::Mul ? printExpr(*scaled->rhs) : "1.0 / (" + printExpr(*scaled->rhs) + ")";
            } else if (r && r->op == BinaryOp::MatMul && scaled->op == BinaryOp::Mul) {
                product = r;
                scale = printExpr(*scaled->lhs);
            }
        }
    }
    const Param* q = product ? tensorParam(k, *product->lhs) : nullptr;
    const auto* t = product ? product->rhs->as<Call>() : nullptr;
    const Param* kk = t && t->callee == "transpose" && t->args.size() == 1 && t->args[0].keyword.empty()
                          ? tensorParam(k, *t->args[0].value)
                          : nullptr;
    ok = ok && q && kk;
    // K and V may have fewer heads than Q (grouped-query attention): query head h reads key head
    // h / (H / H_kv), H a multiple of H_kv (checked at launch).
    for (const Param* p : {q, kk, v, o}) {
        if (!ok) break;
        ok = p->type.dims.size() == 4 && p->type.dtype == q->type.dtype;
        const Param* like = p == v || p == kk ? kk : q;
        for (size_t d = 0; ok && d < 4; ++d)
            ok = printExpr(*p->type.dims[d]) == printExpr(*(d == 2 ? like : q)->type.dims[d]);
    }
    if (!ok) {
        diags.report(DiagId::err_whole_tensor_form, s.range, printExpr(*s.value),
                     "write attention as 'O = softmax(Q @ transpose(K) * scale, causal = c) @ V;' with Q, K, V "
                     "and O of one dtype and shape [B, S, H, D] (K and V may have fewer heads, [B, S, H_kv, D]: "
                     "grouped queries; other layouts and masks at the developer level, as "
                     "tests/corpus/gqa_fwd_bshd.tl)");
        return false;
    }
    // The head dimension sizes the tiles: it must be known when compiling.
    const Expr& d = *q->type.dims[3];
    if (const auto* n = d.as<Name>(); n && !defines.count(n->name) &&
        std::none_of(k.templateParams.begin(), k.templateParams.end(), [&](const TemplateParam& tp) { return tp.name == n->name; })) {
        diags.report(DiagId::err_whole_tensor_head_dim, s.range, n->name);
        diags.note(d.range, fmt::format("'{}' is a size set at launch", n->name));
        return false;
    }
    const std::string H = printExpr(*q->type.dims[2]), Hkv = printExpr(*kk->type.dims[2]);
    const bool grouped = H != Hkv;
    std::string body = kAttention;
    if (grouped) body = fmt::format("\n    require ({}) % ({}) == 0;{}", H, Hkv, body);
    return instantiate(k, s.range, body, "block_M = auto, block_N = auto, stages = auto, threads = auto",
                       {
                           {"$KH", grouped ? fmt::format("by / (({}) / ({}))", H, Hkv) : "by"},
                           {"$causal", "(" + causal + ")"},
                           {"$scale", "(" + scale + ")"},
                           {"$T", q->type.dtype},
                           {"$Q", q->name},
                           {"$K", kk->name},
                           {"$V", v->name},
                           {"$O", o->name},
                           {"$B", "(" + printExpr(*q->type.dims[0]) + ")"},
                           {"$S", "(" + printExpr(*q->type.dims[1]) + ")"},
                           {"$H", "(" + printExpr(*q->type.dims[2]) + ")"},
                           {"$D", "(" + printExpr(*q->type.dims[3]) + ")"},
                       },
                       diags);
}

} // namespace tlc::beginner
