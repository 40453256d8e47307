// tl_cuda_tma.h -- the device side of the tensor memory accelerator (sm_90): TMA loads and
// stores of 2- to 5-D boxes between global and shared memory, completing on an mbarrier
// (tl_cuda_mbarrier.h); the host side, which makes the tensor maps, is tl_cuda_tma_host.h.
// Sections: see tl_common.h. Inline PTX for sm_90, traps elsewhere. PTX ISA reference:
// "cp.async.bulk.tensor".
#pragma once

#include "tl_cuda_mbarrier.h"

// tlc:section tma needs=tl_cuda_mbarrier.h:mbarrier
#include <cuda.h>
#include <cstdint>
namespace tl {
// Tensor-memory-accelerator copies of 2-D boxes (sm_90). `map` is the address of a CUtensorMap
// made on the host (tl::make_tensor_map_2d, section tma_host) and passed to the kernel as a
// `const __grid_constant__ CUtensorMap` parameter (or kept in constant/global memory). Box
// coordinates are in elements, innermost first: c0 is the column (the contiguous dimension),
// c1 the row; they may be negative or run past the tensor's end: elements outside it are
// zero-filled on loads and dropped on stores. In shared memory the box is stored densely, row
// after row (rows of boxCols * elementSize bytes), with the map's swizzle applied to the shared
// addresses: for a span of S = 32, 64 or 128 bytes, bits [4, 4 + log2(S / 16)) of the address
// (the 16-byte chunk) are XORed with the bits above bit 7 ((address >> 7) % (S / 16)); the
// pattern repeats every 8 * S bytes, so align swizzled boxes to 8 * S (1024 for 128B).
// Shared destinations and sources must be 128-byte aligned.

// Loads the box at (c0, c1) into smem_dst; when it has landed, its size in bytes (the whole
// box, zero-filled part included) completes on `bar` (announce it with
// mbarrier_arrive_expect_tx). One thread issues it.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
            smem_u32(smem_dst)),
        "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1;
    __trap();
#endif
}
// Boxes of 3- to 5-D tensor maps (tl::make_tensor_map<Rank>), coordinates innermost first as
// for tma_load_2d; the box lands densely with its innermost side as the row, so a box of 1 in
// every dimension but two is a 2-D tile.
__device__ __forceinline__ void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
                 "[%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2, int c3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
                 "%6}], [%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_5d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2, int c3, int c4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
                 "%6, %7}], [%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
    __trap();
#endif
}
// Stores the box at (c0, c1) from smem_src (laid out as a load would leave it). Asynchronous:
// make the threads' shared writes visible to TMA first (fence_proxy_async_shared() by every
// writing thread, then __syncthreads()), and commit + wait before reusing smem_src or
// finishing the kernel. One thread issues it.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* smem_src, int c0, int c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1;
    __trap();
#endif
}
// The same for 3- to 5-D tensor maps, coordinates innermost first (as tma_load_3d .. 5d).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2;
    __trap();
#endif
}
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2,
                                             int c3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2, (void)c3;
    __trap();
#endif
}
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2,
                                             int c3, int c4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
    __trap();
#endif
}
// Closes the group of this thread's TMA stores issued since the last commit.
__device__ __forceinline__ void tma_store_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
    __trap();
#endif
}
// Waits until at most N of this thread's committed store groups are still in flight (their
// writes to global memory done).
template <int N>
__device__ __forceinline__ void tma_store_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#else
    __trap();
#endif
}
// Waits until at most N of this thread's committed store groups still read their shared
// sources: the shared memory of the others may be written again (and the block may exit; their
// writes to global memory complete by the end of the kernel).
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#else
    __trap();
#endif
}
// Orders this thread's generic-proxy accesses to shared memory before later async-proxy (TMA,
// wgmma) accesses: after writing a tile a TMA store or a wgmma will read.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
    __trap();
#endif
}
} // namespace tl
// tlc:end
