// The simulator's cp.async is honest about asynchrony (tests/simt/include/simt.h): a copy
// lands in shared memory only when its thread waits for its group, wait_group<N> leaves the
// newest N committed groups in flight, uncommitted copies are not waited for, and an invalid
// source zero-fills. Without this a pipeline that forgets a wait would pass the run layer.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace {

constexpr unsigned kSentinel = 0xdeadbeefu;
constexpr int kThreads = 64;
constexpr int kChecks = 7;

__global__ void kernel(const uint4* src, unsigned* out) {
    __shared__ __align__(16) uint4 s[3][kThreads];
    const int t = threadIdx.x;
    unsigned* o = out + t * kChecks;
    for (int g = 0; g < 3; ++g) s[g][t] = uint4{kSentinel, kSentinel, kSentinel, kSentinel};
    tl::cp_async_16(&s[0][t], &src[t], true);
    tl::cp_async_commit();  // group 0
    tl::cp_async_16(&s[1][t], &src[kThreads + t], true);
    tl::cp_async_commit();  // group 1
    tl::cp_async_16(&s[2][t], &src[2 * kThreads + t], false);  // open: zero-fill, not committed
    o[0] = s[0][t].x;                                           // nothing waited for yet
    tl::cp_async_wait_group<1>();                               // group 0 lands, group 1 in flight
    o[1] = s[0][t].x;
    o[2] = s[1][t].x;
    tl::cp_async_wait_group<0>();                               // group 1 lands; the open copy does not
    o[3] = s[1][t].y;
    o[4] = s[2][t].x;
    tl::cp_async_wait_all();                                    // commits and lands the open copy
    o[5] = s[2][t].w;
    // Another thread's copy that its thread waited for is visible after a barrier.
    __syncthreads();
    o[6] = s[0][(t + 1) % kThreads].z;
}

} // namespace

int main() {
    std::vector<uint4> src(3 * kThreads);
    for (unsigned i = 0; i < src.size(); ++i) src[i] = uint4{i + 1, i + 1001, i + 2001, i + 3001};
    std::vector<unsigned> out(kThreads * kChecks, 0);
    ::simt::launch<32>(kernel, dim3(1), dim3(kThreads), 0, nullptr, src.data(), out.data());
    int failures = 0;
    for (int t = 0; t < kThreads; ++t) {
        const unsigned want[kChecks] = {kSentinel, unsigned(t) + 1, kSentinel, unsigned(kThreads + t) + 1001,
                                        kSentinel, 0, unsigned((t + 1) % kThreads) + 2001};
        for (int c = 0; c < kChecks; ++c)
            if (out[t * kChecks + c] != want[c]) {
                if (++failures <= 10)
                    std::printf("FAIL thread %d check %d: got 0x%x, want 0x%x\n", t, c, out[t * kChecks + c], want[c]);
            }
    }
    std::printf("%s: %d of %d checks failed\n", failures ? "FAIL" : "ok", failures, kThreads * kChecks);
    return failures ? 1 : 0;
}
