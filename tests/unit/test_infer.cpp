// Tile inference's pieces that need no kernel: variant names, the decision log's merging of
// repeated decisions, the stage count from a shared-memory budget and its contradiction.
#include "driver/AutoParams.h"
#include "ops/LowerContext.h"
#include "passes/pipeline/Stages.h"
#include "support/DecisionLog.h"
#include "target/Target.h"

#include <doctest/doctest.h>

using namespace tlc;

TEST_CASE("infer: variant names abbreviate each parameter by its words") {
    CHECK(variantName("gemm_auto", {{"block_M", 128}, {"block_N", 64}, {"block_K", 32}, {"stages", 3}, {"threads", 128}}) ==
          "gemm_auto__bm128_bn64_bk32_s3_t128");
    // Two parameters that would read the same keep their whole (lower-case) names.
    CHECK(variantName("k", {{"block", 64}, {"b", 2}}) == "k__block64_b2");
}

TEST_CASE("infer: the decision log keeps a value for a subject at a place once") {
    DecisionLog log;
    log.add({"copy(A, A_s)", "8 x f16 (16 bytes)", "lowering", "prologue", {10, 13}});
    log.add({"copy(A, A_s)", "8 x f16 (16 bytes)", "lowering", "steady state", {10, 13}});
    log.add({"copy(A, A_s)", "4 x f16 (8 bytes)", "lowering", "another width", {10, 13}});
    log.add({"copy(A, A_s)", "8 x f16 (16 bytes)", "lowering", "another place", {11, 13}});
    REQUIRE(log.entries().size() == 3);
    CHECK(log.entries()[0].reason == "prologue");
}

TEST_CASE("infer: stages from the planned shared memory, capped after lowering") {
    const Target& sm80 = *findTarget("sm80");
    SourceFile file("t.tl", "");
    DiagnosticEngine diags(file);
    LowerContext ctx(sm80, 128, diags);
    DecisionLog log;
    ctx.decisionLog = &log;
    StageInference inference;
    // A plan where `rest` bytes are live with the versions (or elsewhere, when more).
    auto budget = [](int64_t perStage, int64_t rest, std::string buffers) {
        return StageBudget{perStage, std::move(buffers), [=](int s) { return s * perStage + rest; }};
    };
    // 16 KB a stage on 163 KB: the cap, 3.
    CHECK(inferStages(budget(16384, 0, "A_s 8192, B_s 8192"), inference, ctx, {}) == 3);
    // 64 KB a stage: two fit (128 KB), three do not (192 KB).
    CHECK(inferStages(budget(65536, 0, "A_s 65536"), inference, ctx, {}) == 2);
    // 96 KB a stage: no second one.
    CHECK(inferStages(budget(98304, 0, "A_s 98304"), inference, ctx, {}) == 1);
    // What the plan counts is what decides: 2 x 72 KB with 20 KB more is 164 KB, one KB over.
    CHECK(inferStages(budget(73728, 20480, "KV_s 65536, K_pe_s 8192"), inference, ctx, {4, 9}) == 1);
    REQUIRE(log.entries().size() == 4);
    CHECK(log.entries()[2].reason.find("no pipeline") == 0);
    CHECK(log.entries()[3].reason.find("with the kernel's other 20 KB of shared memory need 164 KB") != std::string::npos);
    CHECK(inference.chosen == std::vector<int>{3, 2, 1, 1});
    CHECK(diags.errorCount() == 0);

    // Lowered again after plan-shared-memory found 3 stages of loop 0 too large with the
    // compiler's scratch buffers: at most 2, and the reason gives the lowered pool.
    LowerContext again(sm80, 128, diags);
    DecisionLog log2;
    again.decisionLog = &log2;
    StageInference capped;
    capped.caps = {2};
    capped.refusedBytes[0] = 174080;
    CHECK(inferStages(budget(16384, 0, "A_s 8192, B_s 8192"), capped, again, {}) == 2);
    REQUIRE(log2.entries().size() == 1);
    CHECK(log2.entries()[0].reason.find("3 stages would need 170 KB as planned with the compiler's scratch buffers") !=
          std::string::npos);
}
