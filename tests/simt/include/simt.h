// The SIMT simulator: runs a CUDA-style kernel on the CPU with one fiber (ucontext) per GPU
// thread, so that tlc's GPU lowering (thread mapping, warp shuffles, shared memory, barriers)
// is checked by running it on a machine without a GPU.
//
// Fibers run one at a time, each until it reaches a barrier, a warp shuffle or its end; the
// order in which they run between two synchronisation points is shuffled (fixed seed), so a
// missing barrier shows up as a wrong result rather than passing by luck; now and then one
// warp sits a round out, so that warps (and warpgroups) do not always keep in step. A barrier releases
// when every live thread of the block has reached it; a warp-wide operation (a shuffle, an mma)
// when every live lane of the warp has; a warpgroup-wide one (wgmma) when every live thread of
// the 4-warp group has. A named barrier (bar.sync / bar.arrive with an id from 1 to 15) releases
// its waiting threads when as many threads as its count have arrived, waiting or not; a block
// that ends with arrivals on one still pending fails. A thread that waits on a condition (an
// mbarrier phase) spins: it yields and runs again next round. A state where nothing can happen
// any more (a barrier some threads skip, a wait nobody will satisfy, warpgroups that wait on
// each other's named barriers) aborts.
//
// Thread-block clusters (launchCluster): the blocks of one cluster run at once, as one set of
// fibers scheduled together; block barriers, named barriers and register pools stay per
// block, barrier.cluster (clusterBarrier) releases when every live thread of the cluster has
// reached it. Each block of a cluster has its own shared memory (ctaShared: to_cpp.py gives
// the dynamic pool a slot per block), which clusterPeer maps into a peer's (mapa).
#pragma once

#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace simt {

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

inline int& warpSize() {
    static int size = 32;
    return size;
}

// A cp.async in flight: what it will write (read from global memory when issued, which is
// read-only while kernels run) and where; it lands when the thread waits for its group.
struct AsyncCopy {
    void* dst;
    unsigned char bytes[16];
    size_t size;
};

struct Fiber {
    ucontext_t context;
    std::vector<char> stack;
    dim3 thread;
    enum class State { Running, AtBarrier, AtNamedBarrier, AtCollective, AtClusterBarrier, Done } state = State::Running;
    int cta = 0;  // its block's rank in the cluster (0 without clusters)
    int namedBarrier = 0;  // the id it waits on (AtNamedBarrier)
    void* collectiveData = nullptr;
    void (*collectiveOp)(void** lanes, int count) = nullptr;
    std::vector<AsyncCopy> asyncOpen;                  // issued since the last commit
    std::vector<std::vector<AsyncCopy>> asyncGroups;   // committed, oldest first
    int collectiveGroup = 32;  // threads taking part: a warp, or a warpgroup of 128
    int registers = 0;         // this thread's share of the block's registers (setmaxnreg)
};

constexpr int kMaxClusterBlocks = 8;

// The blocks run at once: one, or the blocks of a cluster (ctas of them, each `ctaThreads` fibers
// in order of rank).
struct Block {
    std::vector<Fiber> fibers;
    Fiber* current = nullptr;
    ucontext_t scheduler;
    dim3 block, blockDim, gridDim;
    const std::function<void()>* body = nullptr;
    bool acted = false;  // this round, some thread did something a spinning thread may wait for
    long registersFree[kMaxClusterBlocks] = {};  // per block: registers given back by setmaxnreg.dec, not yet taken by .inc
    unsigned long long serial = 0;  // counts the blocks run, over all launches
    // Named barriers 1 .. 15: arrivals so far in the current phase, and its thread count.
    struct NamedBarrier {
        int arrived = 0, threads = 0;
    } named[kMaxClusterBlocks][16];
    int ctas = 1;
    size_t ctaThreads = 0;
    dim3 clusterDim;
    dim3 ctaBlock[kMaxClusterBlocks];  // each block's index in the grid
    size_t ctaDone[kMaxClusterBlocks] = {};  // threads of each block that have ended
    unsigned char* smemBase = nullptr;  // rank 0's slot of the dynamic shared pool (ctaShared)
    size_t smemStride = 0;
};

inline Block& state() {
    static Block b;
    return b;
}

inline const dim3& threadIndex() { return state().current->thread; }
inline const dim3& blockIndex() { return state().ctaBlock[state().current->cta]; }
inline const dim3& blockDimension() { return state().blockDim; }
inline const dim3& gridDimension() { return state().gridDim; }
// Which block run this is (different for every block of every launch).
inline unsigned long long blockSerial() { return state().serial; }

inline void yieldToScheduler() { swapcontext(&state().current->context, &state().scheduler); }

inline void barrier() {
    state().acted = true;
    state().current->state = Fiber::State::AtBarrier;
    yieldToScheduler();
}

// bar.sync (wait) or bar.arrive on named barrier `id` (1 .. 15) of `threads` threads: the
// arrival that completes the count releases every thread waiting on it, and the next phase
// starts. Every arrival of a phase must name the same count, a multiple of the warp size.
inline void namedBarrier(int id, int threads, bool wait) {
    Block& b = state();
    if (id < 1 || id > 15 || threads <= 0 || threads % warpSize() != 0) {
        std::fprintf(stderr, "simt: named barrier %d of %d threads: ids are 1 .. 15, counts whole warps\n", id,
                     threads);
        std::abort();
    }
    Block::NamedBarrier& nb = b.named[b.current->cta][id];
    if (nb.arrived == 0) nb.threads = threads;
    if (nb.threads != threads) {
        std::fprintf(stderr, "simt: named barrier %d: an arrival for %d threads while its phase counts %d\n", id,
                     threads, nb.threads);
        std::abort();
    }
    b.acted = true;
    if (++nb.arrived == nb.threads) {
        nb.arrived = 0;
        for (auto& f : b.fibers)
            if (f.state == Fiber::State::AtNamedBarrier && f.namedBarrier == id && f.cta == b.current->cta)
                f.state = Fiber::State::Running;
        return;
    }
    if (!wait) return;
    b.current->namedBarrier = id;
    b.current->state = Fiber::State::AtNamedBarrier;
    yieldToScheduler();
}

// A group-wide operation over `group` consecutive threads (aligned): every live thread passes
// its operands; when all have reached the same operation, op runs once over their operands, in
// thread order.
inline void groupCollective(void* laneData, void (*op)(void** lanes, int count), int group) {
    Fiber& f = *state().current;
    f.collectiveData = laneData;
    f.collectiveOp = op;
    f.collectiveGroup = group;
    f.state = Fiber::State::AtCollective;
    state().acted = true;
    yieldToScheduler();
}

// A warp-wide operation (a tensor-core instruction): every live lane passes its operands;
// when the whole warp has, op runs once over all lanes' operands, in lane order.
inline void warpCollective(void* laneData, void (*op)(void** lanes, int count)) {
    groupCollective(laneData, op, warpSize());
}

// A warpgroup-wide operation (wgmma): the 4 warps of threads 128 * k .. 128 * k + 127.
inline void warpgroupCollective(void* laneData, void (*op)(void** lanes, int count)) {
    groupCollective(laneData, op, 4 * warpSize());
}

// The index of the calling thread in its block (x fastest).
inline int linearThreadIndex() { return int(size_t(state().current - state().fibers.data()) % state().ctaThreads); }
// The calling thread among all threads running at once (its cluster's): per-thread state
// (a TMA store queue, a warpgroup's wgmma queue) keyed by it is never a peer block's.
inline int fiberIndex() { return int(state().current - state().fibers.data()); }

// Clusters: this block's rank, the blocks of the cluster, barrier.cluster.
inline unsigned clusterRank() { return unsigned(state().current->cta); }
inline unsigned clusterBlocks() { return unsigned(state().ctas); }
inline void clusterBarrier() {
    state().acted = true;
    state().current->state = Fiber::State::AtClusterBarrier;
    yieldToScheduler();
}
// The dynamic shared pool of the calling thread's block: slot `rank` of the `slots` array that
// to_cpp.py declares in place of `extern __shared__ ... pool[]` (slot stride `stride` bytes).
inline unsigned char* ctaShared(unsigned char* slots, size_t stride) {
    Block& b = state();
    b.smemBase = slots;
    b.smemStride = stride;
    return slots + size_t(b.current->cta) * stride;
}
// mapa: the address at the same offset in the shared memory of the block of rank `cta`.
inline void* clusterPeer(const void* p, unsigned cta) {
    Block& b = state();
    const unsigned char* own = b.smemBase ? b.smemBase + size_t(b.current->cta) * b.smemStride : nullptr;
    const unsigned char* q = static_cast<const unsigned char*>(p);
    if (!own || q < own || q >= own + b.smemStride || cta >= unsigned(b.ctas)) {
        std::fprintf(stderr, "simt: mapa of %p to block %u of a cluster of %d: not this block's shared pool\n", p,
                     cta, b.ctas);
        std::abort();
    }
    // A block whose threads have all ended has no shared memory any more (a cluster barrier
    // before the end keeps the peers' alive).
    if (b.ctaDone[cta] == b.ctaThreads) {
        std::fprintf(stderr, "simt: block %u of the cluster has exited; its shared memory is gone\n", cta);
        std::abort();
    }
    return const_cast<unsigned char*>(b.smemBase + size_t(cta) * b.smemStride + size_t(q - own));
}

// A thread waiting for a condition other threads make true (an mbarrier phase): it yields and
// runs again in the next round. noteProgress() says that the caller changed such a condition.
inline void spinYield() { yieldToScheduler(); }
inline void noteProgress() { state().acted = true; }

// The warp shuffles as collectives. Each lane names its source lane; CUDA's rules (and HIP's):
// xor reads lane ^ mask, down lane + delta and up lane - delta, each only inside the lane's
// group of `width` (its own value otherwise); idx reads lane `src % width` of its group. A
// source lane that has exited gives the reader its own value.
enum class ShuffleKind { Xor, Down, Up, Idx };
struct ShuffleLane {
    unsigned long long in = 0, out = 0;
    int lane = 0, arg = 0, width = 32;
    ShuffleKind kind = ShuffleKind::Xor;
};

inline int shuffleSource(const ShuffleLane& l) {
    int group = l.lane - l.lane % l.width;
    switch (l.kind) {
    case ShuffleKind::Xor: {
        int src = l.lane ^ l.arg;
        return src / l.width == l.lane / l.width ? src : l.lane;
    }
    case ShuffleKind::Down: return l.lane % l.width + l.arg < l.width ? l.lane + l.arg : l.lane;
    case ShuffleKind::Up: return l.lane % l.width >= l.arg ? l.lane - l.arg : l.lane;
    case ShuffleKind::Idx: return group + ((l.arg % l.width) + l.width) % l.width;
    }
    return l.lane;
}

inline void exchange(void** lanes, int count) {
    ShuffleLane* byLane[64] = {};
    for (int i = 0; i < count; ++i) {
        auto* l = static_cast<ShuffleLane*>(lanes[i]);
        byLane[l->lane] = l;
    }
    for (int i = 0; i < count; ++i) {
        auto* l = static_cast<ShuffleLane*>(lanes[i]);
        int src = shuffleSource(*l);
        if (src < 0 || src >= 64 || !byLane[src]) src = l->lane;
        l->out = byLane[src]->in;
    }
}

template <typename T> T shuffle(ShuffleKind kind, T value, int arg, int width) {
    static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffles move up to 8 bytes");
    Block& b = state();
    ShuffleLane l;
    std::memcpy(&l.in, &value, sizeof(T));
    l.lane = int((b.current - b.fibers.data()) % warpSize());
    l.arg = arg;
    l.width = width;
    l.kind = kind;
    warpCollective(&l, exchange);
    T out;
    std::memcpy(&out, &l.out, sizeof(T));
    return out;
}
template <typename T> T shuffleXor(T value, int laneMask, int width) { return shuffle(ShuffleKind::Xor, value, laneMask, width); }

// Warp votes (__ballot_sync, __any_sync, __all_sync and HIP's): every lane gets the mask of
// the warp's lanes whose predicate holds (lane i is bit i; lanes that exited count as false).
struct VoteLane {
    bool pred = false;
    int lane = 0;
    unsigned long long mask = 0;
};

inline unsigned long long ballot(bool pred) {
    VoteLane l;
    l.pred = pred;
    l.lane = int((state().current - state().fibers.data()) % warpSize());
    warpCollective(&l, [](void** lanes, int count) {
        unsigned long long mask = 0;
        for (int i = 0; i < count; ++i) {
            auto* v = static_cast<VoteLane*>(lanes[i]);
            if (v->pred) mask |= 1ull << v->lane;
        }
        for (int i = 0; i < count; ++i) static_cast<VoteLane*>(lanes[i])->mask = mask;
    });
    return l.mask;
}

// The lanes of the caller's warp that are still running, as a mask (for __all_sync).
inline unsigned long long liveLanes() { return ballot(true); }

// __syncwarp: every live lane of the warp must reach it.
inline void syncWarp() {
    static auto nothing = [](void**, int) {};
    warpCollective(nullptr, nothing);
}

inline void fiberEntry() {
    Block& b = state();
    (*b.body)();
    b.acted = true;
    b.current->state = Fiber::State::Done;
    ++b.ctaDone[b.current->cta];
    swapcontext(&b.current->context, &b.scheduler);
}

// The registers a thread of an n-thread block starts with in a kernel that uses setmaxnreg:
// ptxas needs the count at entry fixed, and with __launch_bounds__(n, 1) it is the most that
// one block per multiprocessor allows (64K registers, a multiple of 8 per thread), or less
// where no setmaxnreg asks for more (read with cuobjdump on an H200: 96 registers at 640
// threads, 168 at 384, 240 at 256 where the consumers ask for 240). The simulator takes the
// bound; an .inc below it then takes nothing from the pool.
inline int registersAtLaunch(size_t n) { return int(std::min<size_t>(255, 65536 / std::max<size_t>(n, 1)) / 8 * 8); }

// setmaxnreg.dec gives registers back to the block's pool; setmaxnreg.inc waits until the pool
// holds what it asks for (a request nobody can meet leaves it waiting: a deadlock here, a hang
// on the GPU).
inline void registersDecrease(int count) {
    Block& b = state();
    Fiber& f = *b.current;
    if (count > f.registers) {
        std::fprintf(stderr, "simt: setmaxnreg.dec to %d registers, above the thread's %d\n", count, f.registers);
        std::abort();
    }
    b.registersFree[f.cta] += f.registers - count;
    f.registers = count;
    noteProgress();
}
inline void registersIncrease(int count) {
    Block& b = state();
    Fiber& f = *b.current;
    if (count <= f.registers) return;
    while (b.registersFree[f.cta] < count - f.registers) spinYield();
    b.registersFree[f.cta] -= count - f.registers;
    f.registers = count;
}

// Runs one block (or one cluster's blocks) to completion. Returns false on a deadlock.
inline bool runBlock(Block& b, std::mt19937& order) {
    using S = Fiber::State;
    size_t n = b.fibers.size();
    for (auto& r : b.registersFree) r = 0;
    for (auto& d : b.ctaDone) d = 0;
    for (auto& cta : b.named)
        for (auto& nb : cta) nb = Block::NamedBarrier{};
    for (auto& f : b.fibers) {
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack.data();
        f.context.uc_stack.ss_size = f.stack.size();
        f.context.uc_link = nullptr;
        makecontext(&f.context, fiberEntry, 0);
        f.state = S::Running;
        f.registers = registersAtLaunch(b.ctaThreads);
        // Copies a thread never waited for never land.
        f.asyncOpen.clear();
        f.asyncGroups.clear();
    }
    std::vector<size_t> schedule(n);
    for (size_t i = 0; i < n; ++i) schedule[i] = i;
    const size_t warp = size_t(warpSize()), warps = (n + warp - 1) / warp;
    while (true) {
        std::shuffle(schedule.begin(), schedule.end(), order);
        b.acted = false;
        // Every fourth round or so one warp sits the round out, as the hardware may delay any
        // warp: code that relies on warps or warpgroups keeping in step (a stage released
        // while another warpgroup's wgmma still reads it) then fails.
        size_t lagging = warps > 1 && order() % 4 == 0 ? size_t(order() % warps) : n;
        for (size_t i : schedule) {
            if (b.fibers[i].state != S::Running || i / warp == lagging) continue;
            b.current = &b.fibers[i];
            swapcontext(&b.scheduler, &b.fibers[i].context);
        }
        bool allDone = true, progress = false;
        for (const auto& f : b.fibers) allDone &= f.state == S::Done;
        if (allDone) {
            // Arrivals nobody waited for: the barriers' order is wrong (an arrive too many).
            for (int c = 0; c < b.ctas; ++c)
                for (int id = 1; id < 16; ++id)
                    if (b.named[c][id].arrived != 0) {
                        std::fprintf(stderr, "simt: named barrier %d ends the block with %d of %d arrivals\n", id,
                                     b.named[c][id].arrived, b.named[c][id].threads);
                        return false;
                    }
            return true;
        }
        // Groups (warps, warpgroups) whose live threads all wait at the same collective run it.
        for (size_t first = 0; first < n; ++first) {
            const Fiber& f = b.fibers[first];
            if (f.state != S::AtCollective) continue;
            size_t group = size_t(f.collectiveGroup), w = first - first % group, end = std::min(n, w + group);
            bool complete = true;
            for (size_t i = w; i < end; ++i) {
                const Fiber& o = b.fibers[i];
                complete &= o.state == S::Done || (o.state == S::AtCollective && o.collectiveGroup == f.collectiveGroup &&
                                                   o.collectiveOp == f.collectiveOp);
            }
            if (!complete) continue;
            std::vector<void*> data;
            void (*op)(void**, int) = f.collectiveOp;
            for (size_t i = w; i < end; ++i)
                if (b.fibers[i].state == S::AtCollective) data.push_back(b.fibers[i].collectiveData);
            op(data.data(), int(data.size()));
            for (size_t i = w; i < end; ++i)
                if (b.fibers[i].state == S::AtCollective) b.fibers[i].state = S::Running;
            progress = true;
        }
        if (progress) continue;
        // A block barrier releases its block once every live thread of the block is at it.
        bool released = false;
        for (int c = 0; c < b.ctas; ++c) {
            auto first = b.fibers.begin() + long(size_t(c) * b.ctaThreads), last = first + long(b.ctaThreads);
            bool complete = true, any = false;
            for (auto f = first; f != last; ++f) {
                complete &= f->state == S::AtBarrier || f->state == S::Done;
                any |= f->state == S::AtBarrier;
            }
            if (!complete || !any) continue;
            for (auto f = first; f != last; ++f)
                if (f->state == S::AtBarrier) f->state = S::Running;
            released = true;
        }
        if (released) continue;
        // barrier.cluster: every live thread of the cluster.
        bool clusterComplete = true, atCluster = false;
        for (const auto& f : b.fibers) {
            clusterComplete &= f.state == S::AtClusterBarrier || f.state == S::Done;
            atCluster |= f.state == S::AtClusterBarrier;
        }
        if (clusterComplete && atCluster) {
            for (auto& f : b.fibers)
                if (f.state == S::AtClusterBarrier) f.state = S::Running;
            continue;
        }
        // Threads spinning on a condition: go on while somebody still does something.
        bool spinning = false;
        for (const auto& f : b.fibers) spinning |= f.state == S::Running;
        if (spinning && (b.acted || lagging != n)) continue;
        return false;
    }
}

// kernel<<<grid, block, smem, stream>>>(args...) becomes
// launch<Lanes>(kernel, grid, block, smem, stream, args...), Lanes the warp (wavefront) size.
// A kernel with __cluster_dims__(cluster) (to_cpp.py rewrites its launches to this): the grid,
// whole clusters, runs one cluster at a time, its blocks at once.
template <int Lanes, typename... Params, typename... Args>
void launchCluster(void (*kernel)(Params...), dim3 cluster, dim3 grid, dim3 block, size_t, void*, Args&&... args) {
    warpSize() = Lanes;
    Block& b = state();
    const size_t threads = size_t(block.x) * block.y * block.z;
    const int ctas = int(cluster.x * cluster.y * cluster.z);
    if (ctas < 1 || ctas > kMaxClusterBlocks || grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z ||
        (ctas > 1 && threads % size_t(Lanes) != 0)) {
        std::fprintf(stderr, "simt: a grid of (%u, %u, %u) blocks of %zu threads does not launch in clusters of "
                             "(%u, %u, %u)\n", grid.x, grid.y, grid.z, threads, cluster.x, cluster.y, cluster.z);
        std::abort();
    }
    b.ctas = ctas;
    b.ctaThreads = threads;
    b.clusterDim = cluster;
    b.smemBase = nullptr;
    b.fibers.resize(threads * size_t(ctas));
    for (auto& f : b.fibers) f.stack.resize(256 * 1024);
    size_t t = 0;
    for (int c = 0; c < ctas; ++c)
        for (unsigned z = 0; z < block.z; ++z)
            for (unsigned y = 0; y < block.y; ++y)
                for (unsigned x = 0; x < block.x; ++x) {
                    b.fibers[t].cta = c;
                    b.fibers[t++].thread = dim3(x, y, z);
                }
    b.blockDim = block;
    b.gridDim = grid;
    std::function<void()> body = [&] { kernel(args...); };
    b.body = &body;
    std::mt19937 order(12345);
    // Clusters run one after another, x fastest; SIMT_BLOCK_ORDER=reverse runs them the other
    // way round (blocks that count their arrival, as split-K's, then finish in another order).
    std::vector<dim3> origins;
    for (unsigned z = 0; z < grid.z; z += cluster.z)
        for (unsigned y = 0; y < grid.y; y += cluster.y)
            for (unsigned x = 0; x < grid.x; x += cluster.x) origins.push_back(dim3(x, y, z));
    const char* reverse = std::getenv("SIMT_BLOCK_ORDER");
    if (reverse && std::strcmp(reverse, "reverse") == 0) std::reverse(origins.begin(), origins.end());
    for (const dim3& at : origins) {
        const unsigned x = at.x, y = at.y, z = at.z;
        // Ranks run x fastest within the cluster (%cluster_ctarank).
        for (int c = 0; c < ctas; ++c)
            b.ctaBlock[c] = dim3(x + unsigned(c) % cluster.x, y + unsigned(c) / cluster.x % cluster.y,
                                 z + unsigned(c) / (cluster.x * cluster.y));
        b.block = at;
        ++b.serial;
        if (!runBlock(b, order)) {
            std::fprintf(stderr, "simt: deadlock in block (%u, %u, %u)%s: threads wait at different "
                                 "synchronisation points (or a named barrier kept arrivals)\n", x, y, z,
                         ctas > 1 ? " and the rest of its cluster" : "");
            std::abort();
        }
    }
}

template <int Lanes, typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, void* stream, Args&&... args) {
    launchCluster<Lanes>(kernel, dim3(1, 1, 1), grid, block, smem, stream, std::forward<Args>(args)...);
}

// cp.async as the hardware orders it, per thread: a copy joins the thread's open group, a
// commit closes the group, waiting for all but the newest N committed groups lands the older
// ones. A copy lands (its bytes are written) only then, so a read its thread did not wait for
// sees stale data. With SIMT_ASYNC_LANDING=commit a group lands when it is committed instead,
// the other end of what the hardware may do: a copy into a buffer that something still reads
// (a wgmma group in flight, run at the wait that retires it) overwrites it first.
inline void asyncCopy(void* dst, const void* src, size_t size) {
    AsyncCopy c{dst, {}, size};
    if (src) std::memcpy(c.bytes, src, size);
    state().current->asyncOpen.push_back(c);
}

inline void asyncCommit() {
    static const bool atCommit = [] {
        const char* landing = std::getenv("SIMT_ASYNC_LANDING");
        return landing && std::strcmp(landing, "commit") == 0;
    }();
    Fiber& f = *state().current;
    if (atCommit)
        for (const auto& c : f.asyncOpen) std::memcpy(c.dst, c.bytes, c.size);
    else
        f.asyncGroups.push_back(std::move(f.asyncOpen));
    f.asyncOpen.clear();
}

inline void asyncWait(size_t inFlight) {
    Fiber& f = *state().current;
    size_t land = f.asyncGroups.size() > inFlight ? f.asyncGroups.size() - inFlight : 0;
    for (size_t g = 0; g < land; ++g)
        for (const auto& c : f.asyncGroups[g]) std::memcpy(c.dst, c.bytes, c.size);
    f.asyncGroups.erase(f.asyncGroups.begin(), f.asyncGroups.begin() + long(land));
}

} // namespace simt
