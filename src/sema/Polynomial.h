// Integer expressions in polynomial normal form: c0 + sum(ci * m_i), where each monomial m_i is
// a product of atoms and an atom is the canonical text of a name or of a sub-expression that is
// not a polynomial (ceildiv(N, 128), a / b). Used for the symbolic extents of shapes and
// regions: `i : i + 64` has extent 64, `bx * block_M : (bx + 1) * block_M` has extent block_M
// whether block_M has a value yet or not (an `auto` parameter), and equal extents print the
// same canonical text whatever order their terms and factors were written in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::sema {

struct Polynomial {
    // The atoms of a monomial, sorted by text, repeated for powers: {"M", "bx"} is M * bx.
    using Monomial = std::vector<std::string>;

    int64_t constant = 0;
    std::map<Monomial, int64_t> terms;  // monomial -> coefficient (never 0); ordered: the canonical order
    // The atoms whose text needs parentheses as a factor ("a / b"), by text.
    std::map<std::string, bool> compound;

    // A product with more terms than this is left unexpanded (an atom of its own): extents
    // are short sums, and expanding products of long ones only grows their text.
    static constexpr size_t kMaxTerms = 32;
    // Nor is one whose factors' text would pass this many bytes: expanding repeats each factor
    // in several terms, so nested products of sums would grow their text exponentially
    // ((((a + 1) * (n + 1) + 2) * (n + 1) + 3) * ...); left as atoms, it grows linearly.
    static constexpr size_t kMaxTextBytes = 2048;

    static Polynomial number(int64_t v) { Polynomial p; p.constant = v; return p; }
    static Polynomial atom(std::string text, bool compound = false);

    bool isConstant() const { return terms.empty(); }
    // nullopt on 64-bit overflow (and for products over kMaxTerms terms).
    std::optional<Polynomial> plus(const Polynomial& o) const;
    std::optional<Polynomial> minus(const Polynomial& o) const;
    std::optional<Polynomial> scaled(int64_t k) const;
    // The product, distributed over both sums: (x + 1) * b is x * b + b. nullopt (not
    // expanded) where the operands' terms multiply to more than maxTerms^2 or the result has
    // more than maxTerms terms or kMaxTextBytes of factors.
    std::optional<Polynomial> times(const Polynomial& o, size_t maxTerms = kMaxTerms) const;
    // The quotient by d where d divides every coefficient and the constant (exact), else nullopt.
    std::optional<Polynomial> dividedExactly(int64_t d) const;
    // Equal as polynomials (the same terms and constant).
    bool sameAs(const Polynomial& o) const { return constant == o.constant && terms == o.terms; }

    // "M", "2 * M + K - 1", "ceildiv(N, 128)", "-i + 64", "M + M * bx", "3 * (a / b)".
    std::string str() const;
};

} // namespace tlc::sema
