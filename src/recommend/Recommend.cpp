#include "recommend/Recommend.h"

#include "ast/AST.h"
#include "ast/Clone.h"
#include "ir/Kernel.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "irgen/IRGen.h"
#include "parser/Parser.h"
#include "passes/Passes.h"
#include "passes/SharedLiveness.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace tlc {

const char* autoRoleName(AutoRole r) {
    switch (r) {
    case AutoRole::TileExtent: return "tile";
    case AutoRole::Stages: return "stages";
    case AutoRole::Threads: return "threads";
    }
    return "tile";
}

namespace {

// Where a parameter is the whole value of a `stages =` or `threads =` keyword argument (of
// `pipelined` and `grid`), that is its role.
void collectRoles(const ast::Call* call, std::map<std::string, AutoRole>& roles) {
    if (!call) return;
    for (const auto& a : call->args) {
        const auto* n = a.value ? a.value->as<ast::Name>() : nullptr;
        if (!n) continue;
        if (a.keyword == "stages") roles.emplace(n->name, AutoRole::Stages);
        if (a.keyword == "threads") roles.emplace(n->name, AutoRole::Threads);
    }
}
void collectRoles(const ast::Stmt* s, std::map<std::string, AutoRole>& roles) {
    if (!s) return;
    if (const auto* b = s->as<ast::Block>()) {
        for (const auto& x : b->stmts) collectRoles(x.get(), roles);
    } else if (const auto* f = s->as<ast::ForStmt>()) {
        collectRoles(f->iter.get(), roles);
        collectRoles(f->body.get(), roles);
    } else if (const auto* w = s->as<ast::WhileStmt>()) {
        collectRoles(w->body.get(), roles);
    } else if (const auto* i = s->as<ast::IfStmt>()) {
        collectRoles(i->thenBlock.get(), roles);
        collectRoles(i->elseStmt.get(), roles);
    } else if (const auto* g = s->as<ast::GridStmt>()) {
        collectRoles(g->launch.get(), roles);
        collectRoles(g->body.get(), roles);
    }
}

// The role of an `auto` parameter: from its use where it is a `stages` or `threads` argument,
// else from its name (docs/recommend.md).
AutoRole roleOf(const std::string& name, const std::map<std::string, AutoRole>& uses) {
    if (auto it = uses.find(name); it != uses.end()) return it->second;
    std::string lower;
    for (char c : name) lower += char(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("stage") != std::string::npos) return AutoRole::Stages;
    if (lower.find("thread") != std::string::npos) return AutoRole::Threads;
    return AutoRole::TileExtent;
}

std::vector<int64_t> candidatesFor(AutoRole role, const Target& target) {
    switch (role) {
    case AutoRole::TileExtent: return {16, 32, 64, 128, 256};
    // The cpu runs a pipelined loop's iterations in order: more stages only cost storage, and
    // trying them would multiply the search (and tlc's compile time) for nothing.
    case AutoRole::Stages: return target.backend == Backend::Cpu ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 3, 4, 5};
    case AutoRole::Threads: {
        std::vector<int64_t> out;
        for (int64_t t : {64, 128, 256, 512})
            if (t <= target.maxThreadsPerBlock) out.push_back(t);
        return out;
    }
    }
    return {};
}

std::optional<int64_t> constantOf(const ir::Expr& e) {
    ir::Expr s = ir::simplify(e);
    if (const auto* imm = s.as<ir::IntImm>()) return imm->value;
    return std::nullopt;
}

// What the model needs from a kernel's Tile IR: work and traffic of one block, on-chip storage.
struct TileAnalysis : ir::IRVisitor {
    double flops = 0;        // per block
    double globalBytes = 0;  // per block: global regions of tile ops, global loads and stores
    int64_t fragmentBytes = 0;
    std::map<const ir::BufferNode*, int64_t> sharedBytes;  // per buffer, without pipelining
    std::map<const ir::BufferNode*, int> sharedStages;     // buffers written in a pipelined loop
    int maxStages = 1;
    std::optional<DType> gemmType;
    int64_t gemmM = 0, gemmN = 0, gemmK = 0;  // the first gemm's tile (the cpu model's micro-kernel)
    double multiplier = 1;   // product of the trip counts of the enclosing loops
    int pipelineStages = 0;  // of the innermost enclosing pipelined loop; 0 outside
    double tileLoopTrips = 1; // per block: most trips around a tile op (a barrier round each)

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
            maxStages = std::max(maxStages, pipelineStages);
        }
        ir::IRVisitor::visitFor(f);
        multiplier = saved;
        pipelineStages = savedStages;
    }
    void visitAllocate(const ir::Allocate* a) override {
        int64_t bytes = elementsOf(a->buffer) * dtypeBytes(a->buffer->dtype);
        if (a->buffer->scope == MemScope::Shared) sharedBytes[a->buffer.get()] = bytes;
        if (a->buffer->scope == MemScope::Fragment) fragmentBytes += bytes;
        ir::IRVisitor::visitAllocate(a);
    }
    void visitTileOpStmt(const ir::TileOpStmt* s) override {
        const ir::TileOp& op = *s->op;
        auto reads = op.reads();
        auto writes = op.writes();
        tileLoopTrips = std::max(tileLoopTrips, multiplier);
        for (const auto* list : {&reads, &writes})
            for (const ir::Region* r : *list)
                if (r->buffer->scope == MemScope::Global)
                    globalBytes += double(r->elements()) * double(dtypeBytes(r->buffer->dtype)) * multiplier;
        if (pipelineStages > 0)
            for (const ir::Region* r : writes)
                if (r->buffer->scope == MemScope::Shared) sharedStages[r->buffer.get()] = pipelineStages;
        if (op.name() == "gemm" && reads.size() >= 2 && !writes.empty()) {
            // A[m, k], B[k, n], C[m, n] in any orientation: m*n*k = sqrt(|A| |B| |C|).
            double mnk = std::sqrt(double(reads[0]->elements()) * double(reads[1]->elements()) *
                                   double(writes[0]->elements()));
            flops += 2.0 * mnk * multiplier;
            if (!gemmType) {
                gemmType = reads[0]->buffer->dtype;
                std::vector<int64_t> c = writes[0]->squeezedExtents();
                if (c.size() == 2 && c[0] > 0) {
                    gemmM = c[0];
                    gemmN = c[1];
                    gemmK = reads[0]->elements() / c[0];
                }
            }
        }
    }
    void visitLoad(const ir::Load* l) override {
        if (l->buffer->scope == MemScope::Global) globalBytes += double(dtypeBytes(l->buffer->dtype)) * multiplier;
        ir::IRVisitor::visitLoad(l);
    }
    void visitStore(const ir::Store* s) override {
        if (s->buffer->scope == MemScope::Global) globalBytes += double(dtypeBytes(s->buffer->dtype)) * multiplier;
        ir::IRVisitor::visitStore(s);
    }

    // The pool as plan-shared-memory would plan it (passes/SharedLiveness.h): buffers never live
    // at once share bytes (not on the cpu), each buffer a pipelined loop writes counted once per
    // stage. The lowered kernel's exact pool adds the compiler's scratch buffers.
    int64_t sharedEstimate(const ir::Stmt& body, const Target& t) const {
        std::map<const ir::BufferNode*, int> versions(sharedStages.begin(), sharedStages.end());
        return plannedSharedBytes(body, versions, t.backend != Backend::Cpu);
    }
};

double peakFor(const Target& t, std::optional<DType> type) {
    double rate = t.peak.f32;
    if (type) {
        switch (*type) {
        case DType::F16: rate = t.peak.f16; break;
        case DType::BF16: rate = t.peak.bf16; break;
        case DType::F8E4M3:
        case DType::F8E5M2: rate = t.peak.fp8; break;
        case DType::I8:
        case DType::U8: rate = t.peak.i8; break;
        default: break;
        }
    }
    if (rate <= 0) rate = t.peak.f32 > 0 ? t.peak.f32 : 1.0;
    return rate;
}

// The most candidate configurations the recommender compiles, and the most bytes of input it
// compiles in all (candidates x input size; samples/gemm_auto.tl: 2500 x 1.3 KB).
constexpr int64_t kMaxCandidates = 20000;
constexpr double kMaxCandidateBytes = 8.0 * 1024 * 1024;

// The cost of one barrier round of a block (about 100 cycles at 1 GHz), microseconds.
constexpr double kBarrierUs = 0.1;

// The cpu's gemm: the fraction of the micro-kernel's peak a block's gemm tile keeps (docs/
// recommend.md, "The cpu"). Register blocks cover the tile (AVX-512: 6 x 64 where the tile has
// 64 columns, 12 x 32 or 12 x 16 where it is narrower, so columns in steps of 16; 6 x 16
// otherwise), so a tile that is not a multiple computes padding; every call packs B's k x n tile
// (about 4/m of the work) and loads and stores C's accumulators (about 2/k); a block whose
// tiles do not fit the cache the profile names (`shared_mem_per_block`: a core's L2) streams
// them from further out, modelled as half speed.
double cpuGemmEfficiency(const TileAnalysis& a, int64_t shared, const Target& t) {
    if (a.gemmM <= 0 || a.gemmN <= 0 || a.gemmK <= 0) return 1.0;
    const bool avx512 = t.has(Feature::Avx512);
    const int64_t rows = avx512 && a.gemmN < 64 ? 12 : 6, columns = 16;
    auto covered = [](int64_t n, int64_t block) { return double(n) / double((n + block - 1) / block * block); };
    double efficiency = covered(a.gemmM, rows) * covered(a.gemmN, columns);
    efficiency /= 1.0 + 4.0 / double(a.gemmM) + 2.0 / double(a.gemmK);
    if (shared + a.fragmentBytes > t.sharedMemPerBlock) efficiency *= 0.5;
    return efficiency;
}

// The model (docs/recommend.md). Returns the rejection reason, or "" with `e` filled.
std::string estimate(const TileAnalysis& a, int64_t blocks, int threads, int64_t shared, const Target& t,
                     CandidateEstimate& e) {
    e.blocks = blocks;
    e.threads = threads;
    e.sharedBytes = shared;
    e.stages = a.maxStages;
    e.flops = a.flops * double(blocks);
    e.globalBytes = a.globalBytes * double(blocks);
    e.intensity = e.globalBytes > 0 ? e.flops / e.globalBytes : 0;
    if (shared > t.sharedMemPerBlock)
        return fmt::format("needs {} bytes of shared memory; target '{}' allows {}", shared, t.name, t.sharedMemPerBlock);
    int64_t perSM = std::min<int64_t>(t.maxBlocksPerSM, t.maxThreadsPerSM / std::max(threads, 1));
    if (shared > 0) perSM = std::min<int64_t>(perSM, t.sharedMemPerSM / shared);
    if (t.registersPerSM > 0) {
        int64_t regs = (a.fragmentBytes / 4 + threads - 1) / std::max(threads, 1) + 32;
        e.registersPerThread = int(std::min<int64_t>(regs, 1 << 20));
        if (t.maxRegistersPerThread > 0 && regs > t.maxRegistersPerThread)
            return fmt::format("needs about {} registers per thread for its fragments; target '{}' allows {}", regs,
                               t.name, t.maxRegistersPerThread);
        perSM = std::min<int64_t>(perSM, t.registersPerSM / (int64_t(threads) * regs));
    }
    if (perSM < 1) return fmt::format("no block of {} threads fits on one SM of target '{}'", threads, t.name);
    e.blocksPerSM = int(perSM);
    int64_t slots = int64_t(t.smCount) * perSM;
    e.waves = (blocks + slots - 1) / slots;
    e.waveEfficiency = double(blocks) / double(e.waves * slots);
    double warps = double(perSM) * double(threads) / double(std::max(t.warpSize, 1));
    const bool cpu = t.backend == Backend::Cpu;
    double issue = cpu ? cpuGemmEfficiency(a, shared, t) : std::min(1.0, warps / 4.0);
    e.computeUs = e.flops / (peakFor(t, a.gemmType) * 1e12 * issue) * 1e6;
    e.memoryUs = e.globalBytes / (std::max(t.memoryBandwidthGBs, 1.0) * 1e9) * 1e6;
    // The cpu runs a pipelined loop's iterations in order: stages hide nothing there (and ties
    // then go to the fewest).
    double depth = cpu ? 1.0 : double(e.stages) * double(perSM);
    // A barrier round per iteration of the loop around the tile ops, in every wave.
    e.syncUs = double(e.waves) * a.tileLoopTrips * kBarrierUs;
    e.timeUs = (std::max(e.computeUs, e.memoryUs) + std::min(e.computeUs, e.memoryUs) / depth) / e.waveEfficiency +
               e.syncUs;
    return "";
}

struct Built {
    std::unique_ptr<DiagnosticEngine> diags;
    std::unique_ptr<ast::File> file;
    std::optional<ir::Kernel> kernel;
    std::string error;  // the first error, when there is one
};

std::string firstError(const DiagnosticEngine& d) {
    for (const auto& x : d.diagnostics())
        if (x.severity == Severity::Error) return x.message;
    return "";
}

// Checks and builds the Tile IR of `kernelName` with `defines`: the kernel of the parsed
// (unchecked) file, copied and checked with these values. The file is parsed once for all candidates (parsing was most of the recommender's
// time); each check needs its own copy, since sema annotates the tree.
Built build(const ast::File& parsed, const SourceFile& source, const std::string& kernelName, const Target& target,
            const std::map<std::string, std::string>& defines, bool buildIR) {
    Built b;
    b.diags = std::make_unique<DiagnosticEngine>(source);
    auto it = std::find_if(parsed.kernels.begin(), parsed.kernels.end(),
                           [&](const auto& k) { return k->name == kernelName; });
    if (it != parsed.kernels.end()) {
        b.file = std::make_unique<ast::File>();
        b.file->imports = parsed.imports;
        b.file->kernels.push_back(ast::cloneSyntax(**it));
    } else {
        b.file = ast::cloneSyntax(parsed);
    }
    SemaOptions sema;
    sema.target = &target;
    sema.defines = defines;
    if (!checkFile(*b.file, *b.diags, sema)) {
        b.error = firstError(*b.diags);
        return b;
    }
    if (!buildIR) return b;
    b.kernel = buildKernelIR(*b.file->kernels.front(), source, *b.diags);
    if (!b.kernel || b.diags->hasErrors()) {
        b.error = firstError(*b.diags);
        b.kernel.reset();
    } else {
        inferThreads(*b.kernel, target);  // a `threads` left out: the model needs the count
    }
    return b;
}

struct Evaluated {
    CandidateEstimate estimate;
    std::map<std::string, std::string> defines;
};

} // namespace

std::map<std::string, std::string> definesFor(const ast::Kernel& kernel,
                                              const std::map<std::string, std::string>& defines) {
    std::set<std::string> names;
    for (const auto& tp : kernel.templateParams) names.insert(tp.name);
    for (const auto& p : kernel.params)
        for (const auto& d : p.type.dims)
            if (const auto* n = d->as<ast::Name>()) names.insert(n->name);
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : defines)
        if (names.count(name)) out[name] = value;
    return out;
}

std::optional<Recommendation> recommend(const SourceFile& source, const RecommendOptions& options, std::string& error) {
    const Target& target = *options.target;
    // The kernel and its auto parameters, from the input as written (auto unresolved).
    DiagnosticEngine diags(source);
    std::unique_ptr<ast::File> file = parseFile(source, diags);
    if (!file || diags.hasErrors()) {
        error = firstError(diags);
        return std::nullopt;
    }
    const ast::Kernel* kernel = nullptr;
    for (const auto& k : file->kernels) {
        if (!options.kernel.empty() ? k->name == options.kernel
                                    : std::any_of(k->templateParams.begin(), k->templateParams.end(),
                                                  [](const auto& tp) { return tp.isAuto; })) {
            kernel = k.get();
            break;
        }
    }
    if (!kernel) {
        error = options.kernel.empty() ? "no kernel has 'auto' parameters"
                                       : fmt::format("no kernel named '{}'", options.kernel);
        return std::nullopt;
    }
    Recommendation r;
    r.kernel = kernel->name;
    std::map<std::string, std::string> defines = definesFor(*kernel, options.defines);
    std::map<std::string, AutoRole> uses;
    collectRoles(kernel->body.get(), uses);
    for (const auto& tp : kernel->templateParams) {
        if (!tp.isAuto || defines.count(tp.name)) continue;
        AutoRole role = roleOf(tp.name, uses);
        r.params.push_back({tp.name, role, candidatesFor(role, target)});
    }
    if (r.params.empty()) {
        error = fmt::format("kernel '{}' has no 'auto' parameter left to choose", kernel->name);
        return std::nullopt;
    }
    // Its symbolic sizes: check it as written.
    {
        Built plain = build(*file, source, r.kernel, target, defines, false);
        if (!plain.error.empty()) {
            error = plain.error;
            return std::nullopt;
        }
        for (const ast::Decl* d : plain.file->kernels.front()->sizeParams) {
            auto it = options.shape.find(d->name);
            r.shape[d->name] = it == options.shape.end() ? kDefaultShapeExtent : it->second;
        }
        for (const auto& [name, value] : options.shape)
            if (!r.shape.count(name)) {
                error = fmt::format("--shape names '{}', which is not a symbolic size of kernel '{}'", name, r.kernel);
                return std::nullopt;
            }
    }

    // Every combination, first parameter slowest.
    int64_t total = 1;
    for (const auto& p : r.params) total *= int64_t(p.values.size());
    // Each candidate compiles the whole input: bound the work by candidates x input size, so
    // that hostile input cannot make tlc run for long (deterministically, unlike a time limit).
    if (total > kMaxCandidates || double(total) * double(source.text().size()) > kMaxCandidateBytes) {
        error = fmt::format("kernel '{}' has {} candidate configurations, too many to try for an input of {} bytes; "
                            "fix some 'auto' parameters with -D",
                            r.kernel, total, source.text().size());
        return std::nullopt;
    }
    r.enumerated = total;
    std::vector<Evaluated> early;
    // On the cpu a block's threads run one after another: `threads` changes nothing the model
    // sees, so once a value compiles for the other parameters' values, the larger ones (which
    // would tie and lose to it) are not tried.
    std::set<std::vector<int64_t>> threadsSettled;
    const bool cpuThreads = target.backend == Backend::Cpu &&
                            std::any_of(r.params.begin(), r.params.end(),
                                        [](const AutoParam& p) { return p.role == AutoRole::Threads; });
    for (int64_t index = 0; index < total; ++index) {
        Evaluated ev;
        ev.defines = defines;
        for (const auto& [name, value] : r.shape) ev.defines[name] = std::to_string(value);
        int64_t rest = index;
        std::vector<std::pair<std::string, int64_t>> values(r.params.size());
        std::vector<int64_t> others;  // the values of the parameters other than threads
        for (size_t i = r.params.size(); i-- > 0;) {
            const auto& p = r.params[i];
            int64_t v = p.values[size_t(rest % int64_t(p.values.size()))];
            rest /= int64_t(p.values.size());
            values[i] = {p.name, v};
            ev.defines[p.name] = std::to_string(v);
            if (p.role != AutoRole::Threads) others.push_back(v);
        }
        if (cpuThreads && threadsSettled.count(others)) continue;
        Built b = build(*file, source, r.kernel, target, ev.defines, true);
        std::string why = b.error;
        if (why.empty()) {
            TileAnalysis a;
            a.visit(b.kernel->body);
            int64_t blocks = 1;
            for (const auto& g : b.kernel->gridExtents) blocks *= std::max<int64_t>(constantOf(g).value_or(1), 1);
            why = estimate(a, blocks, b.kernel->threads, a.sharedEstimate(b.kernel->body, target), target, ev.estimate);
        }
        if (!why.empty()) {
            ++r.rejected;
            if (r.firstRejection.empty()) {
                std::string v;
                for (const auto& [n, x] : values) v += fmt::format("{}{}={}", v.empty() ? "" : ", ", n, x);
                r.firstRejection = fmt::format("{}: {}", v, why);
            }
            continue;
        }
        ev.estimate.values = values;
        if (cpuThreads) threadsSettled.insert(others);
        early.push_back(std::move(ev));
    }
    auto better = [](const CandidateEstimate& x, const CandidateEstimate& y) {
        if (x.timeUs != y.timeUs) return x.timeUs < y.timeUs;
        return x.values < y.values;
    };
    std::stable_sort(early.begin(), early.end(),
                     [&](const Evaluated& x, const Evaluated& y) { return better(x.estimate, y.estimate); });

    // Lower the best ones, in that order, with the exact shared memory; re-rank those.
    size_t wanted = size_t(std::max(options.top, 1));
    size_t lowerLimit = std::max<size_t>(wanted * 4, 16);
    std::vector<CandidateEstimate> lowered;
    for (auto& ev : early) {
        if (lowered.size() >= lowerLimit) break;
        Built b = build(*file, source, r.kernel, target, ev.defines, true);
        std::string why = b.error;
        if (why.empty()) {
            TileAnalysis a;
            a.visit(b.kernel->body);
            int64_t planned = a.sharedEstimate(b.kernel->body, target);  // of the Tile IR, before lowering
            std::ostringstream dumps;
            if (!lowerKernel(*b.kernel, target, *b.diags, PassOptions{}, dumps) || b.diags->hasErrors()) {
                why = firstError(*b.diags);
                if (why.empty()) why = "lowering failed";
            } else {
                CandidateEstimate e;
                // The lowered kernel's shared memory, or what a multi-buffered pipeline of the
                // stages needs (targets that run the loop unpipelined), whichever is larger.
                int64_t shared = std::max(b.kernel->sharedBytes, planned);
                why = estimate(a, ev.estimate.blocks, b.kernel->threads, shared, target, e);
                e.loweredSharedBytes = b.kernel->sharedBytes;
                e.values = ev.estimate.values;
                if (why.empty()) lowered.push_back(e);
            }
        }
        if (!why.empty()) {
            ++r.rejected;
            if (r.firstRejection.empty()) {
                std::string v;
                for (const auto& [n, x] : ev.estimate.values) v += fmt::format("{}{}={}", v.empty() ? "" : ", ", n, x);
                r.firstRejection = fmt::format("{}: {}", v, why);
            }
        }
    }
    r.compiled = int64_t(lowered.size());
    std::stable_sort(lowered.begin(), lowered.end(), better);
    if (lowered.size() > wanted) lowered.resize(wanted);
    r.ranked = std::move(lowered);
    return r;
}

std::string recommendationJson(const Recommendation& r, const Target& target) {
    using Json = nlohmann::ordered_json;
    auto round3 = [](double x) { return std::round(x * 1000.0) / 1000.0; };
    Json j;
    j["kernel"] = r.kernel;
    j["target"] = target.name;
    j["device"] = target.device;
    Json shape = Json::object();
    for (const auto& [n, v] : r.shape) shape[n] = v;
    j["shape"] = shape;
    Json params = Json::array();
    for (const auto& p : r.params) params.push_back({{"name", p.name}, {"role", autoRoleName(p.role)}, {"values", p.values}});
    j["parameters"] = params;
    j["enumerated"] = r.enumerated;
    j["rejected"] = r.rejected;
    j["lowered"] = r.compiled;
    if (!r.firstRejection.empty()) j["first_rejection"] = r.firstRejection;
    Json list = Json::array();
    int rank = 0;
    for (const auto& c : r.ranked) {
        Json values = Json::object();
        for (const auto& [n, v] : c.values) values[n] = v;
        Json cj;
        cj["rank"] = ++rank;
        cj["values"] = values;
        cj["estimate_us"] = round3(c.timeUs);
        cj["compute_us"] = round3(c.computeUs);
        cj["memory_us"] = round3(c.memoryUs);
        cj["tflops"] = round3(c.timeUs > 0 ? c.flops / (c.timeUs * 1e6) : 0);
        cj["arithmetic_intensity"] = round3(c.intensity);
        cj["sync_us"] = round3(c.syncUs);
        cj["global_bytes"] = int64_t(c.globalBytes);
        cj["flops"] = int64_t(c.flops);
        cj["blocks"] = c.blocks;
        cj["blocks_per_sm"] = c.blocksPerSM;
        cj["waves"] = c.waves;
        cj["wave_efficiency"] = round3(c.waveEfficiency);
        cj["stages"] = c.stages;
        cj["shared_memory_bytes"] = c.sharedBytes;
        cj["lowered_shared_memory_bytes"] = c.loweredSharedBytes;
        cj["threads"] = c.threads;
        cj["registers_per_thread_estimate"] = c.registersPerThread;
        list.push_back(cj);
    }
    j["candidates"] = list;
    return j.dump(2) + "\n";
}

} // namespace tlc
