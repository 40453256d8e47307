#include "ir/SumOfProducts.h"

#include "ir/Simplify.h"

#include <cstdint>

namespace tlc::ir {

namespace {

bool sameFactors(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    std::vector<bool> used(b.size(), false);
    for (const Expr& x : a) {
        bool found = false;
        for (size_t j = 0; j < b.size() && !found; ++j)
            if (!used[j] && equal(x, b[j])) used[j] = found = true;
        if (!found) return false;
    }
    return true;
}

// Adds coeff * factors to s; false on overflow.
bool addTerm(SumOfProducts& s, const std::vector<Expr>& factors, int64_t coeff) {
    if (factors.empty()) return !__builtin_add_overflow(s.constant, coeff, &s.constant);
    for (size_t i = 0; i < s.terms.size(); ++i) {
        if (!sameFactors(s.terms[i].factors, factors)) continue;
        if (__builtin_add_overflow(s.terms[i].coeff, coeff, &s.terms[i].coeff)) return false;
        if (s.terms[i].coeff == 0) s.terms.erase(s.terms.begin() + static_cast<long>(i));
        return true;
    }
    if (coeff != 0) s.terms.push_back({factors, coeff});
    return true;
}

std::optional<SumOfProducts> combine(const SumOfProducts& a, const SumOfProducts& b, int64_t sign) {
    SumOfProducts out = a;
    int64_t c;
    if (__builtin_mul_overflow(b.constant, sign, &c) || !addTerm(out, {}, c)) return std::nullopt;
    for (const auto& t : b.terms) {
        if (__builtin_mul_overflow(t.coeff, sign, &c) || !addTerm(out, t.factors, c)) return std::nullopt;
    }
    if (out.terms.size() > SumOfProducts::kMaxTerms) return std::nullopt;
    // INT64_MIN has no magnitude to print (toExpr): refused like an overflow.
    if (out.constant == INT64_MIN) return std::nullopt;
    for (const auto& t : out.terms)
        if (t.coeff == INT64_MIN) return std::nullopt;
    return out;
}

std::optional<SumOfProducts> product(const SumOfProducts& a, const SumOfProducts& b) {
    if ((a.terms.size() + 1) * (b.terms.size() + 1) > SumOfProducts::kMaxTerms * 2) return std::nullopt;
    auto all = [](const SumOfProducts& s) {
        std::vector<SumOfProducts::Term> t = s.terms;
        if (s.constant != 0) t.push_back({{}, s.constant});
        return t;
    };
    SumOfProducts out;
    for (const auto& x : all(a))
        for (const auto& y : all(b)) {
            int64_t c;
            if (__builtin_mul_overflow(x.coeff, y.coeff, &c)) return std::nullopt;
            std::vector<Expr> f = x.factors;
            f.insert(f.end(), y.factors.begin(), y.factors.end());
            if (!addTerm(out, f, c)) return std::nullopt;
        }
    if (out.terms.size() > SumOfProducts::kMaxTerms) return std::nullopt;
    return out;
}

std::optional<SumOfProducts> build(const Expr& e, int depth) {
    if (!isInteger(e.dtype()) || e->lanes != 1 || depth > 16) return std::nullopt;
    SumOfProducts s;
    if (const int64_t* c = asConstInt(e)) {
        s.constant = *c;
        return s;
    }
    if (const auto* b = e.as<Binary>(); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) {
        auto l = build(b->a, depth + 1), r = build(b->b, depth + 1);
        if (!l || !r) return std::nullopt;
        if (b->op == BinaryOp::Mul) return product(*l, *r);
        return combine(*l, *r, b->op == BinaryOp::Add ? 1 : -1);
    }
    if (const auto* u = e.as<Unary>(); u && u->op == UnaryOp::Neg) {
        auto v = build(u->operand, depth + 1);
        return v ? combine(SumOfProducts{}, *v, -1) : std::nullopt;
    }
    s.terms.push_back({{e}, 1});
    return s;
}

} // namespace

std::optional<SumOfProducts> SumOfProducts::of(const Expr& e) { return build(e, 0); }

std::optional<SumOfProducts> SumOfProducts::minus(const SumOfProducts& b) const { return combine(*this, b, -1); }

Expr SumOfProducts::toExpr(DType like) const {
    Expr sum;
    for (const auto& t : terms) {
        Expr p;
        for (const Expr& f : t.factors) p = p ? binary(BinaryOp::Mul, p, f) : f;
        int64_t magnitude = t.coeff < 0 ? -t.coeff : t.coeff;
        if (magnitude != 1) p = binary(BinaryOp::Mul, p, intImm(magnitude, like));
        if (!sum) sum = t.coeff < 0 ? unary(UnaryOp::Neg, p) : p;
        else sum = binary(t.coeff < 0 ? BinaryOp::Sub : BinaryOp::Add, sum, p);
    }
    if (!sum) return intImm(constant, like);
    if (constant > 0) sum = binary(BinaryOp::Add, sum, intImm(constant, like));
    if (constant < 0) sum = binary(BinaryOp::Sub, sum, intImm(-constant, like));
    return sum;
}

} // namespace tlc::ir
