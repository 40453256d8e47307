// HIP (ROCm): __half and hip_bfloat16 from the toolkit, tl::fp8_* from tl_types.h (ROCm 5
// has no fp8 type), __shfl_xor over the 64-lane wavefront, native atomicAdd for 32/64-bit
// types and a compare-and-swap loop (tl_hip.h) for 8/16-bit ones.
#include "emit/GpuEmitter.h"

#include <fmt/format.h>

namespace tlc::codegen {

namespace {

class HipEmitter final : public GpuEmitter {
public:
    using GpuEmitter::GpuEmitter;

    // hip_runtime_api.h insists on a platform macro, which hipcc defines and a host compiler
    // including the launcher header does not.
    std::vector<std::string> headerPrologue() const override {
        return {"#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)",
                "#define __HIP_PLATFORM_AMD__  // the platform this file was generated for", "#endif"};
    }
    std::vector<std::string> headerIncludes(const std::set<DType>& types) const override {
        std::vector<std::string> out = {"<cstdint>", "<hip/hip_runtime_api.h>"};
        if (types.count(DType::F16)) out.push_back("<hip/hip_fp16.h>");
        if (types.count(DType::BF16)) out.push_back("<hip/hip_bfloat16.h>");
        return out;
    }
    void headerRuntime(const std::set<DType>& types, RuntimeNeeds& needs) const override {
        if (types.count(DType::F8E4M3)) needs.add("tl_types.h", "fp8_e4m3");
        if (types.count(DType::F8E5M2)) needs.add("tl_types.h", "fp8_e5m2");
    }
    std::vector<std::string> sourceIncludes() const override {
        std::vector<std::string> out = {"<hip/hip_runtime.h>"};
        for (const auto& h : headerIncludes(usedTypes_))
            if (h != "<hip/hip_runtime_api.h>") out.push_back(h);
        out.insert(out.end(), includes_.begin(), includes_.end());
        return out;
    }

protected:
    std::string lowPrecisionType(DType t) const override {
        switch (t) {
        case DType::F16: return "__half";
        case DType::BF16: return "hip_bfloat16";
        case DType::F8E4M3: need("tl_types.h", "fp8_e4m3"); return "tl::fp8_e4m3";
        case DType::F8E5M2: need("tl_types.h", "fp8_e5m2"); return "tl::fp8_e5m2";
        default: return "float";
        }
    }
    std::string runtimeFile() const override { return "tl_hip.h"; }
    std::string apiPrefix() const override { return "hip"; }
    std::string shuffle(const std::string& kind, const std::vector<std::string>& a) const override {
        std::string name = kind == "shfl_idx" ? "__shfl" : "__" + kind;
        return fmt::format("{}({}, {}, {})", name, a[0], a[1], a[2]);
    }
    // A wavefront runs in lockstep: the barrier only keeps the compiler from moving memory
    // accesses across it.
    std::string syncWarp() const override { return "__builtin_amdgcn_wave_barrier()"; }
    std::string vote(const std::string& kind, const std::string& pred) const override {
        if (kind == "ballot") return fmt::format("uint64_t(__ballot({}))", pred);
        return fmt::format("bool(__{}({}))", kind, pred);
    }
    // v_dot4_i32_i8 / v_dot4_u32_u8 (CDNA2 and CDNA3); false: no clamping.
    std::string dp4a(DType t, const std::vector<std::string>& a) const override {
        return fmt::format("__builtin_amdgcn_{}dot4({}, {}, {}, false)", t == DType::U32 ? "u" : "s", a[0], a[1], a[2]);
    }
    std::string fastTanh(const std::string& x) override { return "tanhf(" + x + ")"; }
    bool nativeAtomicAdd(DType t) const override {
        return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::U32 || t == DType::U64;
    }
    std::string setDynamicSharedCall(const std::string& kernel, int64_t bytes) const override {
        return fmt::format(
            "hipFuncSetAttribute(reinterpret_cast<const void*>(&{}), hipFuncAttributeMaxDynamicSharedMemorySize, {})",
            kernel, bytes);
    }
};

} // namespace

std::unique_ptr<CEmitter> makeHipEmitter(const Target& target, const EmitOptions& options) {
    return std::make_unique<HipEmitter>(target, options);
}

} // namespace tlc::codegen
