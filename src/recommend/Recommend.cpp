#include "recommend/Recommend.h"

#include "ast/AST.h"
#include "compile/Compile.h"
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

// The most candidate configurations the recommender compiles, and the most bytes of input it
// compiles in all (candidates x input size; samples/gemm_auto.tl: 2500 x 1.3 KB).
constexpr int64_t kMaxCandidates = 20000;
constexpr double kMaxCandidateBytes = 8.0 * 1024 * 1024;


// "block_M=16, block_N=32": a candidate, for a rejection's message.
std::string valuesText(const std::vector<std::pair<std::string, int64_t>>& values) {
    std::string v;
    for (const auto& [n, x] : values) v += fmt::format("{}{}={}", v.empty() ? "" : ", ", n, x);
    return v;
}

struct Evaluated {
    CandidateEstimate estimate;
    TileWork work;  // of its Tile IR
};

} // namespace

std::optional<Recommendation> recommend(const Program& program, const RecommendOptions& options, std::string& error) {
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
    CompileOptions compileOptions;
    compileOptions.target = &target;
    compileOptions.defines = definesFor(*kernel, options.defines);
    compileOptions.oneLaunch = true;
    std::map<std::string, AutoRole> uses;
    collectRoles(kernel->body.get(), uses);
    for (const auto& tp : kernel->templateParams) {
        if (!tp.isAuto || compileOptions.defines.count(tp.name)) continue;
        AutoRole role = roleOf(tp.name, uses);
        r.params.push_back({tp.name, role, candidatesFor(role, target)});
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
    // The candidates are compiled at the model's shape.
    for (const auto& [name, value] : r.shape) compileOptions.defines[name] = std::to_string(value);

    // Every combination, first parameter slowest.
    int64_t total = 1;
    for (const auto& p : r.params) total *= int64_t(p.values.size());
    // Each candidate compiles the whole input: bound the work by candidates x input size, so
    // that hostile input cannot make tlc run for long (deterministically, unlike a time limit).
    const size_t inputBytes = program.source().text().size();
    if (total > kMaxCandidates || double(total) * double(inputBytes) > kMaxCandidateBytes) {
        error = fmt::format("kernel '{}' has {} candidate configurations, too many to try for an input of {} bytes; "
                            "fix some 'auto' parameters with -D",
                            r.kernel, total, inputBytes);
        return std::nullopt;
    }
    r.enumerated = total;
    auto reject = [&](const std::vector<std::pair<std::string, int64_t>>& values, const std::string& why) {
        ++r.rejected;
        if (r.firstRejection.empty()) r.firstRejection = fmt::format("{}: {}", valuesText(values), why);
    };
    std::vector<Evaluated> early;
    // On the cpu a block's threads run one after another: `threads` changes nothing the model
    // sees, so once a value compiles for the other parameters' values, the larger ones (which
    // would tie and lose to it) are not tried.
    std::set<std::vector<int64_t>> threadsSettled;
    const bool cpuThreads = target.backend == Backend::Cpu &&
                            std::any_of(r.params.begin(), r.params.end(),
                                        [](const AutoParam& p) { return p.role == AutoRole::Threads; });
    compileOptions.stop = CompileStage::TileIR;
    for (int64_t index = 0; index < total; ++index) {
        int64_t rest = index;
        KernelConfig config{kernel};
        config.autoValues.resize(r.params.size());
        std::vector<int64_t> others;  // the values of the parameters other than threads
        for (size_t i = r.params.size(); i-- > 0;) {
            const auto& p = r.params[i];
            int64_t v = p.values[size_t(rest % int64_t(p.values.size()))];
            rest /= int64_t(p.values.size());
            config.autoValues[i] = {p.name, v};
            if (p.role != AutoRole::Threads) others.push_back(v);
        }
        if (cpuThreads && threadsSettled.count(others)) continue;
        DiagnosticEngine diags(program.source());
        Compiled c = compile(program, {config}, compileOptions, diags);
        Evaluated ev;
        std::string why = c.kernels.empty() ? firstError(diags) : "";
        if (why.empty()) {
            const ir::Kernel& k = c.kernels.front();
            ev.work = analyzeTileWork(k, target);
            why = estimate(ev.work, ev.work.blocks, k.threads, ev.work.plannedSharedBytes, target, ev.estimate);
        }
        if (!why.empty()) {
            reject(config.autoValues, why);
            continue;
        }
        ev.estimate.values = config.autoValues;
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
    compileOptions.stop = CompileStage::Lowered;
    for (auto& ev : early) {
        if (lowered.size() >= lowerLimit) break;
        DiagnosticEngine diags(program.source());
        Compiled c = compile(program, {KernelConfig(kernel, ev.estimate.values)}, compileOptions, diags);
        std::string why;
        if (c.kernels.empty() || diags.hasErrors()) {
            why = firstError(diags);
            if (why.empty()) why = "lowering failed";
        } else {
            const ir::Kernel& k = c.kernels.front();
            CandidateEstimate e;
            // The lowered kernel's shared memory, or what a multi-buffered pipeline of the
            // stages needs (targets that run the loop unpipelined), whichever is larger.
            int64_t shared = std::max(k.sharedBytes, ev.work.plannedSharedBytes);
            why = estimate(ev.work, ev.estimate.blocks, k.threads, shared, target, e);
            e.loweredSharedBytes = k.sharedBytes;
            e.values = ev.estimate.values;
            if (why.empty()) lowered.push_back(e);
        }
        if (!why.empty()) reject(ev.estimate.values, why);
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
