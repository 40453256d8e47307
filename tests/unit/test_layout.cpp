// Fragment layouts: every default layout places each element exactly once per replica,
// projections keep that property, and the IR formulas agree with the brute-force placement.
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "layout/Fragment.h"

#include <doctest/doctest.h>

#include <map>
#include <vector>

using namespace tlc;
using namespace tlc::ir;
using layout::Fragment;

namespace {

int64_t evalInt(const Expr& e, const std::map<const Var*, int64_t>& env) {
    if (const int64_t* c = asConstInt(e)) return *c;
    if (const auto* v = e.as<Var>()) return env.at(v);
    if (const auto* c = e.as<Cast>()) return evalInt(c->value, env);
    const auto* b = e.as<Binary>();
    REQUIRE(b != nullptr);
    int64_t x = evalInt(b->a, env), y = evalInt(b->b, env);
    switch (b->op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Mod: return x % y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::And: return x && y;
    case BinaryOp::Lt: return x < y;
    default: FAIL("unexpected operator"); return 0;
    }
}

} // namespace

TEST_CASE("equal placements compare equal whatever digits describe them") {
    // l%4 + 4*(l/4%2) and l%8 are the same placement.
    Fragment split({8}, 1, 8, {{{false, 1, 4, 1}, {false, 4, 2, 4}}});
    Fragment whole({8}, 1, 8, {{{false, 1, 8, 1}}});
    CHECK(split.sameAs(whole));
}

TEST_CASE("default fragments cover every element once per replica") {
    const std::vector<std::vector<int64_t>> shapes = {{128, 128}, {64, 32}, {4, 1024}, {128}, {7},   {100, 36},
                                                      {2, 16, 64}, {1, 256}, {16, 8},   {3, 5}, {64, 2}};
    for (int64_t threads : {1, 32, 64, 128, 256}) {
        for (const auto& shape : shapes) {
            Fragment f = layout::defaultFragment(shape, threads);
            CAPTURE(f.str());
            CHECK(f.isBijective());
        }
    }
}

TEST_CASE("projections of a fragment are fragments") {
    Fragment f = layout::defaultFragment({64, 128}, 128);
    Fragment rows = f.project({0});
    Fragment cols = f.project({1});
    CHECK(rows.isBijective());
    CHECK(cols.isBijective());
    CHECK(rows.locals() * (128 / rows.replicas()) == 64);
    // A row vector agrees with the rows of a fragment with another number of columns.
    CHECK(rows.sameAs(layout::defaultFragment({64, 32}, 128).project({0})));
}

TEST_CASE("index formulas agree with the placement") {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{64, 64}, {4, 1024}, {32}}) {
        Fragment f = layout::defaultFragment(shape, 128);
        VarPtr tx = makeVar("tx"), l = makeVar("l");
        std::vector<Expr> idx = f.indicesAt(Expr(tx), Expr(l));
        Expr slot = f.localOf(idx);
        Expr owned = f.ownedBy(idx, Expr(tx));
        for (int64_t t = 0; t < 128; t += 13) {
            for (int64_t s = 0; s < f.locals(); s += 3) {
                std::map<const Var*, int64_t> env{{tx.get(), t}, {l.get(), s}};
                CHECK(evalInt(slot, env) == s);
                CHECK(evalInt(owned, env) == 1);
            }
        }
        // With the thread index and slot bounded, ownership folds to true.
        VarBounds bounds{{tx.get(), {0, 127}}, {l.get(), {0, f.locals() - 1}}};
        CHECK(printExpr(simplify(owned, bounds)) == "true");
        CHECK(printExpr(simplify(slot, bounds)) == "l");
    }
}

TEST_CASE("a thread does not own another thread's element") {
    Fragment f = layout::defaultFragment({64, 64}, 128);
    VarPtr tx = makeVar("tx"), l = makeVar("l");
    std::vector<Expr> idx = f.indicesAt(Expr(tx), Expr(l));
    idx[1] = idx[1] + intImm(1);  // the next column
    Expr owned = f.ownedBy(idx, Expr(tx));
    VarBounds bounds{{tx.get(), {0, 127}}, {l.get(), {0, f.locals() - 1}}};
    CHECK(printExpr(simplify(owned, bounds)) != "true");
}

TEST_CASE("vector width follows the innermost local digit") {
    CHECK(layout::defaultFragment({128, 128}, 128).vectorWidth() == 4);
    CHECK(layout::defaultFragment({16, 6}, 32).vectorWidth() >= 1);
    // One thread holds whole rows: consecutive slots run along the entire row.
    CHECK(layout::defaultFragment({128, 128}, 1).vectorWidth() == 128);
}

TEST_CASE("replicated fragments name one writer per element") {
    Fragment rows = layout::defaultFragment({16, 64}, 128).project({0});
    CHECK(rows.replicas() == 8);
    VarPtr tx = makeVar("tx");
    Expr replica = rows.replicaOf(Expr(tx));
    std::map<int64_t, int> writersPerRow;
    for (int64_t t = 0; t < 128; ++t) {
        std::map<const Var*, int64_t> env{{tx.get(), t}};
        if (evalInt(replica, env) == 0) {
            VarPtr l = makeVar("l");
            for (int64_t s = 0; s < rows.locals(); ++s) {
                env[l.get()] = s;
                ++writersPerRow[evalInt(rows.indicesAt(Expr(tx), Expr(l))[0], env)];
            }
        }
    }
    CHECK(writersPerRow.size() == 16);
    for (const auto& [row, n] : writersPerRow) CHECK(n == 1);
}
