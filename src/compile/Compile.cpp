#include "compile/Compile.h"

#include "ast/Clone.h"
#include "irgen/IRGen.h"
#include "sema/Sema.h"

#include <set>
#include <sstream>

namespace tlc {

namespace {

// The copy of `kernel` that `config` asks for: its `auto` parameters bound, logged in `log`.
std::unique_ptr<ast::Kernel> configure(const ast::Kernel& kernel, const KernelConfig& config, DecisionLog& log) {
    std::unique_ptr<ast::Kernel> k = ast::cloneSyntax(kernel);
    for (auto& tp : k->templateParams) {
        for (const auto& [name, value] : config.autoValues) {
            if (tp.name != name || !tp.isAuto) continue;
            tp.isAuto = false;
            tp.defaultValue = std::make_unique<ast::IntLit>(tp.range, value);
            if (!config.reason.empty()) log.add({name, std::to_string(value), "auto", config.reason, tp.range.begin});
        }
    }
    if (!config.rename.empty()) k->name = config.rename;
    return k;
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
    size_t first = out.kernels.size();
    for (ir::Kernel& part : parts) {
        part.decisions = log;
        inferThreads(part, *options.target);
        if (options.stop == CompileStage::TileIR) {
            out.kernels.push_back(std::move(part));
            continue;
        }
        bool lowered = lowerKernel(part, *options.target, diags, options.passes, dumps);
        out.explained.push_back({part.name, part.decisions});
        if (lowered) out.kernels.push_back(std::move(part));
    }
    // A group whose parts did not all lower has no launcher: drop the rest of it.
    if (options.stop == CompileStage::Lowered && out.kernels.size() - first != parts.size())
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
