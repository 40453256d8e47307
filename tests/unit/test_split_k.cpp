// The recommender's choice of split_k (docs/recommend.md, "Split-K"): a skinny GEMM splits its
// k-loop to fill the SMs, a GEMM of many tiles does not, no block is left fewer than 4 k-tiles,
// and the cpu tries 1 alone.
#include "compile/Program.h"
#include "recommend/Recommend.h"
#include "support/Diagnostics.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using namespace tlc;

namespace {

const char* kGemm = R"(kernel g<bm = 64, bn = 128, bk = 64, threads = 128, S = auto>(A: f16[M, K], B: f16[K, N], C: f16[M, N]) {
    grid(ceildiv(N, bn), ceildiv(M, bm), threads = threads, split_k = S) as (bx, by) {
        let A_s = alloc_shared([bm, bk], f16);
        let B_s = alloc_shared([bk, bn], f16);
        let C_f = alloc_fragment([bm, bn], f32);
        clear(C_f);
        for k in pipelined(ceildiv(K, bk), stages = 4) {
            copy(A[by * bm, k * bk], A_s);
            copy(B[k * bk, bx * bn], B_s);
            gemm(A_s, B_s, C_f);
        }
        copy(C_f, C[by * bm, bx * bn]);
    }
}
)";

// The recommender's rank 1 value of S at a shape, and the candidates it tried.
int64_t pickS(const char* target, int64_t M, int64_t N, int64_t K, std::vector<int64_t>* candidates = nullptr) {
    auto file = std::make_unique<SourceFile>("g.tl", kGemm);
    DiagnosticEngine diags(*file);
    auto program = Program::parse(*file, diags, {});
    REQUIRE(program);
    RecommendOptions options;
    options.target = findTarget(target);
    REQUIRE(options.target);
    options.shape = {{"M", M}, {"N", N}, {"K", K}};
    options.top = 1;
    std::string error;
    auto r = recommend(*program, options, error);
    REQUIRE_MESSAGE(r, error);
    REQUIRE(r->params.size() == 1);
    CHECK(r->params[0].role == AutoRole::SplitK);
    if (candidates) *candidates = r->params[0].values;
    REQUIRE(!r->ranked.empty());
    for (const auto& [name, value] : r->ranked.front().values)
        if (name == "S") return value;
    FAIL("no value of S in the pick");
    return 0;
}

} // namespace

TEST_CASE("split_k: a skinny GEMM splits its k-loop to fill the SMs") {
    // 16 x 8192 x 8192: 64 tiles of 64 x 128 on sm90's 132 SMs, 128 k-tiles each.
    std::vector<int64_t> values;
    const int64_t s = pickS("sm90", 16, 8192, 8192, &values);
    CHECK(values == std::vector<int64_t>{1, 2, 4, 8, 16});
    CHECK(s > 1);
    // The same on sm80 (108 SMs).
    CHECK(pickS("sm80", 32, 4096, 4096) > 1);
}

TEST_CASE("split_k: a GEMM of many tiles keeps one block a tile") {
    // 4096^3: 2048 tiles, many waves; splitting only adds the partial tiles' traffic.
    CHECK(pickS("sm90", 4096, 4096, 4096) == 1);
}

TEST_CASE("split_k: no block runs fewer than 4 k-tiles") {
    // K = 512: 8 k-tiles of 64; S = 2 leaves 4 a block, S = 4 two (refused).
    CHECK(pickS("sm90", 16, 8192, 512) <= 2);
    // K = 192: 3 k-tiles: no split can keep 4 a block.
    CHECK(pickS("sm90", 16, 8192, 192) == 1);
}

TEST_CASE("split_k: the cpu tries 1 alone") {
    std::vector<int64_t> values;
    CHECK(pickS("cpu", 16, 8192, 8192, &values) == 1);
    CHECK(values == std::vector<int64_t>{1});
}
