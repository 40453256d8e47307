// The CUDA and HIP backends: one GpuEmitter each, with its toolkit's row. The calls the two spell
// differently (shuffles, votes, dp4a, the dynamic shared memory attribute, ...) are rows of the
// runtime's spelling table, src/emit/runtime/tl_gpu_spelling.h.
#include "emit/GpuEmitter.h"

namespace tlc::codegen {

namespace {

// CUDA: the toolkit's types (__half, __nv_bfloat16, __nv_fp8_e4m3), native atomicAdd down to
// 16-bit floats (sm_80's overloads), tl_cuda*.h for the rest.
const GpuToolkit kCuda = {
    "cuda",
    {"tl_cuda", "tl_gpu"},
    {},
    "<cuda_runtime.h>",
    "<cuda_runtime.h>",
    {{DType::F16, "__half", "<cuda_fp16.h>", nullptr},
     {DType::BF16, "__nv_bfloat16", "<cuda_bf16.h>", nullptr},
     {DType::F8E4M3, "__nv_fp8_e4m3", "<cuda_fp8.h>", nullptr},
     {DType::F8E5M2, "__nv_fp8_e5m2", "<cuda_fp8.h>", nullptr}},
    {DType::F32, DType::F64, DType::I32, DType::U32, DType::U64, DType::F16, DType::BF16},
    "tl::fast_tanh",  // tanh.approx.f32
    "fast_tanh",
};

// HIP (ROCm): __half and hip_bfloat16 from the toolkit, tl::fp8_* from tl_types.h (ROCm 5 has
// no fp8 type), native atomicAdd for 32/64-bit types and a compare-and-swap loop (tl_gpu.h,
// narrow_atomic_add) for 8/16-bit ones. The launcher header includes the host API only;
// hip_runtime_api.h insists on a platform macro, which hipcc defines and a host compiler
// including the header does not.
const GpuToolkit kHip = {
    "hip",
    {"tl_hip", "tl_gpu"},
    {"#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)",
     "#define __HIP_PLATFORM_AMD__  // the platform this file was generated for", "#endif"},
    "<hip/hip_runtime_api.h>",
    "<hip/hip_runtime.h>",
    {{DType::F16, "__half", "<hip/hip_fp16.h>", nullptr},
     {DType::BF16, "hip_bfloat16", "<hip/hip_bfloat16.h>", nullptr},
     {DType::F8E4M3, "tl::fp8_e4m3", nullptr, "fp8_e4m3"},
     {DType::F8E5M2, "tl::fp8_e5m2", nullptr, "fp8_e5m2"}},
    {DType::F32, DType::F64, DType::I32, DType::U32, DType::U64},
    "tanhf",
    nullptr,
};

} // namespace

std::unique_ptr<CEmitter> makeCudaEmitter(const Target& target, const EmitOptions& options) {
    return std::make_unique<GpuEmitter>(target, options, kCuda);
}

std::unique_ptr<CEmitter> makeHipEmitter(const Target& target, const EmitOptions& options) {
    return std::make_unique<GpuEmitter>(target, options, kHip);
}

} // namespace tlc::codegen
