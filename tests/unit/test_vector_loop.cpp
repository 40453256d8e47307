// The cpu emitter's explicit vector form of 16-lane loops that call exp (emit/VectorLoop.h):
// which loops take it, and what their statements become.
#include "emit/VectorLoop.h"
#include "ir/Printer.h"

#include <doctest/doctest.h>

using namespace tlc::ir;
using tlc::DType;
using tlc::MemScope;
using tlc::codegen::VectorStmt;
using tlc::codegen::vectorLoopForm;

namespace {

struct Lanes {
    VarPtr v = makeVar("v"), j = makeVar("j");
    Buffer x = makeBuffer("x", DType::F32, MemScope::Fragment, {intImm(4), intImm(64)});
    Buffer m = makeBuffer("m", DType::F32, MemScope::Fragment, {intImm(4)});
    Buffer h = makeBuffer("h", DType::F16, MemScope::Fragment, {intImm(4), intImm(64)});
    Buffer y = makeBuffer("y", DType::F32, MemScope::Fragment, {intImm(4), intImm(64)});

    Expr lane() const { return Expr(v); }
    Expr xAt(const Expr& col) const { return load(x, {intImm(1), Expr(j) * 16 + col}); }
    Stmt loop(Stmt body, int64_t extent = 16, ForKind kind = ForKind::Vectorized) const {
        return forLoop(v, intImm(0), intImm(extent), kind, std::move(body));
    }
    static Expr exp(Expr e) { return call("exp", DType::F32, {std::move(e)}); }
};

std::string print(const Expr& e) { return printExpr(e); }

} // namespace

TEST_CASE("vector loop: a lane loop that calls exp becomes vector statements") {
    Lanes t;
    // y[1, j * 16 + v] = exp(x[1, j * 16 + v] - m[1])
    Expr value = Lanes::exp(t.xAt(t.lane()) - load(t.m, {intImm(1)}));
    Stmt s = t.loop(store(t.y, {intImm(1), Expr(t.j) * 16 + t.lane()}, value));
    auto form = vectorLoopForm(s.as<For>());
    REQUIRE(form);
    REQUIRE(form->size() == 1);
    const VectorStmt& st = (*form)[0];
    CHECK(st.kind == VectorStmt::Kind::Store);
    CHECK(st.buffer == t.y);
    CHECK(print(st.indices.back()) == "j * 16");  // lane 0's element
    // The lanes' load is one call on lane 0's element; m[1], the same for all lanes, stays.
    CHECK(print(st.value).find("load_f32x16(address_of(x[1, j * 16]))") != std::string::npos);
    CHECK(print(st.value).find("m[1]") != std::string::npos);
}

TEST_CASE("vector loop: loops that keep the loop form") {
    Lanes t;
    Expr at = Expr(t.j) * 16 + t.lane();
    auto form = [&](Stmt s) { return vectorLoopForm(s.as<For>()).has_value(); };
    Stmt plain = store(t.y, {intImm(0), at}, Lanes::exp(t.xAt(t.lane())));
    CHECK(form(t.loop(plain)));
    // Not 16 lanes, or not a vectorised loop.
    CHECK_FALSE(form(t.loop(plain, 8)));
    CHECK_FALSE(form(t.loop(plain, 16, ForKind::Serial)));
    // No exp: the C++ compiler's vector code is as good.
    CHECK_FALSE(form(t.loop(store(t.y, {intImm(0), at}, t.xAt(t.lane()) * floatImm(2.0)))));
    // Lanes two elements apart, or the lane index as a value.
    CHECK_FALSE(form(t.loop(store(t.y, {intImm(0), at}, Lanes::exp(t.xAt(t.lane() * 2))))));
    CHECK_FALSE(form(t.loop(store(t.y, {intImm(0), at}, Lanes::exp(cast(DType::F32, t.lane()))))));
    // An f16 operand (converted per lane), or one element stored from every lane.
    CHECK_FALSE(form(t.loop(store(t.y, {intImm(0), at}, Lanes::exp(cast(DType::F32, load(t.h, {intImm(0), at})))))));
    CHECK_FALSE(form(t.loop(store(t.m, {intImm(0)}, Lanes::exp(t.xAt(t.lane()))))));
    // A lane reading what another lane writes: x[.. + v + 1] beside x[.. + v] = ...; or the
    // element all lanes read, which they also write.
    Expr own = Expr(t.j) * 16 + t.lane();
    CHECK(form(t.loop(store(t.x, {intImm(1), own}, Lanes::exp(t.xAt(t.lane()))))));
    CHECK_FALSE(form(t.loop(store(t.x, {intImm(1), own}, Lanes::exp(t.xAt(t.lane() + 1))))));
    CHECK_FALSE(form(t.loop(store(t.x, {intImm(1), own}, Lanes::exp(load(t.x, {intImm(1), intImm(0)}) + t.xAt(t.lane()))))));
    // Lanes along the first dimension (not contiguous).
    CHECK_FALSE(form(t.loop(store(t.y, {t.lane() % 4, Expr(t.j)}, Lanes::exp(t.xAt(t.lane()))))));
}
