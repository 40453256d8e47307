// The wgmma form of gemm: the accumulator fragment against the PTX ISA's table ("WGMMA register
// fragments", D of m64nN), and the canonical shared layouts against the hardware's swizzle as
// the ISA states it (the 16-byte chunk bits [4, 7) of the address XORed with the bits above 7).
#include "ir/Simplify.h"
#include "layout/Fragment.h"
#include "ops/gemm/GemmPlan.h"
#include "ops/gemm/GemmWgmma.h"
#include "eval_int.h"

#include <doctest/doctest.h>

#include <map>

using namespace tlc;
using namespace tlc::ir;
using layout::Fragment;

using testing::evalInt;

TEST_CASE("wgmma: the accumulator fragment is the PTX ISA's m64nN D layout") {
    // Thread t of a warpgroup holds d[i], i < N / 2, at row 16 (t / 32) + (t % 32) / 4 +
    // 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4) + i % 2; a second row block follows in
    // slots N / 2 .. N - 1, a second warpgroup down (warpgroupsM) or across (warpgroupsN).
    for (auto [M, N, threads, wgM, wgN] : {std::tuple{64, 64, 128, 1, 1}, std::tuple{64, 256, 128, 1, 1},
                                           std::tuple{128, 128, 128, 1, 1}, std::tuple{128, 128, 256, 2, 1},
                                           std::tuple{64, 256, 256, 1, 2}, std::tuple{256, 128, 256, 2, 1}}) {
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(threads);
        CAPTURE(wgM);
        Fragment f = ops::wgmmaAccumulator(M, N, threads, wgM, wgN);
        CHECK(f.isBijective());
        CHECK(f.replicas() == 1);
        int64_t columns = N / wgN, blocks = M / 64 / wgM;
        REQUIRE(f.locals() == blocks * columns / 2);
        VarPtr tx = makeVar("tx"), l = makeVar("l");
        std::vector<Expr> at = f.indicesAt(Expr(tx), Expr(l));
        for (int64_t t = 0; t < threads; ++t) {
            int64_t wg = t / 128, w = t % 128 / 32, lane = t % 32;
            int64_t rowBase = wg % wgM * (M / wgM), colBase = wg / wgM * columns;
            for (int64_t mi = 0; mi < blocks; ++mi)
                for (int64_t i = 0; i < columns / 2; ++i) {
                    std::map<const Var*, int64_t> env{{tx.get(), t}, {l.get(), mi * columns / 2 + i}};
                    CHECK(evalInt(at[0], env) == rowBase + 64 * mi + 16 * w + lane / 4 + 8 * (i / 2 % 2));
                    CHECK(evalInt(at[1], env) == colBase + 8 * (i / 4) + 2 * (lane % 4) + i % 2);
                }
        }
    }
}

TEST_CASE("wgmma: an accumulator-layout fragment is the rs form's A") {
    // PTX ISA, wgmma A in registers (m64k16, 16-bit): a[i] = A[16w + g + 8 ((i / 2) % 2)]
    // [2q + i % 2 + 8 (i / 4)], i < 8. The lowering passes slots mi * K / 2 + 8 kk .. + 7.
    int64_t M = 128, K = 64, threads = 256, wgM = 2;
    Fragment f = ops::wgmmaAccumulator(M, K, threads, wgM, 1);
    VarPtr tx = makeVar("tx"), l = makeVar("l");
    std::vector<Expr> at = f.indicesAt(Expr(tx), Expr(l));
    for (int64_t t = 0; t < threads; ++t) {
        int64_t w = t % 128 / 32, g = t % 32 / 4, q = t % 4, rowBase = t / 128 * (M / wgM);
        for (int64_t kk = 0; kk < K / 16; ++kk)
            for (int64_t i = 0; i < 8; ++i) {
                std::map<const Var*, int64_t> env{{tx.get(), t}, {l.get(), 8 * kk + i}};
                CHECK(evalInt(at[0], env) == rowBase + 16 * w + g + 8 * (i / 2 % 2));
                CHECK(evalInt(at[1], env) == 16 * kk + 2 * q + i % 2 + 8 * (i / 4));
            }
    }
}

TEST_CASE("wgmma: shared operand layouts are the hardware's swizzle modes") {
    // Storing element (row, col) of a [rows, cols] tile where the layout puts it must give the
    // byte address the hardware reads it from: the S-byte swizzle of the canonical layout,
    // address bits [4, 4 + log2(S / 16)) XORed with the bits from 7 up, the tile's start 8 * S
    // aligned (start 0 here), rows wider than 128 bytes as boxes of 128 bytes.
    struct Case {
        int64_t rows, cols;
        DType type;
        int64_t span, boxCols;
    };
    for (Case c : {Case{64, 16, DType::F16, 32, 0}, Case{128, 32, DType::F16, 64, 0}, Case{64, 64, DType::F16, 128, 0},
                   Case{32, 128, DType::F16, 128, 64}, Case{64, 256, DType::BF16, 128, 64},
                   Case{64, 64, DType::F8E4M3, 64, 0}, Case{64, 256, DType::F8E4M3, 128, 128}}) {
        CAPTURE(c.rows);
        CAPTURE(c.cols);
        Buffer b = makeBuffer("T", c.type, MemScope::Shared, {intImm(c.rows), intImm(c.cols)});
        auto l = ops::wgmmaSharedLayout(b, "test");
        REQUIRE(l.has_value());
        CHECK(l->boxCols == c.boxCols);
        CHECK(l->alignBytes == 8 * c.span);
        int64_t bytes = dtypeBytes(c.type), box = c.boxCols ? c.boxCols : c.cols;
        for (int64_t row = 0; row < c.rows; ++row)
            for (int64_t col = 0; col < c.cols; ++col) {
                // Where apply-shared-layouts stores it: [col / box][row][swizzled col % box].
                int64_t stored = (col / box * c.rows + row) * box + l->swizzle.column(row, col % box);
                // Where the hardware reads it: the unswizzled canonical address, then swizzled.
                int64_t plain = (col / box) * c.rows * c.span + row * c.span + col % box * bytes;
                int64_t hardware = plain ^ (((plain >> 7) & (c.span / 16 - 1)) << 4);
                CHECK(stored * bytes == hardware);
            }
    }
    // Rows that are not a whole swizzle span, or not whole 8-row atoms, have no such layout.
    CHECK_FALSE(ops::wgmmaSharedLayout(makeBuffer("T", DType::F16, MemScope::Shared, {intImm(64), intImm(48)}), ""));
    CHECK_FALSE(ops::wgmmaSharedLayout(makeBuffer("T", DType::F16, MemScope::Shared, {intImm(12), intImm(64)}), ""));
}
