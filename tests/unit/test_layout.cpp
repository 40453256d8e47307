// Fragment layouts: every default layout places each element exactly once per replica,
// projections keep that property, and the IR formulas agree with the brute-force placement.
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "layout/Fragment.h"
#include "layout/Swizzle.h"
#include "ops/gemm/GemmPlan.h"
#include "eval_int.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

using namespace tlc;
using namespace tlc::ir;
using layout::Fragment;
using testing::evalInt;

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

TEST_CASE("a swizzle permutes the 16-byte chunks of each row and is its own inverse") {
    struct Case {
        int64_t cols, elemBytes, patternBytes;
    };
    for (Case c : {Case{32, 2, 64}, Case{64, 2, 128}, Case{128, 2, 128}, Case{16, 2, 32}, Case{64, 1, 64},
                   Case{32, 4, 128}, Case{96, 2, 64}}) {
        CAPTURE(c.cols);
        CAPTURE(c.elemBytes);
        layout::Swizzle sw = layout::bankConflictFreeSwizzle(c.cols, c.elemBytes);
        CHECK(sw.patternBytes() == c.patternBytes);
        int64_t chunk = 16 / c.elemBytes;
        for (int64_t row = 0; row < 16; ++row) {
            std::set<int64_t> stored;
            for (int64_t col = 0; col < c.cols; ++col) {
                int64_t s = sw.column(row, col);
                REQUIRE(s >= 0);
                REQUIRE(s < c.cols);
                CHECK(s / chunk * chunk + col % chunk == s);  // chunks stay whole
                CHECK(sw.inverseColumn(row, s) == col);
                stored.insert(s);
            }
            CHECK(stored.size() == size_t(c.cols));  // a permutation of the row
        }
    }
}

TEST_CASE("swizzled rows put eight rows' same chunk in eight different bank groups") {
    // ldmatrix reads one 16-byte chunk from each of eight consecutive rows; banks repeat every
    // 128 bytes, so the eight chunks must sit at eight different offsets modulo 128.
    for (int64_t cols : {16, 32, 64, 128, 256}) {
        CAPTURE(cols);
        layout::Swizzle sw = layout::bankConflictFreeSwizzle(cols, 2);
        for (int64_t first = 0; first < 16; first += 8)
            for (int64_t col = 0; col < cols; col += 8) {
                std::set<int64_t> groups;
                for (int64_t row = first; row < first + 8; ++row) groups.insert((row * cols + sw.column(row, col)) * 2 % 128 / 16);
                CHECK(groups.size() == 8);
            }
    }
    // Without the swizzle, 256-byte rows put all eight in one group: the check can fail.
    std::set<int64_t> plain;
    for (int64_t row = 0; row < 8; ++row) plain.insert(row * 128 * 2 % 128 / 16);
    CHECK(plain.size() == 1);
}

TEST_CASE("the swizzle's index expression agrees with its arithmetic") {
    layout::Swizzle sw = layout::bankConflictFreeSwizzle(32, 2);
    VarPtr row = makeVar("row"), col = makeVar("col");
    Expr e = sw.column(Expr(row), Expr(col));
    for (int64_t r = 0; r < 16; ++r)
        for (int64_t c = 0; c < 32; ++c) CHECK(evalInt(e, {{row.get(), r}, {col.get(), c}}) == sw.column(r, c));
    CHECK(layout::bankConflictFreeSwizzle(4, 2).isIdentity());  // 8-byte rows: nothing to permute
    CHECK(layout::bankConflictFreeSwizzle(12, 2).isIdentity());  // rows not made of whole chunks
}

TEST_CASE("mma accumulators cover every element once") {
    for (auto [M, N, warpsM, warpsN] : {std::tuple{128, 128, 2, 2}, std::tuple{64, 64, 4, 1}, std::tuple{16, 8, 1, 1},
                                        std::tuple{64, 128, 1, 4}}) {
        CAPTURE(M);
        CAPTURE(N);
        Fragment f = ops::mmaAccumulator(M, N, 32 * warpsM * warpsN, warpsM, warpsN);
        CHECK(f.isBijective());
        CHECK(f.replicas() == 1);
    }
    // A warp partition that leaves columns to one warp replicates over the idle thread bits.
    Fragment shared = ops::mmaAccumulator(64, 32, 128, 4, 1);
    CHECK(shared.isBijective());
}

TEST_CASE("an accumulator tile pair is an A operand tile (the rs form)") {
    // PTX ISA m16n8k16 A fragment: element r of lane 4g + t is at row g + 8 * (r / 2 % 2),
    // column 2t + r % 2 + 8 * (r / 4). The lowering passes slots (mi * K / 8 + 2 kk) * 4 ..
    // + 7 of an accumulator-layout fragment as A: check they hold exactly those elements.
    int64_t M = 64, K = 64, warpsM = 4, threads = 128;
    Fragment f = ops::mmaAccumulator(M, K, threads, warpsM, 1);
    VarPtr tx = makeVar("tx"), l = makeVar("l");
    std::vector<Expr> at = f.indicesAt(Expr(tx), Expr(l));
    for (int64_t thread = 0; thread < threads; ++thread) {
        int64_t lane = thread % 32, g = lane / 4, t = lane % 4, rowBase = thread / 32 * (M / warpsM);
        for (int64_t mi = 0; mi < M / warpsM / 16; ++mi)
            for (int64_t kk = 0; kk < K / 16; ++kk)
                for (int64_t r = 0; r < 8; ++r) {
                    int64_t slot = (mi * (K / 8) + 2 * kk) * 4 + r;
                    std::map<const Var*, int64_t> env{{tx.get(), thread}, {l.get(), slot}};
                    CHECK(evalInt(at[0], env) == rowBase + mi * 16 + g + 8 * (r / 2 % 2));
                    CHECK(evalInt(at[1], env) == kk * 16 + 2 * t + r % 2 + 8 * (r / 4));
                }
    }
}

TEST_CASE("repeating a fragment keeps it a fragment") {
    Fragment base = layout::defaultFragment({8, 16}, 32);
    for (bool onThreads : {false, true})
        for (size_t dim : {size_t(0), size_t(1)}) {
            CAPTURE(onThreads);
            CAPTURE(dim);
            Fragment r = base.repeat(dim, 4, onThreads);
            CHECK(r.shape()[dim] == base.shape()[dim] * 4);
            CHECK(r.threads() == (onThreads ? 128 : 32));
            CHECK(r.locals() == (onThreads ? base.locals() : base.locals() * 4));
            CHECK(r.isBijective());
        }
    // A copy's elements sit where the original's do, shifted by the original's extent.
    Fragment r = base.repeat(1, 2, false);
    VarPtr tx = makeVar("tx"), l = makeVar("l");
    std::vector<Expr> a = base.indicesAt(Expr(tx), Expr(l)), b = r.indicesAt(Expr(tx), Expr(l));
    for (int64_t t = 0; t < 32; ++t)
        for (int64_t s = 0; s < base.locals(); ++s) {
            std::map<const Var*, int64_t> first{{tx.get(), t}, {l.get(), s}}, copy{{tx.get(), t}, {l.get(), s + base.locals()}};
            CHECK(evalInt(b[0], copy) == evalInt(a[0], first));
            CHECK(evalInt(b[1], copy) == evalInt(a[1], first) + 16);
        }
    // On a larger block the extra threads are replicas.
    Fragment wide = base.onBlockOf(128);
    CHECK(wide.replicas() == 4);
    CHECK(wide.isBijective());
}

namespace {
// The elements each thread holds, as a set per thread.
std::vector<std::set<std::vector<int64_t>>> heldBy(const Fragment& f) {
    std::vector<std::set<std::vector<int64_t>>> out(static_cast<size_t>(f.threads()));
    for (int64_t t = 0; t < f.threads(); ++t)
        for (int64_t s = 0; s < f.locals(); ++s) out[static_cast<size_t>(t)].insert(f.elementAt(t, s));
    return out;
}
} // namespace

TEST_CASE("a replicated fragment is held whole by every thread") {
    Fragment r = layout::replicatedFragment({2, 8}, 128);
    CHECK(r.isReplicated());
    CHECK(r.isBijective());
    CHECK(r.replicas() == 128);
    CHECK(r.locals() == 16);
    CHECK_FALSE(layout::defaultFragment({2, 8}, 128).isReplicated());
    // A full reduction's result ([], no dimension) and a [1] buffer place the same way.
    CHECK(layout::replicatedFragment({1}, 64).samePlacement(layout::defaultFragment({16}, 64).project({})));
}

TEST_CASE("widening gives each thread the rows it runs, whole along the free dimension") {
    for (int64_t threads : {32, 128}) {
        Fragment domain = layout::defaultFragment({16, 64}, threads);
        // vals[i, k] read by a loop over (i, j) with k free: the rows of the domain, 4 columns each.
        Fragment w = domain.widen({16, 4}, {0, std::nullopt});
        CAPTURE(w.str());
        CHECK(w.isBijective());
        auto want = heldBy(domain), got = heldBy(w);
        for (int64_t t = 0; t < threads; ++t) {
            std::set<std::vector<int64_t>> rows;
            for (const auto& e : want[static_cast<size_t>(t)])
                for (int64_t k = 0; k < 4; ++k) rows.insert({e[0], k});
            CHECK(got[static_cast<size_t>(t)] == rows);
        }
        // All dimensions free: every thread holds everything.
        CHECK(domain.widen({3}, {std::nullopt}).samePlacement(layout::replicatedFragment({3}, threads)));
    }
}

TEST_CASE("dividing a dimension merges the neighbours a thread holds") {
    for (int64_t threads : {64, 128}) {
        Fragment domain = layout::defaultFragment({64, 64}, threads);
        auto half = domain.divided(1, 2);
        REQUIRE(half.has_value());
        CAPTURE(half->str());
        CHECK(half->shape() == std::vector<int64_t>{64, 32});
        CHECK(half->isBijective());
        auto want = heldBy(domain), got = heldBy(*half);
        for (int64_t t = 0; t < threads; ++t) {
            std::set<std::vector<int64_t>> bytes;
            for (const auto& e : want[static_cast<size_t>(t)]) bytes.insert({e[0], e[1] / 2});
            CHECK(got[static_cast<size_t>(t)] == bytes);
        }
    }
    // A lowest digit that does not divide: no layout (the reader goes through shared memory).
    Fragment cols({16}, 16, 1, {{{true, 1, 16, 1}}});
    CHECK(cols.divided(0, 2).has_value());  // thread digits divide: pairs of threads become replicas
    CHECK(cols.divided(0, 2)->replicas() == 2);
    Fragment odd({12}, 4, 3, {{{false, 1, 3, 1}, {true, 1, 4, 3}}});
    CHECK_FALSE(odd.divided(0, 2).has_value());
}
