#include "target/Target.h"

#include <array>

namespace tlc {

namespace {
constexpr unsigned kAmpere = Feature::CpAsync | Feature::Ldmatrix | Feature::MmaSm80 | Feature::Mbarrier;
constexpr unsigned kAda = kAmpere | Feature::MmaFp8;
constexpr unsigned kHopper = kAda | Feature::Wgmma | Feature::Tma | Feature::Clusters;
constexpr unsigned kCdna2 = unsigned(Feature::Mfma);
constexpr unsigned kCdna3 = kCdna2 | Feature::MfmaFp8;
constexpr unsigned kCpu = Feature::Avx512 | Feature::Avx512Bf16 | Feature::Amx;

// The reference parts: A100, A10/RTX 3090, L40/RTX 4090, H100 SXM, MI250X, MI300X, a Xeon.
constexpr std::array<Target, 7> kTargets = {{
    {"sm80", Backend::Cuda, "sm_80", "NVIDIA Ampere (A100)", 32, 1024, 166912, 167936, 65536, 255, 108, kAmpere},
    {"sm86", Backend::Cuda, "sm_86", "NVIDIA Ampere (A10, RTX 30xx)", 32, 1024, 101376, 102400, 65536, 255, 84, kAmpere},
    {"sm89", Backend::Cuda, "sm_89", "NVIDIA Ada (L4, L40, RTX 40xx)", 32, 1024, 101376, 102400, 65536, 255, 128, kAda},
    {"sm90", Backend::Cuda, "sm_90a", "NVIDIA Hopper (H100, H200)", 32, 1024, 232448, 233472, 65536, 255, 132, kHopper},
    {"gfx90a", Backend::Hip, "gfx90a", "AMD CDNA2 (MI200)", 64, 1024, 65536, 65536, 131072, 512, 110, kCdna2},
    {"gfx942", Backend::Hip, "gfx942", "AMD CDNA3 (MI300)", 64, 1024, 65536, 65536, 131072, 512, 304, kCdna3},
    {"cpu", Backend::Cpu, "native", "x86-64 CPU with OpenMP (C++17)", 1, 1024, 1 << 20, 1 << 20, 0, 0, 1, kCpu},
}};

constexpr std::pair<Feature, std::string_view> kFeatureNames[] = {
    {Feature::CpAsync, "cp_async"}, {Feature::Ldmatrix, "ldmatrix"}, {Feature::MmaSm80, "mma_sm80"},
    {Feature::MmaFp8, "mma_fp8"},   {Feature::Wgmma, "wgmma"},       {Feature::Tma, "tma"},
    {Feature::Mbarrier, "mbarrier"}, {Feature::Clusters, "clusters"}, {Feature::Mfma, "mfma"},
    {Feature::MfmaFp8, "mfma_fp8"}, {Feature::Avx512, "avx512"},     {Feature::Avx512Bf16, "avx512_bf16"},
    {Feature::Amx, "amx"},
};
} // namespace

std::span<const Target> allTargets() { return kTargets; }

const Target* findTarget(std::string_view name) {
    for (const auto& t : kTargets)
        if (t.name == name) return &t;
    return nullptr;
}

std::string_view backendName(Backend b) {
    switch (b) {
    case Backend::Cuda: return "cuda";
    case Backend::Hip: return "hip";
    case Backend::Cpu: return "cpu";
    }
    return "cpu";
}

std::string_view Target::sourceExtension() const {
    switch (backend) {
    case Backend::Cuda: return ".cu";
    case Backend::Hip: return ".hip";
    case Backend::Cpu: return ".cpp";
    }
    return ".cpp";
}

std::string featureList(const Target& t) {
    std::string out;
    for (const auto& [f, name] : kFeatureNames)
        if (t.has(f)) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

} // namespace tlc
