// Stand-in for <cuda_fp16.h> in the SIMT simulator: __half as 16 bits with float conversions
// (round to nearest even), also known as tl::half so that the run-layer drivers compile as is.
#pragma once

#include "simt_float.h"

struct __half {
    unsigned short bits = 0;
    __half() = default;
    __half(float f) : bits(::simt::encode<5, 10>(f)) {}
    explicit operator float() const { return ::simt::decode<5, 10>(bits); }
};
inline __half __float2half(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
namespace tl { using half = ::__half; }

// After the types: the stand-in runtime's emulations use them (this header may come first).
#include "cuda_runtime.h"
