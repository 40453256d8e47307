// Unit tests of constant folding, -D value parsing and affine forms of symbolic extents.
#include "sema/Polynomial.h"
#include "sema/ConstFold.h"

#include <doctest/doctest.h>

using namespace tlc;
using namespace tlc::sema;
using ast::BinaryOp;
using ast::UnaryOp;

namespace {
int64_t intOf(const FoldResult& r) {
    REQUIRE(r.value);
    return std::get<int64_t>(*r.value);
}
} // namespace

TEST_CASE("fold: integer arithmetic in the result type") {
    CHECK(intOf(foldBinary(BinaryOp::Add, int64_t(2), DType::I32, int64_t(3), DType::I32, DType::I32)) == 5);
    CHECK(intOf(foldBinary(BinaryOp::Div, int64_t(-7), DType::I32, int64_t(2), DType::I32, DType::I32)) == -3);
    CHECK(intOf(foldBinary(BinaryOp::Mod, int64_t(-7), DType::I32, int64_t(2), DType::I32, DType::I32)) == -1);
    CHECK(intOf(foldBinary(BinaryOp::Shl, int64_t(1), DType::I64, int64_t(40), DType::I32, DType::I64)) ==
          (int64_t(1) << 40));
    auto overflow = foldBinary(BinaryOp::Mul, int64_t(65536), DType::I32, int64_t(65536), DType::I32, DType::I32);
    REQUIRE(overflow.error);
    CHECK(overflow.error->kind == FoldErrorKind::Overflow);
    CHECK(overflow.error->what == "value 4294967296 does not fit in i32");
    auto div0 = foldBinary(BinaryOp::Div, int64_t(1), DType::I32, int64_t(0), DType::I32, DType::I32);
    REQUIRE(div0.error);
    CHECK(div0.error->kind == FoldErrorKind::DivisionByZero);
    CHECK(foldBinary(BinaryOp::Shl, int64_t(1), DType::I32, int64_t(32), DType::I32, DType::I32).error);
    CHECK(foldBinary(BinaryOp::Shl, int64_t(1), DType::I32, int64_t(-1), DType::I32, DType::I32).error);
}

TEST_CASE("fold: floats, comparisons, logic") {
    auto r = foldBinary(BinaryOp::Div, 1.0, DType::F32, int64_t(4), DType::I32, DType::F32);
    REQUIRE(r.value);
    CHECK(std::get<double>(*r.value) == doctest::Approx(0.25));
    auto lt = foldBinary(BinaryOp::Lt, int64_t(3), DType::I32, 3.5, DType::F32, DType::Bool);
    CHECK(std::get<bool>(*lt.value));
    auto eq = foldBinary(BinaryOp::Eq, int64_t(3), DType::I32, int64_t(4), DType::I32, DType::Bool);
    CHECK_FALSE(std::get<bool>(*eq.value));
    auto land = foldBinary(BinaryOp::And, true, DType::Bool, int64_t(0), DType::I32, DType::Bool);
    CHECK_FALSE(std::get<bool>(*land.value));
    CHECK_FALSE(foldBinary(BinaryOp::Shl, 1.0, DType::F32, int64_t(1), DType::I32, DType::F32).value);
    CHECK(std::get<bool>(*foldUnary(UnaryOp::Not, int64_t(0), DType::Bool).value));
    CHECK(intOf(foldUnary(UnaryOp::Neg, int64_t(5), DType::I32)) == -5);
    CHECK(intOf(foldUnary(UnaryOp::BitNot, int64_t(0), DType::U8)) == 255);
    CHECK(foldUnary(UnaryOp::Neg, int64_t(-2147483648LL), DType::I32).error);
}

TEST_CASE("fold: integer helpers round the right way") {
    auto helper = [](Builtin id, int64_t a, int64_t b) {
        return intOf(foldIntHelper(id, a, b, DType::I32));
    };
    CHECK(helper(Builtin::Ceildiv, 7, 2) == 4);
    CHECK(helper(Builtin::Ceildiv, 8, 2) == 4);
    CHECK(helper(Builtin::Ceildiv, -7, 2) == -3);
    CHECK(helper(Builtin::Floordiv, -7, 2) == -4);
    CHECK(helper(Builtin::Floordiv, 7, -2) == -4);
    CHECK(helper(Builtin::Floormod, -7, 2) == 1);
    CHECK(helper(Builtin::Floormod, 7, -2) == -1);
    CHECK(helper(Builtin::Min, 3, -1) == -1);
    CHECK(helper(Builtin::Max, 3, -1) == 3);
    CHECK(foldIntHelper(Builtin::Ceildiv, int64_t(1), int64_t(0), DType::I32).error->kind ==
          FoldErrorKind::DivisionByZero);
    auto mixed = foldIntHelper(Builtin::Max, int64_t(2), 2.5, DType::F32);
    CHECK(std::get<double>(*mixed.value) == doctest::Approx(2.5));
}

TEST_CASE("fold: casts") {
    CHECK(intOf(foldCast(3.9, DType::I32)) == 3);
    CHECK(intOf(foldCast(-3.9, DType::I32)) == -3);
    CHECK(std::get<double>(*foldCast(int64_t(3), DType::F16).value) == doctest::Approx(3.0));
    CHECK(std::get<bool>(*foldCast(0.5, DType::Bool).value));
    CHECK(foldCast(int64_t(300), DType::I8).error);
    CHECK(foldCast(int64_t(-1), DType::U32).error);
    CHECK(foldCast(1e30, DType::I64).error);
    CHECK_FALSE(foldCast(DType::F16, DType::I32).value);
}

TEST_CASE("fold: fitsIn") {
    CHECK(fitsIn(127, DType::I8));
    CHECK_FALSE(fitsIn(128, DType::I8));
    CHECK(fitsIn(-8, DType::I4));
    CHECK_FALSE(fitsIn(-9, DType::I4));
    CHECK(fitsIn(15, DType::U4));
    CHECK_FALSE(fitsIn(-1, DType::U64));
    CHECK(fitsIn(INT64_MAX, DType::I64));
    CHECK(fitsIn(1, DType::Bool));
    CHECK_FALSE(fitsIn(2, DType::Bool));
}

TEST_CASE("fold: -D values") {
    CHECK(std::get<int64_t>(*parseDefineValue("128")) == 128);
    CHECK(std::get<int64_t>(*parseDefineValue("-3")) == -3);
    CHECK(std::get<int64_t>(*parseDefineValue("0x40")) == 64);
    CHECK(std::get<int64_t>(*parseDefineValue("1_024")) == 1024);
    CHECK(std::get<double>(*parseDefineValue("1.5e-3")) == doctest::Approx(0.0015));
    CHECK(std::get<bool>(*parseDefineValue("true")) == true);
    CHECK(std::get<DType>(*parseDefineValue("bfloat16")) == DType::BF16);
    CHECK(std::get<DType>(*parseDefineValue("f8e4m3")) == DType::F8E4M3);
    CHECK_FALSE(parseDefineValue("12x"));
    CHECK_FALSE(parseDefineValue(""));
    CHECK_FALSE(parseDefineValue("-"));
    CHECK_FALSE(parseDefineValue("0xZZ"));
    CHECK_FALSE(parseDefineValue("99999999999999999999"));
}

TEST_CASE("polynomial: canonical text and cancellation") {
    Polynomial i = Polynomial::atom("i");
    Polynomial m = Polynomial::atom("M");
    auto hi = i.plus(Polynomial::number(64));
    REQUIRE(hi);
    auto extent = hi->minus(i);
    REQUIRE(extent);
    CHECK(extent->isConstant());
    CHECK(extent->constant == 64);
    // Terms in name order, whatever order they were added in.
    CHECK(m.plus(i)->str() == i.plus(m)->str());
    CHECK(m.plus(i)->str() == "M + i");
    CHECK(m.scaled(2)->plus(Polynomial::number(-1))->str() == "2 * M - 1");
    CHECK(m.scaled(-1)->str() == "-M");
    CHECK(Polynomial::number(-5).str() == "-5");
    // A compound atom keeps its meaning when scaled or multiplied.
    Polynomial q = Polynomial::atom("a / b", true);
    CHECK(q.str() == "a / b");
    CHECK(q.scaled(3)->str() == "3 * (a / b)");
    CHECK(q.scaled(-1)->str() == "-(a / b)");
    CHECK(q.times(i)->str() == "(a / b) * i");
    CHECK(Polynomial::number(INT64_MAX).plus(Polynomial::number(1)) == std::nullopt);
}

TEST_CASE("polynomial: products distribute over sums of the same symbol") {
    Polynomial x = Polynomial::atom("bx");
    Polynomial b = Polynomial::atom("block_M");
    // (x + 1) * b - x * b -> b: the slice `bx * block_M : (bx + 1) * block_M` of an auto block_M.
    auto hi = x.plus(Polynomial::number(1))->times(b);
    REQUIRE(hi);
    CHECK(hi->str() == "block_M + block_M * bx");
    auto extent = hi->minus(*x.times(b));
    REQUIRE(extent);
    CHECK(extent->str() == "block_M");
    CHECK(extent->str() == b.str());
    // (x + c) * b - x * b -> c * b, with the factors in either order.
    auto hi3 = b.times(*x.plus(Polynomial::number(3)));
    REQUIRE(hi3);
    CHECK(hi3->minus(*b.times(x))->str() == "3 * block_M");
    // Sums times sums: (x + 1) * (b + 2) - x * b - 2 * x = b + 2.
    auto both = x.plus(Polynomial::number(1))->times(*b.plus(Polynomial::number(2)));
    REQUIRE(both);
    auto rest = both->minus(*x.times(b))->minus(*x.scaled(2));
    REQUIRE(rest);
    CHECK(rest->str() == "block_M + 2");
    // Factors are ordered: x * b and b * x are one monomial; powers keep their factors.
    CHECK(x.times(b)->str() == b.times(x)->str());
    CHECK(x.times(x)->str() == "bx * bx");
    CHECK(x.times(x)->minus(*x.times(x))->isConstant());
    // Products of constants are scaling: 0 * x is 0.
    CHECK(x.times(Polynomial::number(0))->isConstant());
    CHECK(Polynomial::number(4).times(x)->str() == "4 * bx");
}

TEST_CASE("polynomial: long products and overflow are refused, not wrong") {
    // 2^62 * 4 overflows int64.
    Polynomial big = Polynomial::atom("M").scaled(int64_t(1) << 62).value();
    CHECK(big.times(Polynomial::number(4)) == std::nullopt);
    CHECK(big.times(Polynomial::atom("N").plus(Polynomial::number(0)).value().scaled(4).value()) == std::nullopt);
    // The square of a sum of 9 terms has 45: over the default limit of 32, left to the caller
    // (an extent keeps it as an atom); within a larger one it expands.
    Polynomial sum = Polynomial::number(1);
    for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) sum = *sum.plus(Polynomial::atom(name));
    REQUIRE(sum.terms.size() == 8);
    CHECK(sum.times(sum) == std::nullopt);
    auto square = sum.times(sum, 64);
    REQUIRE(square);
    CHECK(square->terms.size() == 44);
    CHECK(square->constant == 1);
    // Exact division by a constant divides every coefficient, or is refused.
    auto even = Polynomial::atom("H").scaled(2)->plus(Polynomial::number(4));
    CHECK(even->dividedExactly(2)->str() == "H + 2");
    CHECK(even->dividedExactly(4) == std::nullopt);
    CHECK(even->dividedExactly(0) == std::nullopt);
    // Within the limit it expands: (a + 1) * (a + 1) = a * a + 2 * a + 1.
    auto a1 = Polynomial::atom("a").plus(Polynomial::number(1));
    CHECK(a1->times(*a1)->str() == "2 * a + a * a + 1");
}
