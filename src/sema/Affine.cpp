#include "sema/Affine.h"

namespace tlc::sema {

namespace {

std::optional<Affine> combine(const Affine& a, const Affine& b, int64_t sign) {
    Affine out = a;
    if (__builtin_mul_overflow(b.constant, sign, &out.constant) ||
        __builtin_add_overflow(a.constant, out.constant, &out.constant))
        return std::nullopt;
    for (const auto& [text, atom] : b.atoms) {
        int64_t delta;
        if (__builtin_mul_overflow(atom.coeff, sign, &delta)) return std::nullopt;
        auto& slot = out.atoms[text];
        slot.compound = atom.compound;
        if (__builtin_add_overflow(slot.coeff, delta, &slot.coeff)) return std::nullopt;
        if (slot.coeff == 0) out.atoms.erase(text);
    }
    return out;
}

} // namespace

std::optional<Affine> Affine::plus(const Affine& o) const { return combine(*this, o, 1); }
std::optional<Affine> Affine::minus(const Affine& o) const { return combine(*this, o, -1); }

std::optional<Affine> Affine::scaled(int64_t k) const {
    if (k == 0) return Affine::number(0);
    Affine out;
    if (__builtin_mul_overflow(constant, k, &out.constant)) return std::nullopt;
    for (const auto& [text, atom] : atoms) {
        Atom scaledAtom = atom;
        if (__builtin_mul_overflow(atom.coeff, k, &scaledAtom.coeff)) return std::nullopt;
        out.atoms[text] = scaledAtom;
    }
    return out;
}

std::string Affine::str() const {
    std::string out;
    for (const auto& [text, atom] : atoms) {
        int64_t c = atom.coeff;
        bool negative = c < 0;
        uint64_t magnitude = negative ? uint64_t(0) - uint64_t(c) : uint64_t(c);
        if (out.empty()) out += negative ? "-" : "";
        else out += negative ? " - " : " + ";
        std::string body = atom.compound && magnitude != 1 ? "(" + text + ")" : text;
        if (atom.compound && magnitude == 1 && negative) body = "(" + text + ")";
        out += magnitude == 1 ? body : std::to_string(magnitude) + " * " + body;
    }
    if (out.empty()) return std::to_string(constant);
    if (constant > 0) out += " + " + std::to_string(constant);
    if (constant < 0) out += " - " + std::to_string(uint64_t(0) - uint64_t(constant));
    return out;
}

} // namespace tlc::sema
