#include "compile/Compile.h"

#include "ast/Clone.h"
#include "irgen/IRGen.h"
#include "sema/Sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace tlc {

namespace {

// The copy of `kernel` that `config` asks for: its `auto` parameters bound, logged in `log`.
std::unique_ptr<ast::Kernel> configure(const ast::Kernel& kernel, const KernelConfig& config, DecisionLog& log) {
    std::unique_ptr<ast::Kernel> k = ast::cloneSyntax(kernel);
    for (auto& tp : k->templateParams) {
        for (const auto& [name, value] : config.autoValues) {
            // A parameter written with a value is bound too where the recommender compares the
            // author's values with others (RecommendOptions::searchWritten).
            if (tp.name != name) continue;
            const bool wasAuto = tp.isAuto;
            tp.isAuto = false;
            tp.defaultValue = std::make_unique<ast::IntLit>(tp.range, value);
            if (wasAuto && !config.reason.empty()) log.add({name, std::to_string(value), "auto", config.reason, tp.range.begin});
        }
    }
    if (!config.rename.empty()) k->name = config.rename;
    return k;
}

// The conditions of `fast` (a kernel's lowered launches) in words, each once.
std::vector<std::string> conditionsOf(const std::vector<ir::Kernel>& fast) {
    std::vector<std::string> out;
    for (const ir::Kernel& k : fast)
        for (const auto& c : ir::fastPathConditions(k))
            if (std::string d = ir::describe(c); std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    return out;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : "; ") + i;
    return out;
}

// Lowers `general` (the Tile IR of the launches whose lowered fast forms end `out.kernels`) as
// the kernel's general variant and appends it; false (after an error) when it does not lower or
// still needs something of the arguments, which would be a compiler bug.
// `explained`: where the fast parts' logs are in out.explained.
bool buildGeneral(std::vector<ir::Kernel> general, const std::string& source, const std::vector<std::string>& conditions,
                  const CompileOptions& options, DiagnosticEngine& diags, std::ostream& dumps, size_t explained,
                  Compiled& out) {
    const size_t fast = out.kernels.size() - general.size();
    const bool group = !general.front().group.empty();
    const std::string name = source + "_general";
    const std::string when = joined(conditions);
    std::vector<ir::Kernel> lowered;
    for (ir::Kernel& part : general) {
        part.generalShapes = true;
        part.name = group ? fmt::format("{}_grid{}", name, part.part + 1) : name;
        if (group) part.group = name;
        part.decisions.add({"shape variants", "the general variant of " + source, "lowering",
                            fmt::format("{}'s launcher runs it when one of its fast path's conditions fails ({}): it "
                                        "assumes nothing of the tensors' row lengths or alignment beyond their "
                                        "elements' (element moves of global memory, no TMA)",
                                        source, when),
                            part.loc});
        // The fast variant reported the kernel's warnings; errors here are the general lowering's.
        DiagnosticEngine scratch(diags.file());
        bool ok = lowerKernel(part, *options.target, scratch, options.passes, dumps);
        for (const auto& x : scratch.diagnostics())
            if (x.severity == Severity::Error)
                diags.report(DiagId::err_not_lowerable, x.range, "the general variant of '" + source + "'", x.message);
        out.explained.push_back({part.name, part.decisions});
        if (!ok) return false;
        if (std::vector<ir::LaunchCheck> left = ir::fastPathConditions(part); !left.empty()) {
            diags.report(DiagId::err_not_lowerable, SourceRange(part.loc), "the general variant of '" + source + "'",
                         "it still needs " + ir::describe(left.front()) + " (a compiler bug: please report it)");
            return false;
        }
        lowered.push_back(std::move(part));
    }
    const std::string launcher = group ? name : lowered.front().name;
    for (size_t i = fast; i < out.kernels.size(); ++i) {
        ir::Kernel& k = out.kernels[i];
        k.generalVariant = launcher;
        k.decisions.add({"shape variants", "fast and general (" + launcher + ")", "lowering",
                         fmt::format("the fast path needs {}: the launcher runs this variant when they hold and {}, "
                                     "which takes any shape and element-aligned pointers, otherwise "
                                     "(--assume-aligned: this variant alone, refusing the rest)",
                                     when, launcher),
                         k.loc});
        out.explained[explained + (i - fast)].decisions = k.decisions;
    }
    for (ir::Kernel& k : lowered) out.kernels.push_back(std::move(k));
    return true;
}

// Builds the launches of one checked kernel and takes them as far as `options.stop`.
void build(const ast::Kernel& kernel, const DecisionLog& log, const SourceFile& source, const CompileOptions& options,
           DiagnosticEngine& diags, Compiled& out) {
    std::vector<ir::Kernel> parts = buildKernelIRs(kernel, source, diags);
    if (options.oneLaunch && (parts.size() > 1 || (parts.size() == 1 && !parts.front().group.empty()))) {
        diags.report(DiagId::err_auto_multi_grid, kernel.nameRange, kernel.name,
                     parts.size() > 1 ? std::to_string(parts.size()) + " grids"
                                      : std::string("global scratch (alloc_global)"));
        return;
    }
    std::ostringstream discarded;
    std::ostream& dumps = options.dumps ? *options.dumps : discarded;
    size_t first = out.kernels.size(), explainedFirst = out.explained.size();
    for (ir::Kernel& part : parts) {
        part.decisions = log;
        inferThreads(part, *options.target);
        warnPartialCover(part, diags);
        if (options.keepTileIR) part.tileLevel = std::make_shared<const ir::Kernel>(part);
    }
    if (options.stop == CompileStage::TileIR) {
        for (ir::Kernel& part : parts) out.kernels.push_back(std::move(part));
        return;
    }
    // The general variant starts from the same Tile IR (nodes are immutable: sharing is safe).
    std::vector<ir::Kernel> tileLevel = options.generalVariants ? parts : std::vector<ir::Kernel>();
    for (ir::Kernel& part : parts) {
        bool lowered = lowerKernel(part, *options.target, diags, options.passes, dumps);
        out.explained.push_back({part.name, part.decisions});
        if (lowered) out.kernels.push_back(std::move(part));
    }
    // A group whose parts did not all lower has no launcher: drop the rest of it.
    if (out.kernels.size() - first != parts.size()) {
        out.kernels.resize(first);
        return;
    }
    std::vector<ir::Kernel> fast(out.kernels.begin() + std::ptrdiff_t(first), out.kernels.end());
    std::vector<std::string> conditions = conditionsOf(fast);
    if (conditions.empty()) return;
    const std::string& name = fast.front().group.empty() ? fast.front().name : fast.front().group;
    if (!options.generalVariants) {
        if (!options.assumeAligned) return;
        for (size_t i = first; i < out.kernels.size(); ++i) {
            out.kernels[i].decisions.add({"shape variants", "the fast variant alone (--assume-aligned)", "lowering",
                                          "the launcher refuses arguments that break " + joined(conditions),
                                          out.kernels[i].loc});
            out.explained[explainedFirst + (i - first)].decisions = out.kernels[i].decisions;
        }
        return;
    }
    if (!buildGeneral(std::move(tileLevel), name, conditions, options, diags, dumps, explainedFirst, out))
        out.kernels.resize(first);
}

} // namespace

Compiled compile(const Program& program, const std::vector<KernelConfig>& configs, const CompileOptions& options,
                 DiagnosticEngine& diags) {
    Compiled out;
    out.file = std::make_unique<ast::File>();
    out.file->imports = program.syntax().imports;
    std::vector<DecisionLog> logs;  // by kernel of out.file
    for (const KernelConfig& config : configs) {
        logs.emplace_back();
        out.file->kernels.push_back(configure(*config.kernel, config, logs.back()));
    }
    SemaOptions sema;
    sema.target = options.target;
    sema.defines = options.defines;
    out.checked = checkFile(*out.file, diags, sema);
    if (!out.checked || !options.target || options.stop == CompileStage::Checked) return out;
    for (size_t i = 0; i < out.file->kernels.size(); ++i)
        build(*out.file->kernels[i], logs[i], program.source(), options, diags, out);
    return out;
}

std::string firstError(const DiagnosticEngine& d) {
    for (const auto& x : d.diagnostics())
        if (x.severity == Severity::Error) return x.message;
    return "";
}

Defines definesFor(const ast::Kernel& kernel, const Defines& defines) {
    std::set<std::string> names;
    for (const auto& tp : kernel.templateParams) names.insert(tp.name);
    for (const auto& p : kernel.params)
        for (const auto& d : p.type.dims)
            if (const auto* n = d->as<ast::Name>()) names.insert(n->name);
    Defines out;
    for (const auto& [name, value] : defines)
        if (names.count(name)) out[name] = value;
    return out;
}

} // namespace tlc
