// The MFMA form of gemm (gfx90a, gfx942): the accumulator fragment against CDNA's 16 x 16 D
// layout as the AMD matrix instruction calculator states it, and the forms each target offers.
#include "layout/Fragment.h"
#include "ops/gemm/GemmPlan.h"
#include "target/Target.h"

#include <doctest/doctest.h>

#include <tuple>

using namespace tlc;

TEST_CASE("mfma: the accumulator fragment is CDNA's 16 x 16 D layout, tiles in slot order") {
    // Lane l of a wave holds D[4 (l / 16) + i][l % 16], i < 4, of each 16 x 16 tile; a wave's
    // tiles (tm, tn) follow in slots 4 (tm tilesN + tn) + i; wave w is (w % wavesM, w / wavesM).
    for (auto [M, N, threads, wM, wN] : {std::tuple{16, 16, 64, 1, 1}, std::tuple{64, 64, 256, 2, 2},
                                        std::tuple{128, 64, 128, 1, 2}, std::tuple{32, 128, 256, 2, 2},
                                        std::tuple{64, 32, 128, 2, 1}}) {
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(threads);
        layout::Fragment f = ops::mfmaAccumulator(M, N, threads, wM, wN);
        int64_t tilesM = M / (16 * wM), tilesN = N / (16 * wN);
        REQUIRE(f.locals() == 4 * tilesM * tilesN);
        CHECK(f.isBijective());
        for (int64_t tx = 0; tx < threads; ++tx)
            for (int64_t slot = 0; slot < f.locals(); ++slot) {
                int64_t lane = tx % 64, wave = tx / 64, i = slot % 4, tm = slot / 4 / tilesN, tn = slot / 4 % tilesN;
                int64_t row = wave % wM * (M / wM) + tm * 16 + 4 * (lane / 16) + i;
                int64_t col = wave / wM * (N / wN) + tn * 16 + lane % 16;
                REQUIRE(f.elementAt(tx, slot) == std::vector<int64_t>{row, col});
            }
    }
}

TEST_CASE("mfma: each target offers the forms its profile lists") {
    const Target* cdna2 = findTarget("gfx90a");
    const Target* cdna3 = findTarget("gfx942");
    REQUIRE(cdna2);
    REQUIRE(cdna3);
    // i8 changed shape between CDNA2 and CDNA3; fp8 is CDNA3's only; f16, bf16, f32 on both.
    CHECK(ops::findMfma(*cdna2, DType::I8, DType::I8, DType::I32)->k == 16);
    CHECK(ops::findMfma(*cdna3, DType::I8, DType::I8, DType::I32)->k == 32);
    CHECK(ops::findMfma(*cdna2, DType::F8E4M3, DType::F8E4M3, DType::F32) == nullptr);
    CHECK(std::string(ops::findMfma(*cdna3, DType::F8E5M2, DType::F8E4M3, DType::F32)->instruction) ==
          "v_mfma_f32_16x16x32_bf8_fp8");
    for (const Target* t : {cdna2, cdna3}) {
        CHECK(ops::findMfma(*t, DType::F16, DType::F16, DType::F32)->k == 16);
        CHECK(ops::findMfma(*t, DType::F16, DType::F16, DType::F16) != nullptr);
        CHECK(ops::findMfma(*t, DType::BF16, DType::BF16, DType::F32)->k == 16);
        CHECK(ops::findMfma(*t, DType::F32, DType::F32, DType::F32)->k == 4);
    }
    // NVIDIA targets have none.
    CHECK(ops::findMfma(*findTarget("sm90"), DType::F16, DType::F16, DType::F32) == nullptr);
}

TEST_CASE("a copy's split of a tile as a fragment: consecutive threads on consecutive vectors") {
    // Element (q * vec + v) of the row-major tile, q = it * threads + tx, is thread tx's slot
    // it * vec + v.
    for (auto [rows, cols, threads, vec] : {std::tuple{128, 32, 128, 8}, std::tuple{32, 128, 128, 8},
                                           std::tuple{8, 256, 64, 4}, std::tuple{64, 64, 256, 4}}) {
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(threads);
        auto f = layout::rowMajorCopyFragment({rows, cols}, threads, vec);
        REQUIRE(f);
        CHECK(f->isBijective());
        CHECK(f->vectorWidth() == vec);
        for (int64_t tx = 0; tx < threads; ++tx)
            for (int64_t slot = 0; slot < f->locals(); ++slot) {
                int64_t element = ((slot / vec) * threads + tx) * vec + slot % vec;
                REQUIRE(f->elementAt(tx, slot) == std::vector<int64_t>{element / cols, element % cols});
            }
    }
    CHECK_FALSE(layout::rowMajorCopyFragment({4, 8}, 128, 8));     // 128 threads over 4 vectors
    CHECK_FALSE(layout::rowMajorCopyFragment({16, 48}, 32, 16));   // 3 vectors a row, 32 threads
}
