// Targets as data: everything the compiler needs to know about a GPU or CPU lives in one
// hardware profile, a JSON file under src/target/profiles/ embedded at build time (one source of
// truth); a user profile (--target-profile=FILE) has the same schema. Target is the in-memory form
// the rest of the compiler uses. Passes ask for features ("has tma"), never for architecture numbers.
#pragma once

#include "ast/DType.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
    Setmaxnreg = 1u << 13,  // sm90a: setmaxnreg (warp specialisation moves registers)
    Avx2 = 1u << 14,        // with FMA (x86-64-v3)
    // sm90: f32 vector reductions into global memory, red.global.add.v2.f32 / .v4.f32 (8 and
    // 16 bytes; PTX 8.1): a parallel loop's atomic_add of neighbouring elements as one
    VectorAtomicAdd = 1u << 15,
};
constexpr unsigned operator|(Feature a, Feature b) { return unsigned(a) | unsigned(b); }
constexpr unsigned operator|(unsigned a, Feature b) { return a | unsigned(b); }

// Peak rates of the reference device, TFLOP/s (TOP/s for i8); 0 when the device lacks the type.
struct PeakRates {
    double f16 = 0, bf16 = 0, fp8 = 0, i8 = 0, f32 = 0;
};

// What the output of a cpu target requires of the compiler and of the CPU it runs on: the
// emitted source stops with #error unless the compiler's flags define every macro (naming
// compileFlags), and the launchers return tl::cpu_error_unsupported_cpu unless the running CPU
// has every cpuid feature (__builtin_cpu_supports names). Empty for the portable `cpu`.
struct CpuIsa {
    std::string compileFlags;          // "-march=x86-64-v4"
    std::vector<std::string> macros;   // "__AVX512F__", ...
    std::vector<std::string> cpuid;    // "avx512f", ...
    // State the OS hands out only on request (Linux arch_prctl): "xtiledata" (AMX's tiles). The
    // launchers ask first and return tl::cpu_error_unsupported_cpu when refused.
    std::vector<std::string> osPermissions;
    // The vector width the C++ compiler should vectorise loops with (0: its own choice). g++
    // and clang tune for 256-bit vectors on Intel's AVX-512 server CPUs (Skylake-SP to Ice
    // Lake) even under -march=native, which halves the width of every auto-vectorised loop.
    int vectorBits = 0;
    bool empty() const {
        return compileFlags.empty() && macros.empty() && cpuid.empty() && osPermissions.empty() && !vectorBits;
    }
};

struct Target {
    std::string name;              // as given to --target
    Backend backend;
    std::string arch;              // what the backend compiler is told: sm_90a, gfx90a, native
    std::string description;       // short, for comments in the output
    int warpSize;                  // 1 on the CPU
    // The warp of the expert level (warp_size(), lane_id(), the warp collectives): the hardware's
    // on GPUs; on the CPU, which runs a block's threads as loops, 32, as NVIDIA's.
    int threadWarpSize = 0;
    int maxThreadsPerBlock;
    int sharedMemPerBlock;         // bytes a block may use (opt-in maximum)
    int sharedMemPerSM;
    int registersPerSM;            // 32-bit registers
    int maxRegistersPerThread;
    int smCount;                   // SMs / CUs / cores of the reference part
    unsigned features;
    // The profile's performance data (used by the recommender's model).
    std::string device;            // the reference device the numbers describe
    int maxThreadsPerSM = 2048;
    int maxBlocksPerSM = 32;
    // Thread-block clusters (feature `clusters`): the most blocks one cluster may have that every
    // part of the family runs (CUDA's portable limit, 8 on sm_90); 1 without clusters.
    int maxClusterSize = 1;
    double memoryBandwidthGBs = 0; // GB/s
    // The bandwidth from L2 to the SMs (GB/s), which every block's global reads pay, where the
    // DRAM bandwidth above is paid only once by the blocks of a wave that read the same bytes
    // (the recommender's two memory terms). 0 (left out): unknown, every read pays DRAM's.
    double l2BandwidthGBs = 0;
    // What one special-function result (exp, log, rsqrt, tanh: NVIDIA's MUFU, CDNA's
    // transcendental unit) costs in plain lane operations, for the model's element work.
    double specialFunctionCost = 1;
    // The share of the tensor peak the warp-level matrix instructions (mma.sync) reach on a target
    // whose peak needs warpgroup-wide ones (wgmma): what a block of fewer than a warpgroup's
    // threads gets. 1 (left out): the same rate.
    double warpMmaFraction = 1;
    PeakRates peak;
    // The latency of a tile load from global into shared memory on a busy device, ns (through
    // L2, misses to DRAM included): the pipeline keeps consumption rate x this many bytes in
    // flight per SM (passes/pipeline/Depth.cpp). 0 (left out): unknown, pipelines keep the
    // author's stages.
    double loadLatencyNs = 0;
    // The least tensor-core time (ns at the SM's peak) one wgmma group of a pipelined k-loop
    // should carry: each k-step pays a fixed cost (the waits on full, descriptors and fences,
    // commit, wait_group, the releases on empty, the producer's expect_tx and TMA issue) that must
    // hide behind the group in flight. A loop whose k-tile carries less issues several k-tiles'
    // wgmmas as one group (passes/pipeline/Unroll.cpp). 0 (left out): never unrolled.
    double kStepMinNs = 0;
    // Shared memory's banks (NVIDIA's and CDNA's LDS alike: 32 of 4 bytes): the bank-conflict
    // model that chooses shared layouts (layout/BankConflicts.h).
    int sharedBanks = 32;
    int sharedBankBytes = 4;
    // The least bytes a global access moves (NVIDIA: 32-byte sectors): a tile's contiguous run
    // of fewer bytes costs a whole sector. 0 (left out): unknown, runs cost their bytes.
    int memorySectorBytes = 0;
    std::vector<std::string> mmaShapes;  // matrix instruction shapes; on HIP targets, which MFMA forms gemm uses
    CpuIsa cpuIsa;                 // cpu targets: the instruction set the output requires

    bool has(Feature f) const { return (features & unsigned(f)) != 0; }
    // The dense peak of matrix work on elements of `type` (the f32 peak for other types and
    // without one; 1 when the profile has none), TFLOP/s.
    double peakFor(std::optional<DType> type) const;
    std::string_view sourceExtension() const;  // ".cu", ".hip", ".cpp"
};

// The built-in targets, read from the embedded profiles on first use.
std::span<const Target> allTargets();
const Target* findTarget(std::string_view name);

// Reads a profile (JSON text; `base`, if the profile names one, is looked up among the built-in
// targets). Returns the target, or nullopt with `error` set to a message of the form
// "LINE:COL: invalid JSON: ..." (parse errors) or "field 'x': ..." (schema errors).
// `builtin` is true for the embedded profiles (which must be complete and may not name a base).
std::optional<Target> parseTargetProfile(std::string_view json, std::string& error, bool builtin = false);
// Reads the profile in FILE and keeps it for the rest of the process; the pointer stays valid.
// On failure returns null with `error` = "FILE: error: ..." or "FILE:LINE:COL: error: ...".
const Target* loadTargetProfile(const std::string& path, std::string& error);
// The names of the features, as written in profiles: "cp_async", "wgmma", ...
std::vector<std::string_view> featureNames();
std::string_view backendName(Backend b);
std::string featureList(const Target& t);  // "cp_async, mma_sm80, ..." for --list-targets

} // namespace tlc
