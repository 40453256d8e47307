// What the CUDA and HIP backends share: a __global__ kernel per .tl kernel, shared memory as
// one dynamic pool laid out by plan-shared-memory (typed pointers into it), per-thread arrays for fragments
// and locals, and a launcher with the triple-chevron launch. CudaEmitter.cpp and
// HipEmitter.cpp fill in the toolkit's names.
#pragma once

#include "emit/CEmitter.h"

namespace tlc::codegen {

class GpuEmitter : public CEmitter {
public:
    using CEmitter::CEmitter;

protected:
    // ---- what CUDA and HIP spell differently -----------------------------------------------
    virtual std::string apiPrefix() const = 0;  // "cuda" / "hip"
    // shfl_xor / shfl_down / shfl_up / shfl_idx (value, lane argument, width) in the target's
    // spelling; sync_warp.
    virtual std::string shuffle(const std::string& kind, const std::vector<std::string>& args) const = 0;
    virtual std::string syncWarp() const = 0;
    // ballot (a u64 mask) / any / all of a condition over the warp; dp4a of three i32 or u32.
    virtual std::string vote(const std::string& kind, const std::string& pred) const = 0;
    virtual std::string dp4a(DType t, const std::vector<std::string>& args) const = 0;
    virtual std::string fastTanh(const std::string& x) = 0;
    virtual bool nativeAtomicAdd(DType t) const = 0;
    virtual std::string setDynamicSharedCall(const std::string& kernel, int64_t bytes) const = 0;

    // ---- CEmitter hooks, shared by both ---------------------------------------------------------
    std::string kernelSuffix() const override { return "_kernel"; }
    // A section of the backend's runtime file, or else of tl_gpu.h (what CUDA and HIP share).
    std::string runtimeFileOf(std::string_view section) const override;
    void emitKernelFunction(const ir::Kernel& k, const LauncherSignature& sig) override;
    void emitLaunch(const ir::Kernel& k, const LauncherSignature& sig) override;
    std::string errorType() const override { return apiPrefix() + "Error_t"; }
    std::string successValue() const override { return apiPrefix() + "Success"; }
    std::string invalidValue() const override { return apiPrefix() + "ErrorInvalidValue"; }
    std::string streamType() const override { return apiPrefix() + "Stream_t"; }
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

    const std::vector<ir::SharedSlot>* plan_ = nullptr;  // of the kernel being emitted
    int64_t sharedBytes_ = 0;  // its shared-memory pool (dynamic shared memory, set at launch)
};

// The pool's alignment: the most any buffer gets (a 128-byte swizzle's 1024), and the same in
// every kernel, since nvcc takes the extern declarations in one file for one array.
constexpr int64_t kSharedPoolAlign = 1024;

// Dynamic shared memory a kernel may use without opting in (cudaFuncSetAttribute).
constexpr int64_t kStaticSharedLimit = 48 * 1024;

} // namespace tlc::codegen
