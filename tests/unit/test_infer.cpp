// Tile inference's pieces that need no kernel: variant names, the decision log's merging of
// repeated decisions, the stage count from a shared-memory budget and its contradiction.
#include "driver/Variants.h"
#include "ops/LowerContext.h"
#include "passes/PipelineStages.h"
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

TEST_CASE("infer: stages from the shared-memory budget, and a fixed count that does not fit") {
    const Target& sm80 = *findTarget("sm80");
    SourceFile file("t.tl", "");
    DiagnosticEngine diags(file);
    LowerContext ctx(sm80, 128, diags);
    DecisionLog log;
    ctx.decisionLog = &log;
    // 16 KB a stage on 163 KB: the cap, 3.
    CHECK(inferStages({16384, 16384, "A_s 8192, B_s 8192"}, ctx, {}) == 3);
    // 64 KB a stage: two fit (128 KB), three do not (192 KB).
    CHECK(inferStages({65536, 65536, "A_s 65536"}, ctx, {}) == 2);
    // 96 KB a stage: no second one.
    CHECK(inferStages({98304, 98304, "A_s 98304"}, ctx, {}) == 1);
    REQUIRE(log.entries().size() == 3);
    CHECK(log.entries()[2].reason.find("no pipeline") == 0);
    CHECK(checkStages(5, {32768, 32768, "A_s 16384, B_s 16384"}, ctx, {}));
    CHECK(diags.errorCount() == 0);
    CHECK_FALSE(checkStages(6, {32768, 32768, "A_s 16384, B_s 16384"}, ctx, {}));
    REQUIRE(diags.errorCount() == 1);
    CHECK(diags.diagnostics()[0].message.find("(at most 5 stages fit)") != std::string::npos);
}
