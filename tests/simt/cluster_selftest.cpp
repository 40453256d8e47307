// The simulator's thread-block clusters (tests/simt/include/simt.h, launchCluster; the cluster
// section of cuda_runtime.h): the blocks of a cluster run at once, each with its own shared
// pool; a TMA load multicast by each block lands in every block of its mask and completes on
// each block's barrier; an arrival through mapa reaches the peer's barrier; barrier.cluster
// waits for the whole cluster. And wrong protocols fail: a multicast to this block alone leaves
// the peer waiting (deadlock), an arrival on a peer that has exited (no cluster barrier before
// the end) aborts (both checked in a child process, which must die of SIGABRT).
#include <cuda_runtime.h>

#include "tl_cuda_tma_host.h"  // host code, against the simulator's stand-in driver

#include "aborts.h"

#include <cstdio>
#include <vector>

namespace {

constexpr int kRows = 16, kCols = 32;  // the tile: 16 rows of 32 floats (128 bytes, no swizzle)

enum class Protocol { Correct, MulticastToSelf, NoClusterBarrierAtEnd };

// Two blocks of 128 threads. Thread 0 of each loads its half of the tile's rows (8 rows) and
// multicasts them to both; every thread waits for the whole tile, copies it out, and arrives on
// the other block's `done` barrier; each block waits for the peer's arrivals (so it keeps its
// shared memory until the peer is done with it), then the cluster barrier.
__global__ void cluster_tile(const CUtensorMap* map, float* out, Protocol protocol) {
    __shared__ __align__(1024) unsigned char slots[::simt::kMaxClusterBlocks][8192];
    unsigned char* const smem = ::simt::ctaShared(slots[0], sizeof(slots[0]));
    float* const tile = reinterpret_cast<float*>(smem);
    uint64_t* const full = reinterpret_cast<uint64_t*>(smem + kRows * kCols * 4);
    uint64_t* const done = full + 1;
    const unsigned rank = tl::cluster_ctarank(), peer = rank ^ 1u;
    const int tx = int(threadIdx.x);
    if (tx == 0) {
        tl::mbarrier_init(full, 1);
        tl::mbarrier_init(done, 128);
        tl::fence_barrier_init();
    }
    tl::cluster_sync();
    if (tx == 0) {
        tl::mbarrier_arrive_expect_tx(full, kRows * kCols * 4);
        const uint16_t mask = protocol == Protocol::MulticastToSelf ? uint16_t(1u << rank) : uint16_t(3);
        tl::tma_load_2d_multicast(tile + rank * (kRows / 2) * kCols, map, full, 0, int(rank) * (kRows / 2), mask);
    }
    tl::mbarrier_wait_parity(full, 0);
    for (int e = tx; e < kRows * kCols; e += 128) out[size_t(blockIdx.x) * kRows * kCols + size_t(e)] = tile[e];
    tl::mbarrier_arrive_cluster(done, peer);
    if (protocol == Protocol::NoClusterBarrierAtEnd) return;  // block 0 may exit before block 1 arrives
    tl::mbarrier_wait_parity(done, 0);
    tl::cluster_sync();
}

bool run(Protocol protocol, std::vector<float>& out, const std::vector<float>& in) {
    CUtensorMap map{};
    if (tl::make_tensor_map_2d(&map, in.data(), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, kRows, kCols, kCols * 4, kRows / 2,
                               kCols, CU_TENSOR_MAP_SWIZZLE_NONE) != cudaSuccess)
        return false;
    out.assign(4 * size_t(kRows) * kCols, -1.0f);  // two clusters of two
    ::simt::launchCluster<32>(cluster_tile, dim3(2), dim3(4), dim3(128), 0, nullptr, &map, out.data(), protocol);
    return true;
}

bool aborts(Protocol protocol, const std::vector<float>& in) {
    return abortsInChild([&] {
        std::vector<float> out;
        run(protocol, out, in);
    });
}

} // namespace

int main() {
    int failures = 0;
    auto expect = [&](bool ok, const char* what) {
        std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
        failures += !ok;
    };
    std::vector<float> in(size_t(kRows) * kCols), out;
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.5f + 1.0f;
    bool same = run(Protocol::Correct, out, in);
    for (int b = 0; b < 4 && same; ++b)
        for (size_t i = 0; i < in.size(); ++i) same &= out[size_t(b) * in.size() + i] == in[i];
    expect(same, "each block multicasts half of the tile: all four blocks of two clusters hold all of it");
    expect(aborts(Protocol::MulticastToSelf, in), "a multicast to this block alone: the peer waits forever, the launch aborts");
    expect(aborts(Protocol::NoClusterBarrierAtEnd, in),
           "no cluster barrier before the end: an arrival on an exited block aborts");
    std::printf("%s: %d failed\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
