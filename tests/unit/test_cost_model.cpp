// The recommender's memory and element terms (docs/recommend.md, "The model"): DRAM serves the
// bytes a wave's blocks share once, and element loops count their arithmetic where it varies.
#include "compile/Program.h"
#include "recommend/Recommend.h"
#include "support/Diagnostics.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using namespace tlc;

namespace {

// The recommender's rank 1 estimate of `source` (one `auto` parameter) on sm90 at `shape`.
CandidateEstimate rankOne(const char* source, std::map<std::string, int64_t> shape) {
    auto file = std::make_unique<SourceFile>("k.tl", source);
    DiagnosticEngine diags(*file);
    auto program = Program::parse(*file, diags, {});
    REQUIRE(program);
    RecommendOptions options;
    options.target = findTarget("sm90");
    REQUIRE(options.target);
    options.shape = std::move(shape);
    options.top = 1;
    std::string error;
    auto r = recommend(*program, options, error);
    REQUIRE_MESSAGE(r, error);
    REQUIRE(!r->ranked.empty());
    return r->ranked.front();
}

// 8 x 4 blocks (fewer than a wave): each reads row `by` of X, which the 4 blocks of its grid
// row share, and writes its own tile of Y.
const char* kSharedRow = R"(kernel k<threads = auto>(X: f32[R, N], Y: f32[R4, N]) {
    grid(4, 8, threads = threads) as (bx, by) {
        let x = alloc_fragment([1, 1024], f32);
        copy(X[by, 0], x);
        copy(x, Y[by * 4 + bx, 0]);
    }
}
)";

} // namespace

TEST_CASE("cost model: the blocks of a wave that read the same region fetch it from DRAM once") {
    CandidateEstimate e = rankOne(kSharedRow, {{"R", 8}, {"N", 1024}, {"R4", 32}});
    const double row = 1024 * 4;  // bytes of one row
    CHECK(e.globalBytes == doctest::Approx(32 * 2 * row));           // every block reads and writes a row
    CHECK(e.dramBytes == doctest::Approx(32 * row + 8 * row));        // its writes; each X row once
}

// A kernel whose element loop stores `value` into x[i, j] (r: a value per row).
std::string elementLoop(const std::string& value) {
    return R"(kernel k<threads = auto>(X: f32[M, 256], Rv: f32[M], Y: f32[M, 256]) {
    grid(ceildiv(M, 64), threads = threads) as (bx) {
        let x = alloc_fragment([64, 256], f32);
        let r = alloc_fragment([64], f32);
        copy(X[bx * 64, 0], x);
        copy(Rv[bx * 64], r);
        for (i, j) in parallel(64, 256) { x[i, j] = )" + value + R"(; }
        copy(x, Y[bx * 64, 0]);
    }
}
)";
}

TEST_CASE("cost model: element work counts where it varies, multiply-adds fused") {
    // x * exp2(r[i]) + 1: one fused multiply-add an element, one exp2 a row; exp2 of every
    // element: nine operations an element.
    CandidateEstimate a = rankOne(elementLoop("x[i, j] * exp2(r[i]) + 1.0").c_str(), {{"M", 64 * 1024}});
    CandidateEstimate b = rankOne(elementLoop("x[i, j] * exp2(x[i, j]) + 1.0").c_str(), {{"M", 64 * 1024}});
    REQUIRE(a.threads == b.threads);
    REQUIRE(a.blocksPerSM == b.blocksPerSM);
    REQUIRE(b.elementUs > 0);
    // sm90's special_function_cost is 8: (64 x 256 + 64 x 8) against 64 x 256 x 9.
    CHECK(a.elementUs / b.elementUs == doctest::Approx((64.0 * 256 + 64 * 8) / (64.0 * 256 * 9)));
}
