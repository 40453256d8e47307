// What the CUDA and HIP backends share: a __global__ kernel per .tl kernel, shared memory as
// one dynamic pool laid out by plan-shared-memory (typed pointers into it), per-thread arrays for fragments
// and locals, and a launcher with the triple-chevron launch. What the two toolkits spell
// differently is data: the calls, rows of the runtime's spelling table (tl_gpu_spelling.h,
// spell()); the rest, a GpuToolkit row each (GpuToolkits.cpp).
#pragma once

#include "emit/CEmitter.h"

namespace tlc::codegen {

// A toolkit's names, headers and types, beside the calls that tl_gpu_spelling.h spells.
struct GpuToolkit {
    // "cuda" / "hip": the API's prefix (cudaError_t, cudaSuccess, cudaStream_t, cudaGetLastError)
    // and the spelling table's column.
    const char* api;
    std::vector<std::string> runtimePrefixes;  // its runtime files, then the shared ones (tl_gpu*.h)
    std::vector<std::string> headerPrologue;   // preprocessor lines before the launcher header's includes
    std::string headerApi;  // what the launcher header includes for the API (a host compiler reads it)
    std::string sourceApi;  // what the source includes instead, first, when it differs
    struct SmallType {      // f16, bf16, fp8: the toolkit's type and its header, or tl_types.h's
        DType type;
        const char* name;
        const char* header;   // nullptr: tl_types.h's section `section`
        const char* section;  // nullptr: the toolkit's
    };
    std::vector<SmallType> smallTypes;
    std::vector<DType> atomicAdd;  // the element types atomicAdd takes
    // fast_tanh of f32: a function of the toolkit, or a runtime helper of the backend's section
    // `fastTanhSection`.
    const char* fastTanh;
    const char* fastTanhSection;
};

class GpuEmitter final : public CEmitter {
public:
    GpuEmitter(const Target& target, const EmitOptions& options, const GpuToolkit& kit);

    std::vector<std::string> headerPrologue() const override { return kit_.headerPrologue; }
    std::vector<std::string> headerIncludes(const std::set<DType>& types) const override;
    void headerRuntime(const std::set<DType>& types, RuntimeNeeds& needs) const override;
    std::vector<std::string> sourceIncludes() const override;

private:
    // A row of the spelling table in this toolkit's spelling.
    std::string spelled(std::string_view row, const std::vector<std::string>& args) const;
    const GpuToolkit::SmallType* smallType(DType t) const;

    // ---- CEmitter hooks ------------------------------------------------------------------------
    std::string lowPrecisionType(DType t) const override;
    std::string kernelSuffix() const override { return "_kernel"; }
    std::vector<std::string> runtimePrefixes() const override { return kit_.runtimePrefixes; }
    void emitKernelFunction(const ir::Kernel& k, const LauncherSignature& sig) override;
    void emitLaunch(const ir::Kernel& k, const LauncherSignature& sig) override;
    std::string errorType() const override { return kit_.api + std::string("Error_t"); }
    std::string successValue() const override { return kit_.api + std::string("Success"); }
    std::string invalidValue() const override { return kit_.api + std::string("ErrorInvalidValue"); }
    std::string streamType() const override { return kit_.api + std::string("Stream_t"); }
    std::string zeroScratch(const std::string& ptr, const std::string& bytes) override {
        return spelled("TL_ZERO_ASYNC", {ptr, bytes, "stream"});
    }
    std::string roleValue(ir::VarRole role) const override;
    std::string callText(const ir::Call* c, const std::vector<std::string>& args) override;
    std::string minMaxText(const ir::Binary* b, const std::string& x, const std::string& y) override;
    void emitSharedOrLocal(const ir::Allocate* a) override;
    void emitBarrier() override { line("__syncthreads();"); }
    void emitAtomicAdd(const ir::Store* s, const std::string& target, const std::string& value) override;
    void emitAtomicMinMax(const ir::Store* s, const std::string& target, const std::string& value, bool max) override;
    std::string loopPragma(const ir::For* f) const override;
    std::string printfName() const override { return "printf"; }

    void emitTensorMaps(const ir::Kernel& k);            // in the launcher, before the launch
    void emitPartChecks(const ir::Kernel& k) override { emitTensorMaps(k); }

    const GpuToolkit& kit_;
    const std::vector<ir::SharedSlot>* plan_ = nullptr;  // of the kernel being emitted
    int64_t sharedBytes_ = 0;  // its shared-memory pool (dynamic shared memory, set at launch)
};

// The pool's alignment: the most any buffer gets (a 128-byte swizzle's 1024), and the same in
// every kernel, since nvcc takes the extern declarations in one file for one array.
constexpr int64_t kSharedPoolAlign = 1024;

// Dynamic shared memory a kernel may use without opting in (cudaFuncSetAttribute).
constexpr int64_t kStaticSharedLimit = 48 * 1024;

} // namespace tlc::codegen
