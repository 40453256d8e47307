// tl_cpu.h -- helpers for tlc's C++/OpenMP output (one thread per block; blocks run in an
// OpenMP loop). The 16/8-bit float types live in tl_types.h; gemm's micro-kernels in
// tl_cpu_gemm*.h. Sections: see tl_common.h.
#pragma once

#include "tl_common.h"
#include "tl_types.h"

// tlc:section status
namespace tl {
// What the CPU launchers return.
enum cpu_status : int {
    cpu_success = 0,
    cpu_error_invalid_value = 1,  // a launch check failed (sizes, alignment, 32-bit offsets)
    cpu_error_unsupported_cpu = 2,  // the running CPU lacks the instructions the target uses
};
} // namespace tl
// tlc:end

// tlc:section xtiledata
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
namespace tl {
// Linux gives AMX's tile state only to a process that asks for it (arch_prctl
// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18); the first tile instruction of one that did not
// dies of SIGILL. Asked once; true when granted.
inline bool request_xtiledata() {
#if defined(__linux__) && defined(__x86_64__)
    static const bool granted = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18) == 0;
    return granted;
#else
    return false;
#endif
}
} // namespace tl
// tlc:end

// tlc:section vector_moves
#include <cstring>
namespace tl {
// A vector move of Bytes bytes (the GPU forms are one 128-bit access; here a memcpy that the
// compiler turns into one).
template <int Bytes>
inline void copy_vec(void* dst, const void* src) {
    std::memcpy(dst, src, Bytes);
}
template <int Bytes>
inline void fill_zero(void* dst) {
    std::memset(dst, 0, Bytes);
}
} // namespace tl
// tlc:end

// tlc:section streaming_stores
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__unix__)
#include <unistd.h>
#endif
namespace tl {
// A launch's result of at least this many bytes is written past the caches (non-temporal
// stores, as memcpy does for large copies): a store that misses the cache first reads its line
// (write-allocate), a third stream beside the kernel's reads and writes, and a result larger
// than the last-level cache would only evict the inputs. Smaller results stay in the caches
// for whatever reads them next. The last-level cache's size as the system reports it, within
// 4..32 MiB (virtual machines report the whole socket's, or nothing).
inline long long streaming_threshold() {
    static const long long bytes = [] {
        long long l3 = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
        l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        if (l3 <= 0) l3 = 16LL << 20;
        return l3 < (4LL << 20) ? (4LL << 20) : (l3 > (32LL << 20) ? (32LL << 20) : l3);
    }();
    return bytes;
}
#if defined(__SSE2__)
// One 64-byte line from s (any alignment) to d (64-byte aligned) with non-temporal stores.
inline void stream_line(char* d, const char* s) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
#elif defined(__AVX__)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32)));
#else
    for (int q = 0; q < 64; q += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + q), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + q)));
#endif
}
#endif
// Copies `bytes` from src to dst with non-temporal stores where the CPU has them: the head up
// to dst's next 64-byte boundary and the tail by plain copies, whole cache lines between. The
// fence makes the lines visible to the other threads before the block's end.
inline void copy_streaming(void* dst, const void* src, std::size_t bytes) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
#if defined(__SSE2__)
    std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
    if (head > bytes) head = bytes;
    std::memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 64; bytes -= 64, d += 64, s += 64) stream_line(d, s);
    std::memcpy(d, s, bytes);
    _mm_sfence();
#else
    std::memcpy(d, s, bytes);
#endif
}
// One row of a tile to a tensor: `count` elements, of a launch whose result is `result_bytes`.
template <typename T>
inline void store_row(T* dst, const T* src, int count, long long result_bytes) {
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    if (result_bytes >= streaming_threshold()) {
        copy_streaming(dst, src, bytes);
    } else {
        std::memcpy(dst, src, bytes);
    }
}
// The elements of a row of `count` (at least 64 bytes) before its first 64-byte boundary: where
// its whole lines for store_line begin. 0 when p is not aligned to its element type.
template <typename T>
inline int line_head(const T* p, int count) {
    const unsigned offset = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 63);
    if (offset % sizeof(T) != 0) return 0;
    const int head = static_cast<int>(((64 - offset) & 63) / sizeof(T));
    return head < count ? head : 0;
}
// Whether a launch whose result is `result_bytes` writes past the caches (store_line's `stream`).
inline bool streams(long long result_bytes) { return result_bytes >= streaming_threshold(); }
// One 64-byte cache line of values (64 / sizeof(T) elements, computed into `src`) to a tensor:
// a non-temporal store where `stream` says so and dst starts a line, a plain one otherwise.
// After a tile's lines, store_fence.
template <typename T>
inline void store_line(T* dst, const T* src, bool stream) {
#if defined(__SSE2__)
    if (stream && (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0) {
        stream_line(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src));
        return;
    }
#endif
    (void)stream;
    std::memcpy(dst, src, 64);
}
// Makes a tile's non-temporal stores visible to other threads (before the block ends).
inline void store_fence(bool stream) {
#if defined(__SSE2__)
    if (stream) _mm_sfence();
#else
    (void)stream;
#endif
}
} // namespace tl
// tlc:end

// tlc:section prefetch
namespace tl {
// Asks for the cache line holding p (a read, kept in every level): a hint that never faults.
inline void prefetch(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p, 0, 3);
#else
    (void)p;
#endif
}
} // namespace tl
// tlc:end

// tlc:section math
#include <cmath>
namespace tl {
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
// silu(x) = x sigmoid(x) (PyTorch's SiLU); gelu(x) = x Phi(x) with the exact erf form (PyTorch's
// GELU without approximate = "tanh").
inline float silu(float x) { return x * sigmoid(x); }
inline double silu(double x) { return x * sigmoid(x); }
inline float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752)); }
// relu(x) = max(x, 0); NaN stays NaN, as in PyTorch.
inline float relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }
inline double relu(double x) { return x > 0.0 || x != x ? x : 0.0; }
// exp and exp2 of floats without a library call, so that the C++ compiler vectorises the loops
// that use them (glibc's vector forms need -ffast-math). x = n ln2 + r with |r| <= ln2 / 2
// (n by the 1.5 * 2^23 shifter, r by a two-constant Cody-Waite), e^r by a degree-6 minimax
// polynomial (relative error 2.6e-9 before rounding), 2^n as two float scales built from n's
// bits in the shifted sum (so that the results below FLT_MIN come out subnormal, as std::exp
// gives them, and those above FLT_MAX infinite). Over every float at most 1.21 ulp from the
// exact value with FMA, 1.29 without (tests/runtime/check_exp.cpp); infinities, NaN, overflow
// and underflow as std::exp. 24 vector instructions per vector of results with AVX-512 (the
// degree-7 Taylor form with a float-to-int conversion before it took 37).
inline float mul_add(float a, float b, float c) {  // one rounding where the target has FMA
#if defined(__FMA__)
    return __builtin_fmaf(a, b, c);
#else
    return a * b + c;
#endif
}
template <typename T>  // float, or tl::f32x16 (found at instantiation with its mul_add)
inline T exp_reduced(T r) {  // e^r for |r| <= ln2 / 2
    T p = 1.406126772e-03f;
    p = mul_add(p, r, 8.379018866e-03f);
    p = mul_add(p, r, 4.166477546e-02f);
    p = mul_add(p, r, 1.666636467e-01f);
    p = mul_add(p, r, 5.000000596e-01f);
#if defined(__FMA__)
    return mul_add(mul_add(p, r, 1.0f), r, 1.0f);
#else
    return 1.0f + (r + r * r * p);  // without FMA the small terms first: one rounding next to 1
#endif
}
// p 2^n, where s = 1.5 * 2^23 + n (an integer n in -150..129 in s's low mantissa bits, as the
// shifter left it): 2^(b >> 1) and 2^(b - (b >> 1)) with b = n + 2 * 127, their exponent fields
// within 52..192 (normal floats, 2^-75..2^65), so that the product rounds once, to a subnormal
// or an infinity where the result is one.
inline float scale_pow2(float p, float s) {
    const int b = __builtin_bit_cast(int, s) - (0x4B400000 - 254);  // n + 254, in 104..383
    const int h = b >> 1;
    return p * __builtin_bit_cast(float, h << 23) * __builtin_bit_cast(float, (b - h) << 23);
}
inline float exp(float x) {
    const float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);  // NaN stays NaN
    const float s = mul_add(c, 1.44269504088896341f, 12582912.0f);  // 1.5 * 2^23 + round(c log2 e)
    const float n = s - 12582912.0f;
    const float r = mul_add(n, -1.428606765330187045e-06f, mul_add(n, -0.693145751953125f, c));
    return scale_pow2(exp_reduced(r), s);
}
inline float exp2(float x) {
    const float c = x < -150.0f ? -150.0f : (x > 129.0f ? 129.0f : x);
    const float s = c + 12582912.0f;
    return scale_pow2(exp_reduced((c - (s - 12582912.0f)) * 0.693147180559945309f), s);
}
// fmax and fmin as selects (NaN operands lose, as in std::fmax), which vectorise.
template <typename T> inline T fmax(T a, T b) { return (a >= b || b != b) ? a : b; }
template <typename T> inline T fmin(T a, T b) { return (a <= b || b != b) ? a : b; }
} // namespace tl
// tlc:end

// tlc:section f32x16 needs=tl_cpu.h:math
// Sixteen floats (a 64-byte line) as one AVX-512 register, for the 16-lane loops that call exp
// or exp2: the cpu output writes those twice, as straight-line code on these values under
// TL_CPU_F32X16 and as the loop otherwise. exp and exp2 are tl::exp's algorithm with vscalefps
// for the scaling by 2^n: 13 instructions, where the compiler's vector code of the scalar form
// takes 24; the same results, bit for bit.
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__)
#define TL_CPU_F32X16 1
namespace tl {
struct f32x16 {
    __m512 v;
    f32x16(__m512 x) : v(x) {}
    f32x16(float x) : v(_mm512_set1_ps(x)) {}
};
inline f32x16 load_f32x16(const float* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, f32x16 x) { _mm512_storeu_ps(p, x.v); }
inline f32x16 operator+(f32x16 a, f32x16 b) { return _mm512_add_ps(a.v, b.v); }
inline f32x16 operator-(f32x16 a, f32x16 b) { return _mm512_sub_ps(a.v, b.v); }
inline f32x16 operator*(f32x16 a, f32x16 b) { return _mm512_mul_ps(a.v, b.v); }
inline f32x16 operator/(f32x16 a, f32x16 b) { return _mm512_div_ps(a.v, b.v); }
inline f32x16 operator-(f32x16 a) { return _mm512_sub_ps(_mm512_setzero_ps(), a.v); }
inline f32x16 mul_add(f32x16 a, f32x16 b, f32x16 c) {  // rounded as the scalar mul_add
#if defined(__FMA__)
    return _mm512_fmadd_ps(a.v, b.v, c.v);
#else
    return a * b + c;
#endif
}
// Max, min and scalef in their zero-masking forms with every lane on: the same instructions,
// but g++ 12 warns (-Wuninitialized) on the plain forms' _mm512_undefined_ps.
constexpr __mmask16 all_lanes = 0xFFFF;
inline __m512 max_ps(__m512 a, __m512 b) { return _mm512_maskz_max_ps(all_lanes, a, b); }  // a > b ? a : b
inline __m512 min_ps(__m512 a, __m512 b) { return _mm512_maskz_min_ps(all_lanes, a, b); }  // a < b ? a : b
// As the scalar fmax/fmin: a where b is NaN, b where a is.
inline f32x16 fmax(f32x16 a, f32x16 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), max_ps(b.v, a.v), b.v);
}
inline f32x16 fmin(f32x16 a, f32x16 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), min_ps(b.v, a.v), b.v);
}
// tl::exp's steps (NaN passes the clamps: they return their second operand for it); vscalefps
// multiplies by 2^n with one rounding, as scale_pow2's two products do.
inline f32x16 exp(f32x16 x) {
    const f32x16 c = min_ps(_mm512_set1_ps(89.0f), max_ps(_mm512_set1_ps(-104.0f), x.v));
    const f32x16 n = mul_add(c, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    const f32x16 r = mul_add(n, -1.428606765330187045e-06f, mul_add(n, -0.693145751953125f, c));
    return _mm512_maskz_scalef_ps(all_lanes, exp_reduced(r).v, n.v);
}
inline f32x16 exp2(f32x16 x) {
    const f32x16 c = min_ps(_mm512_set1_ps(129.0f), max_ps(_mm512_set1_ps(-150.0f), x.v));
    const f32x16 n = (c + 12582912.0f) - 12582912.0f;
    return _mm512_maskz_scalef_ps(all_lanes, exp_reduced((c - n) * 0.693147180559945309f).v, n.v);
}
} // namespace tl
#endif
// tlc:end

// tlc:section dp4a
#include <cstdint>
namespace tl {
// CUDA's __dp4a: the four bytes of a times those of b (signed for int, unsigned for unsigned),
// summed into c.
inline int32_t dp4a(int32_t a, int32_t b, int32_t c) {
    for (int i = 0; i < 4; ++i) c += int32_t(int8_t(a >> (8 * i))) * int32_t(int8_t(b >> (8 * i)));
    return c;
}
inline uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
}
} // namespace tl
// tlc:end

// tlc:section atomic_minmax
#include <cstring>
namespace tl {
// atomic_max/atomic_min of one element: a compare-and-swap loop on the element's bits (GCC's
// __atomic builtins; relaxed, as on the GPUs), for integers and floats alike.
template <typename T, typename Better> inline void atomic_update(T* address, T value, Better better) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic min/max take 32- or 64-bit elements");
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits seen = __atomic_load_n(bits, __ATOMIC_RELAXED), wanted;
    std::memcpy(&wanted, &value, sizeof value);
    for (;;) {
        T current;
        std::memcpy(&current, &seen, sizeof current);
        if (!better(value, current)) return;
        if (__atomic_compare_exchange_n(bits, &seen, wanted, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}
template <typename T, typename V> inline void atomic_max(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a > b; });
}
template <typename T, typename V> inline void atomic_min(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a < b; });
}
} // namespace tl
// tlc:end

// tlc:section narrow_atomic_add
#include <cstdint>
#include <cstring>
#include <type_traits>
namespace tl {
// Atomic add for 8- and 16-bit element types (tl::half, tl::bfloat16, fp8, small integers),
// which `#pragma omp atomic` does not cover: a compare-and-swap loop on the element.
template <typename T, typename V>
inline void atomic_add_narrow(T* address, V value) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "for 8- and 16-bit types");
    using Bits = typename std::conditional<sizeof(T) == 1, std::uint8_t, std::uint16_t>::type;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
    for (;;) {
        T current;
        std::memcpy(&current, &expected, sizeof(T));
        T sum;
        if constexpr (std::is_integral<T>::value) sum = T(current + value);
        else sum = T(float(current) + float(value));
        Bits desired;
        std::memcpy(&desired, &sum, sizeof(T));
        if (__atomic_compare_exchange_n(bits, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}
} // namespace tl
// tlc:end

// tlc:section debug
#include <cstdio>
#include <cstdlib>
namespace tl {
// Reports a failed assert(...) of the .tl source and stops the program (debug builds only).
inline void assert_fail(const char* where, const char* condition) {
    std::fprintf(stderr, "%s: assertion failed: %s\n", where, condition);
    std::abort();
}
} // namespace tl
// tlc:end
