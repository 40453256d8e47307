// The launcher of a source kernel with several grids or with global scratch (ir::Kernel::group):
// it allocates nothing. The caller asks NAME_workspace_size(sizes...) for the bytes of the
// kernel's global scratch, passes a workspace of at least that many, and the launcher points
// each scratch buffer into it, checks every grid (emitLaunchChecks and, on the GPU, the tensor
// maps: the parts' launchers in check-only mode) and only then launches the grids in order on
// the stream (on the CPU, one after another).
#include "emit/CEmitter.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

using namespace ir;

std::vector<const Kernel*> groupParts(const std::vector<Kernel>& kernels, size_t first) {
    std::vector<const Kernel*> parts;
    for (size_t j = first; j < kernels.size() && kernels[j].group == kernels[first].group &&
                           kernels[j].part == int(j - first);
         ++j)
        parts.push_back(&kernels[j]);
    if (int(parts.size()) != kernels[first].parts)
        throw EmitError("emit: the grids of '" + kernels[first].group + "' are not all there");
    return parts;
}

namespace {

// Every scratch buffer of the group, in order of declaration (the workspace layout); the parts
// that declare one see the same buffer under the same name.
std::vector<const KernelParam*> scratchOf(const std::vector<const Kernel*>& parts) {
    std::vector<const KernelParam*> out;
    for (const Kernel* k : parts)
        for (const auto& p : k->params) {
            if (!p.scratch) continue;
            bool seen = false;
            for (const KernelParam* q : out) seen = seen || q->name == p.name;
            if (!seen) out.push_back(&p);
        }
    return out;
}

// Each scratch buffer starts at a multiple of this many bytes from the workspace's start.
constexpr int kScratchAlign = 256;

} // namespace

// The bytes of scratch buffer b (of the group's first part that has it) as a size_t expression
// over the sizes, as the function being emitted names them.
std::string CEmitter::workspaceSizeExpr(const std::vector<const Kernel*>& parts, const Buffer& b) {
    std::vector<std::string> factors;
    // The sizes are the part's variables; the function declared the group's parameters under
    // the same .tl names, so map each part's size variables to them by name.
    std::vector<std::pair<VarPtr, Expr>> rename;
    const Kernel* owner = nullptr;
    for (const Kernel* k : parts)
        for (const auto& p : k->params)
            if (p.buffer.get() == b.get()) owner = k;
    if (!owner) throw EmitError("emit: scratch buffer '" + b->name + "' of no part");
    for (const auto& p : owner->params) {
        if (p.kind != KernelParam::Kind::Size) continue;
        for (const Kernel* k0 = parts.front(); const auto& q : k0->params)
            if (q.kind == KernelParam::Kind::Size && q.name == p.name && q.var != p.var)
                rename.push_back({p.var, varExpr(q.var)});
    }
    for (const auto& d : b->shape) {
        Expr e = rename.empty() ? d : substitute(d, rename);
        if (const int64_t* v = asConstInt(e)) factors.push_back(std::to_string(*v));
        else factors.push_back("size_t(" + expr(e) + ")");
    }
    int bits = dtypeBits(b->dtype);
    std::string elements = join(factors, " * ");
    if (bits % 8 == 0) return elements + " * " + std::to_string(bits / 8);
    return fmt::format("({} * {} + 7) / 8", elements, bits);
}

void CEmitter::emitGroupDeclaration(const std::vector<const Kernel*>& parts, CodeWriter& out) {
    const Kernel& k0 = *parts.front();
    const GroupNames& g = groupNames_.at(k0.group);
    beginKernel(k0);
    std::vector<std::string> doc;
    for (const auto& l : wrapComment("// ", "//   ", launcherTitle(k0, k0.group))) doc.push_back(l);
    for (const auto& lp : g.params) {
        const KernelParam& p = *lp.param;
        std::string text;
        if (p.kind == KernelParam::Kind::Tensor)
            text = fmt::format("{}: {}, {}", p.name, bufferTypeText(p.buffer), lp.type.rfind("const ", 0) == 0 ? "read" : "written");
        else
            text = scalarParamText(p);
        for (const auto& l : wrapComment("//   ", "//     ", text)) doc.push_back(l);
    }
    std::vector<std::string> sizes, scratch;
    for (const auto& lp : g.params)
        if (lp.param->kind == KernelParam::Kind::Size) sizes.push_back(lp.name);
    for (const KernelParam* p : scratchOf(parts)) scratch.push_back(p->name + ": " + bufferTypeText(p->buffer));
    std::string ws = fmt::format(
        "workspace: at least {}({}) bytes, {}-byte aligned, owned by the caller; it holds the global scratch{}",
        g.workspaceSize, join(sizes, ", "), kWorkspaceAlign,
        scratch.empty() ? std::string(" (none: it may be null)")
                        : fmt::format(" ({}; each at a multiple of {} bytes)", join(scratch, ", "), kScratchAlign));
    for (const auto& l : wrapComment("//   ", "//     ", ws)) doc.push_back(l);
    std::string runs = fmt::format("runs {} grid{} in order{}:", parts.size(), parts.size() == 1 ? "" : "s",
                                   target_.backend == Backend::Cpu ? "" : " on the stream");
    for (const auto& l : wrapComment("//   ", "//     ", runs)) doc.push_back(l);
    std::vector<std::string> checks;
    if (!scratchOf(parts).empty()) checks.push_back(fmt::format("workspace is not null and {}-byte aligned", kWorkspaceAlign));
    for (const Kernel* k : parts) {
        beginKernel(*k);
        for (const auto& l : wrapComment("//     ", "//       ", fmt::format("{}. {}", k->part + 1, launchDescription(*k))))
            doc.push_back(l);
        for (const auto& c : checkDescriptions(*k))
            if (std::find(checks.begin(), checks.end(), c) == checks.end()) checks.push_back(c);
    }
    std::string variants = variantsDescription(parts);
    if (!variants.empty())
        for (const auto& l : wrapComment("//   ", "//   ", variants)) doc.push_back(commentText(l));
    std::string returns = fmt::format(
        "Returns {} and launches nothing unless: {}. An empty grid is skipped. Tensors must not overlap{}.",
        invalidValue(), join(checks, "; "), target_.backend == Backend::Cpu ? "" : " (__restrict__)");
    for (const auto& l : wrapComment("//   ", "//   ", returns)) doc.push_back(commentText(l));
    for (const auto& l : doc) out.line(commentText(l));

    std::vector<std::string> params;
    for (const auto& lp : g.params)
        if (lp.param->kind == KernelParam::Kind::Size) params.push_back(lp.type + " " + lp.name);
    for (const auto& l : wrapCall("size_t " + g.workspaceSize + "(", params, ");", 0, true)) out.line(l);
    params.clear();
    for (const auto& lp : g.params) params.push_back(lp.type + " " + lp.name);
    params.push_back("void* workspace");
    if (!streamType().empty()) params.push_back(streamType() + " stream = nullptr");
    for (const auto& l : wrapCall(errorType() + " " + g.launch + "(", params, ");", 0, true)) out.line(l);
    out.blank();
}

void CEmitter::emitGroup(const std::vector<const Kernel*>& parts, CodeWriter& out) {
    const Kernel& k0 = *parts.front();
    const GroupNames& g = groupNames_.at(k0.group);
    out_ = &out;
    beginKernel(k0);
    std::vector<const KernelParam*> scratch = scratchOf(parts);

    std::string title = fmt::format("// ---- {} ({}): the workspace and the grids in order ", k0.group,
                                    k0.loc.valid() ? where(k0.loc) : sourceName());
    if (title.size() < size_t(kLineWidth)) title += std::string(kLineWidth - title.size(), '-');
    line(title);

    // NAME_workspace_size(sizes...): each buffer's bytes rounded up to kScratchAlign. (A general
    // variant's group has the same scratch: the caller asks the fast one.)
    std::vector<std::string> params;
    if (!g.general) {
        startFunction();
        std::vector<std::string> negative;
        for (const auto& lp : g.params) {
            if (lp.param->kind != KernelParam::Kind::Size) continue;
            std::string n = names_.declare(paramOwner(*lp.param), lp.name);
            params.push_back(lp.type + " " + n);
            negative.push_back(n + " < 0");
        }
        for (const auto& l : wrapCall("size_t " + g.workspaceSize + "(", params, ")", 0, true)) line(l);
        line("{");
        out.indent();
        if (!negative.empty()) line(fmt::format("if ({}) return 0;  // sizes must not be negative", join(negative, " || ")));
        std::string bytes = names_.declare(nullptr, "bytes");
        line(fmt::format("size_t {} = 0;", bytes));
        for (const KernelParam* p : scratch)
            line(fmt::format("{} += ({} + {}) / {} * {};  // {}: {}", bytes, workspaceSizeExpr(parts, p->buffer),
                             kScratchAlign - 1, kScratchAlign, kScratchAlign, p->name, bufferTypeText(p->buffer)));
        line(fmt::format("return {};", bytes));
        out.dedent();
        line("}");
        out.blank();
    }

    // The launcher.
    startFunction();
    params.clear();
    for (const auto& lp : g.params) params.push_back(lp.type + " " + names_.declare(paramOwner(*lp.param), lp.name));
    names_.declareExact(nullptr, "workspace");
    params.push_back("void* workspace");
    if (!streamType().empty()) {
        names_.declareExact(nullptr, "stream");
        params.push_back(streamType() + " stream");
    }
    for (const auto& l : wrapCall((g.general ? "static " : "") + errorType() + " " + g.launch + "(", params, ")", 0, true))
        line(l);
    line("{");
    out.indent();
    std::string fail = "return " + invalidValue() + ";";
    std::map<std::string, std::string> scratchNames;
    if (!scratch.empty()) {
        need("tl_common.h", "launch_checks");
        line(fmt::format("if (workspace == nullptr) {}  // {}(...) bytes, from the caller", fail, g.workspaceSize));
        line(fmt::format("if (!tl::is_aligned(workspace, {})) {}  // the workspace must be {}-byte aligned", kWorkspaceAlign,
                         fail, kWorkspaceAlign));
        std::string base = names_.declare(nullptr, "scratch");
        line(fmt::format("unsigned char* {} = static_cast<unsigned char*>(workspace);", base));
        for (size_t i = 0; i < scratch.size(); ++i) {
            const KernelParam& p = *scratch[i];
            std::string type = typeName(p.dtype);
            std::string name = names_.declare(nullptr, p.name);
            scratchNames[p.name] = name;
            line(fmt::format("{}* const {} = reinterpret_cast<{}*>({});  // {}", type, name, type, base, bufferTypeText(p.buffer)));
            if (i + 1 < scratch.size())
                line(fmt::format("{} += ({} + {}) / {} * {};", base, workspaceSizeExpr(parts, p.buffer), kScratchAlign - 1,
                                 kScratchAlign, kScratchAlign));
        }
    } else {
        line("(void)workspace;  // no global scratch");
    }
    // Each part's arguments: the launcher's parameters by name, its scratch by name.
    auto call = [&](const Kernel& k, bool checkOnly) {
        const LauncherSignature& sig = signature(k);
        std::vector<std::string> args;
        for (const auto& lp : sig.params) {
            if (lp.param->scratch) {
                args.push_back(scratchNames.at(lp.param->name));
                continue;
            }
            const LauncherParam* gp = nullptr;
            for (const auto& q : g.params)
                if (q.name == lp.name) gp = &q;
            if (!gp) throw EmitError("emit: part parameter '" + lp.name + "' unknown to its group");
            args.push_back(*names_.lookup(paramOwner(*gp->param)));
        }
        args.push_back(checkOnly ? "true" : "false");
        if (!streamType().empty()) args.push_back("stream");
        return std::make_pair(sig.name, args);
    };
    std::string status = names_.declare(nullptr, "status");
    line(fmt::format("{} {} = {};", errorType(), status, successValue()));
    // With a general variant, arguments a grid's fast path refuses run the general group (which
    // refuses what breaks the checks every variant makes).
    std::vector<const Kernel*> general = generalParts(k0);
    std::string fallback = status;
    if (!general.empty()) {
        std::vector<std::string> args;
        for (const auto& lp : g.params) args.push_back(*names_.lookup(paramOwner(*lp.param)));
        args.push_back("workspace");
        if (!streamType().empty()) args.push_back("stream");
        fallback = groupNames_.at(general.front()->group).launch + "(" + join(args, ", ") + ")";
        line("// Every grid's checks before any launch: what a grid's fast path refuses runs the general variant.");
    } else {
        line("// Every grid's checks before any launch: an error launches nothing.");
    }
    for (bool checkOnly : {true, false}) {
        if (!checkOnly) {
            // Scratch that must start at zero (split-K's arrival counters): zeroed here, on the
            // stream before the grids, so that the caller's workspace may hold anything.
            for (const KernelParam* p : scratch) {
                if (!p->zeroed) continue;
                line(fmt::format("{} = {};  // {}: starts at zero", status,
                                 zeroScratch(scratchNames.at(p->name), workspaceSizeExpr(parts, p->buffer)), p->name));
                line(fmt::format("if ({} != {}) return {};", status, successValue(), status));
            }
            line(fmt::format("// The grids in order{}.", streamType().empty() ? "" : " on the stream"));
        }
        for (const Kernel* k : parts) {
            auto [name, args] = call(*k, checkOnly);
            for (const auto& l : wrapCall(status + " = " + name + "(", args, ");", 4)) line(l);
            line(fmt::format("if ({} != {}) return {};", status, successValue(), checkOnly ? fallback : status));
        }
    }
    line(fmt::format("return {};", successValue()));
    out.dedent();
    line("}");
    out.blank();
    out_ = nullptr;
}

void CEmitter::emitGroupCTwinDeclaration(const std::vector<const Kernel*>& parts, CodeWriter& out) {
    const GroupNames& g = groupNames_.at(parts.front()->group);
    std::vector<std::string> sizes, params;
    for (const auto& p : g.params) {
        params.push_back(p.cType + " " + p.name);
        if (p.param->kind == KernelParam::Kind::Size) sizes.push_back(p.cType + " " + p.name);
    }
    for (const auto& l : wrapCall("extern \"C\" size_t " + g.cWorkspaceSize + "(", sizes, ");", 0, true)) out.line(l);
    params.push_back("void* workspace");
    params.push_back("void* stream");
    for (const auto& l : wrapCall("extern \"C\" int " + g.cLaunch + "(", params, ");", 0, true)) out.line(l);
}

void CEmitter::emitGroupCTwinDefinition(const std::vector<const Kernel*>& parts, CodeWriter& out) {
    beginKernel(*parts.front());
    out_ = &out;
    const GroupNames& g = groupNames_.at(parts.front()->group);
    std::string ns = options_.nameSpace.empty() ? "" : options_.nameSpace + "::";
    std::vector<std::string> sizes, sizeArgs, params, args;
    for (const auto& p : g.params) {
        params.push_back(p.cType + " " + p.name);
        std::string arg = p.param->kind == KernelParam::Kind::Tensor ? "static_cast<" + p.type + ">(" + p.name + ")"
                          : p.cType != p.type                         ? p.type + "(" + p.name + ")"
                                                                      : p.name;
        args.push_back(arg);
        if (p.param->kind == KernelParam::Kind::Size) {
            sizes.push_back(p.cType + " " + p.name);
            sizeArgs.push_back(p.name);
        }
    }
    for (const auto& l : wrapCall("extern \"C\" size_t " + g.cWorkspaceSize + "(", sizes, ")", 0, true)) line(l);
    line("{");
    out.indent();
    for (const auto& l : wrapCall("return " + ns + g.workspaceSize + "(", sizeArgs, ");", 4)) line(l);
    out.dedent();
    line("}");
    out.blank();
    bool stream = !streamType().empty();
    params.push_back("void* workspace");
    params.push_back(stream ? "void* stream" : "void* /*stream: unused on the CPU*/");
    args.push_back("workspace");
    if (stream) args.push_back("static_cast<" + streamType() + ">(stream)");
    for (const auto& l : wrapCall("extern \"C\" int " + g.cLaunch + "(", params, ")", 0, true)) line(l);
    line("{");
    out.indent();
    std::string head = errorType() == "int" ? "return " + ns + g.launch + "(" : "return static_cast<int>(" + ns + g.launch + "(";
    for (const auto& l : wrapCall(head, args, errorType() == "int" ? ");" : "));", 4)) line(l);
    out.dedent();
    line("}");
    out.blank();
    out_ = nullptr;
}

} // namespace tlc::codegen
