// The passes of a reduction kernel over the chunks of the reduced dimension (ReductionLowering.h):
// one per level of nesting, inner levels first, each computing every reduction of its level.
//
// The online form: a sum (or mean) of `exp(A - max(A, dim = d))` is computed in its maximum's
// pass rather than the next one, as flash attention's normaliser: each chunk raises the running
// maximum, the sum so far is multiplied by exp(old - new) and the chunk's terms are added at the
// new maximum; the terms are exp of the maximum's source (A, masked with -inf past the end)
// less the new maximum. Softmax written by hand (`e = exp(X - max(X, dim = 1)); Y = e / sum(e, dim = 1)`)
// then reads its rows twice instead of three times, and logsumexp (`m + log(sum(exp(X - m), dim
// = 1))`, or `log(sum(exp(X), dim = 1))`, rewritten so by desugarLogSumExp) once.
#include "beginner/ReductionLowering.h"
#include "beginner/Reductions.h"

#include "ast/Clone.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::beginner {

using namespace ast;

namespace reduce_impl {

const Call* onlineMaxOf(const Expr& arg) {
    const auto* e = arg.as<Call>();
    if (!e || e->callee != "exp" || e->args.size() != 1 || !e->args[0].keyword.empty()) return nullptr;
    const auto* d = e->args[0].value->as<Binary>();
    const auto* m = d && d->op == BinaryOp::Sub ? d->rhs->as<Call>() : nullptr;
    if (!m || m->callee != "max" || !isReductionCall(*m)) return nullptr;
    for (const auto& a : m->args)
        if (a.keyword.empty()) return text(*a.value) == text(*d->lhs) ? m : nullptr;
    return nullptr;
}

// The GEMM of chunk c of the product's columns into the accumulator: A's row block and B's
// column chunk through a pipelined loop over K (tiles in the tensors' layouts).
std::string Lowerer::gemmPass() {
    const std::string k = fresh("k");
    // A matrix's tile from its corner; a batch's (index bb_, or 0 where the batch is 1) by ranges.
    auto tile = [&](const Param& p, bool t, const std::string& r, const std::string& rows, const std::string& c,
                    const std::string& cols) {
        if (p.type.dims.size() == 2) return t ? c + ", " + r : r + ", " + c;
        const std::string b = isOne(*p.type.dims[0]) ? "0" : bb_;
        return t ? fmt::format("{}, {} : +{}, {} : +{}", b, c, cols, r, rows) : fmt::format("{}, {} : +{}, {} : +{}", b, r, rows, c, cols);
    };
    const std::string K = text(mmDim(*mmA_, mmTA_, 1));
    return fmt::format("clear({acc});\n"
                       "for {k} in pipelined(ceildiv({K}, {bk}), stages = {st}) {{\n"
                       "copy({A}[{ac}], {As});\ncopy({B}[{bc}], {Bs});\ngemm({As}, {Bs}, {acc}{ta}{tb});\n}}\n",
                       fmt::arg("acc", mmAcc_), fmt::arg("k", k), fmt::arg("K", K), fmt::arg("bk", mmBlockK_),
                       fmt::arg("st", mmStages_), fmt::arg("A", mmA_->name), fmt::arg("B", mmB_->name),
                       fmt::arg("As", mmAShared_), fmt::arg("Bs", mmBShared_),
                       fmt::arg("ac", tile(*mmA_, mmTA_, bk_ + " * " + blocks_[0], blocks_[0], k + " * " + mmBlockK_, mmBlockK_)),
                       fmt::arg("bc", tile(*mmB_, mmTB_, k + " * " + mmBlockK_, mmBlockK_, c_ + " * " + blocks_[1], blocks_[1])),
                       fmt::arg("ta", mmTA_ ? ", transpose_A = true" : ""), fmt::arg("tb", mmTB_ ? ", transpose_B = true" : ""));
}

std::string Lowerer::reductionPasses(const std::string& R, const std::string& chunks) {
    // The reductions that read none of each other share a pass (`max(X, dim = 0)` and
    // `mean(X, dim = 0)` read X once); an online sum shares its maximum's.
    const std::string& kv = vars_[kept_];
    std::string passes;
    int levels = 0;
    for (const auto& r : reds_) levels = std::max(levels, r.level);
    for (int level = 1; level <= levels; ++level) {
        std::vector<std::string> reads;
        // The online sums' sources read the maxima this chunk raised: a second loop after the
        // first's reductions.
        std::string inits, sources, saves, reduces, rescales, onlineSources, onlineReduces, means;
        bool gemm = false;
        for (const auto& r : reds_) {
            if (r.level != level) continue;
            gemm = gemm || readsProduct(*r.arg);
            const Reduction* max = nullptr;
            for (const auto& m : reds_)
                if (!r.onlineMax.empty() && m.key == r.onlineMax) max = &m;
            const std::string value = max ? "" : rewrite(*r.arg, false, reads, r.range);
            const auto* cast = r.arg->as<Call>();
            const bool inAcc = cast && cast->callee == acc_;  // `sum(f32(X), ...)`: converted already
            const char* identity = r.op == "max" ? "-inf" : r.op == "min" ? "inf" : "0.0";
            inits += r.op == "max" || r.op == "min" ? fmt::format("fill({}, {});\n", r.frag, identity) : fmt::format("clear({});\n", r.frag);
            if (max)  // exp(A - max(A)) from the maximum's source, A masked with -inf: exp(-inf) = 0, no test
                onlineSources += fmt::format("{0}[{1}, {2}] = exp({3}[{1}, {2}] - {4}[{5}]);\n", r.src, vars_[0], vars_[1],
                                             max->src, max->use, kv);
            else
                sources += fmt::format("{}[{}, {}] = {} * {} + {} < {} ? {} : {};\n", r.src, vars_[0], vars_[1], c_,
                                       blocks_[red_], vars_[red_], R, inAcc ? value : acc_ + "(" + value + ")", identity);
            (max ? onlineReduces : reduces) +=
                fmt::format("reduce_{}({}, {}, dim = {}, clear = false);\n", r.op == "mean" ? "sum" : r.op, r.src, r.frag, red_);
            if (max) rescales += fmt::format("{0}[{1}] = {0}[{1}] * exp({2}[{1}] - {3}[{1}]);\n", r.frag, kv, max->prev, max->use);
            if (!r.prev.empty()) {
                saves += fmt::format("copy({}, {});\n", r.frag, r.prev);
                // A row whose elements so far are all -inf subtracts 0: exp(-inf - 0) = 0 rather
                // than exp(-inf + inf), and its sum, 0, stays 0.
                rescales = fmt::format("{0}[{1}] = {2}[{1}] == -inf ? 0.0 : {2}[{1}];\n", r.use, kv, r.frag) + rescales;
            }
            if (r.op == "mean")
                means += fmt::format("{0}[{1}] = {0}[{1}] / {2}({3});\n", r.frag, kv, acc_, R);
        }
        passes += inits + fmt::format("for {} in serial({}) {{\n{}{}", c_, chunks, gemm ? gemmPass() : "",
                                      copiesIn(reads, false, {}));
        passes += fmt::format("for ({}, {}) in parallel({}, {}) {{\n{}}}\n{}{}", vars_[0], vars_[1], blocks_[0], blocks_[1],
                              sources, saves, reduces);
        if (!onlineSources.empty())
            passes += fmt::format("for {0} in parallel({1}) {{\n{2}}}\nfor ({3}, {4}) in parallel({5}, {6}) {{\n{7}}}\n{8}",
                                  kv, blocks_[kept_], rescales, vars_[0], vars_[1], blocks_[0], blocks_[1], onlineSources,
                                  onlineReduces);
        passes += "}\n";
        if (!means.empty()) passes += fmt::format("for {} in parallel({}) {{\n{}}}\n", kv, blocks_[kept_], means);
    }
    return passes;
}

} // namespace reduce_impl

void desugarLogSumExp(ExprPtr& x) {
    replaceIn(x, [](ExprPtr& e) {
        auto* log = e->as<Call>();
        if (!log || log->callee != "log" || log->args.size() != 1 || !log->args[0].keyword.empty()) return false;
        auto* s = log->args[0].value->as<Call>();
        if (!s || (s->callee != "sum" && s->callee != "mean")) return false;
        Arg* operand = nullptr;
        const Arg* dim = nullptr;
        for (auto& a : s->args) {
            if (a.keyword.empty() && !operand) operand = &a;
            else if (a.keyword == "dim" && !dim) dim = &a;
            else return false;
        }
        auto* ex = operand && dim ? operand->value->as<Call>() : nullptr;
        if (!ex || ex->callee != "exp" || ex->args.size() != 1 || !ex->args[0].keyword.empty() ||
            reduce_impl::onlineMaxOf(*operand->value))  // max-subtracted already
            return false;
        const SourceRange at = e->range;
        ExprPtr E = cloneSyntax(*ex->args[0].value);
        auto maxOfE = [&] {
            std::vector<Arg> args;
            args.push_back(Arg{"", at, cloneSyntax(*E)});
            args.push_back(Arg{"dim", dim->keywordRange, cloneSyntax(*dim->value)});
            return std::make_unique<Call>(at, "max", at, std::move(args));
        };
        ex->args[0].value = std::make_unique<Binary>(at, BinaryOp::Sub, at, cloneSyntax(*E), maxOfE());
        ExprPtr lse = std::move(e);
        e = std::make_unique<Binary>(at, BinaryOp::Add, at, maxOfE(), std::move(lse));
        return true;
    });
}

} // namespace tlc::beginner
