// Device functions for tests/run/kernels/thread_extern.tl, which imports this header and calls
// them with call_extern: one header for every target (nvcc, hipcc, the cpu's C++ compiler and
// the SIMT simulator), as the author of such a header writes it.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define THREAD_HELPERS_FN __host__ __device__ inline
#else
#define THREAD_HELPERS_FN inline
#endif

// Nibble `index` (0: low) of `byte`, times `scale`: what the fp16 x int4 decoders compute.
THREAD_HELPERS_FN float decode_nibble(int byte, int index, float scale) {
    return float((byte >> (4 * index)) & 15) * scale;
}

THREAD_HELPERS_FN int mix_bits(int a, int b) { return (a * 31) ^ b; }
