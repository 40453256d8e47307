#include "recommend/Recommend.h"

#include "ast/AST.h"
#include "compile/Compile.h"
#include "compile/Program.h"
#include "recommend/ModelShape.h"
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

namespace {

// The most candidate configurations the recommender compiles, and the most bytes of input it
// compiles in all (candidates x input size; samples/gemm_auto.tl: 2500 x 1.3 KB).
constexpr int64_t kMaxCandidates = 20000;
constexpr double kMaxCandidateBytes = 8.0 * 1024 * 1024;
// Up to this many combinations every one is tried (gemm_auto's 2500 on a GPU), if their
// compiles stay within kMaxCandidateBytes. Beyond, the search is staged: the tile values with
// stages and threads at a probe value first, then every stages and threads value for the best
// kStagedRefine tile configurations (Mamba's chunk scan, 6 KB: 277 compiles instead of 2500).
constexpr int64_t kExhaustiveLimit = 2500;
constexpr size_t kStagedRefine = 8;

bool searchedInStage2(AutoRole r) {
    return r == AutoRole::Stages || r == AutoRole::Threads || r == AutoRole::Persistent || r == AutoRole::Cluster;
}

// The value a stages or threads parameter takes while the staged search tries tile values:
// what tile inference would pick for a plain gemm (2 stages, 4 warps); on the cpu the first
// (threads change nothing there, stages have one candidate).
int64_t probeValue(const AutoParam& p, const Target& target) {
    int64_t want = p.role == AutoRole::Stages ? 2 : 128;
    if (target.backend == Backend::Cpu || p.role == AutoRole::Persistent || p.role == AutoRole::Cluster)
        return p.values.front();
    int64_t best = p.values.front();
    for (int64_t v : p.values)
        if (std::llabs(v - want) < std::llabs(best - want)) best = v;
    return best;
}

struct Evaluated {
    CandidateEstimate estimate;
    std::vector<TileWork> works;  // of its Tile IR, one per launch
};

// The estimate of a candidate's launches. A kernel of several grids (flash decoding's split and
// combine) runs them one after another: their times, work and traffic add up, and what
// describes one launch (blocks, occupancy, shared memory, threads) is the costliest one's.
// `lowered`: the parts are lowered, and their exact shared memory counts.
std::string estimateLaunches(const std::vector<TileWork>& works, const std::vector<ir::Kernel>& parts, bool lowered,
                             const Target& target, CandidateEstimate& out) {
    double time = 0, compute = 0, element = 0, memory = 0, sync = 0, flops = 0, bytes = 0, dram = 0, worst = -1;
    for (size_t i = 0; i < parts.size(); ++i) {
        const ir::Kernel& k = parts[i];
        // Lowered: the kernel's pool, or the plan of the Tile IR (a version of each tile per
        // stage where the target pipelines), whichever is larger.
        int64_t shared = lowered ? std::max(k.sharedBytes, works[i].plannedSharedBytes) : works[i].plannedSharedBytes;
        CandidateEstimate e;
        std::string why = estimate(works[i], works[i].blocks, k.threads, shared, target, e);
        if (!why.empty()) return parts.size() > 1 ? fmt::format("grid {} of {}: {}", i + 1, parts.size(), why) : why;
        e.loweredSharedBytes = lowered ? k.sharedBytes : 0;
        time += e.timeUs;
        compute += e.computeUs;
        element += e.elementUs;
        memory += e.memoryUs;
        sync += e.syncUs;
        flops += e.flops;
        bytes += e.globalBytes;
        dram += e.dramBytes;
        if (e.timeUs > worst) {
            worst = e.timeUs;
            out = e;
        }
    }
    out.timeUs = time;
    out.computeUs = compute;
    out.elementUs = element;
    out.memoryUs = memory;
    out.syncUs = sync;
    out.flops = flops;
    out.globalBytes = bytes;
    out.dramBytes = dram;
    out.intensity = bytes > 0 ? flops / bytes : 0;
    return "";
}

} // namespace

std::optional<Recommendation> recommend(const Program& program, const RecommendOptions& options, std::string& error,
                                        bool* inputErrors) {
    const Target& target = *options.target;
    // The kernel and its auto parameters, from the input as written (auto unresolved).
    const ast::Kernel* kernel = nullptr;
    for (const auto& k : program.syntax().kernels) {
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
    r.fingerprint = kernelFingerprint(*kernel);
    if (options.measured)
        if (const MeasuredSweep* sweep = options.measured->find(target.name, *kernel, options.defines))
            r.measured = *sweep;
    CompileOptions compileOptions;
    compileOptions.target = &target;
    compileOptions.defines = definesFor(*kernel, options.defines);
    std::vector<std::pair<std::string, int64_t>> writtenValues;  // of the parameters searchWritten names
    for (const auto& tp : kernel->templateParams) {
        const bool written = !tp.isAuto && std::find(options.searchWritten.begin(), options.searchWritten.end(),
                                                     tp.name) != options.searchWritten.end();
        if (!(tp.isAuto || written) || compileOptions.defines.count(tp.name)) continue;
        AutoRole role = autoRoleOf(*kernel, tp.name);
        r.params.push_back({tp.name, role, autoCandidates(role, target)});
        if (const auto* v = written && tp.defaultValue ? tp.defaultValue->as<ast::IntLit>() : nullptr)
            writtenValues.push_back({tp.name, v->value});
    }
    if (r.params.empty()) {
        error = fmt::format("kernel '{}' has no 'auto' parameter left to choose", kernel->name);
        return std::nullopt;
    }
    // Its symbolic sizes: check it as written.
    {
        DiagnosticEngine diags(program.source());
        CompileOptions checkOnly = compileOptions;
        checkOnly.stop = CompileStage::Checked;
        Compiled plain = compile(program, {KernelConfig(kernel)}, checkOnly, diags);
        if (!plain.checked) {
            error = firstError(diags);
            if (inputErrors) *inputErrors = true;
            return std::nullopt;
        }
        r.shape = modelShape(*plain.file->kernels.front(), options.shape);
        const std::set<std::string> scalars = integerScalarNames(*plain.file->kernels.front());
        for (const auto& [name, value] : options.shape) {
            if (r.shape.count(name)) continue;
            if (scalars.count(name)) {
                r.scalars[name] = value;
            } else if (!options.shapeMayNameOtherKernels) {
                error = fmt::format("--shape names '{}', which is neither a symbolic size nor an integer scalar of "
                                    "kernel '{}'", name, r.kernel);
                return std::nullopt;
            }
        }
    }
    // The candidates are compiled at the model's shape.
    for (const auto& [name, value] : r.shape) compileOptions.defines[name] = std::to_string(value);

    // Every combination (first parameter slowest), or the staged search's share of them.
    int64_t total = 1, tileCombinations = 1, laterCombinations = 1;
    for (const auto& p : r.params) {
        total *= int64_t(p.values.size());
        (searchedInStage2(p.role) ? laterCombinations : tileCombinations) *= int64_t(p.values.size());
    }
    // Each candidate compiles the whole input: bound the work by candidates x input size, so
    // that hostile input cannot make tlc run for long (deterministically, unlike a time limit).
    const double inputBytes = double(program.source().text().size());
    auto tooMuch = [&](int64_t n) { return n > kMaxCandidates || double(n) * inputBytes > kMaxCandidateBytes; };
    r.staged = (total > kExhaustiveLimit || tooMuch(total)) && laterCombinations > 1;
    int64_t budget = r.staged ? tileCombinations + int64_t(kStagedRefine) * laterCombinations : total;
    if (tooMuch(budget)) {
        error = fmt::format("kernel '{}' has {} candidate configurations, too many to try for an input of {} bytes; "
                            "fix some 'auto' parameters with -D",
                            r.kernel, r.staged ? tileCombinations : total, int64_t(inputBytes));
        return std::nullopt;
    }
    r.enumerated = total;
    auto reject = [&](const std::vector<std::pair<std::string, int64_t>>& values, const std::string& why) {
        ++r.rejected;
        if (r.firstRejection.empty()) r.firstRejection = fmt::format("{}: {}", configurationText(values), why);
    };
    std::vector<Evaluated> early;
    std::set<std::vector<int64_t>> tried;
    // On the cpu a block's threads run one after another: `threads` changes nothing the model
    // sees, so once a value compiles for the other parameters' values, the larger ones (which
    // would tie and lose to it) are not tried.
    std::set<std::vector<int64_t>> threadsSettled;
    const bool cpuThreads = target.backend == Backend::Cpu &&
                            std::any_of(r.params.begin(), r.params.end(),
                                        [](const AutoParam& p) { return p.role == AutoRole::Threads; });
    // A configuration through the model: its Tile IR analysed and estimated (the shared memory
    // as planned); "" or why it does not compile or fit.
    CompileOptions tileOptions = compileOptions;
    tileOptions.stop = CompileStage::TileIR;
    using Values = std::vector<std::pair<std::string, int64_t>>;
    auto evaluate = [&](const Values& values, Evaluated& ev) -> std::string {
        DiagnosticEngine diags(program.source());
        Compiled c = compile(program, {KernelConfig(kernel, values)}, tileOptions, diags);
        if (c.kernels.empty()) return firstError(diags);
        for (const ir::Kernel& k : c.kernels) ev.works.push_back(analyzeTileWork(k, target, r.scalars));
        std::string why = estimateLaunches(ev.works, c.kernels, false, target, ev.estimate);
        ev.estimate.values = values;
        return why;
    };
    // The same lowered, with the kernel's exact shared memory.
    CompileOptions lowerOptions = compileOptions;
    lowerOptions.stop = CompileStage::Lowered;
    auto estimateLowered = [&](const Evaluated& ev, CandidateEstimate& e) -> std::string {
        DiagnosticEngine diags(program.source());
        Compiled c = compile(program, {KernelConfig(kernel, ev.estimate.values)}, lowerOptions, diags);
        if (c.kernels.size() != ev.works.size() || diags.hasErrors()) {
            std::string why = firstError(diags);
            return why.empty() ? "lowering failed" : why;
        }
        std::string why = estimateLaunches(ev.works, c.kernels, true, target, e);
        e.values = ev.estimate.values;
        return why;
    };
    auto tryValues = [&](const std::vector<int64_t>& values) {
        if (!tried.insert(values).second) return;
        KernelConfig config{kernel};
        std::vector<int64_t> others;  // the values of the parameters other than threads
        for (size_t i = 0; i < r.params.size(); ++i) {
            config.autoValues.push_back({r.params[i].name, values[i]});
            if (r.params[i].role != AutoRole::Threads) others.push_back(values[i]);
        }
        if (cpuThreads && threadsSettled.count(others)) return;
        ++r.tried;
        Evaluated ev;
        if (std::string why = evaluate(config.autoValues, ev); !why.empty()) {
            reject(config.autoValues, why);
            return;
        }
        if (cpuThreads) threadsSettled.insert(others);
        early.push_back(std::move(ev));
    };
    // Calls `f` with every combination of the values of the parameters `which` selects (first
    // parameter slowest), the others at `fixed`'s values.
    auto forEachCombination = [&](const std::vector<int64_t>& fixed, auto&& which, auto&& f) {
        std::vector<size_t> free;
        int64_t count = 1;
        for (size_t i = 0; i < r.params.size(); ++i)
            if (which(r.params[i])) {
                free.push_back(i);
                count *= int64_t(r.params[i].values.size());
            }
        for (int64_t index = 0; index < count; ++index) {
            std::vector<int64_t> values = fixed;
            int64_t rest = index;
            for (size_t j = free.size(); j-- > 0;) {
                const AutoParam& p = r.params[free[j]];
                values[free[j]] = p.values[size_t(rest % int64_t(p.values.size()))];
                rest /= int64_t(p.values.size());
            }
            f(values);
        }
    };
    auto better = [](const CandidateEstimate& x, const CandidateEstimate& y) {
        if (x.timeUs != y.timeUs) return x.timeUs < y.timeUs;
        return x.values < y.values;
    };
    auto byEstimate = [&](const Evaluated& x, const Evaluated& y) { return better(x.estimate, y.estimate); };
    std::vector<int64_t> probes;
    for (const auto& p : r.params) probes.push_back(probeValue(p, target));
    if (!r.staged) {
        forEachCombination(probes, [](const AutoParam&) { return true; }, tryValues);
    } else {
        forEachCombination(probes, [](const AutoParam& p) { return !searchedInStage2(p.role); }, tryValues);
        std::stable_sort(early.begin(), early.end(), byEstimate);
        std::vector<std::vector<int64_t>> best;
        for (size_t i = 0; i < early.size() && best.size() < kStagedRefine; ++i) {
            std::vector<int64_t> values;
            for (const auto& [name, v] : early[i].estimate.values) values.push_back(v);
            best.push_back(std::move(values));
        }
        for (const auto& values : best)
            forEachCombination(values, [](const AutoParam& p) { return searchedInStage2(p.role); }, tryValues);
    }
    std::stable_sort(early.begin(), early.end(), byEstimate);

    // Lower the best ones, in that order, with the exact shared memory; re-rank those.
    size_t wanted = size_t(std::max(options.top, 1));
    size_t lowerLimit = std::max<size_t>(wanted * 4, 16);
    std::vector<CandidateEstimate> lowered;
    for (const auto& ev : early) {
        if (lowered.size() >= lowerLimit) break;
        CandidateEstimate e;
        if (std::string why = estimateLowered(ev, e); !why.empty())
            reject(ev.estimate.values, why);
        else
            lowered.push_back(e);
    }
    r.compiled = int64_t(lowered.size());
    std::stable_sort(lowered.begin(), lowered.end(), better);
    if (lowered.size() > wanted) lowered.resize(wanted);
    r.ranked = std::move(lowered);
    // The values as written, estimated as the candidates are (lowered: exact shared memory).
    if (!writtenValues.empty() && writtenValues.size() == r.params.size()) {
        Evaluated ev;
        CandidateEstimate e;
        if (evaluate(writtenValues, ev).empty() && estimateLowered(ev, e).empty()) r.written = e;
    }
    return r;
}

std::string configurationText(const std::vector<std::pair<std::string, int64_t>>& values) {
    std::string v;
    for (const auto& [n, x] : values) v += fmt::format("{}{}={}", v.empty() ? "" : ", ", n, x);
    return v;
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
    if (!r.scalars.empty()) {
        Json scalars = Json::object();
        for (const auto& [n, v] : r.scalars) scalars[n] = v;
        j["scalars"] = scalars;
    }
    Json params = Json::array();
    for (const auto& p : r.params) params.push_back({{"name", p.name}, {"role", autoRoleName(p.role)}, {"values", p.values}});
    j["parameters"] = params;
    j["enumerated"] = r.enumerated;
    j["rejected"] = r.rejected;
    j["lowered"] = r.compiled;
    if (!r.firstRejection.empty()) j["first_rejection"] = r.firstRejection;
    j["search"] = r.staged ? "staged" : "all";
    j["tried"] = r.tried;
    j["fingerprint"] = r.fingerprint;
    if (r.measured) {
        const MeasuredSweep& m = *r.measured;
        Json shape = Json::object();
        for (const auto& [n, v] : m.shape) shape[n] = v;
        Json fastest = Json::object();
        for (const auto& [n, v] : m.configs.front().values) fastest[n] = v;
        j["measured"] = {{"source", m.source}, {"machine", m.machine}, {"date", m.date}, {"shape", shape},
                         {"configurations", m.configs.size()}, {"fastest", fastest},
                         {"fastest_us", round3(m.configs.front().us)}};
    }
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
        cj["element_us"] = round3(c.elementUs);
        cj["memory_us"] = round3(c.memoryUs);
        cj["tflops"] = round3(c.timeUs > 0 ? c.flops / (c.timeUs * 1e6) : 0);
        cj["arithmetic_intensity"] = round3(c.intensity);
        cj["sync_us"] = round3(c.syncUs);
        cj["global_bytes"] = int64_t(c.globalBytes);
        cj["dram_bytes"] = int64_t(c.dramBytes);
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
        if (r.measured)
            if (const MeasuredConfig* m = measuredConfig(*r.measured, c.values)) {
                cj["measured_us"] = round3(m->us);
                cj["measured_rank"] = m->rank;
            }
        list.push_back(cj);
    }
    j["candidates"] = list;
    return j.dump(2) + "\n";
}

} // namespace tlc
