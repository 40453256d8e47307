// Integer expressions in affine normal form: c0 + sum(ci * atom_i), where an atom is the
// canonical text of a name or of a sub-expression that is not affine (ceildiv(N, 128), i * j).
// Used for the symbolic extents of shapes and regions: `i : i + 64` has extent 64, and equal
// extents print the same canonical text whatever order they were written in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tlc::sema {

struct Affine {
    struct Atom {
        int64_t coeff = 0;
        bool compound = false;  // needs parentheses when scaled ("a / b")
    };
    int64_t constant = 0;
    std::map<std::string, Atom> atoms;  // ordered by text: the canonical order

    static Affine number(int64_t v) { Affine a; a.constant = v; return a; }
    static Affine atom(std::string text, bool compound = false) {
        Affine a;
        a.atoms[std::move(text)] = {1, compound};
        return a;
    }

    bool isConstant() const { return atoms.empty(); }
    // nullopt on 64-bit overflow.
    std::optional<Affine> plus(const Affine& o) const;
    std::optional<Affine> minus(const Affine& o) const;
    std::optional<Affine> scaled(int64_t k) const;

    // "M", "2 * M + K - 1", "ceildiv(N, 128)", "-i + 64".
    std::string str() const;
    // A single atom of coefficient 1 and no constant: its text can stand alone.
    bool isSingleAtom() const { return constant == 0 && atoms.size() == 1 && atoms.begin()->second.coeff == 1; }
};

} // namespace tlc::sema
