// Targets as data: everything the compiler needs to know about a GPU or CPU lives in one table
// row. Passes ask for features ("has tma"), never for architecture numbers.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tlc {

enum class Backend { Cuda, Hip, Cpu };

enum class Feature : unsigned {
    CpAsync = 1u << 0,     // sm80+: cp.async global->shared
    Ldmatrix = 1u << 1,    // sm75+: ldmatrix
    MmaSm80 = 1u << 2,     // mma.sync m16n8k16 f16/bf16, m16n8k32 i8
    MmaFp8 = 1u << 3,      // sm89: mma.sync with e4m3/e5m2
    Wgmma = 1u << 4,       // sm90a: wgmma.mma_async
    Tma = 1u << 5,         // sm90: cp.async.bulk.tensor
    Mbarrier = 1u << 6,    // sm80+ (transaction counts on sm90)
    Clusters = 1u << 7,    // sm90: thread-block clusters
    Mfma = 1u << 8,        // CDNA: v_mfma_*
    MfmaFp8 = 1u << 9,     // CDNA3
    Avx512 = 1u << 10,
    Avx512Bf16 = 1u << 11,
    Amx = 1u << 12,
};
constexpr unsigned operator|(Feature a, Feature b) { return unsigned(a) | unsigned(b); }
constexpr unsigned operator|(unsigned a, Feature b) { return a | unsigned(b); }

struct Target {
    std::string_view name;         // as given to --target
    Backend backend;
    std::string_view arch;         // what the backend compiler is told: sm_90a, gfx90a, native
    std::string_view description;
    int warpSize;                  // 1 on the CPU
    int maxThreadsPerBlock;
    int sharedMemPerBlock;         // bytes a block may use (opt-in maximum)
    int sharedMemPerSM;
    int registersPerSM;            // 32-bit registers
    int maxRegistersPerThread;
    int smCount;                   // SMs / CUs / cores of the reference part
    unsigned features;

    bool has(Feature f) const { return (features & unsigned(f)) != 0; }
    std::string_view sourceExtension() const;  // ".cu", ".hip", ".cpp"
};

std::span<const Target> allTargets();
const Target* findTarget(std::string_view name);
std::string_view backendName(Backend b);
std::string featureList(const Target& t);  // "cp_async, mma_sm80, ..." for --list-targets

} // namespace tlc
