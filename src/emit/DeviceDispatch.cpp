// `tlc dispatch` (DeviceDispatch.h): the dispatching launchers of one .tl file's CUDA outputs.
// For each launcher NAME the manifests list (in NAME's namespace, with its parameters):
//   NAME_target_count           how many targets, in the order the manifests were given
//   NAME_target_name(t)         target t's name ("sm90")
//   NAME_pick_target(maj, min)  the target for a device of that compute capability, or -1
//   NAME_target(t, args)        launches target t's launcher
//   NAME(args)                  launches the pick for the current device
//   NAME_workspace_size(sizes)  groups: the largest of the targets' workspaces
// and the extern "C" twins of NAME and NAME_workspace_size.
#include "emit/DeviceDispatch.h"

#include "emit/CEmitter.h"
#include "emit/CodeWriter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace tlc {

using codegen::CodeWriter;
using codegen::commentText;
using codegen::escapeCString;
using codegen::join;
using codegen::kLineWidth;
using codegen::wrapComment;
using Json = nlohmann::json;

namespace {

struct Param {
    std::string name, kind, cppType, cType;
    bool operator==(const Param&) const = default;
};

struct Launcher {
    std::string name, cName, sourceKernel;
    int line = 0;
    std::vector<Param> params;
    std::string workspaceSize;  // groups: NAME_workspace_size; else empty
};

struct Variant {
    std::string path, include, target, arch, nameSpace, source;
    int major = 0, minor = 0;
    bool exact = false;  // sm_XYa: runs only on X.Y
    std::vector<Launcher> launchers;
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
    throw DispatchError(fmt::format("{}: {}", path, message));
}

std::string field(const Json& j, const char* name, const std::string& path) {
    if (!j.is_object() || !j.contains(name) || !j[name].is_string())
        fail(path, fmt::format("not a tlc manifest: no string field '{}'", name));
    return j[name].get<std::string>();
}

// "sm_80" -> 8.0, any device from 8.0 on (through the compute_80 PTX); "sm_90a" -> exactly 9.0.
void parseArch(Variant& v) {
    const std::string& a = v.arch;
    size_t digits = 3;
    while (digits < a.size() && std::isdigit(static_cast<unsigned char>(a[digits]))) ++digits;
    const std::string suffix = a.substr(digits);
    if (a.rfind("sm_", 0) != 0 || digits < 5 || digits > 6 || (suffix != "" && suffix != "a"))
        fail(v.path, fmt::format("target '{}' has arch '{}', not sm_XY or sm_XYa", v.target, a));
    const int cc = std::stoi(a.substr(3, digits - 3));
    v.major = cc / 10;
    v.minor = cc % 10;
    v.exact = suffix == "a";
}

Variant readManifest(const DispatchInput& in) {
    Variant v;
    v.path = in.path;
    Json j = Json::parse(in.text, nullptr, false);
    if (j.is_discarded()) fail(in.path, "not JSON (give the .json that tlc --emit-manifest writes)");
    v.target = field(j, "target", in.path);
    v.source = field(j, "source", in.path);
    v.nameSpace = field(j, "namespace", in.path);
    v.arch = field(j, "arch", in.path);
    v.include = in.folder + field(j, "header", in.path);
    const std::string backend = field(j, "backend", in.path);
    if (backend != "cuda")
        fail(in.path, fmt::format("target '{}' is a {} target; tlc dispatch picks between CUDA targets (build the "
                                  "others into a library of their own)",
                                  v.target, backend));
    parseArch(v);
    if (!j.contains("launchers") || !j["launchers"].is_array()) fail(in.path, "not a tlc manifest: no 'launchers'");
    // The variants of an --emit-variants dispatcher are its business (each target may have its
    // own): the dispatcher's launcher is the one to dispatch over.
    std::set<std::string> variantLaunchers;
    for (const Json& l : j["launchers"])
        if (l.is_object() && l.contains("variants") && l["variants"].is_array())
            for (const Json& v : l["variants"]) variantLaunchers.insert(field(v, "launcher", in.path));
    for (const Json& l : j["launchers"]) {
        if (variantLaunchers.count(field(l, "launcher", in.path))) continue;
        Launcher launcher;
        launcher.name = field(l, "launcher", in.path);
        launcher.cName = field(l, "c_launcher", in.path);
        launcher.sourceKernel = field(l, "source_kernel", in.path);
        launcher.line = l.value("source_line", 0);
        if (!l.contains("params") || !l["params"].is_array())
            fail(in.path, fmt::format("launcher '{}' has no 'params'", launcher.name));
        for (const Json& p : l["params"])
            launcher.params.push_back(
                {field(p, "name", in.path), field(p, "kind", in.path), field(p, "cpp_type", in.path), field(p, "c_type", in.path)});
        if (l.contains("workspace")) launcher.workspaceSize = field(l["workspace"], "size_function", in.path);
        v.launchers.push_back(std::move(launcher));
    }
    return v;
}

std::string paramText(const Param& p) { return p.cppType + " " + p.name; }

// The targets must declare the same launchers, so that one signature calls each of them.
void checkSameLaunchers(const std::vector<Variant>& variants) {
    const Variant& first = variants.front();
    for (const Variant& v : variants) {
        if (v.source != first.source)
            fail(v.path, fmt::format("it was generated from {}, {} from {}: dispatch over the outputs of one .tl file",
                                     v.source, first.path, first.source));
        for (const Variant* w = &first; w != &v; ++w)
            if (w->target == v.target) fail(v.path, fmt::format("target '{}' is given twice", v.target));
        if (v.launchers.size() != first.launchers.size())
            fail(v.path, fmt::format("{} launchers, {} has {}: compile every target from the same file with the same "
                                     "-D and --kernel",
                                     v.launchers.size(), first.path, first.launchers.size()));
        for (size_t i = 0; i < v.launchers.size(); ++i) {
            const Launcher& a = first.launchers[i];
            const Launcher& b = v.launchers[i];
            if (a.name != b.name) fail(v.path, fmt::format("launcher {} is '{}', in {} '{}'", i + 1, b.name, first.path, a.name));
            if (a.params != b.params || a.workspaceSize.empty() != b.workspaceSize.empty()) {
                std::vector<std::string> pa, pb;
                for (const auto& p : a.params) pa.push_back(paramText(p));
                for (const auto& p : b.params) pb.push_back(paramText(p));
                if (!a.workspaceSize.empty()) pa.push_back("void* workspace");
                if (!b.workspaceSize.empty()) pb.push_back("void* workspace");
                fail(v.path, fmt::format("launcher '{}' takes ({}) for target {}, ({}) for target {}: one launcher "
                                         "cannot call both",
                                         b.name, join(pb, ", "), v.target, join(pa, ", "), first.target));
            }
        }
    }
}

// "head(p1, p2)tail" on one line when it fits, else one parameter per line aligned after "(".
std::vector<std::string> wrapSignature(const std::string& head, const std::vector<std::string>& params,
                                       const std::string& tail, int indent = 0) {
    std::string one = head + join(params, ", ") + tail;
    if (int(one.size()) + indent <= kLineWidth || params.size() < 2) return {one};
    std::vector<std::string> lines;
    std::string pad(head.size(), ' ');
    for (size_t i = 0; i < params.size(); ++i)
        lines.push_back((i == 0 ? head : pad) + params[i] + (i + 1 < params.size() ? "," : tail));
    return lines;
}

void lines(CodeWriter& out, const std::vector<std::string>& ls) {
    for (const auto& l : ls) out.line(l);
}

void comment(CodeWriter& out, const std::string& text) {
    for (const auto& l : wrapComment("// ", "// ", text)) out.line(commentText(l));
}

std::string qualified(const std::string& ns, const std::string& name) { return "::" + (ns.empty() ? "" : ns + "::") + name; }

// What the pick tests for one target, and how the comment names its reach.
std::string condition(const Variant& v) {
    if (v.exact) return fmt::format("major == {} && minor == {}", v.major, v.minor);
    if (v.minor == 0) return fmt::format("major >= {}", v.major);
    return fmt::format("major > {} || (major == {} && minor >= {})", v.major, v.major, v.minor);
}
std::string reach(const Variant& v) {
    if (v.exact) return fmt::format("{} ({}: exactly {}.{})", v.target, v.arch, v.major, v.minor);
    return fmt::format("{} ({} with compute_{}{} PTX: {}.{} and later)", v.target, v.arch, v.major, v.minor, v.major,
                       v.minor);
}

struct Names {
    std::string count, names, pick, byIndex;
};
Names namesOf(const Launcher& l) {
    return {l.name + "_target_count", l.name + "_target_name", l.name + "_pick_target", l.name + "_target"};
}

std::vector<std::string> launchParams(const Launcher& l, bool defaults) {
    std::vector<std::string> params;
    for (const auto& p : l.params) params.push_back(paramText(p));
    if (!l.workspaceSize.empty()) params.push_back("void* workspace");
    params.push_back(defaults ? "cudaStream_t stream = nullptr" : "cudaStream_t stream");
    return params;
}

std::vector<std::string> launchArgs(const Launcher& l) {
    std::vector<std::string> args;
    for (const auto& p : l.params) args.push_back(p.name);
    if (!l.workspaceSize.empty()) args.push_back("workspace");
    args.push_back("stream");
    return args;
}

std::vector<std::string> sizeParams(const Launcher& l, bool cTypes) {
    std::vector<std::string> sizes;
    for (const auto& p : l.params)
        if (p.kind == "size") sizes.push_back((cTypes ? p.cType : p.cppType) + " " + p.name);
    return sizes;
}

std::vector<std::string> sizeArgs(const Launcher& l) {
    std::vector<std::string> sizes;
    for (const auto& p : l.params)
        if (p.kind == "size") sizes.push_back(p.name);
    return sizes;
}

void declare(CodeWriter& out, const Launcher& l, const std::vector<Variant>& variants) {
    const Names n = namesOf(l);
    std::vector<std::string> targets, headers;
    for (size_t t = 0; t < variants.size(); ++t) {
        targets.push_back(fmt::format("{} {}", t, reach(variants[t])));
        headers.push_back(variants[t].include);
    }
    comment(out, fmt::format("{} ({}{}) on the current CUDA device, built for {} target{}: {}. {}(...) launches the "
                             "highest target the device runs ({}) and returns cudaErrorNoKernelImageForDevice when "
                             "none does, or the error of asking for the device; {}(t, ...) launches target t. "
                             "Parameters, checks and grids: each target's header ({}).",
                             l.name, variants.front().source, l.line ? fmt::format(":{}", l.line) : "",
                             variants.size(), variants.size() == 1 ? "" : "s", join(targets, ", "), l.name, n.pick,
                             n.byIndex, join(headers, ", ")));
    out.line(fmt::format("constexpr int {} = {};", n.count, variants.size()));
    out.line(fmt::format("const char* {}(int target);", n.names));
    out.line(fmt::format("int {}(int major, int minor);", n.pick));
    std::vector<std::string> indexed = launchParams(l, true);
    indexed.insert(indexed.begin(), "int target");
    lines(out, wrapSignature("cudaError_t " + n.byIndex + "(", indexed, ");"));
    lines(out, wrapSignature("cudaError_t " + l.name + "(", launchParams(l, true), ");"));
    if (!l.workspaceSize.empty()) {
        out.line(fmt::format("// The largest of the targets' workspaces: enough for whichever {} runs.", l.name));
        lines(out, wrapSignature("size_t " + l.workspaceSize + "(", sizeParams(l, false), ");"));
    }
    out.blank();
}

void define(CodeWriter& out, const Launcher& l, const std::vector<Variant>& variants) {
    const Names n = namesOf(l);
    std::string title = fmt::format("// ---- {}: dispatch over {} targets ", l.name, variants.size());
    if (title.size() < size_t(kLineWidth)) title += std::string(kLineWidth - title.size(), '-');
    out.line(title);
    std::vector<std::string> quoted;
    for (const auto& v : variants) quoted.push_back("\"" + escapeCString(v.target) + "\"");
    out.line(fmt::format("const char* {}(int target)", n.names));
    out.line("{");
    out.indent();
    lines(out, wrapSignature(fmt::format("static const char* const names[{}] = {{", variants.size()), quoted, "};", 4));
    out.line(fmt::format("return target >= 0 && target < {} ? names[target] : nullptr;", variants.size()));
    out.dedent();
    out.line("}");
    out.blank();

    // The pick: the highest compute capability first; at equal ones the exact (sm_XYa) code,
    // which may use the instructions only X.Y has.
    std::vector<size_t> order(variants.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const Variant& x = variants[a];
        const Variant& y = variants[b];
        if (x.major != y.major) return x.major > y.major;
        if (x.minor != y.minor) return x.minor > y.minor;
        return x.exact && !y.exact;
    });
    out.line("// The highest target a device of compute capability major.minor runs; -1 when none does.");
    out.line(fmt::format("int {}(int major, int minor)", n.pick));
    out.line("{");
    out.indent();
    for (size_t t : order)
        out.line(fmt::format("if ({}) return {};  // {}", condition(variants[t]), t, reach(variants[t])));
    out.line("return -1;");
    out.dedent();
    out.line("}");
    out.blank();

    std::vector<std::string> indexed = launchParams(l, false);
    indexed.insert(indexed.begin(), "int target");
    lines(out, wrapSignature("cudaError_t " + n.byIndex + "(", indexed, ")"));
    out.line("{");
    out.indent();
    out.line("switch (target) {");
    for (size_t t = 0; t < variants.size(); ++t)
        lines(out, wrapSignature(fmt::format("case {}: return {}(", t, qualified(variants[t].nameSpace, l.name)),
                                 launchArgs(l), ");", 4));
    out.line("default: return cudaErrorInvalidValue;  // no such target");
    out.line("}");
    out.dedent();
    out.line("}");
    out.blank();

    lines(out, wrapSignature("cudaError_t " + l.name + "(", launchParams(l, false), ")"));
    out.line("{");
    out.indent();
    out.line("int major = 0;");
    out.line("int minor = 0;");
    out.line("const cudaError_t status = ::tlc_device_capability(major, minor);");
    out.line("if (status != cudaSuccess) return status;");
    out.line(fmt::format("const int target = {}(major, minor);", n.pick));
    out.line("if (target < 0) return cudaErrorNoKernelImageForDevice;  // no target runs on this device");
    std::vector<std::string> args = launchArgs(l);
    args.insert(args.begin(), "target");
    lines(out, wrapSignature("return " + n.byIndex + "(", args, ");", 4));
    out.dedent();
    out.line("}");
    out.blank();

    if (!l.workspaceSize.empty()) {
        lines(out, wrapSignature("size_t " + l.workspaceSize + "(", sizeParams(l, false), ")"));
        out.line("{");
        out.indent();
        const std::vector<std::string> sizes = sizeArgs(l);
        for (size_t t = 0; t < variants.size(); ++t) {
            std::string call = qualified(variants[t].nameSpace, l.workspaceSize) + "(" + join(sizes, ", ") + ")";
            out.line(t == 0 ? "size_t bytes = " + call + ";" : "bytes = std::max(bytes, " + call + ");");
        }
        out.line("return bytes;");
        out.dedent();
        out.line("}");
        out.blank();
    }
}

std::vector<std::string> cParams(const Launcher& l) {
    std::vector<std::string> params;
    for (const auto& p : l.params) params.push_back(p.cType + " " + p.name);
    if (!l.workspaceSize.empty()) params.push_back("void* workspace");
    params.push_back("void* stream");
    return params;
}

void defineCTwins(CodeWriter& out, const Launcher& l, const DispatchOptions& o) {
    std::vector<std::string> args;
    for (const auto& p : l.params) {
        if (p.kind == "tensor") args.push_back("static_cast<" + p.cppType + ">(" + p.name + ")");
        else if (p.cType != p.cppType) args.push_back(p.cppType + "(" + p.name + ")");
        else args.push_back(p.name);
    }
    if (!l.workspaceSize.empty()) args.push_back("workspace");
    args.push_back("static_cast<cudaStream_t>(stream)");
    lines(out, wrapSignature("extern \"C\" int " + o.cPrefix + l.name + "(", cParams(l), ")"));
    out.line("{");
    out.indent();
    lines(out, wrapSignature("return static_cast<int>(" + qualified(o.nameSpace, l.name) + "(", args, "));", 4));
    out.dedent();
    out.line("}");
    out.blank();
    if (!l.workspaceSize.empty()) {
        lines(out, wrapSignature("extern \"C\" size_t " + o.cPrefix + l.workspaceSize + "(", sizeParams(l, true), ")"));
        out.line("{");
        out.indent();
        out.line("return " + qualified(o.nameSpace, l.workspaceSize) + "(" + join(sizeArgs(l), ", ") + ");");
        out.dedent();
        out.line("}");
        out.blank();
    }
}

void openNamespace(CodeWriter& out, const std::string& ns) {
    if (ns.empty()) return;
    out.line("namespace " + ns + " {");
    out.blank();
}

void closeNamespace(CodeWriter& out, const std::string& ns) {
    if (ns.empty()) return;
    out.line("} // namespace " + ns);
    out.blank();
}

std::string trimmed(std::string text) {
    while (text.size() >= 2 && text.substr(text.size() - 2) == "\n\n") text.pop_back();
    return text;
}

} // namespace

DispatchResult emitDeviceDispatch(const std::vector<DispatchInput>& inputs, const DispatchOptions& options) {
    if (inputs.empty()) throw DispatchError("no manifests to dispatch over");
    std::vector<Variant> variants;
    for (const auto& in : inputs) variants.push_back(readManifest(in));
    checkSameLaunchers(variants);
    for (const auto& v : variants)
        if (v.nameSpace == options.nameSpace)
            fail(v.path, fmt::format("its launchers are in namespace '{}', the dispatcher's: each target's need "
                                     "a namespace of their own (tlc --namespace NS::TARGET)",
                                     v.nameSpace));
    const std::vector<Launcher>& launchers = variants.front().launchers;
    bool workspaces = false;
    for (const auto& l : launchers) workspaces = workspaces || !l.workspaceSize.empty();

    std::vector<std::string> targets;
    for (const auto& v : variants) targets.push_back(v.target);
    auto banner = [&](const std::string& file) {
        return fmt::format("// {}generated by tlc dispatch from {}'s outputs for {}; do not edit.\n",
                           file.empty() ? "" : file + ": ", commentText(variants.front().source), join(targets, ", "));
    };

    DispatchResult result;
    CodeWriter h;
    h.raw(banner(options.headerName));
    h.line("// Launchers that run the target built for the current CUDA device (docs/integration.md).");
    h.directive("#pragma once");
    h.blank();
    for (const auto& v : variants) h.directive("#include \"" + escapeCString(v.include) + "\"");
    h.blank();
    h.directive("#include <cstddef>");
    h.directive("#include <cuda_runtime.h>");
    h.blank();
    openNamespace(h, options.nameSpace);
    for (const auto& l : launchers) declare(h, l, variants);
    closeNamespace(h, options.nameSpace);
    h.line("// For C and FFI callers: tensors as void pointers, the stream as void*, the status as int.");
    for (const auto& l : launchers) {
        lines(h, wrapSignature("extern \"C\" int " + options.cPrefix + l.name + "(", cParams(l), ");"));
        if (!l.workspaceSize.empty())
            lines(h, wrapSignature("extern \"C\" size_t " + options.cPrefix + l.workspaceSize + "(", sizeParams(l, true),
                                   ");"));
    }
    result.header = trimmed(h.take());

    CodeWriter s;
    s.raw(banner(options.outputName));
    s.directive("#include \"" + escapeCString(options.headerName) + "\"");
    s.blank();
    if (workspaces) s.directive("#include <algorithm>");
    s.directive("#include <atomic>");
    s.blank();
    s.line("namespace {");
    s.blank();
    s.line("// The current device's compute capability (major * 100 + minor), asked once per device: it cannot");
    s.line("// change. 0: not asked yet. Devices past the 64th are asked every time.");
    s.line("std::atomic<int> tlc_known_capability[64];");
    s.blank();
    s.line("cudaError_t tlc_device_capability(int& major, int& minor)");
    s.line("{");
    s.indent();
    s.line("int device = 0;");
    s.line("cudaError_t status = cudaGetDevice(&device);");
    s.line("if (status != cudaSuccess) return status;");
    s.line("const bool cached = device >= 0 && device < 64;");
    s.line("const int known = cached ? tlc_known_capability[device].load(std::memory_order_relaxed) : 0;");
    s.line("if (known != 0) {");
    s.indent();
    s.line("major = known / 100;");
    s.line("minor = known % 100;");
    s.line("return cudaSuccess;");
    s.dedent();
    s.line("}");
    s.line("status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);");
    s.line("if (status != cudaSuccess) return status;");
    s.line("status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);");
    s.line("if (status != cudaSuccess) return status;");
    s.line("if (cached) tlc_known_capability[device].store(major * 100 + minor, std::memory_order_relaxed);");
    s.line("return cudaSuccess;");
    s.dedent();
    s.line("}");
    s.blank();
    s.line("} // namespace");
    s.blank();
    openNamespace(s, options.nameSpace);
    for (const auto& l : launchers) define(s, l, variants);
    closeNamespace(s, options.nameSpace);
    for (const auto& l : launchers) defineCTwins(s, l, options);
    result.source = trimmed(s.take());
    return result;
}

} // namespace tlc
