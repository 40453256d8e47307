// --emit-manifest: the launchers of one output as JSON (docs/integration.md, "The manifest"), read
// from the same signatures, checks and launch shapes the header is written from, so that the
// two cannot disagree.
#include "emit/CEmitter.h"
#include "ir/Printer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tlc::codegen {

using namespace ir;
using Json = nlohmann::ordered_json;

namespace {

std::string kindName(KernelParam::Kind k) {
    switch (k) {
    case KernelParam::Kind::Tensor: return "tensor";
    case KernelParam::Kind::Scalar: return "scalar";
    case KernelParam::Kind::Size: return "size";
    }
    return "?";
}

Json exprs(const std::vector<Expr>& list) {
    Json out = Json::array();
    for (const auto& e : list) out.push_back(printExpr(e));
    return out;
}

Json param(const LauncherParam& lp, const std::vector<const Kernel*>& kernels) {
    const KernelParam& p = *lp.param;
    Json j{{"name", lp.name}, {"kind", kindName(p.kind)}, {"dtype", std::string(dtypeName(p.dtype))},
           {"cpp_type", lp.type}, {"c_type", lp.cType}};
    if (p.kind == KernelParam::Kind::Tensor && p.buffer) {
        j["shape"] = exprs(p.buffer->shape);
        j["strides"] = exprs(p.buffer->strides);
        j["access"] = lp.type.rfind("const ", 0) == 0 ? "read" : "written";
        j["alignment_bytes"] = CEmitter::tensorAlignment(p, kernels);
    }
    return j;
}

Json compileTimeValues(const Kernel& k) {
    Json out = Json::object();
    for (const auto& [name, value] : k.templateValues) out[name] = value;
    return out;
}

} // namespace

int CEmitter::tensorAlignment(const KernelParam& p, const std::vector<const Kernel*>& kernels) {
    int align = std::max(1, dtypeInfo(p.dtype).bits / 8);
    for (const Kernel* k : kernels) {
        if (!k->generalVariant.empty()) continue;  // its general variant takes what its fast path does not
        for (const auto& c : k->launchChecks)
            if (!c.condition && c.tensor == p.name) align = std::max(align, c.alignBytes);
        for (const auto& m : k->tensorMaps)
            if (m.tensor == p.name) align = std::max(align, 16);
    }
    return align;
}

std::string CEmitter::manifest(const std::vector<Kernel>& kernels, const std::string& sourceName) const {
    auto launchOf = [&](const Kernel& k) {
        Json launch{{"kernel_function", signature(k).kernelName},
                    {"grid", exprs(k.gridExtents)},
                    {"block_threads", k.threads},
                    {"producer_threads", k.producerThreads},
                    {"shared_memory_bytes", k.sharedBytes}};
        // Thread-block clusters (a compile-time attribute of the kernel): the grid in whole clusters.
        if (k.clusterSize > 1) {
            Json dims = Json::array({1, 1, 1});
            dims[size_t(k.clusterDim)] = k.clusterSize;
            launch["cluster_dims"] = dims;
            Json& extent = launch["grid"][size_t(k.clusterDim)];
            extent = fmt::format("({} + {}) / {} * {}", extent.get<std::string>(), k.clusterSize - 1, k.clusterSize,
                                 k.clusterSize);
        }
        return launch;
    };
    // Which variant runs when (shape variants): the fast path's conditions, the general variant's grids.
    auto shapeVariants = [&](const std::vector<const Kernel*>& fast, Json& j) {
        std::vector<const Kernel*> general = generalParts(*fast.front());
        if (general.empty()) return;
        Json conditions = Json::array(), grids = Json::array();
        for (const Kernel* k : fast)
            for (const auto& c : fastPathConditions(*k))
                if (std::find(conditions.begin(), conditions.end(), describe(c)) == conditions.end())
                    conditions.push_back(describe(c));
        for (const Kernel* k : general) grids.push_back(launchOf(*k));
        j["shape_variants"] = Json{{"fast_conditions", conditions}, {"general_grids", grids}};
    };
    auto common = [&](const Kernel& k, const std::string& kind, const std::string& source) {
        return Json{{"kind", kind}, {"source_kernel", source}, {"source_line", k.loc.valid() ? k.loc.line : 0},
                    {"compile_time_values", compileTimeValues(k)}};
    };
    Json launchers = Json::array();
    for (size_t i = 0; i < kernels.size(); ++i) {
        const Kernel& k = kernels[i];
        if (k.generalShapes) continue;  // described with its fast variant (shape_variants)
        if (k.group.empty()) {
            const LauncherSignature& sig = signature(k);
            Json j = common(k, "kernel", k.name);
            j["launcher"] = sig.name;
            j["c_launcher"] = sig.cName;
            Json params = Json::array();
            for (const auto& lp : sig.params) params.push_back(param(lp, {&k}));
            j["params"] = params;
            j["checks"] = checkDescriptions(k);
            j["grids"] = Json::array({launchOf(k)});
            shapeVariants({&k}, j);
            launchers.push_back(j);
        } else if (k.part == 0) {
            std::vector<const Kernel*> parts = groupParts(kernels, i);
            const GroupNames& g = groupNames_.at(k.group);
            Json j = common(k, "group", k.group);
            j["launcher"] = g.launch;
            j["c_launcher"] = g.cLaunch;
            Json params = Json::array();
            for (const auto& lp : g.params) params.push_back(param(lp, parts));
            j["params"] = params;
            j["workspace"] = Json{{"size_function", g.workspaceSize},
                                  {"c_size_function", g.cWorkspaceSize},
                                  {"alignment_bytes", kWorkspaceAlign}};
            Json checks = Json::array(), grids = Json::array();
            for (const Kernel* part : parts) {
                for (const auto& c : checkDescriptions(*part)) checks.push_back(c);
                grids.push_back(launchOf(*part));
            }
            j["checks"] = checks;
            j["grids"] = grids;
            shapeVariants(parts, j);
            launchers.push_back(j);
        }
    }
    for (const auto& set : options_.variants) {
        const DispatcherNames& d = dispatcherNames_.at(set.name);
        const Kernel& first = kernels[set.kernels.front()];
        Json j = common(first, "dispatcher", set.name);
        j.erase("compile_time_values");  // each variant has its own, below
        j["launcher"] = d.launch;
        j["c_launcher"] = d.cLaunch;
        Json params = Json::array();
        for (const auto& lp : signature(first).params) params.push_back(param(lp, {&first}));
        j["params"] = params;
        j["variant_launcher"] = d.variant;
        j["variant_count_function"] = d.count;
        j["variant_name_function"] = d.names;
        j["pick_function"] = d.pick;
        Json variants = Json::array();
        for (size_t v : set.kernels)
            variants.push_back(Json{{"launcher", signature(kernels[v]).name},
                                    {"compile_time_values", compileTimeValues(kernels[v])},
                                    {"grids", Json::array({launchOf(kernels[v])})}});
        j["variants"] = variants;
        launchers.push_back(j);
    }

    Json out{{"tlc_version", std::string("tlc ") + TLC_VERSION},
             {"source", sourceName},
             {"target", target_.name},
             {"backend", std::string(backendName(target_.backend))},
             {"arch", target_.arch},
             {"header", options_.headerName},
             {"namespace", options_.nameSpace},
             {"status_type", errorType()},
             {"success", successValue()},
             {"invalid_value", invalidValue()},
             {"stream_type", streamType()}};
    if (!target_.cpuIsa.empty())
        out["cpu_isa"] = Json{{"compile_flags", target_.cpuIsa.compileFlags}, {"cpuid", target_.cpuIsa.cpuid}};
    out["launchers"] = launchers;
    return out.dump(2) + "\n";
}

} // namespace tlc::codegen
