#include "recommend/CostModel.h"

#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tlc {

namespace {

std::optional<int64_t> constantOf(const ir::Expr& e) {
    ir::Expr s = ir::simplify(e);
    if (const auto* imm = s.as<ir::IntImm>()) return imm->value;
    return std::nullopt;
}

// Collects TileWork over a kernel's body, the loops' trip counts multiplying what is inside them.
struct TileWorkVisitor : ir::IRVisitor {
    TileWork& w;
    int64_t sectorBytes;  // the target's memory_sector_bytes (0: unknown)
    TileWorkVisitor(TileWork& work, int64_t sector) : w(work), sectorBytes(sector) {}

    std::map<const ir::BufferNode*, int> sharedStages;     // buffers written in a pipelined loop
    std::map<const ir::BufferNode*, int64_t> fragmentElements;
    std::set<const ir::BufferNode*> gemmOperands;
    double multiplier = 1;   // product of the trip counts of the enclosing loops
    int pipelineStages = 0;  // of the innermost enclosing pipelined loop; 0 outside

    static int64_t elementsOf(const ir::Buffer& b) {
        std::vector<int64_t> shape;
        if (!ir::constantShape(b, shape)) return 0;
        int64_t n = 1;
        for (int64_t e : shape) n *= e;
        return n;
    }

    void visitFor(const ir::For* f) override {
        double saved = multiplier;
        int savedStages = pipelineStages;
        double trips = 1;
        if (auto ext = constantOf(f->extent)) {
            int64_t step = 1;
            if (f->step) step = constantOf(f->step).value_or(1);
            trips = double(*ext) / double(std::max<int64_t>(step, 1));
        }
        multiplier *= std::max(trips, 1.0);
        if (f->forKind == ir::ForKind::Pipelined) {
            pipelineStages = std::max(f->pipeline.stages, 1);
            w.maxStages = std::max(w.maxStages, pipelineStages);
        }
        ir::IRVisitor::visitFor(f);
        multiplier = saved;
        pipelineStages = savedStages;
    }
    void visitAllocate(const ir::Allocate* a) override {
        int64_t bytes = elementsOf(a->buffer) * dtypeBytes(a->buffer->dtype);
        if (a->buffer->scope == MemScope::Fragment) {
            w.fragmentBytes += bytes;
            fragmentElements[a->buffer.get()] = elementsOf(a->buffer);
        }
        ir::IRVisitor::visitAllocate(a);
    }
    // How many contiguous runs of memory a global region is: the product of its extents before
    // the dimensions it covers whole (and the one it enters); 1 for whole rows of a matrix.
    static int64_t runsOf(const ir::Region& r) {
        std::vector<int64_t> shape;
        if (!ir::constantShape(r.buffer, shape) || shape.size() != r.rank() || r.rank() == 0) return 1;
        size_t j = r.rank() - 1;
        while (j > 0 && r.extents[j] == shape[j]) --j;
        int64_t runs = 1;
        for (size_t i = 0; i < j; ++i) runs *= std::max<int64_t>(r.extents[i], 1);
        return runs;
    }

    // A region every block reads at the same place (a norm's weights, `copy(W[0], w)`): its
    // starts are constants. Only the first block on an SM or core fetches it from memory.
    static bool blockInvariant(const ir::Region& r) {
        return std::all_of(r.starts.begin(), r.starts.end(), [](const ir::Expr& s) { return constantOf(s).has_value(); });
    }

    // The bytes a global region moves: each contiguous run rounded up to whole sectors.
    double movedBytes(const ir::Region& r) const {
        double bytes = double(r.elements()) * double(dtypeBytes(r.buffer->dtype));
        if (sectorBytes <= 0) return bytes;
        double runs = double(runsOf(r)), run = bytes / runs;
        return runs * std::ceil(run / double(sectorBytes)) * double(sectorBytes);
    }

    void visitTileOpStmt(const ir::TileOpStmt* s) override {
        const ir::TileOp& op = *s->op;
        auto reads = op.reads();
        auto writes = op.writes();
        w.tileLoopTrips = std::max(w.tileLoopTrips, multiplier);
        for (const auto* list : {&reads, &writes})
            for (const ir::Region* r : *list)
                if (r->buffer->scope == MemScope::Global) {
                    w.globalBytes += movedBytes(*r) * multiplier;
                    if (list == &reads && blockInvariant(*r)) w.invariantBytes += movedBytes(*r) * multiplier;
                    w.globalStreams += runsOf(*r);
                }
        if (pipelineStages > 0)
            for (const ir::Region* r : writes)
                if (r->buffer->scope == MemScope::Shared) sharedStages[r->buffer.get()] = pipelineStages;
        if (multiplier == 1)
            for (const ir::Region* r : writes)
                if (r->buffer->scope == MemScope::Global)
                    w.epilogueBytes += double(r->elements()) * double(dtypeBytes(r->buffer->dtype));
        if (op.name() == "gemm" && pipelineStages > 1) w.pipelinedGemm = true;
        if (op.name() == "gemm")
            for (const auto* list : {&reads, &writes})
                for (const ir::Region* r : *list) gemmOperands.insert(r->buffer.get());
        if (op.name() == "gemm" && reads.size() >= 2 && !writes.empty()) {
            // A[m, k], B[k, n], C[m, n] in any orientation: m*n*k = sqrt(|A| |B| |C|).
            double mnk = std::sqrt(double(reads[0]->elements()) * double(reads[1]->elements()) *
                                   double(writes[0]->elements()));
            w.flops += 2.0 * mnk * multiplier;
            if (!w.gemmType) {
                w.gemmType = reads[0]->buffer->dtype;
                std::vector<int64_t> c = writes[0]->squeezedExtents();
                if (c.size() == 2 && c[0] > 0) {
                    w.gemmM = c[0];
                    w.gemmN = c[1];
                    w.gemmK = reads[0]->elements() / c[0];
                }
            }
        }
    }
    void visitLoad(const ir::Load* l) override {
        if (l->buffer->scope == MemScope::Global) w.globalBytes += double(dtypeBytes(l->buffer->dtype)) * multiplier;
        ir::IRVisitor::visitLoad(l);
    }
    void visitStore(const ir::Store* s) override {
        if (s->buffer->scope == MemScope::Global) w.globalBytes += double(dtypeBytes(s->buffer->dtype)) * multiplier;
        ir::IRVisitor::visitStore(s);
    }
};

// The cost of one barrier round of a block (about 100 cycles at 1 GHz), microseconds. A cpu
// block has no barrier: a round is the loop's own cost around its tile ops, about 15 ns (bench/
// data/cpu-avx512-dev.json: reduce_sum's one-row tiles over four-row ones).
constexpr double kBarrierUs = 0.1;
constexpr double kCpuRoundUs = 0.015;

// The cpu's memory-bound kernels (no gemm: its micro-kernel packs its tiles and has its own
// cache term, cpuGemmEfficiency), fitted to the sweeps of bench/data/cpu-avx512-dev.json:
// - streams: a block moving S contiguous runs at once (its tiles' rows, when they are not
//   whole rows) keeps the prefetchers from following them: an elementwise add of 128 x 64 tiles
//   (3 x 128 runs) ran 2.8x slower than 4 x 8 tiles, of 32 rows 1.8x, of 16 rows 1.4x:
//   1 + S / 128, at most 3;
// - cache: a block's fragments and shared buffers are passed over by each tile op; beyond a
//   quarter of the cache the profile names (`shared_mem_per_block`, a core's L2) they fall out
//   between passes: LayerNorm, softmax and RMSNorm lost 10-25% a doubling past it:
//   1 + 0.2 log2(bytes / (L2 / 4)).
double cpuMemoryFactor(const TileWork& a, int64_t shared, const Target& t) {
    if (a.gemmM > 0) return 1.0;
    double streams = 1.0 + std::min(double(a.globalStreams), 256.0) / 128.0;
    double onChip = double(shared + a.fragmentBytes), quarter = double(t.sharedMemPerBlock) / 4.0;
    double cache = onChip > quarter && quarter > 0 ? 1.0 + 0.2 * std::log2(onChip / quarter) : 1.0;
    return streams * cache;
}

// The cpu's gemm: the fraction of the micro-kernel's peak a block's gemm tile keeps (docs/
// recommend.md, "The cpu"). Register blocks cover the tile (AVX-512: 6 x 64 where the tile has
// 64 columns, 12 x 32 or 12 x 16 where it is narrower, so columns in steps of 16; 6 x 16
// otherwise), so a tile that is not a multiple computes padding; every call packs B's k x n tile
// (about 4/m of the work) and loads and stores C's accumulators (about 2/k); a block whose
// tiles do not fit the cache the profile names (`shared_mem_per_block`: a core's L2) streams
// them from further out, modelled as half speed.
double cpuGemmEfficiency(const TileWork& a, int64_t shared, const Target& t) {
    if (a.gemmM <= 0 || a.gemmN <= 0 || a.gemmK <= 0) return 1.0;
    const bool avx512 = t.has(Feature::Avx512);
    const int64_t rows = avx512 && a.gemmN < 64 ? 12 : 6, columns = 16;
    auto covered = [](int64_t n, int64_t block) { return double(n) / double((n + block - 1) / block * block); };
    double efficiency = covered(a.gemmM, rows) * covered(a.gemmN, columns);
    efficiency /= 1.0 + 4.0 / double(a.gemmM) + 2.0 / double(a.gemmK);
    if (shared + a.fragmentBytes > t.sharedMemPerBlock) efficiency *= 0.5;
    return efficiency;
}

// What a tile costs besides its k-loop, on targets whose profile gives load_latency_ns (docs/
// recommend.md, "Persistent kernels"): a block's pipeline first waits a whole load latency for
// its first k-tiles (fill), and after the loop writes its tile (epilogue: the bytes at the SM's
// share of the bandwidth). One block per tile pays both every wave, hidden only by the other
// blocks on its SM. A persistent block pays them once; from its second tile on its producer
// loads the next tile's k-tiles while the consumers write the last tile, so each later tile
// exposes the longer of the two only.
double tileOverheadUs(const TileWork& a, const CandidateEstimate& e, const Target& t) {
    // Only where the grid says `persistent` (true, false or an `auto` parameter's value): the term
    // is there to rank persistence; what it would do to the tiles of other kernels (it favours
    // fewer waves and more blocks per SM) no GPU has measured.
    if (!a.persistentOption && !a.splitOption) return 0;
    if (t.loadLatencyNs <= 0 || !a.pipelinedGemm || t.memoryBandwidthGBs <= 0 || e.blocksPerSM < 1) return 0;
    const double fill = t.loadLatencyNs * 1e-3;
    const double epilogue = a.epilogueBytes / (t.memoryBandwidthGBs * 1e3 / double(std::max(t.smCount, 1)));
    const double waves = double(e.waves);
    const double perTile = a.persistent ? (fill + epilogue) + (waves - 1) * std::max(fill, epilogue)
                                        : waves * (fill + epilogue);
    return perTile / double(e.blocksPerSM);
}

// The fewest k-tiles a block of a split k-loop runs (estimate refuses fewer).
constexpr int64_t kMinKTilesPerSplit = 4;

// Split-K (passes/SplitK.cpp): a tile's k-loop as S blocks. Per block, 1/S of the loop's work
// and traffic (the k-loop's trips rounded up), its partial accumulator written to the workspace
// and, for the last of the S, the others' read back and the epilogue written: per block on
// average (S - 1) / S of a partial read and 1/S of the epilogue.
void splitTileWork(TileWork& w, int64_t S) {
    const double trips = std::max(w.tileLoopTrips, 1.0);
    const double share = std::ceil(trips / double(S)) / trips;
    const double acc = double(w.gemmM) * double(w.gemmN) * 4.0;
    const double loopBytes = std::max(0.0, w.globalBytes - w.epilogueBytes);
    w.splitK = S;
    w.accumulatorBytes = acc;
    w.kTilesPerSplit = std::ceil(trips / double(S));
    w.flops *= share;
    w.globalBytes = loopBytes * share + w.epilogueBytes / double(S) + acc + acc * double(S - 1) / double(S);
    w.epilogueBytes = w.epilogueBytes / double(S) + acc;
    w.tileLoopTrips = std::ceil(trips / double(S));
    w.blocks *= S;
}

} // namespace

TileWork analyzeTileWork(const ir::Kernel& kernel, const Target& target) {
    TileWork work;
    TileWorkVisitor visitor(work, target.memorySectorBytes);
    visitor.visit(kernel.body);
    for (const auto& [buffer, elements] : visitor.fragmentElements)
        work.fragmentRegisterBytes += elements * (visitor.gemmOperands.count(buffer) ? dtypeBytes(buffer->dtype)
                                                                                       : std::max(dtypeBytes(buffer->dtype), 4));
    // Only targets with cp.async keep a version of a pipelined loop's tiles per stage; the
    // others run the loop in order, or prefetch the next iteration's tiles into registers.
    std::map<const ir::BufferNode*, int> versions;
    if (target.has(Feature::CpAsync)) versions.insert(visitor.sharedStages.begin(), visitor.sharedStages.end());
    work.plannedSharedBytes = plannedSharedBytes(kernel.body, versions, target.backend != Backend::Cpu);
    for (const auto& g : kernel.gridExtents) work.blocks *= std::max<int64_t>(constantOf(g).value_or(1), 1);
    work.persistent = kernel.persistent && target.backend != Backend::Cpu;
    work.persistentOption = kernel.persistentWritten;
    work.splitOption = kernel.splitKWritten;
    if (kernel.splitKWritten && kernel.splitK > 1 && target.backend != Backend::Cpu) splitTileWork(work, kernel.splitK);
    work.cluster = target.has(Feature::Clusters) ? std::max(kernel.cluster, 1) : 1;
    return work;
}

std::string estimate(const TileWork& a, int64_t blocks, int threads, int64_t shared, const Target& t,
                     CandidateEstimate& e) {
    e.blocks = blocks;
    e.threads = threads;
    e.sharedBytes = shared;
    e.stages = a.maxStages;
    e.flops = a.flops * double(blocks);
    // What every block reads at the same place comes from memory once per SM (core), then from
    // its cache: a one-row LayerNorm block reads the weights as often as its row otherwise.
    const double invariant = std::min(a.invariantBytes, a.globalBytes);
    e.globalBytes = (a.globalBytes - invariant) * double(blocks) + invariant * double(std::min<int64_t>(blocks, t.smCount));
    // Clusters (docs/recommend.md, "Clusters"): the blocks of a cluster load one gemm operand's
    // tiles once between them, taken as half of a pipelined gemm's loop bytes; the grid is padded
    // to whole clusters, which also fill the SMs only in whole clusters.
    const int64_t cluster = a.pipelinedGemm && !a.persistent ? a.cluster : 1;  // persistent: no clusters yet
    if (cluster > 1) {
        const double loopBytes = std::max(0.0, a.globalBytes - a.epilogueBytes);
        e.globalBytes -= double(blocks) * loopBytes * 0.5 * (1.0 - 1.0 / double(cluster));
        blocks = (blocks + cluster - 1) / cluster * cluster;
    }
    e.intensity = e.globalBytes > 0 ? e.flops / e.globalBytes : 0;
    if (shared > t.sharedMemPerBlock)
        return fmt::format("needs {} bytes of shared memory; target '{}' allows {}", shared, t.name, t.sharedMemPerBlock);
    // A split's blocks each fill their pipeline and write a partial tile: too short a run of
    // k-tiles pays that for little work.
    if (a.splitK > 1 && a.kTilesPerSplit < double(kMinKTilesPerSplit))
        return fmt::format("split_k = {} leaves {} k-tile{} a block (fewer than {})", a.splitK, a.kTilesPerSplit,
                           a.kTilesPerSplit == 1 ? "" : "s", kMinKTilesPerSplit);
    int64_t perSM = std::min<int64_t>(t.maxBlocksPerSM, t.maxThreadsPerSM / std::max(threads, 1));
    if (shared > 0) perSM = std::min<int64_t>(perSM, t.sharedMemPerSM / shared);
    if (t.registersPerSM > 0) {
        int64_t regs = (a.fragmentRegisterBytes / 4 + threads - 1) / std::max(threads, 1) + 32;
        e.registersPerThread = int(std::min<int64_t>(regs, 1 << 20));
        // A fifth of the registers stays for what the estimate does not see (addresses, indices,
        // the general variant's element loads): flash attention at 256 x 64 rows of 128 threads,
        // estimated at 212 of 255, took 255 and spilled.
        if (t.maxRegistersPerThread > 0 && regs > t.maxRegistersPerThread * 4 / 5)
            return fmt::format("needs about {} registers per thread for its fragments; target '{}' allows {}, "
                               "a fifth of them kept for the rest of the kernel", regs, t.name, t.maxRegistersPerThread);
        perSM = std::min<int64_t>(perSM, t.registersPerSM / (int64_t(threads) * regs));
    }
    if (perSM < 1) return fmt::format("no block of {} threads fits on one SM of target '{}'", threads, t.name);
    e.blocksPerSM = int(perSM);
    int64_t slots = int64_t(t.smCount) / cluster * cluster * perSM;
    e.waves = (blocks + slots - 1) / slots;
    e.waveEfficiency = double(blocks) / double(e.waves * slots);
    double warps = double(perSM) * double(threads) / double(std::max(t.warpSize, 1));
    const bool cpu = t.backend == Backend::Cpu;
    double issue = cpu ? cpuGemmEfficiency(a, shared, t) : std::min(1.0, warps / 4.0);
    e.computeUs = e.flops / (t.peakFor(a.gemmType) * 1e12 * issue) * 1e6;
    e.memoryUs = e.globalBytes / (std::max(t.memoryBandwidthGBs, 1.0) * 1e9) * 1e6;
    if (cpu) e.memoryUs *= cpuMemoryFactor(a, shared, t);
    // The cpu runs a pipelined loop's iterations in order: stages hide nothing there (and ties
    // then go to the fewest); GPUs without cp.async prefetch one iteration ahead at most.
    double stagesInFlight = cpu ? 1.0 : t.has(Feature::CpAsync) ? double(e.stages) : double(std::min(e.stages, 2));
    double depth = cpu ? 1.0 : stagesInFlight * double(perSM);
    // A barrier round per iteration of the loop around the tile ops, in every wave.
    e.syncUs = double(e.waves) * a.tileLoopTrips * (cpu ? kCpuRoundUs : kBarrierUs);
    e.tileUs = tileOverheadUs(a, e, t);
    e.timeUs = (std::max(e.computeUs, e.memoryUs) + std::min(e.computeUs, e.memoryUs) / depth) / e.waveEfficiency +
               e.syncUs + e.tileUs;
    return "";
}

} // namespace tlc
