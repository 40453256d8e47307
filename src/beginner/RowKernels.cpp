// Row kernels of the beginner level: `Y = layernorm(X, g, b, eps = 1e-5);`, `Y = rmsnorm(X, g,
// eps = 1e-6);` and `Y = softmax(X);` over the last dimension of [M, N] tensors, each the whole
// of its kernel. They become row kernels that take any N: block_M rows at a time (one block),
// the row in chunks of block_N columns (both `auto`), a pass of reductions over the chunks, then
// a pass that writes (softmax: a maximum, a sum, then the write). Each pass reads the row again
// rather than keeping it on chip, so no row length is refused; a row that fits one chunk reads
// X twice (three times for softmax).
//
// The kernels are written here as .tl text with the author's names filled in, parsed, and given
// the statement's place in the source (every diagnostic and line comment points at it).
#include "beginner/RowKernels.h"

#include "parser/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

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
constexpr const char* kLayerNorm = R"(
    grid(ceildiv($M, block_M)) as bm {
        let x = alloc_fragment([block_M, block_N], $XT);
        let g_tile = alloc_fragment([block_N], $gT);
        let b_tile = alloc_fragment([block_N], $bT);
        let y = alloc_fragment([block_M, block_N], $YT);
        let xf = alloc_fragment([block_M, block_N], f32);
        let sum = alloc_fragment([block_M], f32);
        let sumsq = alloc_fragment([block_M], f32);
        let mean = alloc_fragment([block_M], f32);
        let rstd = alloc_fragment([block_M], f32);
        clear(sum);
        clear(sumsq);
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { xf[i, j] = f32(x[i, j]); }
            reduce_sum(xf, sum, dim = 1, clear = false);
            for (i, j) in parallel(block_M, block_N) { xf[i, j] = xf[i, j] * xf[i, j]; }
            reduce_sum(xf, sumsq, dim = 1, clear = false);
        }
        for i in parallel(block_M) {
            mean[i] = sum[i] / f32($N);
            rstd[i] = rsqrt(max(sumsq[i] / f32($N) - mean[i] * mean[i], 0.0) + $eps);
        }
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

// Columns past N read as zero: masked out of the maximum and the sum.
constexpr const char* kSoftmax = R"(
    grid(ceildiv($M, block_M)) as bm {
        let x = alloc_fragment([block_M, block_N], $XT);
        let y = alloc_fragment([block_M, block_N], $YT);
        let xf = alloc_fragment([block_M, block_N], f32);
        let row_max = alloc_fragment([block_M], f32);
        let row_sum = alloc_fragment([block_M], f32);
        fill(row_max, -inf);
        clear(row_sum);
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { xf[i, j] = c * block_N + j < $N ? f32(x[i, j]) : -inf; }
            reduce_max(xf, row_max, dim = 1, clear = false);
        }
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) {
                xf[i, j] = c * block_N + j < $N ? exp(f32(x[i, j]) - row_max[i]) : 0.0;
            }
            reduce_sum(xf, row_sum, dim = 1, clear = false);
        }
        for c in serial(ceildiv($N, block_N)) {
            copy($X[bm * block_M : +block_M, c * block_N : +block_N], x);
            for (i, j) in parallel(block_M, block_N) { y[i, j] = $YT(exp(f32(x[i, j]) - row_max[i]) / row_sum[i]); }
            copy(y, $Y[bm * block_M : +block_M, c * block_N : +block_N]);
        }
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

bool isRowKernelCall(const Call& c) { return c.callee == "layernorm" || c.callee == "rmsnorm" || c.callee == "softmax"; }

bool lowerRowKernel(Kernel& k, const AssignStmt& s, DiagnosticEngine& diags) {
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
    std::string body = layer ? kLayerNorm : rms ? kRmsNorm : kSoftmax;
    const std::pair<const char*, std::string> fills[] = {  // longer names first ($XT before $X)
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
    };
    for (const auto& [key, value] : fills)
        for (size_t at = body.find(key); at != std::string::npos; at = body.find(key, at + value.size()))
            body.replace(at, std::strlen(key), value);
    // The template's kernel: the author's parameters (as printed), `auto` tiles, the passes.
    std::string params;
    for (const auto& p : k.params) {
        std::string dims;
        for (const auto& d : p.type.dims) dims += (dims.empty() ? "" : ", ") + printExpr(*d);
        params += (params.empty() ? "" : ", ") + p.name + ": " + p.type.dtype + (dims.empty() ? "" : "[" + dims + "]");
    }
    std::string text = fmt::format("kernel {}<block_M = auto, block_N = auto>({}) {{{}}}\n", k.name, params, body);
    SourceFile source(k.name + " (row kernel template)", text);
    DiagnosticEngine templateDiags(source);
    std::unique_ptr<File> file = parseFile(source, templateDiags);
    if (!file || file->kernels.size() != 1)
        throw std::logic_error("row kernel template does not parse:\n" + text);
    Kernel& made = *file->kernels[0];
    placeAt(*made.body, s.range);
    for (auto& tp : made.templateParams) tp.range = s.range;
    for (auto& tp : made.templateParams)
        for (const auto& existing : k.templateParams)
            if (existing.name == tp.name) {
                diags.report(DiagId::err_whole_tensor_form, existing.range, tp.name,
                             "the row kernel names its tiles block_M and block_N; rename the parameter");
                return false;
            }
    for (auto& tp : made.templateParams) k.templateParams.push_back(std::move(tp));
    // The author's preconditions stay first.
    std::vector<StmtPtr> top;
    for (auto& st : k.body->stmts)
        if (st->kind == StmtKind::Require) top.push_back(std::move(st));
    for (auto& st : made.body->stmts) top.push_back(std::move(st));
    k.body = std::make_unique<Block>(k.body->range, std::move(top));
    return true;
}

} // namespace tlc::beginner
