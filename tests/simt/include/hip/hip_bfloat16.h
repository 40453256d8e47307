// Stand-in for <hip/hip_bfloat16.h> in the SIMT simulator.
#pragma once

#include "hip_runtime.h"
#include "../simt_float.h"

struct hip_bfloat16 {
    unsigned short data = 0;
    hip_bfloat16() = default;
    hip_bfloat16(float f) : data(::simt::encode<8, 7>(f)) {}
    explicit operator float() const { return ::simt::decode<8, 7>(data); }
};
namespace tl { using bfloat16 = ::hip_bfloat16; }
