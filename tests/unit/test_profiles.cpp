// Hardware profiles: the embedded JSON files fill the target table; user profiles with the same
// schema (optionally on a built-in base) load or fail with a message naming the problem.
#include "target/Target.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <unistd.h>
#include <fstream>
#include <string>

using namespace tlc;

namespace {
std::string parseError(const std::string& json) {
    std::string error;
    std::optional<Target> t = parseTargetProfile(json, error);
    CHECK_MESSAGE(!t, json);
    return error;
}
} // namespace

TEST_CASE("profiles: the built-in targets carry their performance data") {
    for (const auto& t : allTargets()) {
        CAPTURE(t.name);
        CHECK(!t.device.empty());
        CHECK(t.memoryBandwidthGBs > 0);
        CHECK(t.peak.f32 > 0);
        CHECK(t.maxThreadsPerSM >= t.maxThreadsPerBlock);
        CHECK(t.maxBlocksPerSM >= 1);
        // The cpu targets' gemm is FMA vector code: no matrix instruction to list.
        CHECK(t.mmaShapes.empty() == (t.backend == Backend::Cpu));
    }
    const Target* a100 = findTarget("sm80");
    REQUIRE(a100);
    CHECK(a100->smCount == 108);
    CHECK(a100->memoryBandwidthGBs == doctest::Approx(2039));
    CHECK(a100->peak.f16 == doctest::Approx(312));
    CHECK(a100->peak.fp8 == 0);
    CHECK(a100->device.find("A100") != std::string::npos);
    const Target* h100 = findTarget("sm90");
    REQUIRE(h100);
    CHECK(h100->smCount == 132);
    CHECK(h100->peak.fp8 > h100->peak.f16);
    CHECK(findTarget("gfx942")->smCount == 304);
    CHECK(findTarget("gfx942")->warpSize == 64);
}

TEST_CASE("profiles: a user profile on a base overrides only what it gives") {
    std::string error;
    auto t = parseTargetProfile(R"({"name": "a100_40g", "base": "sm80", "device": "A100 40GB",
                                   "memory_bandwidth_gbps": 1555, "sm_count": 100})",
                                error);
    REQUIRE_MESSAGE(t, error);
    CHECK(t->name == "a100_40g");
    CHECK(t->arch == "sm_80");
    CHECK(t->backend == Backend::Cuda);
    CHECK(t->memoryBandwidthGBs == doctest::Approx(1555));
    CHECK(t->smCount == 100);
    CHECK(t->sharedMemPerBlock == findTarget("sm80")->sharedMemPerBlock);
    CHECK(t->features == findTarget("sm80")->features);
    CHECK(t->device == "A100 40GB");
    // The load latency is data too: sm90's, a user's on it, or none (no pipeline deepening).
    CHECK(findTarget("sm90")->loadLatencyNs > 0);
    CHECK(t->loadLatencyNs == 0);
    auto slow = parseTargetProfile(R"({"name": "h_slow", "base": "sm90", "load_latency_ns": 1200})", error);
    REQUIRE_MESSAGE(slow, error);
    CHECK(slow->loadLatencyNs == doctest::Approx(1200));
    auto unknown = parseTargetProfile(R"({"name": "h_unknown", "base": "sm90", "load_latency_ns": 0})", error);
    REQUIRE_MESSAGE(unknown, error);
    CHECK(unknown->loadLatencyNs == 0);
    // So is the tensor work a wgmma group should carry (k-step unrolling): sm90's, or none.
    CHECK(findTarget("sm90")->kStepMinNs > 0);
    CHECK(findTarget("sm80")->kStepMinNs == 0);
    auto unrolled = parseTargetProfile(R"({"name": "h_unroll", "base": "sm90", "k_step_min_ns": 500})", error);
    REQUIRE_MESSAGE(unrolled, error);
    CHECK(unrolled->kStepMinNs == doctest::Approx(500));
    CHECK(unrolled->loadLatencyNs == findTarget("sm90")->loadLatencyNs);
}

TEST_CASE("profiles: a complete user profile needs no base") {
    std::string error;
    auto t = parseTargetProfile(R"({"name": "tiny", "device": "a made-up GPU", "description": "tiny GPU",
        "backend": "cuda", "arch": "sm_80", "warp_size": 32, "max_threads_per_block": 256,
        "max_threads_per_sm": 512, "max_blocks_per_sm": 4, "shared_mem_per_block": 16384,
        "shared_mem_per_sm": 32768, "registers_per_sm": 65536, "max_registers_per_thread": 255,
        "sm_count": 2, "memory_bandwidth_gbps": 50, "peak_tflops": {"f16": 1, "bf16": 1, "fp8": 0, "i8": 2, "f32": 0.5},
        "mma_shapes": [], "features": ["cp_async", "mma_sm80"]})",
                                error);
    REQUIRE_MESSAGE(t, error);
    CHECK(t->has(Feature::CpAsync));
    CHECK(!t->has(Feature::Wgmma));
    CHECK(t->maxThreadsPerBlock == 256);
}

TEST_CASE("profiles: errors name the problem") {
    CHECK(parseError("{\n  \"name\": \"x\",\n  \"base\": \"sm80\"\n  \"sm_count\": 3\n}").rfind("4:", 0) == 0);
    CHECK(parseError(R"({"base": "sm80"})") == "missing field 'name'");
    CHECK(parseError(R"({"name": "x"})").find("missing field") == 0);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "warp_size": "32"})") ==
          "field 'warp_size' must be an integer, not a string");
    CHECK(parseError(R"({"name": "x", "base": "sm80", "sm_cont": 3})") == "unknown field 'sm_cont'");
    CHECK(parseError(R"({"name": "x", "base": "sm81"})").find("field 'base': unknown target 'sm81'") == 0);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "features": ["tma", "warp_drive"]})")
              .find("unknown feature 'warp_drive'") != std::string::npos);
    CHECK(parseError(R"({"name": "x", "base": "gfx90a", "features": ["mfma", "vector_atomic_add"]})")
              .find("'vector_atomic_add' is for cuda targets") != std::string::npos);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "shared_mem_per_block": 300000})")
              .find("larger than 'shared_mem_per_sm'") != std::string::npos);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "sm_count": 0})").find("field 'sm_count' is 0") == 0);
    CHECK(parseError(R"({"name": "x", "base": "sm90", "load_latency_ns": -5})").find("field 'load_latency_ns' is -5") ==
          0);
    CHECK(parseError(R"({"name": "x", "base": "sm90", "k_step_min_ns": -1})").find("field 'k_step_min_ns' is -1") == 0);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "peak_tflops": {"f64": 9}})").find("peak_tflops.f64") !=
          std::string::npos);
    CHECK(parseError(R"({"name": "x", "base": "sm80", "backend": "metal"})").find("cuda, hip or cpu") !=
          std::string::npos);
    CHECK(parseError(R"([1, 2])").find("must be a JSON object") != std::string::npos);
    CHECK(parseError(R"({"name": "a b", "base": "sm80"})").find("field 'name'") == 0);
    CHECK(parseError(R"({"name": "x", "base": "gfx90a", "shared_mem_banks": 24})") ==
          "field 'shared_mem_banks' (24) is not a power of two");
}

TEST_CASE("profiles: shared memory's banks are data, 32 of 4 bytes unless a profile says otherwise") {
    CHECK(findTarget("sm90")->sharedBanks == 32);
    CHECK(findTarget("gfx942")->sharedBankBytes == 4);
    std::string error;
    auto t = parseTargetProfile(R"({"name": "wide_lds", "base": "gfx942", "shared_mem_banks": 64})", error);
    REQUIRE_MESSAGE(t, error);
    CHECK(t->sharedBanks == 64);
    CHECK(t->sharedBankBytes == 4);
}

TEST_CASE("profiles: NVIDIA targets move global memory in 32-byte sectors; the others name none") {
    for (const char* name : {"sm80", "sm86", "sm89", "sm90"}) CHECK(findTarget(name)->memorySectorBytes == 32);
    for (const char* name : {"gfx90a", "gfx942", "cpu"}) CHECK(findTarget(name)->memorySectorBytes == 0);
    std::string error;
    CHECK(!parseTargetProfile(R"({"name": "x", "base": "sm90", "memory_sector_bytes": 48})", error));
    CHECK(error == "field 'memory_sector_bytes' (48) is not a power of two");
}

TEST_CASE("profiles: loadTargetProfile prefixes the file name and keeps the target") {
    std::string path = "tlc_test_profile_" + std::to_string(::getpid()) + ".json";
    {
        std::ofstream out(path);
        out << R"({"name": "mine", "base": "gfx942", "sm_count": 228})";
    }
    std::string error;
    const Target* t = loadTargetProfile(path, error);
    REQUIRE_MESSAGE(t, error);
    CHECK(t->name == "mine");
    CHECK(t->smCount == 228);
    CHECK(t->backend == Backend::Hip);
    CHECK(findTarget("mine") == nullptr);  // user profiles are not built-in targets
    {
        std::ofstream out(path);
        out << "{\"name\": \"mine\",\n \"base\": }";
    }
    CHECK(loadTargetProfile(path, error) == nullptr);
    CHECK(error.rfind(path + ":2:", 0) == 0);
    CHECK(error.find(": error: invalid JSON") != std::string::npos);
    std::remove(path.c_str());
    CHECK(loadTargetProfile(path, error) == nullptr);
    CHECK(error.rfind(path + ": error: cannot read the profile", 0) == 0);
}
