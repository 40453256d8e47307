// The simulator's named barriers (bar.sync / bar.arrive with an id, tests/simt/include/simt.h)
// order warpgroups as the ping-pong schedule needs (passes/pipeline/PingPong.cpp), and a wrong
// order fails: warpgroups that take turns through them log their turns in strict rotation;
// without the barriers the simulator's scheduling does not keep that rotation (so a missing
// turn would show); a protocol without the first turn deadlocks and one that leaves an arrival
// over ends the block with it pending: both abort the simulated launch (run in a child process
// here, which must die of SIGABRT).
#include <cuda_runtime.h>

#include "aborts.h"

#include <cstdio>
#include <vector>

namespace {

constexpr int kTurns = 12;

enum class Protocol { Ordered, Unordered, NoFirstTurn, ArrivalLeftOver };

// Warpgroup w takes kTurns turns; in each its first thread logs w. The protocol is the ping-pong
// schedule's: w waits on barrier 1 + w and passes to 1 + (w + 1) % W; the last warpgroup gives
// warpgroup 0 its first turn, warpgroup 0 takes the last one's final pass after the loop.
__global__ void turns(int* log, int* count, Protocol protocol) {
    const int w = int(threadIdx.x) / 128, groups = int(blockDim.x) / 128;
    const bool ordered = protocol != Protocol::Unordered;
    if (ordered && protocol != Protocol::NoFirstTurn && w == groups - 1) tl::named_barrier_arrive(1, 256);
    for (int i = 0; i < kTurns; ++i) {
        if (ordered) tl::named_barrier_sync(1 + w, 256);
        if (threadIdx.x % 128 == 0) log[(*count)++] = w;
        if (ordered) tl::named_barrier_arrive(1 + (w + 1) % groups, 256);
        __syncwarp();
    }
    if (ordered && protocol != Protocol::ArrivalLeftOver && w == 0) tl::named_barrier_sync(1, 256);
}

// The turns in rotation 0, 1, .., W - 1, 0, ...?
bool rotates(const std::vector<int>& log, int groups) {
    for (size_t i = 0; i < log.size(); ++i)
        if (log[i] != int(i % size_t(groups))) return false;
    return true;
}

std::vector<int> run(int groups, Protocol protocol) {
    std::vector<int> log(2 * size_t(groups) * kTurns, -1);  // two blocks, one after the other
    int count = 0;
    ::simt::launch<32>(turns, dim3(2), dim3(128 * groups), 0, nullptr, log.data(), &count, protocol);
    log.resize(size_t(count));
    return log;
}

// Runs the launch in a child process: whether it died of SIGABRT (the simulator's verdict).
bool aborts(int groups, Protocol protocol) { return abortsInChild([&] { run(groups, protocol); }); }

} // namespace

int main() {
    int failures = 0;
    auto expect = [&](bool ok, const char* what) {
        std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
        failures += !ok;
    };
    for (int groups : {2, 3}) {
        std::vector<int> log = run(groups, Protocol::Ordered);
        const auto half = log.begin() + groups * kTurns;
        expect(log.size() == size_t(2 * groups * kTurns) && rotates(std::vector<int>(log.begin(), half), groups) &&
                   rotates(std::vector<int>(half, log.end()), groups),
               groups == 2 ? "two warpgroups take turns in rotation" : "three warpgroups take turns in rotation");
    }
    std::vector<int> free = run(2, Protocol::Unordered);
    expect(free.size() == size_t(4 * kTurns) && !rotates(std::vector<int>(free.begin(), free.begin() + 2 * kTurns), 2),
           "without the barriers the turns are not in rotation (a missing barrier would show)");
    expect(aborts(2, Protocol::NoFirstTurn), "no first turn: the warpgroups deadlock, the launch aborts");
    expect(aborts(2, Protocol::ArrivalLeftOver), "a pass nobody takes: the block ends with it pending and aborts");
    std::printf("%s: %d failed\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
