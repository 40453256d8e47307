// The pipeline-depth model (passes/pipeline/Depth.h) on its own: bytes to hide from a target's
// load latency and peak, blocks per SM, and the stage count chosen, capped and logged.
#include "ops/LowerContext.h"
#include "passes/pipeline/Depth.h"
#include "support/DecisionLog.h"
#include "target/Target.h"

#include <doctest/doctest.h>

using namespace tlc;

namespace {

// TileLang's gemm tiles, 128 x 128 x 32 f16: 16 KB a stage for 2 x 128 x 128 x 32 flops; the
// pool is the stages' tiles and `rest` bytes more.
DepthModel gemm128(int written, bool warpSpecialized, int64_t rest = 0) {
    DepthModel m;
    m.stageBytes = 16384;
    m.tiles = "A_s, B_s";
    m.flops = 2.0 * 128 * 128 * 32;
    m.type = DType::F16;
    m.warpSpecialized = warpSpecialized;
    m.written = written;
    m.planned = [rest](int s) { return int64_t(s) * 16384 + rest; };
    return m;
}

} // namespace

TEST_CASE("depth: bytes to hide are the tensor cores' consumption times the load latency") {
    const Target& sm90 = *findTarget("sm90");
    REQUIRE(sm90.loadLatencyNs > 0);
    // 989.4 TFLOP/s over 132 SMs at 64 flops a byte: 117 bytes per ns.
    double perNs = 989.4e3 / 132 / 64;
    CHECK(bytesToHide(gemm128(3, true), sm90) == doctest::Approx(perNs * sm90.loadLatencyNs));
    // Twice the flops per byte (256 x 256 tiles): half the bytes.
    DepthModel wide = gemm128(3, true);
    wide.flops *= 2;
    CHECK(bytesToHide(wide, sm90) == doctest::Approx(perNs * sm90.loadLatencyNs / 2));
    // fp8 runs at twice the f16 peak: twice the bytes.
    DepthModel fp8 = gemm128(3, true);
    fp8.type = DType::F8E4M3;
    CHECK(bytesToHide(fp8, sm90) == doctest::Approx(2 * bytesToHide(gemm128(3, true), sm90)).epsilon(0.01));
    // A profile without a latency hides nothing: no target but those that give one deepens.
    const Target& sm80 = *findTarget("sm80");
    CHECK(sm80.loadLatencyNs == 0);
    CHECK(bytesToHide(gemm128(3, true), sm80) == 0);
}

TEST_CASE("depth: blocks per SM from threads and shared memory, one when warp-specialised") {
    const Target& sm90 = *findTarget("sm90");
    CHECK(blocksPerSM(gemm128(3, true), 3, 128, sm90) == 1);
    // 48 KB of 228 KB: 4 blocks; 16 by threads (2048 / 128).
    CHECK(blocksPerSM(gemm128(3, false), 3, 128, sm90) == 4);
    CHECK(blocksPerSM(gemm128(3, false), 7, 128, sm90) == 2);
    CHECK(blocksPerSM(gemm128(3, false), 3, 1024, sm90) == 2);
    // A 128 x 128 f32 accumulator over 128 threads: about 160 registers a thread, 3 blocks.
    DepthModel accumulating = gemm128(3, false);
    accumulating.fragmentBytes = 128 * 128 * 4;
    CHECK(blocksPerSM(accumulating, 3, 128, sm90) == 3);
}

TEST_CASE("depth: the fewest stages that hide the latency, within shared memory and caps") {
    const Target& sm90 = *findTarget("sm90");
    SourceFile file("t.tl", "");
    DiagnosticEngine diags(file);
    LowerContext ctx(sm90, 128, diags);
    DecisionLog log;
    ctx.decisionLog = &log;
    const double need = bytesToHide(gemm128(3, true), sm90);
    // One block per SM keeps (s - 1) x 16 KB in flight: the fewest s that reach `need`.
    const int enough = int(need / 16384) + 2;
    REQUIRE(enough > 3);
    StageInference inference;
    CHECK(chooseDepth(gemm128(3, true), "loop", -1, false, inference, ctx, {}) == enough);
    CHECK(log.entries().back().value == fmt::format("{} stages, deepened from 3", enough));
    // A loop unrolled by 2 (k-step groups of two k-tiles) holds two groups: s - 2 in flight,
    // one stage more for the same bytes.
    DepthModel unrolled = gemm128(3, true);
    unrolled.unroll = 2;
    CHECK(chooseDepth(unrolled, "loop", -1, false, inference, ctx, {}) == enough + 1);
    CHECK(log.entries().back().reason.find(fmt::format("{} stages keep {} x 16 KB", enough + 1, enough - 1)) !=
          std::string::npos);
    // Already deep enough: kept.
    CHECK(chooseDepth(gemm128(enough + 1, true), "loop", -1, false, inference, ctx, {}) == enough + 1);
    CHECK(log.entries().back().value == fmt::format("{} stages, kept", enough + 1));
    // deepen = false: kept, and the log says what the model would have taken.
    CHECK(chooseDepth(gemm128(3, true), "loop", -1, true, inference, ctx, {}) == 3);
    CHECK(log.entries().back().origin == "lowering (deepen = false)");
    CHECK(log.entries().back().reason.find("'deepen = false' keeps 3") != std::string::npos);
    // Shared memory: with 170 KB besides the tiles only one more stage fits a block (227 KB).
    CHECK(chooseDepth(gemm128(2, true, 170 * 1024), "loop", -1, false, inference, ctx, {}) == 3);
    CHECK(log.entries().back().reason.find("4 stages would need 234 KB of shared memory") != std::string::npos);
    // Four iterations at most: four stages.
    DepthModel split = gemm128(3, true);
    split.trips = 4;
    CHECK(chooseDepth(split, "loop", -1, false, inference, ctx, {}) == 4);
    CHECK(log.entries().back().reason.find("the loop runs at most 4 iterations") != std::string::npos);
    // Lowered again after plan-shared-memory refused `enough` stages with the compiler's
    // scratch buffers: one fewer, and the reason gives the lowered pool.
    inference.caps = {enough - 1};
    inference.refusedBytes[0] = 240 * 1024;
    CHECK(chooseDepth(gemm128(3, true), "loop", 0, false, inference, ctx, {}) == enough - 1);
    CHECK(log.entries().back().reason.find(fmt::format("{} stages would need 240 KB as planned with the compiler's "
                                                       "scratch buffers", enough)) != std::string::npos);
    // Several blocks per SM share the work: fewer stages each. 4 blocks of 3 stages keep 128 KB.
    LowerContext shared(sm90, 128, diags);
    shared.decisionLog = &log;
    CHECK(chooseDepth(gemm128(3, false), "loop", -1, false, inference, shared, {}) == 3);
    CHECK(diags.errorCount() == 0);
}
