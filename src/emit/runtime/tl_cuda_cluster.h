// tl_cuda_cluster.h -- thread-block clusters (sm_90) for tlc's CUDA output: the block's rank in
// its cluster, the cluster barrier, an mbarrier arrival on another block's barrier (distributed
// shared memory), and TMA loads multicast into every block of a mask. Sections: see
// tl_common.h. Inline PTX for sm_90 (the multicast loads: sm_90a), traps elsewhere. PTX ISA
// reference: "Cluster of Cooperative Thread Arrays", "mapa", "barrier.cluster",
// "mbarrier.arrive", "cp.async.bulk.tensor" (.multicast::cluster).
#pragma once

#include "tl_cuda_tma.h"

// tlc:section cluster needs=tl_cuda_tma.h:tma
#include <cstdint>
namespace tl {
// This block's rank in its cluster (%cluster_ctarank: x fastest within the cluster's shape).
__device__ __forceinline__ unsigned cluster_ctarank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
#else
    __trap();
    return 0;
#endif
}
// Every thread of the cluster that has not exited arrives (release) and waits (acquire): the
// blocks' shared memory and mbarriers are initialised before a peer uses them, and no block
// exits while a peer may still arrive on its barriers or write into its shared memory.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
#else
    __trap();
#endif
}
// One arrival (release, cluster scope) on the barrier at the same shared-memory offset as `bar`
// in the block of rank `cta` of this cluster (mapa gives its shared::cluster address; cta may be
// this block's own rank).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, unsigned cta) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_u32(bar)),
                 "r"(cta)
                 : "memory");
#else
    (void)bar, (void)cta;
    __trap();
#endif
}
// tma_load_2d .. 5d multicast: the box lands at smem_dst's offset in the shared memory of every
// block of the cluster whose rank is a bit of `mask`, and its bytes complete on the barrier at
// bar's offset in each of them (each block announces the bytes it receives). sm_90a only (ptxas
// calls the form slow on the family's later parts): compile with -arch=sm_90a, as wgmma needs.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                      int c1, uint16_t mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)mask;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_3d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                      int c1, int c2, uint16_t mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)mask;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_4d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                      int c1, int c2, int c3, uint16_t mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%3, %4, %5, %6}], [%2], %7;" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(mask)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3, (void)mask;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_5d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                      int c1, int c2, int c3, int c4, uint16_t mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%3, %4, %5, %6, %7}], [%2], %8;" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "h"(mask)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4, (void)mask;
    __trap();
#endif
}
} // namespace tl
// tlc:end
