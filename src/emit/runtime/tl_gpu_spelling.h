// tl_gpu_spelling.h -- what CUDA and HIP spell differently: one row a call,
//     #define TL_NAME(parameters) TL_SPELL(CUDA's spelling, HIP's spelling)
// tlc reads this table (src/emit/Runtime.cpp, spell()) for two things: its GPU emitter writes the
// calls it emits (shuffles, votes, ...) in the target's spelling, and a runtime section that
// calls a row (tl_gpu.h: warp, debug) is pasted with the call replaced by the target's spelling.
// So emitted code names the intrinsics themselves and carries nothing of this file. Compiled on
// its own, a header that includes this one gets the rows as macros, for the compiler at hand.
//
// A row's parameters stand for whole arguments; a spelling may not contain a comma outside
// parentheses (the preprocessor would split it). The columns are named by TL_SPELL's parameters.
#pragma once

#if defined(__HIPCC__)
#define TL_SPELL(cuda, hip) hip
#else
#define TL_SPELL(cuda, hip) cuda
#endif

// Warp shuffles (value, lane argument, width): every lane of the warp takes part. HIP's forms take
// no mask (a wavefront runs in lockstep).
#define TL_SHFL_XOR(value, lane, width) \
    TL_SPELL(__shfl_xor_sync(0xffffffffu, value, lane, width), __shfl_xor(value, lane, width))
#define TL_SHFL_DOWN(value, lane, width) \
    TL_SPELL(__shfl_down_sync(0xffffffffu, value, lane, width), __shfl_down(value, lane, width))
#define TL_SHFL_UP(value, lane, width) \
    TL_SPELL(__shfl_up_sync(0xffffffffu, value, lane, width), __shfl_up(value, lane, width))
#define TL_SHFL_IDX(value, lane, width) \
    TL_SPELL(__shfl_sync(0xffffffffu, value, lane, width), __shfl(value, lane, width))

// Votes over the warp: the mask of lanes whose predicate holds, any, all.
#define TL_BALLOT(predicate) TL_SPELL(__ballot_sync(0xffffffffu, predicate), __ballot(predicate))
#define TL_ANY(predicate) TL_SPELL(__any_sync(0xffffffffu, predicate), __any(predicate))
#define TL_ALL(predicate) TL_SPELL(__all_sync(0xffffffffu, predicate), __all(predicate))

// The warp's lanes meet. On HIP only a compiler barrier: a wavefront runs in lockstep, the barrier
// keeps memory accesses from moving across it.
#define TL_SYNC_WARP() TL_SPELL(__syncwarp(), __builtin_amdgcn_wave_barrier())

// a . b + c over four 8-bit lanes of 32-bit words, signed (i32) or unsigned (u32). HIP:
// v_dot4_i32_i8 / v_dot4_u32_u8 (CDNA2 and CDNA3); false: no clamping.
#define TL_DP4A_I32(a, b, c) TL_SPELL(__dp4a(a, b, c), __builtin_amdgcn_sdot4(a, b, c, false))
#define TL_DP4A_U32(a, b, c) TL_SPELL(__dp4a(a, b, c), __builtin_amdgcn_udot4(a, b, c, false))

// Stops the kernel (a failed assert).
#define TL_TRAP() TL_SPELL(__trap(), __builtin_trap())

// Host: lets `kernel` take `bytes` of dynamic shared memory (past the 48 KB it may without asking).
#define TL_SET_MAX_DYNAMIC_SHARED(kernel, bytes)                                                    \
    TL_SPELL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),     \
             hipFuncSetAttribute(reinterpret_cast<const void*>(&kernel),                           \
                                 hipFuncAttributeMaxDynamicSharedMemorySize, bytes))

// Host: the current device, and its number of SMs (CUs), for a persistent kernel's grid.
#define TL_GET_DEVICE(out) TL_SPELL(cudaGetDevice(out), hipGetDevice(out))
#define TL_SM_COUNT(out, device)                                                                    \
    TL_SPELL(cudaDeviceGetAttribute(out, cudaDevAttrMultiProcessorCount, device),                  \
             hipDeviceGetAttribute(out, hipDeviceAttributeMultiprocessorCount, device))

// Host: zero `bytes` at `ptr` on the stream (split-K's arrival counters, before the grid).
#define TL_ZERO_ASYNC(ptr, bytes, stream) \
    TL_SPELL(cudaMemsetAsync(ptr, 0, bytes, stream), hipMemsetAsync(ptr, 0, bytes, stream))
