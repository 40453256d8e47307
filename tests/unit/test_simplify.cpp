// The index simplifier: emitted indices must come out short.
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "eval_int.h"

#include <doctest/doctest.h>

using namespace tlc::ir;
using tlc::DType;

TEST_CASE("constant folding and identities") {
    VarPtr x = makeVar("x");
    Expr e = Expr(x);
    CHECK(printExpr(simplify(e + 0)) == "x");
    CHECK(printExpr(simplify(e * 1)) == "x");
    CHECK(printExpr(simplify(e * 0)) == "0");
    CHECK(printExpr(simplify((e + 128) - 1)) == "x + 127");
    CHECK(printExpr(simplify((e + 3) + 4)) == "x + 7");
    CHECK(printExpr(simplify((e * 4) * 8)) == "x * 32");
    CHECK(printExpr(simplify(intImm(6) * intImm(7))) == "42");
    CHECK(printExpr(simplify(e % 4 + e / 4 * 4)) == "x");
}

TEST_CASE("ranges remove divisions and modulos that cannot matter") {
    VarPtr tx = makeVar("tx"), l = makeVar("l");
    VarBounds b{{tx.get(), {0, 127}}, {l.get(), {0, 7}}};
    Expr t = Expr(tx), s = Expr(l);
    CHECK(printExpr(simplify(t % 128, b)) == "tx");
    CHECK(printExpr(simplify(t / 128, b)) == "0");
    CHECK(printExpr(simplify((s * 16 + t % 16) / 16, b)) == "l");
    CHECK(printExpr(simplify((s * 16 + t % 16) % 16, b)) == "tx % 16");
    CHECK(printExpr(simplify(t < 128, b)) == "true");
    CHECK(printExpr(simplify(t < 64, b)) == "tx < 64");
}

TEST_CASE("a scale that divides the divisor cancels, for either sign") {
    VarPtr x = makeVar("x");
    Expr e = Expr(x);
    CHECK(printExpr(simplify(e * 2 / 64)) == "x / 32");
    CHECK(printExpr(simplify(e * 2 / 4 % 16 * 8)) == "x / 2 % 16 * 8");
    CHECK(printExpr(simplify(e * 4 % 16)) == "x % 4 * 4");
    CHECK(printExpr(simplify(e * 3 / 64)) == "x * 3 / 64");  // 3 does not divide 64
    CHECK(printExpr(simplify(e * 128 / 64)) == "x * 2");     // a multiple: as before
    // C's truncating / and % on negative and positive values give the same numbers.
    for (int64_t v = -70; v <= 70; ++v) {
        std::map<const Var*, int64_t> env{{x.get(), v}};
        for (auto [k, c] : {std::pair<int64_t, int64_t>{2, 64}, {4, 16}, {8, 24}}) {
            CHECK(tlc::testing::evalInt(simplify(e * k / c), env) == v * k / c);
            CHECK(tlc::testing::evalInt(simplify(e * k % c), env) == v * k % c);
        }
    }
}

TEST_CASE("differences cancel once products distribute over sums") {
    VarPtr x = makeVar("x"), n = makeVar("n"), y = makeVar("y");
    Expr e = Expr(x), b = Expr(n), z = Expr(y);
    // (x + c) * b - x * b -> c * b, with b a constant or a variable, the factors in either order.
    CHECK(printExpr(simplify((e + 1) * 64 - e * 64)) == "64");
    CHECK(printExpr(simplify((e + 1) * b - e * b)) == "n");
    CHECK(printExpr(simplify((e + 3) * b - b * e)) == "n * 3");
    CHECK(printExpr(simplify(b * (e + 2) - e * b)) == "n * 2");
    // Sums regrouped: (x + y) - (x + 1) is y - 1.
    CHECK(printExpr(simplify((e + z) - (e + 1))) == "y - 1");
    // Nothing cancels: written as it was.
    CHECK(printExpr(simplify(e * 2 - z)) == "x * 2 - y");
    CHECK(printExpr(simplify((e + 1) * b - z * b)) == "(x + 1) * n - y * n");
    // The rewritten difference has the value of the original.
    for (int64_t xv = -5; xv <= 5; ++xv)
        for (int64_t nv = -3; nv <= 7; nv += 5) {
            std::map<const Var*, int64_t> env{{x.get(), xv}, {n.get(), nv}, {y.get(), 11}};
            Expr original = (e + 3) * (b + 2) - e * b - z;
            CHECK(tlc::testing::evalInt(simplify(original), env) == tlc::testing::evalInt(original, env));
        }
}

TEST_CASE("comparisons of equal expressions decide") {
    VarPtr x = makeVar("x");
    CHECK(printExpr(simplify(binary(BinaryOp::Eq, Expr(x) % 8, Expr(x) % 8))) == "true");
    CHECK(printExpr(simplify(binary(BinaryOp::Lt, Expr(x), Expr(x)))) == "false");
}

TEST_CASE("printing respects precedence") {
    VarPtr a = makeVar("a"), b = makeVar("b"), c = makeVar("c");
    CHECK(printExpr((Expr(a) + Expr(b)) * Expr(c)) == "(a + b) * c");
    CHECK(printExpr(Expr(a) + Expr(b) * Expr(c)) == "a + b * c");
    CHECK(printExpr(Expr(a) - (Expr(b) - Expr(c))) == "a - (b - c)");
    CHECK(printExpr(Expr(a) / (Expr(b) * Expr(c))) == "a / (b * c)");
}

TEST_CASE("known multiples") {
    VarPtr k = makeVar("k");
    CHECK(knownMultiple(Expr(k) * 32) == 32);
    CHECK(knownMultiple(Expr(k) * 32 + 16) == 16);
    CHECK(knownMultiple(Expr(k)) == 1);
}

TEST_CASE("loops: empty ranges vanish, count-down loops stay") {
    VarPtr i = makeVar("i");
    Buffer b = makeBuffer("b", DType::I32, tlc::MemScope::Local, {intImm(16)});
    Stmt body = store(b, {Expr(i)}, intImm(1));
    CHECK(printStmt(simplify(forLoop(i, intImm(0), intImm(0), ForKind::Serial, body))).empty());
    // range(10, 0, -1): extent -10 with step -1 runs ten times.
    Stmt down = forLoop(i, intImm(10), intImm(-10), ForKind::Serial, body, {}, {}, intImm(-1));
    CHECK(printStmt(simplify(down)).find("for i") != std::string::npos);
}
