// Stand-in for <cuda_bf16.h> in the SIMT simulator.
#pragma once

#include "simt_float.h"

struct __nv_bfloat16 {
    unsigned short bits = 0;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : bits(::simt::encode<8, 7>(f)) {}
    explicit operator float() const { return ::simt::decode<8, 7>(bits); }
};

// After the types: the stand-in runtime's emulations use them (this header may come first).
#include "cuda_runtime.h"
