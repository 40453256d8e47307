// Stand-in for <cuda_fp8.h> in the SIMT simulator: __nv_fp8_e4m3 and __nv_fp8_e5m2 as one byte
// (the toolkit's __x) with saturating float conversions that round to nearest even, also known
// as tl::fp8_e4m3 / tl::fp8_e5m2 so that the run-layer drivers compile as is.
#pragma once

#include "simt_float.h"

struct __nv_fp8_e4m3 {
    unsigned char __x = 0;
    __nv_fp8_e4m3() = default;
    explicit __nv_fp8_e4m3(float f) : __x(::simt::encodeSaturated<4, 3, 0x7eu, 0x7fu>(f)) {}
    explicit operator float() const { return ::simt::decode8<4, 3, false>(__x); }
};
struct __nv_fp8_e5m2 {
    unsigned char __x = 0;
    __nv_fp8_e5m2() = default;
    explicit __nv_fp8_e5m2(float f) : __x(::simt::encodeSaturated<5, 2, 0x7bu, 0x7eu>(f)) {}
    explicit operator float() const { return ::simt::decode8<5, 2, true>(__x); }
};
namespace tl {
using fp8_e4m3 = ::__nv_fp8_e4m3;
using fp8_e5m2 = ::__nv_fp8_e5m2;
} // namespace tl

// After the types: the stand-in runtime's emulations use them (this header may come first).
#include "cuda_runtime.h"
