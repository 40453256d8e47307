// CUDA: the toolkit's types (__half, __nv_bfloat16, __nv_fp8_e4m3), __shfl_xor_sync, native
// atomicAdd down to 16-bit floats, tl_cuda.h for the rest.
#include "emit/GpuEmitter.h"

#include <fmt/format.h>

namespace tlc::codegen {

namespace {

class CudaEmitter final : public GpuEmitter {
public:
    using GpuEmitter::GpuEmitter;

    std::vector<std::string> headerIncludes(const std::set<DType>& types) const override {
        std::vector<std::string> out = {"<cstdint>", "<cuda_runtime.h>"};
        if (types.count(DType::F16)) out.push_back("<cuda_fp16.h>");
        if (types.count(DType::BF16)) out.push_back("<cuda_bf16.h>");
        if (types.count(DType::F8E4M3) || types.count(DType::F8E5M2)) out.push_back("<cuda_fp8.h>");
        return out;
    }
    void headerRuntime(const std::set<DType>&, RuntimeNeeds&) const override {}
    std::vector<std::string> sourceIncludes() const override {
        std::vector<std::string> out = headerIncludes(usedTypes_);
        out.insert(out.end(), includes_.begin(), includes_.end());
        return out;
    }

protected:
    std::string lowPrecisionType(DType t) const override {
        switch (t) {
        case DType::F16: return "__half";
        case DType::BF16: return "__nv_bfloat16";
        case DType::F8E4M3: return "__nv_fp8_e4m3";
        case DType::F8E5M2: return "__nv_fp8_e5m2";
        default: return "float";
        }
    }
    std::string runtimeFile() const override { return "tl_cuda.h"; }
    std::string apiPrefix() const override { return "cuda"; }
    std::string shuffle(const std::string& kind, const std::vector<std::string>& a) const override {
        std::string name = kind == "shfl_idx" ? "__shfl_sync" : "__" + kind + "_sync";
        return fmt::format("{}(0xffffffffu, {}, {}, {})", name, a[0], a[1], a[2]);
    }
    std::string syncWarp() const override { return "__syncwarp()"; }
    std::string vote(const std::string& kind, const std::string& pred) const override {
        if (kind == "ballot") return fmt::format("uint64_t(__ballot_sync(0xffffffffu, {}))", pred);
        return fmt::format("bool(__{}_sync(0xffffffffu, {}))", kind, pred);
    }
    std::string dp4a(DType, const std::vector<std::string>& a) const override {
        return fmt::format("__dp4a({}, {}, {})", a[0], a[1], a[2]);
    }
    std::string fastTanh(const std::string& x) override {
        needSection("math");
        return "tl::fast_tanh(" + x + ")";
    }
    bool nativeAtomicAdd(DType t) const override {
        // atomicAdd overloads of sm_80 and later.
        return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::U32 || t == DType::U64 ||
               t == DType::F16 || t == DType::BF16;
    }
    std::string setDynamicSharedCall(const std::string& kernel, int64_t bytes) const override {
        return fmt::format("cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {})", kernel, bytes);
    }
};

} // namespace

std::unique_ptr<CEmitter> makeCudaEmitter(const Target& target, const EmitOptions& options) {
    return std::make_unique<CudaEmitter>(target, options);
}

} // namespace tlc::codegen
