// tl_gpu.h -- device helpers that tlc's CUDA and HIP output share (the same code under nvcc and
// hipcc). Sections: see tl_common.h. The emitters look a section up among their own files
// (tl_cuda*.h, tl_hip*.h) and these. Where CUDA and HIP spell an intrinsic differently, a section
// here names the row of tl_gpu_spelling.h (TL_SHFL_XOR, TL_TRAP, ...), and tlc pastes it with the
// target's spelling in its place.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

#include "tl_gpu_spelling.h"

// tlc:section math
// The activations the language names (sigmoid, silu, gelu, relu), for CUDA and HIP alike.
namespace tl {
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
// silu(x) = x sigmoid(x) (PyTorch's SiLU); gelu(x) = x Phi(x) with the exact erf form (PyTorch's
// GELU without approximate = "tanh").
__device__ __forceinline__ float silu(float x) { return x * sigmoid(x); }
__device__ __forceinline__ double silu(double x) { return x * sigmoid(x); }
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ double gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752)); }
// relu(x) = max(x, 0); NaN stays NaN, as in PyTorch.
__device__ __forceinline__ float relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }
__device__ __forceinline__ double relu(double x) { return x > 0.0 || x != x ? x : 0.0; }
} // namespace tl
// tlc:end

// tlc:section warp
namespace tl {
// The expert level's warp reductions (docs/language.md): a butterfly over groups of Width
// lanes (a power of two dividing the warp), every lane of a group ending with the group's
// result. Every lane of the warp must take part.
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_sum(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) v += TL_SHFL_XOR(v, offset, Width);
    return v;
}
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_max(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) {
        T o = TL_SHFL_XOR(v, offset, Width);
        v = o > v ? o : v;
    }
    return v;
}
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_min(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) {
        T o = TL_SHFL_XOR(v, offset, Width);
        v = o < v ? o : v;
    }
    return v;
}
} // namespace tl
// tlc:end

// tlc:section split_k
namespace tl {
// Split-K (docs/lowering.md, "Split-K"): thread 0 counts its block in at the tile's arrival
// counter once every thread of the block has written its partial tile, fenced it and met the
// others at a barrier. The fence before makes those stores (ordered before it by the barrier)
// visible device-wide before the count; the fence after orders the last block's reads of the
// other partials after it. Returns the count before this block's: the tile's splits - 1 for the
// last to arrive.
__device__ __forceinline__ int split_k_arrive(int* counter) {
    __threadfence();
    const int before = atomicAdd(counter, 1);
    __threadfence();
    return before;
}
} // namespace tl
// tlc:end

// tlc:section persistent
namespace tl {
// Host: the grid of a persistent kernel (docs/lowering.md, "Persistent kernels"): the blocks
// the SMs hold at once (perSM each, as tlc computed it), no more than there are tiles. The SM
// count is asked once per device and kept (reading an attribute costs about a microsecond).
inline int persistent_ctas(int tiles, int perSM) {
    static int sms[64] = {};
    int device = 0;
    if (TL_GET_DEVICE(&device) != 0 || device < 0) device = 0;
    int& n = sms[device % 64];
    if (n <= 0) {
        int count = 0;
        if (TL_SM_COUNT(&count, device) != 0 || count <= 0) count = 1;
        n = count;
    }
    const long long most = (long long)n * (perSM > 0 ? perSM : 1);
    return tiles < most ? tiles : int(most);
}
} // namespace tl
// tlc:end

// tlc:section vector_moves
namespace tl {
// The unsigned type of a vector move of Bytes bytes (uint4 is one 128-bit access).
template <int Bytes> struct vector_word;
template <> struct vector_word<1> { using type = unsigned char; };
template <> struct vector_word<2> { using type = unsigned short; };
template <> struct vector_word<4> { using type = unsigned int; };
template <> struct vector_word<8> { using type = uint2; };
template <> struct vector_word<16> { using type = uint4; };

// Copies Bytes bytes with one access (16-byte accesses past 16 bytes); both addresses must be
// aligned to min(Bytes, 16).
template <int Bytes>
__device__ __forceinline__ void copy_vec(void* dst, const void* src) {
    if constexpr (Bytes <= 16) {
        using word = typename vector_word<Bytes>::type;
        *static_cast<word*>(dst) = *static_cast<const word*>(src);
    } else {
        static_assert(Bytes % 16 == 0, "vector moves past 16 bytes come in 16-byte pieces");
#pragma unroll
        for (int i = 0; i < Bytes / 16; ++i) static_cast<uint4*>(dst)[i] = static_cast<const uint4*>(src)[i];
    }
}
// The bits of one element, its low bytes first.
template <typename T> __device__ __forceinline__ unsigned long long lane_bits(T v) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long b;
        __builtin_memcpy(static_cast<void*>(&b), static_cast<const void*>(&v), 8);
        return b;
    } else {
        typename vector_word<int(sizeof(T))>::type b;
        __builtin_memcpy(static_cast<void*>(&b), static_cast<const void*>(&v), sizeof(T));
        return b;
    }
}
// Stores the values, converted to T, as one vector of sizeof(T) x their count bytes (2 to 16, a
// power of two; dst aligned to it): a parallel loop's neighbouring columns. The lanes are packed
// by shifts into 64-bit halves (an array of them read as one word, hipcc kept in scratch).
template <typename T, typename... V>
__device__ __forceinline__ void store_vec(T* dst, V... values) {
    constexpr int Bytes = int(sizeof(T) * sizeof...(V));
    static_assert(Bytes >= 2 && Bytes <= 16 && (Bytes & (Bytes - 1)) == 0, "one vector of 2 to 16 bytes");
    unsigned long long half[2] = {0ull, 0ull};  // the vector's bits, low bytes first
    int at = 0;                                 // the next lane's byte
    ((half[at / 8] |= lane_bits(T(values)) << (8 * (at % 8)), at += int(sizeof(T))), ...);
    if constexpr (Bytes == 16)
        *reinterpret_cast<uint4*>(dst) = make_uint4(unsigned(half[0]), unsigned(half[0] >> 32), unsigned(half[1]),
                                                    unsigned(half[1] >> 32));
    else if constexpr (Bytes == 8)
        *reinterpret_cast<uint2*>(dst) = make_uint2(unsigned(half[0]), unsigned(half[0] >> 32));
    else
        *reinterpret_cast<typename vector_word<Bytes>::type*>(dst) = typename vector_word<Bytes>::type(half[0]);
}
// Sets Bytes bytes to zero the same way; dst must be aligned to min(Bytes, 16).
template <int Bytes>
__device__ __forceinline__ void fill_zero(void* dst) {
    if constexpr (Bytes <= 16) {
        using word = typename vector_word<Bytes>::type;
        *static_cast<word*>(dst) = word{};
    } else {
        static_assert(Bytes % 16 == 0, "vector moves past 16 bytes come in 16-byte pieces");
#pragma unroll
        for (int i = 0; i < Bytes / 16; ++i) static_cast<uint4*>(dst)[i] = uint4{};
    }
}
} // namespace tl
// tlc:end

// tlc:section atomic_minmax
namespace tl {
// atomic_max/atomic_min of a float, double or i64: a compare-and-swap loop on its bits that
// stops once the stored value is already at least as good.
template <typename T, typename Better> __device__ __forceinline__ void atomic_update(T* address, T value, Better better) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic min/max take 32- or 64-bit elements");
    using Bits = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits seen = *reinterpret_cast<volatile Bits*>(bits);
    for (;;) {
        T current;
        memcpy(&current, &seen, sizeof current);
        if (!better(value, current)) return;
        Bits wanted;
        memcpy(&wanted, &value, sizeof value);
        Bits before = atomicCAS(bits, seen, wanted);
        if (before == seen) return;
        seen = before;
    }
}
template <typename T, typename V> __device__ __forceinline__ void atomic_max(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a > b; });
}
template <typename T, typename V> __device__ __forceinline__ void atomic_min(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a < b; });
}
} // namespace tl
// tlc:end

// tlc:section narrow_atomic_add
#include <type_traits>
namespace tl {
// atomicAdd for the 8- and 16-bit element types the hardware cannot add atomically (fp8, small
// integers; on HIP __half and hip_bfloat16 too): a compare-and-swap loop on the aligned 32-bit
// word around the element.
template <typename T, typename V>
__device__ __forceinline__ void atomic_add_narrow(T* address, V value) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "for 8- and 16-bit types");
    const unsigned long long where = reinterpret_cast<unsigned long long>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(where & ~3ull);
    const unsigned int shift = unsigned((where & 3ull) * 8ull);
    const unsigned int mask = ((1u << (8u * sizeof(T))) - 1u) << shift;
    unsigned int old = *word;
    unsigned int assumed;
    do {
        assumed = old;
        T current;
        const unsigned int currentBits = (assumed & mask) >> shift;
        // Little-endian: the low bytes. void*: T may have constructors (__half).
        __builtin_memcpy(static_cast<void*>(&current), &currentBits, sizeof(T));
        T sum;
        if constexpr (std::is_integral<T>::value) sum = T(current + value);
        else sum = T(float(current) + float(value));
        unsigned int sumBits = 0;
        __builtin_memcpy(&sumBits, &sum, sizeof(T));
        old = atomicCAS(word, assumed, (assumed & ~mask) | (sumBits << shift));
    } while (assumed != old);
}
} // namespace tl
// tlc:end

// tlc:section debug
#include <cstdio>
namespace tl {
// Reports a failed assert(...) of the .tl source and stops the kernel.
__device__ inline void assert_fail(const char* where, const char* condition) {
    printf("%s: assertion failed: %s (block %d %d %d, thread %d)\n", where, condition, int(blockIdx.x),
           int(blockIdx.y), int(blockIdx.z), int(threadIdx.x));
    TL_TRAP();
}
} // namespace tl
// tlc:end
