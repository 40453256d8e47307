// The parts of the emitter that every backend shares around the kernel code: the kernel
// driver, the launcher's checks and grid, its declaration with a comment for the header, and
// the extern "C" twin.
#include "emit/CEmitter.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

using namespace ir;

std::string bufferTypeText(const Buffer& b) {
    std::vector<std::string> dims;
    for (const auto& d : b->shape) dims.push_back(printExpr(d));
    return fmt::format("{}[{}]", dtypeName(b->dtype), join(dims, ", "));
}

namespace {

bool rowMajor(const Buffer& b) {
    std::vector<Expr> expected = rowMajorStrides(b->shape);
    for (size_t i = 0; i < expected.size(); ++i)
        if (!equal(expected[i], b->strides[i])) return false;
    return true;
}

} // namespace

const void* CEmitter::paramOwner(const KernelParam& p) {
    if (p.kind == KernelParam::Kind::Tensor) return p.buffer.get();
    return p.var.get();
}

std::vector<std::string> CEmitter::wrapCall(const std::string& head, const std::vector<std::string>& items,
                                            const std::string& tail, int indentColumns, bool onePerLine) {
    std::string single = head + join(items, ", ") + tail;
    if (int(single.size()) + indentColumns <= kLineWidth || items.empty()) return {single};
    // One item after another, continuation lines aligned after the opening parenthesis.
    std::vector<std::string> lines;
    std::string current = head;
    const std::string pad(head.size(), ' ');
    bool atStart = true;
    for (size_t i = 0; i < items.size(); ++i) {
        std::string piece = items[i] + (i + 1 < items.size() ? "," : tail);
        if (!atStart && (onePerLine || int(current.size() + 1 + piece.size()) + indentColumns > kLineWidth)) {
            lines.push_back(current);
            current = pad;
            atStart = true;
        }
        current += (atStart ? "" : " ") + piece;
        atStart = false;
    }
    lines.push_back(current);
    return lines;
}

// ---- the kernel driver --------------------------------------------------------------------

void CEmitter::beginKernel(const Kernel& k) {
    kernel_ = &k;
    info_ = analyzeKernel(k, options_.debug);
    lastLine_ = 0;
    pendingLine_ = 0;
}

void CEmitter::emitKernel(const Kernel& k, CodeWriter& out) {
    out_ = &out;
    beginKernel(k);
    // call_extern's functions: the author's headers, as the file imports them.
    for (const auto& h : k.externHeaders) include("\"" + h + "\"");
    const LauncherSignature& sig = signature(k);

    std::string title = fmt::format("// ---- {} ({}) ", k.name, k.loc.valid() ? where(k.loc) : sourceName());
    if (title.size() < size_t(kLineWidth)) title += std::string(kLineWidth - title.size(), '-');
    line(title);
    emitGeneralTitle(k);
    if (!k.templateValues.empty()) {
        std::vector<std::string> values;
        for (const auto& [name, value] : k.templateValues) values.push_back(name + " = " + value);
        for (const auto& l : wrapComment("// ", "// ", join(values, ", "))) line(commentText(l));
    }
    emitKernelFunction(k, sig);
    if (options_.lineDirectives) out.directive("#line @TLC_OUTPUT_LINE@");
    out.blank();

    // The launcher.
    startFunction();
    std::vector<std::string> params;
    for (const auto& p : sig.params) params.push_back(p.type + " " + names_.declare(paramOwner(*p.param), p.name));
    const bool part = !k.group.empty();
    if (part) {
        // One grid of a group: the group's launcher calls it twice, checking every grid before
        // launching any.
        names_.declareExact(nullptr, "check_only");
        params.push_back("bool check_only");
    }
    if (!streamType().empty()) {
        names_.declareExact(nullptr, "stream");
        params.push_back(streamType() + " stream");
    }
    // A group's grids and a general variant are called by another launcher only.
    const bool hidden = part || k.generalShapes;
    for (const auto& l : wrapCall((hidden ? "static " : "") + errorType() + " " + sig.name + "(", params, ")", 0, true))
        line(l);
    line("{");
    out.indent();
    emitLaunchChecks(k);
    if (part) {
        if (k.tensorMaps.empty()) {
            line(fmt::format("if (check_only) return {};", successValue()));
        } else {
            openBrace("if (check_only)");
            emitPartChecks(k);
            line(fmt::format("return {};", successValue()));
            closeBrace();
        }
    }
    emitLaunch(k, sig);
    out.dedent();
    line("}");
    out.blank();
    out_ = nullptr;
}

void CEmitter::declareKernelParams(const Kernel& k) {
    for (const auto& lp : signature(k).params) {
        names_.declare(paramOwner(*lp.param), lp.name);
    }
}

std::vector<std::string> CEmitter::kernelParams(const Kernel& k) {
    std::vector<std::string> params;
    for (const auto& lp : signature(k).params) {
        if (lp.param->kind == KernelParam::Kind::Tensor) {
            std::string q = restrictQualifier();
            params.push_back(lp.type + (q.empty() ? " " : " " + q + " ") + lp.name);
        } else {
            params.push_back(lp.type + " " + lp.name);
        }
    }
    return params;
}

void CEmitter::declareRoleVariables(bool includeBlocks) {
    const VarRole roles[4] = {VarRole::BlockIndexX, VarRole::BlockIndexY, VarRole::BlockIndexZ, VarRole::ThreadIndex};
    for (VarRole role : roles) {
        size_t r = size_t(role);
        if (!info_.roleUsed[r]) continue;
        if (role != VarRole::ThreadIndex && !includeBlocks) continue;
        std::string name = names_.declare(roleOwner(role), info_.roleName[r]);
        line(fmt::format("const int {} = {};", name, roleValue(role)));
    }
}

std::vector<std::string> CEmitter::argumentList(const Kernel& k) const {
    std::vector<std::string> args;
    for (const auto& p : k.params) {
        const std::string* n = names_.lookup(paramOwner(p));
        args.push_back(n ? *n : sanitizeIdentifier(p.name));
    }
    return args;
}

// ---- launcher checks and grid ---------------------------------------------------------------

void CEmitter::emitLaunchChecks(const Kernel& k) {
    std::string fail = "return " + invalidValue() + ";";
    std::vector<std::string> negative;
    for (const auto& p : k.params)
        if (p.kind == KernelParam::Kind::Size) negative.push_back(varName(p.var.get()) + " < 0");
    if (!negative.empty()) {
        std::string cond = join(negative, " || ");
        line(fmt::format("if ({}) {}  // sizes must not be negative", cond, fail));
    }
    for (const auto& pre : k.preconditions)
        line(fmt::format("if ({}) {}  // require {} ({})", failingTest(pre.condition), fail, commentText(pre.text),
                         where(pre.loc)));

    // 32-bit offsets: every tensor must have fewer than 2^31 elements. A rank-1 extent is an
    // int, so it always fits; tensors with the same extents share one check.
    std::vector<std::pair<std::string, std::vector<std::string>>> offsetChecks;  // check, tensors
    for (const auto& p : k.params) {
        if (p.kind != KernelParam::Kind::Tensor || !p.buffer || p.buffer->shape.size() < 2) continue;
        const Buffer& b = p.buffer;
        std::vector<int64_t> constant;
        if (constantShape(b, constant)) {
            bool small = true;
            int64_t n = 1;
            for (int64_t e : constant) {
                n *= e;
                if (n >= (int64_t(1) << 31)) small = false;
            }
            if (small) continue;  // known to fit
        }
        need("tl_common.h", "launch_checks");
        std::vector<std::string> extents;
        for (const auto& d : b->shape) extents.push_back(expr(d));
        std::string check = "tl::fits_int32_offsets({" + join(extents, ", ") + "})";
        if (!rowMajor(b)) {
            // Strides in 64-bit arithmetic, so that computing them cannot overflow.
            std::vector<std::pair<VarPtr, Expr>> wide;
            for (const auto& q : k.params)
                if (q.var && isInteger(q.var->dtype)) wide.emplace_back(q.var, cast(DType::I64, varExpr(q.var)));
            std::vector<std::string> strides;
            for (const auto& s : b->strides) strides.push_back(expr(substitute(s, wide)));
            check = "tl::fits_int32_offsets({" + join(extents, ", ") + "}, {" + join(strides, ", ") + "})";
        }
        auto same = std::find_if(offsetChecks.begin(), offsetChecks.end(), [&](const auto& c) { return c.first == check; });
        if (same != offsetChecks.end()) same->second.push_back(bufferName(b.get()));
        else offsetChecks.push_back({check, {bufferName(b.get())}});
    }
    for (const auto& [check, tensors] : offsetChecks)
        line(fmt::format("if (!{}) {}  // {}: 32-bit offsets", check, fail, join(tensors, ", ")));

    emitFastPathChecks(k);
}

std::vector<std::string> CEmitter::gridExtentNames(const Kernel& k) {
    static const char* suffix[3] = {"x", "y", "z"};
    if (k.gridExtents.empty() || k.gridExtents.size() > 3)
        throw EmitError(fmt::format("emit: kernel {} has {} grid extents (1 to 3)", k.name, k.gridExtents.size()));
    std::vector<std::string> names;
    for (size_t i = 0; i < k.gridExtents.size(); ++i) {
        std::string value = expr(k.gridExtents[i]);
        std::string name = names_.declare(nullptr, std::string("blocks_") + suffix[i]);
        line(fmt::format("const int {} = {};", name, value));
        names.push_back(name);
    }
    std::vector<std::string> empty;
    for (const auto& n : names) empty.push_back(n + " <= 0");
    line(fmt::format("if ({}) return {};  // an empty grid: nothing to do", join(empty, " || "), successValue()));
    return names;
}

// ---- declarations ---------------------------------------------------------------------------

std::string CEmitter::launcherTitle(const Kernel& k, const std::string& name) const {
    std::string title = fmt::format("{} ({})", name, k.loc.valid() ? where(k.loc) : sourceName());
    if (!k.templateValues.empty()) {
        std::vector<std::string> values;
        for (const auto& [param, value] : k.templateValues) values.push_back(param + " = " + value);
        title += " with " + join(values, ", ");
    }
    return title;
}

std::string CEmitter::scalarParamText(const KernelParam& p) {
    return fmt::format("{}: {}{}", p.name, dtypeName(p.dtype), p.kind == KernelParam::Kind::Size ? " (size)" : "");
}

void CEmitter::emitLauncherDeclaration(const Kernel& k, CodeWriter& out) {
    beginKernel(k);
    const LauncherSignature& sig = signature(k);
    std::vector<std::string> doc;
    for (const auto& l : wrapComment("// ", "//   ", launcherTitle(k, k.name))) doc.push_back(l);
    for (const auto& p : k.params) {
        std::string text;
        if (p.kind == KernelParam::Kind::Tensor && p.buffer) {
            text = fmt::format("{}: {}, {}, {}", p.name, bufferTypeText(p.buffer),
                               rowMajor(p.buffer) ? "row-major" : "strides [" + [&] {
                                   std::vector<std::string> s;
                                   for (const auto& e : p.buffer->strides) s.push_back(printExpr(e));
                                   return join(s, ", ");
                               }() + "]",
                               info_.written(p.buffer.get()) ? "written" : "read");
        } else {
            text = scalarParamText(p);
        }
        for (const auto& l : wrapComment("//   ", "//     ", text)) doc.push_back(l);
    }
    std::string launch = launchDescription(k);
    for (const auto& l : wrapComment("//   ", "//     ", launch)) doc.push_back(l);

    std::string variants = variantsDescription({&k});
    if (!variants.empty())
        for (const auto& l : wrapComment("//   ", "//   ", variants)) doc.push_back(commentText(l));
    std::vector<std::string> checks = checkDescriptions(k);
    std::string returns = fmt::format("Returns {} and launches nothing unless: {}. An empty grid returns {}.",
                                      invalidValue(), join(checks, "; "), successValue());
    if (target_.backend != Backend::Cpu) returns += " Tensors must not overlap (__restrict__).";
    else returns += " Tensors must not overlap.";
    for (const auto& l : wrapComment("//   ", "//   ", returns)) doc.push_back(commentText(l));

    for (const auto& l : doc) out.line(commentText(l));
    std::vector<std::string> params;
    for (const auto& p : sig.params) params.push_back(p.type + " " + p.name);
    if (!streamType().empty()) params.push_back(streamType() + " stream = nullptr");
    for (const auto& l : wrapCall(errorType() + " " + sig.name + "(", params, ");", 0, true)) out.line(l);
    out.blank();
}

std::string CEmitter::launchDescription(const Kernel& k) const {
    std::vector<std::string> grid;
    for (const auto& g : k.gridExtents) grid.push_back(printExpr(g));
    int64_t shared = k.sharedBytes;
    std::string launch;
    if (target_.backend == Backend::Cpu)
        launch = fmt::format("grid ({}) of blocks, run by an OpenMP loop (one thread per block)", join(grid, ", "));
    else
        launch = fmt::format("grid ({}) of {}-thread blocks{}{}", join(grid, ", "), k.threads,
                             k.producerThreads ? fmt::format(" (the last {} a TMA producer warpgroup)", k.producerThreads)
                                               : "",
                             shared ? fmt::format(", {} bytes of shared memory{}", shared,
                                                  shared > 48 * 1024 ? " (dynamic)" : "")
                                    : "");
    return launch;
}

std::vector<std::string> CEmitter::checkDescriptions(const Kernel& k) const {
    std::vector<std::string> checks;
    bool sizes = false;
    for (const auto& p : k.params) sizes = sizes || p.kind == KernelParam::Kind::Size;
    if (sizes) checks.push_back("sizes >= 0");
    checks.push_back("every tensor has fewer than 2^31 elements");  // (rank 1: always)
    for (const auto& pre : k.preconditions)
        checks.push_back(fmt::format("{} (require, {})", pre.text, where(pre.loc)));
    // With a general variant the fast path's conditions choose a variant (variantsDescription).
    if (!k.generalVariant.empty()) return checks;
    for (const auto& c : k.launchChecks) checks.push_back(describe(c));
    for (const auto& m : k.tensorMaps) {
        if (m.source && m.source->viewOf) {
            // A map over a view: the view's strides are the ones TMA checks, which the
            // tensor's own (flat) shape does not show; name them in the sizes.
            int64_t bytes = dtypeInfo(m.source->dtype).bits / 8;
            for (size_t d = 0; d + 1 < m.source->strides.size(); ++d)
                if (bytes > 0 && 16 % bytes == 0)
                    checks.push_back(fmt::format("{} % {} == 0 (TMA: the view {} of {} needs strides of 16-byte multiples)",
                                                 printExpr(m.source->strides[d]), 16 / bytes, m.source->name, m.tensor));
            checks.push_back(fmt::format("{} is 16-byte aligned (TMA)", m.tensor));
            continue;
        }
        checks.push_back(m.box.size() == 2
                             ? fmt::format("{} is 16-byte aligned with rows a multiple of 16 bytes apart (TMA)", m.tensor)
                             : fmt::format("{} is 16-byte aligned with strides multiples of 16 bytes (TMA)", m.tensor));
    }
    return checks;
}

void CEmitter::emitCTwinDeclaration(const Kernel& k, CodeWriter& out) {
    emitCTwinDeclaration(k, signature(k).cName, out);
}

void CEmitter::emitCTwinDefinition(const Kernel& k, CodeWriter& out) {
    emitCTwinDefinition(k, signature(k).cName, signature(k).name, out);
}

// The twin called cName of a launcher with k's parameters called `callee` (k's own launcher, or
// a dispatcher of variants sharing k's parameters).
void CEmitter::emitCTwinDeclaration(const Kernel& k, const std::string& cName, CodeWriter& out) {
    const LauncherSignature& sig = signature(k);
    std::vector<std::string> params;
    for (const auto& p : sig.params) params.push_back(p.cType + " " + p.name);
    params.push_back("void* stream");
    for (const auto& l : wrapCall("extern \"C\" int " + cName + "(", params, ");", 0, true)) out.line(l);
}

void CEmitter::emitCTwinDefinition(const Kernel& k, const std::string& cName, const std::string& callee,
                                   CodeWriter& out) {
    beginKernel(k);
    out_ = &out;
    const LauncherSignature& sig = signature(k);
    std::vector<std::string> params, args;
    for (const auto& p : sig.params) {
        params.push_back(p.cType + " " + p.name);
        if (p.param->kind == KernelParam::Kind::Tensor) args.push_back("static_cast<" + p.type + ">(" + p.name + ")");
        else if (p.cType != p.type) args.push_back(p.type + "(" + p.name + ")");
        else args.push_back(p.name);
    }
    bool stream = !streamType().empty();
    params.push_back(stream ? "void* stream" : "void* /*stream: unused on the CPU*/");
    if (stream) args.push_back("static_cast<" + streamType() + ">(stream)");
    for (const auto& l : wrapCall("extern \"C\" int " + cName + "(", params, ")", 0, true)) line(l);
    line("{");
    out.indent();
    std::string ns = options_.nameSpace.empty() ? "" : options_.nameSpace + "::";
    std::string call = ns + callee + "(";
    if (errorType() == "int") {
        for (const auto& l : wrapCall("return " + call, args, ");", 4)) line(l);
    } else {
        for (const auto& l : wrapCall("return static_cast<int>(" + call, args, "));", 4)) line(l);
    }
    out.dedent();
    line("}");
    out.blank();
    out_ = nullptr;
}

} // namespace tlc::codegen
