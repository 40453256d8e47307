// A stand-in for <cuda_runtime.h> used by the SIMT simulator (tests/simt/): just enough of
// the CUDA runtime and device vocabulary for tlc's emitted .cu files to compile as C++ and run
// on the CPU, one fiber per GPU thread. Not a CUDA implementation: a test tool.
#pragma once

#include "simt.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __syncthreads() ::simt::barrier()

#define threadIdx (::simt::threadIndex())
#define blockIdx (::simt::blockIndex())
#define blockDim (::simt::blockDimension())
#define gridDim (::simt::gridDimension())

using dim3 = ::simt::dim3;
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
using cudaError = cudaError_t;
using cudaStream_t = struct CUstream_st*;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
template <typename F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }

template <typename T> T __shfl_xor_sync(unsigned, T value, int laneMask, int width = 32) {
    return ::simt::shuffleXor(value, laneMask, width);
}

// One OS thread runs every fiber: adds are atomic as they stand.
template <typename T, typename V> T atomicAdd(T* address, V value) {
    T old = *address;
    *address = T(float(old) + float(value));
    return old;
}
inline int atomicAdd(int* address, int value) { int old = *address; *address += value; return old; }
inline float atomicAdd(float* address, float value) { float old = *address; *address += value; return old; }
inline double atomicAdd(double* address, double value) { double old = *address; *address += value; return old; }
inline unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int value) {
    unsigned int old = *address;
    if (old == compare) *address = value;
    return old;
}

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float exp2f(float x) { return std::exp2(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
