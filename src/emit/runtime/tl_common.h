// tl_common.h -- helpers shared by every backend of tlc's output (CUDA, HIP, C++/OpenMP).
//
// tlc embeds this file at build time and pastes the sections an emitted file uses into it, so
// that the output compiles on its own. Each section runs from a "tlc:section NAME" line to a
// "tlc:end" line; "needs=a,b" names the sections (of this file, or "file.h:section") that must
// come before it. Lines outside sections (like the include guard) are not pasted. The file also
// compiles as an ordinary header, which is how the tests check it.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // __host__, __device__, __forceinline__: nvcc has them built in
#endif

// tlc:section host_device
// TL_HOST_DEVICE marks helpers usable on the host and in kernels.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TL_HOST_DEVICE inline
#endif
// tlc:end

// tlc:section intmath needs=host_device
namespace tl {
// ceil(a / b) for a >= 0, b > 0 (tile counts).
template <typename A, typename B>
TL_HOST_DEVICE auto ceildiv(A a, B b) -> decltype(a / b) {
    return (a + b - 1) / b;
}
// Division rounding towards negative infinity (Python's //).
template <typename A, typename B>
TL_HOST_DEVICE auto floordiv(A a, B b) -> decltype(a / b) {
    auto q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
// The remainder with the sign of the divisor (Python's %).
template <typename A, typename B>
TL_HOST_DEVICE auto floormod(A a, B b) -> decltype(a % b) {
    auto r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
} // namespace tl
// tlc:end

// tlc:section bit_cast needs=host_device
namespace tl {
// The bits of `from` as a To of the same width (.tl's reinterpret): the copy nvcc, hipcc and g++
// all accept for every scalar type of the output, the toolkits' __half, __nv_bfloat16 and fp8
// types and tl_types.h's included (std::bit_cast is C++20; __builtin_memcpy needs no header).
template <typename To, typename From>
TL_HOST_DEVICE To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different widths");
    To to;
    __builtin_memcpy(static_cast<void*>(&to), &from, sizeof to);  // void*: To may have constructors
    return to;
}
} // namespace tl
// tlc:end

// tlc:section launch_checks
#include <cstdint>
#include <initializer_list>
namespace tl {
// True when every extent is >= 0 and a tensor with these extents (row-major, contiguous) has
// fewer than 2^31 elements, so that the kernel may index it with 32-bit offsets.
inline bool fits_int32_offsets(std::initializer_list<long long> extents) {
    long long elements = 1;
    for (long long e : extents) {
        if (e < 0) return false;
        if (e == 0) elements = 0;
    }
    if (elements == 0) return true;
    for (long long e : extents) {
        if (e > (1LL << 31) || elements * e >= (1LL << 31)) return false;
        elements *= e;
    }
    return true;
}
// The same for a strided tensor: the largest offset, sum((extent - 1) * stride), must fit.
inline bool fits_int32_offsets(std::initializer_list<long long> extents, std::initializer_list<long long> strides) {
    long long last = 0;
    const long long* s = strides.begin();
    for (long long e : extents) {
        if (e < 0) return false;
        if (e == 0) return true;
    }
    for (long long e : extents) {
        long long stride = *s++;
        if (stride < 0) stride = -stride;
        if (e > (1LL << 31) || stride >= (1LL << 31)) return false;
        last += (e - 1) * stride;
        if (last >= (1LL << 31)) return false;
    }
    return true;
}
// True when p is a multiple of `bytes` (vector and asynchronous copies need aligned tensors).
inline bool is_aligned(const void* p, int bytes) {
    return reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(bytes) == 0;
}
} // namespace tl
// tlc:end
