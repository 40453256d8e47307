#include "sema/Polynomial.h"

#include <algorithm>

namespace tlc::sema {

namespace {

std::optional<Polynomial> combine(const Polynomial& a, const Polynomial& b, int64_t sign) {
    Polynomial out = a;
    out.compound.insert(b.compound.begin(), b.compound.end());
    int64_t c;
    if (__builtin_mul_overflow(b.constant, sign, &c) || __builtin_add_overflow(a.constant, c, &out.constant))
        return std::nullopt;
    for (const auto& [monomial, coeff] : b.terms) {
        int64_t delta;
        if (__builtin_mul_overflow(coeff, sign, &delta)) return std::nullopt;
        int64_t& slot = out.terms[monomial];
        if (__builtin_add_overflow(slot, delta, &slot)) return std::nullopt;
        if (slot == 0) out.terms.erase(monomial);
    }
    return out;
}

// Adds coeff * monomial to p; false on overflow.
bool addTerm(Polynomial& p, const Polynomial::Monomial& monomial, int64_t coeff) {
    if (monomial.empty()) return !__builtin_add_overflow(p.constant, coeff, &p.constant);
    int64_t& slot = p.terms[monomial];
    if (__builtin_add_overflow(slot, coeff, &slot)) return false;
    if (slot == 0) p.terms.erase(monomial);
    return true;
}

} // namespace

Polynomial Polynomial::atom(std::string text, bool isCompound) {
    Polynomial p;
    p.compound[text] = isCompound;
    p.terms[{std::move(text)}] = 1;
    return p;
}

std::optional<Polynomial> Polynomial::plus(const Polynomial& o) const { return combine(*this, o, 1); }
std::optional<Polynomial> Polynomial::minus(const Polynomial& o) const { return combine(*this, o, -1); }

std::optional<Polynomial> Polynomial::scaled(int64_t k) const {
    if (k == 0) return Polynomial::number(0);
    Polynomial out;
    out.compound = compound;
    if (__builtin_mul_overflow(constant, k, &out.constant)) return std::nullopt;
    for (const auto& [monomial, coeff] : terms) {
        int64_t c;
        if (__builtin_mul_overflow(coeff, k, &c)) return std::nullopt;
        out.terms[monomial] = c;
    }
    return out;
}

std::optional<Polynomial> Polynomial::times(const Polynomial& o, size_t maxTerms) const {
    if (isConstant()) return o.scaled(constant);
    if (o.isConstant()) return scaled(o.constant);
    // Every term of one by every term of the other, the constants included as the empty monomial.
    auto withConstant = [](const Polynomial& p) {
        std::vector<std::pair<Monomial, int64_t>> all(p.terms.begin(), p.terms.end());
        if (p.constant != 0) all.push_back({{}, p.constant});
        return all;
    };
    auto lhs = withConstant(*this), rhs = withConstant(o);
    if (lhs.size() * rhs.size() > maxTerms * maxTerms) return std::nullopt;
    Polynomial out;
    out.compound = compound;
    out.compound.insert(o.compound.begin(), o.compound.end());
    for (const auto& [m1, c1] : lhs)
        for (const auto& [m2, c2] : rhs) {
            int64_t c;
            if (__builtin_mul_overflow(c1, c2, &c)) return std::nullopt;
            Monomial m = m1;
            m.insert(m.end(), m2.begin(), m2.end());
            std::sort(m.begin(), m.end());
            if (!addTerm(out, m, c)) return std::nullopt;
        }
    if (out.terms.size() > maxTerms) return std::nullopt;
    size_t text = 0;
    for (const auto& [monomial, coeff] : out.terms)
        for (const auto& factor : monomial) text += factor.size();
    if (text > kMaxTextBytes) return std::nullopt;
    return out;
}

std::optional<Polynomial> Polynomial::dividedExactly(int64_t d) const {
    if (d <= 0 || constant % d != 0) return std::nullopt;
    Polynomial out = *this;
    out.constant = constant / d;
    for (auto& [monomial, coeff] : out.terms) {
        if (coeff % d != 0) return std::nullopt;
        coeff /= d;
    }
    return out;
}

std::string Polynomial::str() const {
    auto isCompound = [&](const std::string& text) {
        auto it = compound.find(text);
        return it != compound.end() && it->second;
    };
    std::string out;
    for (const auto& [monomial, c] : terms) {
        bool negative = c < 0;
        uint64_t magnitude = negative ? uint64_t(0) - uint64_t(c) : uint64_t(c);
        if (out.empty()) out += negative ? "-" : "";
        else out += negative ? " - " : " + ";
        // A compound atom alone keeps its parentheses off unless a sign or factor binds to it.
        bool alone = monomial.size() == 1 && magnitude == 1 && !negative;
        std::string body;
        for (const auto& factor : monomial) {
            if (!body.empty()) body += " * ";
            body += isCompound(factor) && !alone ? "(" + factor + ")" : factor;
        }
        out += magnitude == 1 ? body : std::to_string(magnitude) + " * " + body;
    }
    if (out.empty()) return std::to_string(constant);
    if (constant > 0) out += " + " + std::to_string(constant);
    if (constant < 0) out += " - " + std::to_string(uint64_t(0) - uint64_t(constant));
    return out;
}

} // namespace tlc::sema
