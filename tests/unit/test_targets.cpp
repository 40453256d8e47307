// The target table: names, backends and the feature sets that the lowering relies on.
#include "target/Target.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace tlc;

namespace {
const Target& target(std::string_view name) {
    const Target* t = findTarget(name);
    REQUIRE_MESSAGE(t != nullptr, "no target " << std::string(name));
    return *t;
}
} // namespace

TEST_CASE("targets: every name is unique and found by findTarget") {
    REQUIRE(!allTargets().empty());
    std::set<std::string_view> names;
    for (const auto& t : allTargets()) {
        CHECK(names.insert(t.name).second);
        CHECK(findTarget(t.name) == &t);
        CHECK(!t.arch.empty());
        CHECK(!t.description.empty());
    }
}

TEST_CASE("targets: unknown names are not found, and lookup is exact") {
    CHECK(findTarget("") == nullptr);
    CHECK(findTarget("sm_90") == nullptr);
    CHECK(findTarget("SM90") == nullptr);
    CHECK(findTarget("sm9") == nullptr);
    CHECK(findTarget("sm900") == nullptr);
    CHECK(findTarget("cpu ") == nullptr);
}

TEST_CASE("targets: the documented set is there") {
    for (const char* name : {"sm80", "sm86", "sm89", "sm90", "gfx90a", "gfx942", "cpu"})
        CHECK_MESSAGE(findTarget(name) != nullptr, name);
}

TEST_CASE("targets: backend, source extension and warp size agree") {
    for (const auto& t : allTargets()) {
        CAPTURE(std::string(t.name));
        switch (t.backend) {
        case Backend::Cuda:
            CHECK(t.sourceExtension() == ".cu");
            CHECK(backendName(t.backend) == "cuda");
            CHECK(t.warpSize == 32);
            CHECK(t.arch.substr(0, 3) == "sm_");
            break;
        case Backend::Hip:
            CHECK(t.sourceExtension() == ".hip");
            CHECK(backendName(t.backend) == "hip");
            CHECK(t.warpSize == 64);
            CHECK(t.arch.substr(0, 3) == "gfx");
            break;
        case Backend::Cpu:
            CHECK(t.sourceExtension() == ".cpp");
            CHECK(backendName(t.backend) == "cpu");
            CHECK(t.warpSize == 1);
            break;
        }
    }
}

TEST_CASE("targets: resource limits are plausible") {
    for (const auto& t : allTargets()) {
        CAPTURE(std::string(t.name));
        CHECK(t.maxThreadsPerBlock >= 256);
        CHECK(t.maxThreadsPerBlock % t.warpSize == 0);
        CHECK(t.sharedMemPerBlock > 0);
        CHECK(t.sharedMemPerBlock <= t.sharedMemPerSM);
        CHECK(t.smCount >= 1);
        if (t.backend != Backend::Cpu) {
            CHECK(t.registersPerSM >= 65536);
            CHECK(t.maxRegistersPerThread >= 255);
        }
    }
    // The opt-in shared memory of a Hopper block is larger than an Ampere's, which is larger
    // than that of the consumer parts.
    CHECK(target("sm90").sharedMemPerBlock > target("sm80").sharedMemPerBlock);
    CHECK(target("sm80").sharedMemPerBlock > target("sm86").sharedMemPerBlock);
    CHECK(target("gfx90a").sharedMemPerBlock == 65536);
}

TEST_CASE("targets: NVIDIA feature sets grow with the architecture") {
    const Target& a = target("sm80");
    const Target& ada = target("sm89");
    const Target& h = target("sm90");
    CHECK((a.features & ~ada.features) == 0u);  // Ada has everything Ampere has
    CHECK((ada.features & ~h.features) == 0u);  // Hopper has everything Ada has
    for (Feature f : {Feature::CpAsync, Feature::Ldmatrix, Feature::MmaSm80, Feature::Mbarrier}) {
        CHECK(a.has(f));
        CHECK(h.has(f));
    }
    CHECK(!a.has(Feature::MmaFp8));
    CHECK(ada.has(Feature::MmaFp8));
    for (Feature f : {Feature::Wgmma, Feature::Tma, Feature::Clusters}) {
        CHECK(!a.has(f));
        CHECK(!ada.has(f));
        CHECK(h.has(f));
    }
    // wgmma needs the "a" architecture.
    CHECK(h.arch == "sm_90a");
}

TEST_CASE("targets: features do not leak across vendors") {
    for (const auto& t : allTargets()) {
        CAPTURE(std::string(t.name));
        bool cuda = t.backend == Backend::Cuda, hip = t.backend == Backend::Hip, cpu = t.backend == Backend::Cpu;
        if (!cuda) {
            for (Feature f : {Feature::CpAsync, Feature::Ldmatrix, Feature::MmaSm80, Feature::MmaFp8,
                              Feature::Wgmma, Feature::Tma, Feature::Clusters})
                CHECK(!t.has(f));
        }
        if (!hip) {
            CHECK(!t.has(Feature::Mfma));
            CHECK(!t.has(Feature::MfmaFp8));
        }
        if (!cpu) {
            CHECK(!t.has(Feature::Avx512));
            CHECK(!t.has(Feature::Amx));
        }
    }
    CHECK(target("gfx90a").has(Feature::Mfma));
    CHECK(!target("gfx90a").has(Feature::MfmaFp8));
    CHECK(target("gfx942").has(Feature::MfmaFp8));
    // The portable cpu target requires nothing; the others what their names say.
    CHECK(target("cpu").features == 0);
    CHECK(target("cpu-avx2").has(Feature::Avx2));
    CHECK(!target("cpu-avx2").has(Feature::Avx512));
    CHECK(target("cpu-avx512").has(Feature::Avx512));
    CHECK(target("cpu-avx512").cpuIsa.macros.front() == "__AVX512F__");
}

TEST_CASE("targets: featureList names the features in table order") {
    CHECK(featureList(target("sm80")) == "cp_async, ldmatrix, mma_sm80, mbarrier");
    CHECK(featureList(target("gfx942")) == "mfma, mfma_fp8");
    std::string hopper = featureList(target("sm90"));
    CHECK(hopper.find("wgmma") != std::string::npos);
    CHECK(hopper.find("tma") != std::string::npos);
    CHECK(hopper.find("mfma") == std::string::npos);
    CHECK(hopper.find(", ,") == std::string::npos);
    CHECK(hopper.back() != ' ');
}
