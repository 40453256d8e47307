#include "ir/Simplify.h"

#include "ir/Addends.h"
#include "ir/SumOfProducts.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <numeric>

namespace tlc::ir {

namespace {

bool isIntType(DType t) { return isInteger(t); }

// Whether e reads memory or calls a function (whose value may differ from one use to the next).
bool hasLoadOrCall(const Expr& e) {
    struct Finder : IRVisitor {
        bool found = false;
        void visitLoad(const Load*) override { found = true; }
        void visitCall(const Call*) override { found = true; }
    } f;
    f.visit(e);
    return f.found;
}

std::optional<Interval> boundsImpl(const Expr& e, const VarBounds& bounds) {
    if (const int64_t* c = asConstInt(e)) return Interval{*c, *c};
    if (const auto* v = e.as<Var>()) {
        for (const auto& [var, iv] : bounds)
            if (var == v) return iv;
        return std::nullopt;
    }
    if (const auto* c = e.as<Cast>()) {
        if (isIntType(c->dtype) && isIntType(c->value.dtype()) && dtypeBits(c->dtype) >= dtypeBits(c->value.dtype()))
            return boundsImpl(c->value, bounds);
        return std::nullopt;
    }
    const auto* b = e.as<Binary>();
    if (!b || !isIntType(b->dtype)) return std::nullopt;
    auto x = boundsImpl(b->a, bounds);
    auto y = boundsImpl(b->b, bounds);
    if (!x || !y) return std::nullopt;
    switch (b->op) {
    case BinaryOp::Add: return Interval{x->lo + y->lo, x->hi + y->hi};
    case BinaryOp::Sub: return Interval{x->lo - y->hi, x->hi - y->lo};
    case BinaryOp::Mul: {
        int64_t c[] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};
        return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case BinaryOp::Div:
        if (x->lo >= 0 && y->lo > 0) return Interval{x->lo / y->hi, x->hi / y->lo};
        return std::nullopt;
    case BinaryOp::Mod:
        if (x->lo >= 0 && y->lo > 0) return Interval{0, std::min(x->hi, y->hi - 1)};
        return std::nullopt;
    case BinaryOp::Min: return Interval{std::min(x->lo, y->lo), std::min(x->hi, y->hi)};
    case BinaryOp::Max: return Interval{std::max(x->lo, y->lo), std::max(x->hi, y->hi)};
    default: return std::nullopt;
    }
}

class Simplifier : public IRMutator {
public:
    explicit Simplifier(VarBounds bounds) : bounds_(std::move(bounds)) {}

protected:
    Expr mutateBinary(const Binary* n, const Expr& self) override {
        Expr a = mutate(n->a), b = mutate(n->b);
        if (Expr r = fold(n->op, a, b)) return r;
        return a.same(n->a) && b.same(n->b) ? self : binary(n->op, a, b);
    }

    Expr mutateCast(const Cast* n, const Expr& self) override {
        Expr v = mutate(n->value);
        if (const int64_t* c = asConstInt(v); c && isIntType(n->dtype)) return intImm(*c, n->dtype);
        if (const int64_t* c = asConstInt(v); c && isFloat(n->dtype)) return floatImm(double(*c), n->dtype);
        if (const auto* f = v.as<FloatImm>(); f && isFloat(n->dtype) && f->lanes == 1)
            return floatImm(f->value, n->dtype, f->spelling);
        return v.same(n->value) ? self : cast(n->dtype, v);
    }

    Expr mutateSelect(const Select* n, const Expr& self) override {
        Expr c = mutate(n->cond);
        if (const int64_t* k = asConstInt(c)) return mutate(*k ? n->thenValue : n->elseValue);
        if (auto k = known(c)) return mutate(*k ? n->thenValue : n->elseValue);
        Expr a = mutate(n->thenValue), b = mutate(n->elseValue);
        if (equal(a, b)) return a;
        return c.same(n->cond) && a.same(n->thenValue) && b.same(n->elseValue) ? self : select(c, a, b);
    }

    Expr mutateUnary(const Unary* n, const Expr& self) override {
        Expr v = mutate(n->operand);
        if (const int64_t* k = asConstInt(v)) {
            switch (n->op) {
            case UnaryOp::Neg: return intImm(-*k, v.dtype());
            case UnaryOp::Not: return boolImm(!*k);
            case UnaryOp::BitNot: return intImm(~*k, v.dtype());
            }
        }
        return v.same(n->operand) ? self : unary(n->op, v);
    }

    Stmt mutateFor(const For* n, const Stmt& self) override {
        Expr mn = mutate(n->min), ext = mutate(n->extent), st = mutate(n->step);
        const int64_t* lo = asConstInt(mn);
        const int64_t* len = asConstInt(ext);
        const int64_t* step = asConstInt(st);
        // An empty range (the step's sign says which way the loop runs) is no loop.
        if (len && step && ((*step > 0 && *len <= 0) || (*step < 0 && *len >= 0))) return seq({});
        bool pushed = false;
        if (lo && len && step && *step == 1) {
            bounds_.push_back({n->var.get(), Interval{*lo, *lo + *len - 1}});
            pushed = true;
        } else if (lo && step && *step == 1) {
            if (auto b = boundsImpl(ext, bounds_); b && b->hi >= 1) {
                bounds_.push_back({n->var.get(), Interval{*lo, *lo + b->hi - 1}});
                pushed = true;
            }
        }
        Stmt body = mutate(n->body);
        if (pushed) bounds_.pop_back();
        // A loop of one iteration is its body with the variable replaced.
        if (lo && len && *len == 1 && n->forKind != ForKind::Parallel && n->forKind != ForKind::Pipelined)
            return mutate(substitute(n->body, {{n->var, mn}}));
        if (mn.same(n->min) && ext.same(n->extent) && st.same(n->step) && body.same(n->body)) return self;
        return forLoop(n->var, mn, ext, n->forKind, body, n->loc, n->pipeline, st);
    }

    Stmt mutateWhile(const While* n, const Stmt& self) override {
        Expr c = mutate(n->cond);
        if (const int64_t* k = asConstInt(c); k && !*k) return seq({});  // never runs
        Stmt b = mutate(n->body);
        return c.same(n->cond) && b.same(n->body) ? self : whileLoop(c, b, n->loc);
    }

    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        Expr c = mutate(n->cond);
        if (const int64_t* k = asConstInt(c)) return *k ? mutate(n->thenCase) : (n->elseCase ? mutate(n->elseCase) : seq({}));
        if (auto k = known(c)) return *k ? mutate(n->thenCase) : (n->elseCase ? mutate(n->elseCase) : seq({}));
        // Inside each branch the condition's value is known (a lowering that tests again what an
        // enclosing branch tested, e.g. a fused store's "tile inside Y" in read-tiles-in-place's
        // interior branch, loses its dead other half).
        const bool pure = !hasLoadOrCall(c);
        if (pure) facts_.push_back({c, true});
        Stmt t = mutate(n->thenCase);
        if (pure) facts_.back().second = false;
        Stmt e = mutate(n->elseCase);
        if (pure) facts_.pop_back();
        return c.same(n->cond) && t.same(n->thenCase) && e.same(n->elseCase) ? self : ifThenElse(c, t, e, n->loc);
    }

    Stmt mutateLetStmt(const LetStmt* n, const Stmt& self) override {
        // A binding nothing reads is dropped; a compiler-made alias of another plain variable
        // (`i = l`) is replaced by it.
        if (!uses(n->body, n->var.get())) return mutate(n->body);
        if (const auto* v = n->value.as<Var>(); v && v->role == VarRole::Plain && n->var->role == VarRole::Plain)
            return mutate(substitute(n->body, {{n->var, n->value}}));
        Expr v = mutate(n->value);
        auto b = boundsImpl(v, bounds_);
        if (b) bounds_.push_back({n->var.get(), *b});
        Stmt body = mutate(n->body);
        if (b) bounds_.pop_back();
        return v.same(n->value) && body.same(n->body) ? self : letStmt(n->var, v, body, n->loc);
    }

private:
    VarBounds bounds_;
    // Conditions of the enclosing branches and their value there. Only conditions without loads
    // or calls: variables are bound once, so such a condition keeps its value in the branch.
    std::vector<std::pair<Expr, bool>> facts_;

    std::optional<bool> known(const Expr& c) const {
        for (const auto& [fact, value] : facts_)
            if (equal(fact, c)) return value;
        return std::nullopt;
    }

    std::optional<Interval> range(const Expr& e) { return boundsImpl(e, bounds_); }

    Expr fold(BinaryOp op, const Expr& a, const Expr& b) {
        DType t = promote(a.dtype(), b.dtype());
        const int64_t* x = asConstInt(a);
        const int64_t* y = asConstInt(b);
        bool ints = isIntType(a.dtype()) && isIntType(b.dtype());
        if (x && y && ints) return foldConstants(op, *x, *y, t);
        if (x && y && a.dtype() == DType::Bool && b.dtype() == DType::Bool) {
            if (op == BinaryOp::And) return boolImm(*x && *y);
            if (op == BinaryOp::Or) return boolImm(*x || *y);
        }
        if (op == BinaryOp::And) {
            if (x) return *x ? b : boolImm(false);
            if (y) return *y ? a : boolImm(false);
        }
        if (op == BinaryOp::Or) {
            if (x) return *x ? boolImm(true) : b;
            if (y) return *y ? boolImm(true) : a;
        }
        if (!ints) return foldFloat(op, a, b);
        // Constants go to the right of commutative operators.
        if (x && (op == BinaryOp::Add || op == BinaryOp::Mul)) {
            Expr swapped = fold(op, b, a);
            return swapped ? swapped : binary(op, b, a);
        }
        switch (op) {
        case BinaryOp::Add:
            if (isConstInt(b, 0)) return a;
            if (Expr r = recombineDigits(a, b)) return r;
            if (y) {
                // (e + c1) + c2 -> e + (c1 + c2)
                if (const auto* inner = a.as<Binary>(); inner && inner->op == BinaryOp::Add && asConstInt(inner->b))
                    return simplifyAdd(inner->a, *asConstInt(inner->b) + *y);
                if (const auto* inner = a.as<Binary>(); inner && inner->op == BinaryOp::Sub && asConstInt(inner->b))
                    return simplifyAdd(inner->a, *y - *asConstInt(inner->b));
            }
            break;
        case BinaryOp::Sub:
            if (isConstInt(b, 0)) return a;
            if (equal(a, b)) return intImm(0, t);
            if (y) return simplifyAdd(a, -*y);
            if (Expr r = cancelDifference(a, b, t)) return r;
            break;
        case BinaryOp::Mul:
            if (isConstInt(b, 1)) return a;
            if (isConstInt(b, 0)) return intImm(0, t);
            if (y) {
                // (e * c1) * c2 -> e * (c1 * c2)
                if (const auto* inner = a.as<Binary>(); inner && inner->op == BinaryOp::Mul && asConstInt(inner->b)) {
                    Expr product = intImm(*asConstInt(inner->b) * *y, t);
                    Expr folded = fold(BinaryOp::Mul, inner->a, product);
                    return folded ? folded : binary(BinaryOp::Mul, inner->a, product);
                }
            }
            break;
        case BinaryOp::Div:
            if (isConstInt(b, 1)) return a;
            if (y && *y > 0) return simplifyDiv(a, *y);
            break;
        case BinaryOp::Mod:
            if (isConstInt(b, 1)) return intImm(0, t);
            if (y && *y > 0) return simplifyMod(a, *y);
            break;
        case BinaryOp::Min:
        case BinaryOp::Max: {
            auto ra = range(a), rb = range(b);
            if (ra && rb) {
                bool aSmaller = ra->hi <= rb->lo, bSmaller = rb->hi <= ra->lo;
                if (op == BinaryOp::Min && aSmaller) return a;
                if (op == BinaryOp::Min && bSmaller) return b;
                if (op == BinaryOp::Max && aSmaller) return b;
                if (op == BinaryOp::Max && bSmaller) return a;
            }
            if (equal(a, b)) return a;
            break;
        }
        case BinaryOp::Eq:
        case BinaryOp::Ne:
            if (equal(a, b)) return boolImm(op == BinaryOp::Eq);
            break;
        case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: {
            if (equal(a, b)) return boolImm(op == BinaryOp::Le || op == BinaryOp::Ge);
            auto ra = range(a), rb = range(b);
            if (ra && rb) {
                bool lt = ra->hi < rb->lo, ge = ra->lo >= rb->hi;
                bool le = ra->hi <= rb->lo, gt = ra->lo > rb->hi;
                if (op == BinaryOp::Lt && (lt || ge)) return boolImm(lt);
                if (op == BinaryOp::Ge && (lt || ge)) return boolImm(ge);
                if (op == BinaryOp::Le && (le || gt)) return boolImm(le);
                if (op == BinaryOp::Gt && (le || gt)) return boolImm(gt);
            }
            break;
        }
        default: break;
        }
        return {};
    }

    Expr foldFloat(BinaryOp op, const Expr& a, const Expr& b) {
        const auto* x = a.as<FloatImm>();
        const auto* y = b.as<FloatImm>();
        if (op == BinaryOp::Mul && y && y->value == 1.0 && isFloat(a.dtype()) && a.dtype() == b.dtype()) return a;
        if (op == BinaryOp::Add && y && y->value == 0.0 && isFloat(a.dtype()) && a.dtype() == b.dtype()) return a;
        if (!x || !y || x->lanes != 1 || y->lanes != 1) return {};
        DType t = promote(a.dtype(), b.dtype());
        switch (op) {
        case BinaryOp::Add: return floatImm(x->value + y->value, t);
        case BinaryOp::Sub: return floatImm(x->value - y->value, t);
        case BinaryOp::Mul: return floatImm(x->value * y->value, t);
        default: return {};
        }
    }

    static Expr foldConstants(BinaryOp op, int64_t x, int64_t y, DType t) {
        switch (op) {
        case BinaryOp::Add: return intImm(x + y, t);
        case BinaryOp::Sub: return intImm(x - y, t);
        case BinaryOp::Mul: return intImm(x * y, t);
        case BinaryOp::Div: return y != 0 ? intImm(x / y, t) : Expr{};
        case BinaryOp::Mod: return y != 0 ? intImm(x % y, t) : Expr{};
        case BinaryOp::Min: return intImm(std::min(x, y), t);
        case BinaryOp::Max: return intImm(std::max(x, y), t);
        case BinaryOp::Lt: return boolImm(x < y);
        case BinaryOp::Le: return boolImm(x <= y);
        case BinaryOp::Gt: return boolImm(x > y);
        case BinaryOp::Ge: return boolImm(x >= y);
        case BinaryOp::Eq: return boolImm(x == y);
        case BinaryOp::Ne: return boolImm(x != y);
        case BinaryOp::BitAnd: return intImm(x & y, t);
        case BinaryOp::BitOr: return intImm(x | y, t);
        case BinaryOp::BitXor: return intImm(x ^ y, t);
        case BinaryOp::Shl: return y >= 0 && y < 63 ? intImm(x << y, t) : Expr{};
        case BinaryOp::Shr: return y >= 0 && y < 63 ? intImm(x >> y, t) : Expr{};
        case BinaryOp::And: return boolImm(x && y);
        case BinaryOp::Or: return boolImm(x || y);
        }
        return {};
    }

    // Mixed-radix digits of one value add back up to it: x % c1 + (x / c1 % c2) * c1 is
    // x % (c1 * c2), and x % c + x / c * c is x. Layout formulas produce such sums.
    struct Digit {
        Expr base;
        int64_t low;   // the digit is (base / low) % high ... scaled by low
        int64_t high;  // 0: no modulo (the top digit)
    };
    static std::optional<Digit> asDigit(const Expr& e) {
        // x % c  (low 1)
        if (const auto* m = e.as<Binary>(); m && m->op == BinaryOp::Mod && asConstInt(m->b))
            return Digit{m->a, 1, *asConstInt(m->b)};
        const auto* mul = e.as<Binary>();
        if (!mul || mul->op != BinaryOp::Mul || !asConstInt(mul->b)) return std::nullopt;
        int64_t scale = *asConstInt(mul->b);
        // (x / c) % k * c
        if (const auto* m = mul->a.as<Binary>(); m && m->op == BinaryOp::Mod && asConstInt(m->b))
            if (const auto* d = m->a.as<Binary>(); d && d->op == BinaryOp::Div && isConstInt(d->b, scale))
                return Digit{d->a, scale, *asConstInt(m->b) * scale};
        // x / c * c
        if (const auto* d = mul->a.as<Binary>(); d && d->op == BinaryOp::Div && isConstInt(d->b, scale))
            return Digit{d->a, scale, 0};
        return std::nullopt;
    }
    static Expr recombineDigits(const Expr& a, const Expr& b) {
        std::vector<Expr> terms;
        addends(a, terms);
        addends(b, terms);
        bool merged = false;
        for (bool again = true; again;) {
            again = false;
            for (size_t i = 0; i < terms.size() && !again; ++i) {
                auto lo = asDigit(terms[i]);
                if (!lo || lo->low != 1) continue;
                for (size_t j = 0; j < terms.size() && !again; ++j) {
                    auto hi = asDigit(terms[j]);
                    if (i == j || !hi || hi->low != lo->high || !equal(hi->base, lo->base)) continue;
                    Expr combined = hi->high == 0 ? lo->base : binary(BinaryOp::Mod, lo->base, intImm(hi->high, lo->base.dtype()));
                    terms[i] = combined;
                    terms.erase(terms.begin() + static_cast<long>(j));
                    merged = again = true;
                }
            }
        }
        if (!merged) return {};
        Expr sum = terms[0];
        for (size_t i = 1; i < terms.size(); ++i) sum = binary(BinaryOp::Add, sum, terms[i]);
        return sum;
    }

    // a - b where terms of the two sides cancel once products are distributed over sums:
    // (x + 1) * 64 - x * 64 is 64, (x + 1) * n - x * n is n. Rewritten only when something
    // cancels, so that other differences print as written.
    static Expr cancelDifference(const Expr& a, const Expr& b, DType t) {
        auto x = SumOfProducts::of(a), y = SumOfProducts::of(b);
        if (!x || !y) return {};
        auto d = x->minus(*y);
        if (!d || d->terms.size() >= x->terms.size() + y->terms.size()) return {};
        return d->toExpr(t);
    }

    Expr simplifyAdd(const Expr& e, int64_t c) {
        if (c == 0) return e;
        if (const auto* b = e.as<Binary>(); b && asConstInt(b->b)) {
            if (b->op == BinaryOp::Add) return simplifyAdd(b->a, *asConstInt(b->b) + c);
            if (b->op == BinaryOp::Sub) return simplifyAdd(b->a, c - *asConstInt(b->b));
        }
        if (c < 0) return binary(BinaryOp::Sub, e, intImm(-c, e.dtype()));
        return binary(BinaryOp::Add, e, intImm(c, e.dtype()));
    }

    // Splits e into (multiple-of-c part, rest) when e is a sum whose terms are known multiples.
    bool splitMultiple(const Expr& e, int64_t c, Expr& quotientPart, Expr& rest) {
        const auto* b = e.as<Binary>();
        if (b && b->op == BinaryOp::Add) {
            Expr q1, r1, q2, r2;
            bool s1 = splitMultiple(b->a, c, q1, r1), s2 = splitMultiple(b->b, c, q2, r2);
            if (!s1 && !s2) return false;
            if (!s1) { q1 = {}; r1 = b->a; }
            if (!s2) { q2 = {}; r2 = b->b; }
            quotientPart = q1 && q2 ? binary(BinaryOp::Add, q1, q2) : (q1 ? q1 : q2);
            rest = r1 && r2 ? binary(BinaryOp::Add, r1, r2) : (r1 ? r1 : r2);
            return true;
        }
        if (b && b->op == BinaryOp::Mul) {
            if (const int64_t* k = asConstInt(b->b); k && *k % c == 0) {
                quotientPart = *k == c ? b->a : binary(BinaryOp::Mul, b->a, intImm(*k / c, e.dtype()));
                rest = {};
                return true;
            }
        }
        if (const int64_t* k = asConstInt(e); k && *k % c == 0 && *k >= 0) {
            quotientPart = intImm(*k / c, e.dtype());
            rest = {};
            return true;
        }
        return false;
    }

    Expr simplifyDiv(const Expr& a, int64_t c) {
        auto ra = range(a);
        if (ra && ra->lo >= 0 && ra->hi < c) return intImm(0, a.dtype());
        Expr q, r;
        if (splitMultiple(a, c, q, r)) {
            if (!r) return mutate(q);
            auto rr = range(r);
            if (rr && rr->lo >= 0 && rr->hi < c) return mutate(q);
            if (rr && rr->lo >= 0 && ra && ra->lo >= 0) return mutate(binary(BinaryOp::Add, q, binary(BinaryOp::Div, r, intImm(c, a.dtype()))));
        }
        // (e / c1) / c2 -> e / (c1 * c2) for non-negative e
        if (const auto* inner = a.as<Binary>(); inner && inner->op == BinaryOp::Div && asConstInt(inner->b) && ra && ra->lo >= 0)
            return binary(BinaryOp::Div, inner->a, intImm(*asConstInt(inner->b) * c, a.dtype()));
        // (e * k) / c -> e / (c / k) when k divides c: the same rational, truncated alike for
        // either sign (`l * 2 / 64` is `l / 32`).
        if (auto k = scaleDividing(a, c)) return mutate(binary(BinaryOp::Div, a.as<Binary>()->a, intImm(c / *k, a.dtype())));
        return {};
    }

    Expr simplifyMod(const Expr& a, int64_t c) {
        auto ra = range(a);
        if (ra && ra->lo >= 0 && ra->hi < c) return a;
        Expr q, r;
        if (splitMultiple(a, c, q, r) && ra && ra->lo >= 0) {
            if (!r) return intImm(0, a.dtype());
            auto rr = range(r);
            if (rr && rr->lo >= 0) return mutate(binary(BinaryOp::Mod, r, intImm(c, a.dtype())));
        }
        // (e % c1) % c2 -> e % c2 when c2 divides c1
        if (const auto* inner = a.as<Binary>(); inner && inner->op == BinaryOp::Mod && asConstInt(inner->b) &&
                                               *asConstInt(inner->b) % c == 0)
            return binary(BinaryOp::Mod, inner->a, intImm(c, a.dtype()));
        // (e * k) % c -> e % (c / k) * k when k divides c (k (e - (e / (c / k)) (c / k)), any sign).
        if (auto k = scaleDividing(a, c))
            return mutate(binary(BinaryOp::Mul, binary(BinaryOp::Mod, a.as<Binary>()->a, intImm(c / *k, a.dtype())),
                                 intImm(*k, a.dtype())));
        return {};
    }

    // k when a is `e * k` with a constant 1 < k < c that divides c.
    static std::optional<int64_t> scaleDividing(const Expr& a, int64_t c) {
        const auto* mul = a.as<Binary>();
        const int64_t* k = mul && mul->op == BinaryOp::Mul ? asConstInt(mul->b) : nullptr;
        if (!k || *k <= 1 || *k >= c || c % *k != 0) return std::nullopt;
        return *k;
    }
};

class EqualityChecker {
public:
    static bool eq(const Expr& a, const Expr& b) {
        if (a.same(b)) return true;
        if (!a || !b || a->kind != b->kind || a.dtype() != b.dtype() || a->lanes != b->lanes) return false;
        switch (a->kind) {
        case NodeKind::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case NodeKind::FloatImm: return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
        case NodeKind::Var: return a.get() == b.get();
        case NodeKind::Cast: return eq(a.as<Cast>()->value, b.as<Cast>()->value);
        case NodeKind::Unary: return a.as<Unary>()->op == b.as<Unary>()->op && eq(a.as<Unary>()->operand, b.as<Unary>()->operand);
        case NodeKind::Binary: {
            const auto *x = a.as<Binary>(), *y = b.as<Binary>();
            return x->op == y->op && eq(x->a, y->a) && eq(x->b, y->b);
        }
        case NodeKind::Select: {
            const auto *x = a.as<Select>(), *y = b.as<Select>();
            return eq(x->cond, y->cond) && eq(x->thenValue, y->thenValue) && eq(x->elseValue, y->elseValue);
        }
        case NodeKind::Call: {
            const auto *x = a.as<Call>(), *y = b.as<Call>();
            return x->name == y->name && all(x->args, y->args);
        }
        case NodeKind::Load: {
            const auto *x = a.as<Load>(), *y = b.as<Load>();
            return x->buffer == y->buffer && all(x->indices, y->indices);
        }
        default: return false;
        }
    }
    static bool all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (!eq(a[i], b[i])) return false;
        return true;
    }
};

} // namespace

namespace {
// Rewrites expose further rewrites; a few rounds reach the fixed point in practice.
template <typename Node> Node toFixedPoint(const Node& n, const VarBounds& bounds) {
    Simplifier s(bounds);
    Node cur = n;
    for (int i = 0; i < 4; ++i) {
        Node next = s.mutate(cur);
        if (next.same(cur)) break;
        cur = next;
    }
    return cur;
}
} // namespace

Expr simplify(const Expr& e, const VarBounds& bounds) { return toFixedPoint(e, bounds); }
Stmt simplify(const Stmt& st, const VarBounds& bounds) { return toFixedPoint(st, bounds); }

std::optional<Interval> boundsOf(const Expr& e, const VarBounds& bounds) { return boundsImpl(e, bounds); }

int64_t knownMultiple(const Expr& e) {
    if (const int64_t* c = asConstInt(e)) return *c == 0 ? (int64_t(1) << 30) : std::abs(*c);
    const auto* b = e.as<Binary>();
    if (!b) {
        if (const auto* c = e.as<Cast>()) return knownMultiple(c->value);
        return 1;
    }
    switch (b->op) {
    case BinaryOp::Mul: return knownMultiple(b->a) * knownMultiple(b->b);
    case BinaryOp::Add:
    case BinaryOp::Sub: return std::gcd(knownMultiple(b->a), knownMultiple(b->b));
    default: return 1;
    }
}

bool equal(const Expr& a, const Expr& b) { return EqualityChecker::eq(a, b); }

} // namespace tlc::ir
