// tl_cuda_mbarrier.h -- shared-memory mbarriers (arrive and wait: sm_80; transaction counts, as
// TMA completes them: sm_90) for tlc's CUDA output. Sections: see tl_common.h. Like the other
// Hopper helpers (tl_cuda_tma.h, tl_cuda_wgmma.h), each is inline PTX for the architectures that
// have the instruction and traps elsewhere, so the header compiles for every target (and in the
// host pass). PTX ISA reference: "mbarrier".
#pragma once

#include "tl_cuda.h"

// tlc:section mbarrier needs=tl_cuda.h:smem_u32
#include <cstdint>
namespace tl {
// A shared-memory mbarrier is one 8-byte-aligned uint64_t in shared memory. A phase completes
// when `count` arrivals have happened and the transaction count (bytes announced with
// arrive_expect_tx, taken off by TMA loads as they land) is back to zero; the barrier then
// starts the next phase. Phases alternate parity 0, 1, 0, ... starting at 0.
// arrive and wait need sm_80; expect_tx, try_wait and fence_barrier_init sm_90.

// Initialises the barrier for `count` arrivals per phase (1 <= count < 2^20). One thread does
// this, then fence_barrier_init() and a __syncthreads() before anyone uses the barrier.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
#else
    (void)bar, (void)count;
    __trap();
#endif
}
// Makes barrier initialisation visible to the async proxy (TMA) and the cluster (sm_90).
__device__ __forceinline__ void fence_barrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
    __trap();
#endif
}
// One arrival of this thread on the current phase.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared.b64 state, [%0];\n}" ::"r"(smem_u32(bar)) : "memory");
#else
    (void)bar;
    __trap();
#endif
}
// Announces `bytes` more bytes of transactions (TMA loads that will complete on this barrier)
// for the current phase, then arrives (sm_90). The usual pattern: one thread calls this with the
// total size of the boxes it then loads, with a barrier initialised for one arrival.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::"r"(
                     smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
#else
    (void)bar, (void)bytes;
    __trap();
#endif
}
// True when the phase of parity `parity` (0 or 1) has completed, i.e. the barrier's current
// phase has the other parity. try_wait (sm_90) may suspend the thread for a while before it
// returns false; test_wait (sm_80) returns at once.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#else
    (void)bar, (void)parity;
    __trap();
    return false;
#endif
}
// Waits until the phase of parity `parity` has completed (a loop over try_wait).
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, unsigned parity) {
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}
} // namespace tl
// tlc:end

// tlc:section named_barrier
namespace tl {
// Named barriers (PTX ISA, "bar, barrier"): hardware barriers 1 .. 15 of the block (0 is
// __syncthreads), each completing when `threads` threads (a multiple of the warp size) have
// arrived. sync arrives and waits for the completion; arrive only counts this thread and goes
// on. Whole warps execute them. tlc uses them to order warpgroups among themselves (the
// ping-pong schedule of pipelined loops: one warpgroup issues its gemms while another runs the
// statements between them), so `id` may differ between warpgroups.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH__)
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#else
    (void)id, (void)threads;
    __trap();
#endif
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH__)
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
#else
    (void)id, (void)threads;
    __trap();
#endif
}
} // namespace tl
// tlc:end
