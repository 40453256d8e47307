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

// The grid dimensions an expression depends on (bit d: dimension d's block index), through the
// lets around it.
struct GridDependence : ir::IRVisitor {
    const std::map<const ir::Var*, unsigned>& dims;
    unsigned mask = 0;
    explicit GridDependence(const std::map<const ir::Var*, unsigned>& d) : dims(d) {}
    void visitVar(const ir::Var* v) override {
        if (auto it = dims.find(v); it != dims.end()) mask |= it->second;
    }
};

// The element loops (`parallel`) around a statement: each loop variable's bit and trips.
struct ElementLoops {
    std::map<const ir::Var*, std::pair<unsigned, double>> vars;
    double tripsOf(unsigned mask) const {
        double n = 1;
        for (const auto& [var, loop] : vars)
            if (mask & loop.first) n *= loop.second;
        return n;
    }
};

// Element operations of an expression as the SMs' lanes run them, summed over the element loops
// around it: an operation whose value varies only with some of their variables runs once per
// value of those (the compilers hoist the rest and share the common subexpressions of unrolled
// element loops: flash attention's rescale factor is one exp2 per row, not per element), and
// one that varies with none counts nothing. One operation per arithmetic node, cast and select,
// a special function `special` of them, a multiply feeding an add or subtract fused with it
// (an FMA); loads none (their indices are addresses).
struct ElementOps {
    double ops = 0;
    unsigned vars = 0;  // the element loops' variables the value depends on
};
ElementOps elementOpsOf(const ir::Expr& e, const ElementLoops& loops, double special) {
    auto combine = [&](const std::vector<const ir::Expr*>& parts, double cost) {
        ElementOps r;
        for (const ir::Expr* p : parts) {
            ElementOps c = elementOpsOf(*p, loops, special);
            r.ops += c.ops;
            r.vars |= c.vars;
        }
        if (r.vars) r.ops += cost * loops.tripsOf(r.vars);
        return r;
    };
    if (const auto* v = e.as<ir::Var>()) {
        auto it = loops.vars.find(v);
        return {0, it == loops.vars.end() ? 0u : it->second.first};
    }
    if (const auto* l = e.as<ir::Load>()) {
        ElementOps r;
        for (const ir::Expr& i : l->indices) r.vars |= elementOpsOf(i, loops, special).vars;
        return r;
    }
    if (const auto* c = e.as<ir::Cast>()) return combine({&c->value}, 1);
    if (const auto* u = e.as<ir::Unary>()) return combine({&u->operand}, 1);
    if (const auto* s = e.as<ir::Select>()) return combine({&s->cond, &s->thenValue, &s->elseValue}, 1);
    if (const auto* b = e.as<ir::Binary>()) {
        auto product = [](const ir::Expr& x) {
            const auto* m = x.as<ir::Binary>();
            return m && m->op == ir::BinaryOp::Mul;
        };
        const bool fused = (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) && (product(b->a) || product(b->b));
        return combine({&b->a, &b->b}, fused ? 0 : 1);
    }
    if (const auto* c = e.as<ir::Call>()) {
        static const std::set<std::string> one = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "erf",
                                                  "fast_exp", "fast_exp2", "fast_log", "fast_log2", "fast_tanh"};
        static const std::set<std::string> two = {"sigmoid", "silu", "gelu", "pow"};  // an exp and a reciprocal, ...
        std::vector<const ir::Expr*> args;
        for (const ir::Expr& a : c->args) args.push_back(&a);
        return combine(args, one.count(c->name) ? special : two.count(c->name) ? 2 * special + 1 : 1);
    }
    return {};
}

// Collects TileWork over a kernel's body, the loops' trip counts multiplying what is inside them.
struct TileWorkVisitor : ir::IRVisitor {
    TileWork& w;
    int64_t sectorBytes;  // the target's memory_sector_bytes (0: unknown)
    double specialCost;   // the target's special_function_cost
    std::map<const ir::Var*, unsigned> gridDims;  // block indices and the lets over them
    // The block indices at the middle of the grid, and the lets as of them.
    std::vector<std::pair<ir::VarPtr, ir::Expr>> averageBlock;
    TileWorkVisitor(TileWork& work, const Target& t) : w(work), sectorBytes(t.memorySectorBytes), specialCost(t.specialFunctionCost) {}

    unsigned gridDependence(const std::vector<ir::Expr>& exprs) const {
        GridDependence d(gridDims);
        for (const ir::Expr& e : exprs) d.visit(e);
        return d.mask;
    }
    ElementLoops elementLoops;  // the enclosing parallel loops
    // A statement's element operations, times the trips of the loops around the element loops.
    double elementOps(const ir::Expr& e) const {
        return elementOpsOf(e, elementLoops, specialCost).ops * multiplier / elementLoops.tripsOf(~0u);
    }

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
        // A trip count that depends on the block (a causal loop over the keys up to the query
        // block) counts at the grid's average block.
        std::optional<int64_t> ext = constantOf(f->extent);
        if (!ext) ext = constantOf(ir::substitute(f->extent, averageBlock));
        if (ext) {
            int64_t step = 1;
            if (f->step) step = constantOf(f->step).value_or(1);
            trips = double(*ext) / double(std::max<int64_t>(step, 1));
        }
        multiplier *= std::max(trips, 1.0);
        const bool elementLoop = f->forKind == ir::ForKind::Parallel;
        if (elementLoop) elementLoops.vars[f->var.get()] = {1u << elementLoops.vars.size(), std::max(trips, 1.0)};
        if (f->forKind == ir::ForKind::Pipelined) {
            pipelineStages = std::max(f->pipeline.stages, 1);
            w.maxStages = std::max(w.maxStages, pipelineStages);
        }
        ir::IRVisitor::visitFor(f);
        if (elementLoop) elementLoops.vars.erase(f->var.get());
        multiplier = saved;
        pipelineStages = savedStages;
    }
    void visitLetStmt(const ir::LetStmt* l) override {
        if (unsigned mask = gridDependence({l->value})) gridDims[l->var.get()] = mask;
        averageBlock.emplace_back(l->var, ir::substitute(l->value, averageBlock));
        ir::IRVisitor::visitLetStmt(l);
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
                    if (list == &reads) w.readsByGridDims[gridDependence(r->starts)] += movedBytes(*r) * multiplier;
                    w.globalStreams += runsOf(*r);
                }
        // A reduction's (and a scan's) inputs each take an operation on the lanes.
        if ((op.name().rfind("reduce_", 0) == 0 || op.name() == "cumsum") && !reads.empty())
            w.elementOps += double(reads[0]->elements()) * multiplier;
        // The pipeline versions what its loads fill (a copy from global memory, an im2col), not
        // a tile the threads write (MLA's scores staged for the second gemm).
        const bool fromGlobal = std::any_of(reads.begin(), reads.end(),
                                            [](const ir::Region* r) { return r->buffer->scope == MemScope::Global; });
        if (pipelineStages > 0 && fromGlobal)
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
        w.elementOps += elementOps(s->value);
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
    // The S blocks of a tile read different k-tiles: a dimension every read depends on.
    const unsigned split = 1u << w.gridDims.size();
    std::map<unsigned, double> reads;
    for (const auto& [dims, bytes] : w.readsByGridDims) reads[dims | split] += bytes * share;
    w.readsByGridDims = std::move(reads);
    w.gridDims.push_back(S);
}

// What DRAM serves of a grid's global traffic (docs/recommend.md, "Memory"): the blocks of a wave
// (`window` of them, launched in order, x fastest) that read the same bytes, blocks that differ
// only in grid dimensions a region's place does not depend on, fetch them once; the rest of the
// wave's reads of them hit L2. A dimension spans min(its extent, the window over the extents
// before it) blocks of a wave. Writes and element loads and stores count in full.
double dramBytes(const TileWork& a, int64_t blocks, int64_t window) {
    std::vector<double> span;
    double before = 1;
    for (int64_t extent : a.gridDims) {
        span.push_back(std::min(double(extent), std::ceil(double(window) / before)));
        before *= double(extent);
    }
    double perBlock = a.globalBytes;
    for (const auto& [dims, bytes] : a.readsByGridDims) {
        double sharers = 1;
        for (size_t d = 0; d < span.size(); ++d)
            if (!(dims & (1u << d))) sharers *= span[d];
        perBlock -= bytes - bytes / std::max(sharers, 1.0);
    }
    return std::max(perBlock, 0.0) * double(blocks);
}

} // namespace

TileWork analyzeTileWork(const ir::Kernel& kernel, const Target& target, const std::map<std::string, int64_t>& scalars) {
    TileWork work;
    TileWorkVisitor visitor(work, target);
    for (const ir::KernelParam& p : kernel.params)
        if (p.kind == ir::KernelParam::Kind::Scalar && p.var)
            if (auto it = scalars.find(p.name); it != scalars.end())
                visitor.averageBlock.emplace_back(p.var, ir::intImm(it->second, p.var->dtype));
    for (const auto& g : kernel.gridExtents) {
        work.gridDims.push_back(std::max<int64_t>(constantOf(ir::substitute(g, visitor.averageBlock)).value_or(1), 1));
        work.blocks *= work.gridDims.back();
    }
    for (size_t d = 0; d < kernel.blockVars.size(); ++d) {
        visitor.gridDims[kernel.blockVars[d].get()] = 1u << d;
        if (d < work.gridDims.size())
            visitor.averageBlock.emplace_back(kernel.blockVars[d], ir::intImm((work.gridDims[d] - 1) / 2));
    }
    visitor.visit(kernel.body);
    for (const auto& [buffer, elements] : visitor.fragmentElements)
        work.fragmentRegisterBytes += elements * (visitor.gemmOperands.count(buffer) ? dtypeBytes(buffer->dtype)
                                                                                       : std::max(dtypeBytes(buffer->dtype), 4));
    // Only targets with cp.async keep a version of a pipelined loop's tiles per stage; the
    // others run the loop in order, or prefetch the next iteration's tiles into registers.
    std::map<const ir::BufferNode*, int> versions;
    if (target.has(Feature::CpAsync)) versions.insert(visitor.sharedStages.begin(), visitor.sharedStages.end());
    work.plannedSharedBytes = plannedSharedBytes(kernel.body, versions, target.backend != Backend::Cpu);
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
    // A block of fewer threads than a warpgroup cannot issue wgmma: its gemms take mma.sync.
    const double tensorShare = t.has(Feature::Wgmma) && threads < 128 && a.gemmType ? t.warpMmaFraction : 1.0;
    e.computeUs = e.flops / (t.peakFor(a.gemmType) * 1e12 * issue * tensorShare) * 1e6;
    // The element work beside the tensor cores', on the lanes at the f32 peak's operation rate
    // (an FMA is two of its flops). Counted in series with it: only a warp-specialised
    // ping-pong overlaps one warpgroup's softmax with the other's gemm, and the model does not
    // see that schedule. The cpu's terms are fitted to its sweeps without it.
    if (!cpu && t.peak.f32 > 0) {
        e.elementUs = a.elementOps * double(blocks) / (t.peak.f32 / 2 * 1e12 * issue) * 1e6;
        e.computeUs += e.elementUs;
    }
    // Memory: every read from L2 at its bandwidth, and from DRAM what a wave's blocks do not
    // share; without an L2 figure, every byte at DRAM's bandwidth.
    const double dram = std::max(t.memoryBandwidthGBs, 1.0) * 1e9;
    if (!cpu && t.l2BandwidthGBs > 0) {
        e.dramBytes = std::min(dramBytes(a, blocks, std::min<int64_t>(blocks, slots)), e.globalBytes);
        e.memoryUs = std::max(e.dramBytes / dram, e.globalBytes / (t.l2BandwidthGBs * 1e9)) * 1e6;
    } else {
        e.dramBytes = e.globalBytes;
        e.memoryUs = e.globalBytes / dram * 1e6;
    }
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
