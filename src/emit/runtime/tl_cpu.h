// tl_cpu.h -- helpers for tlc's C++/OpenMP output (one thread per block; blocks run in an
// OpenMP loop). The 16/8-bit float types live in tl_types.h. Sections: see tl_common.h.
#pragma once

#include "tl_common.h"
#include "tl_types.h"

// tlc:section status
namespace tl {
// What the CPU launchers return.
enum cpu_status : int {
    cpu_success = 0,
    cpu_error_invalid_value = 1,  // a launch check failed (sizes, alignment, 32-bit offsets)
};
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

// tlc:section math
#include <cmath>
namespace tl {
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
} // namespace tl
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
