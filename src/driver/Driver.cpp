#include "driver/Driver.h"

#include "ast/AST.h"
#include "compile/Compile.h"
#include "driver/AutoParams.h"
#include "driver/Depfile.h"
#include "driver/Explain.h"
#include "emit/Emit.h"
#include "ir/Printer.h"
#include "passes/Passes.h"
#include "recommend/ModelShape.h"
#include "recommend/Recommend.h"
#include "report/Report.h"
#include "support/AtomicFile.h"
#include "support/Diagnostics.h"
#include "support/LargeStack.h"
#include "support/Verify.h"
#include "sema/Scope.h"
#include "target/Target.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>

namespace tlc {

namespace {

// Reads the whole input; on failure returns false with the reason in `error`.
bool readInput(const std::string& path, std::string& text, std::string& error) {
    if (path == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        if (std::cin.bad()) {
            error = "cannot read standard input";
            return false;
        }
        return true;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        error = fmt::format("cannot read '{}': it is a directory", path);
        return false;
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = fmt::format("cannot read '{}': {}", path, errno ? std::strerror(errno) : "cannot open");
        return false;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) {
        error = fmt::format("cannot read '{}': read error", path);
        return false;
    }
    return true;
}

void usageError(std::ostream& err, const std::string& message) { err << "tlc: error: " << message << '\n'; }

std::string baseName(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A file beside the output, its extension replaced: the launcher header (kernel.cu -> kernel.h)
// and -MD's depfile (kernel.cu -> kernel.d, as gcc names it for -o).
std::string besideOutput(const std::string& output, const std::string& extension) {
    size_t slash = output.find_last_of('/');
    size_t dot = output.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return output + extension;
    return output.substr(0, dot) + extension;
}

int writeOutputs(const DriverOptions& options, const SourceFile& sourceFile, const std::vector<ir::Kernel>& kernels,
                 const std::vector<VariantSet>& variants, const Target& target,
                 const std::map<std::string, Recommendation>& rankings, std::ostream& out, std::ostream& err) {
    const std::string& sourceName = sourceFile.name();
    EmitOptions emitOptions;
    emitOptions.variants = variants;
    emitOptions.sourceName = baseName(sourceName);
    emitOptions.nameSpace = options.nameSpace;
    emitOptions.cPrefix = options.cPrefix;
    emitOptions.lineDirectives = options.lineDirectives;
    emitOptions.debug = options.debug;
    emitOptions.manifest = options.emitManifest;
    emitOptions.python = options.emit == EmitKind::Python;
    std::string headerPath;
    if (!options.output.empty()) {
        headerPath = options.header.empty() ? besideOutput(options.output, ".h") : options.header;
        emitOptions.headerName = baseName(headerPath);
        emitOptions.outputName = baseName(options.output);
    }
    EmitResult result;
    try {
        result = emit(kernels, target, emitOptions);
    } catch (const EmitError& e) {
        err << "tlc: error: internal error while writing code: " << e.what() << '\n';
        return kExitInputErrors;
    }
    std::vector<std::pair<std::string, std::string>> files;
    if (!options.report.empty()) {
        report::ReportInput in;
        in.source = &sourceFile;
        in.target = &target;
        in.kernels = &kernels;
        in.emitted = result.source;
        in.emittedName = options.output.empty() ? "<stdout>" : baseName(options.output);
        in.rankings = rankings;
        if (options.reportPtxas) in.ptxas = report::runPtxas(result.source, emitOptions.headerName, result.header, target);
        files.push_back({options.report, report::renderReport(in)});
    }
    if (options.output.empty()) {
        // The report (when asked for) is written before the source goes to stdout: a report that
        // cannot be written fails the run, which then prints nothing.
        if (!files.empty()) {
            if (std::string error; !writeFilesAtomically(files, error)) {
                err << "tlc: error: " << error << '\n';
                return kExitUsage;
            }
        }
        if (!options.explain) out << result.source;
        return kExitOk;
    }
    files.push_back({options.output, result.source});
    files.push_back({headerPath, result.header});
    if (options.emitManifest) files.push_back({besideOutput(options.output, ".json"), result.manifest});
    if (emitOptions.python) files.push_back({besideOutput(options.output, "_python.cpp"), result.python});
    if (options.depfile) {
        // What tlc read: the source and the profile (imports are #includes of the output, read by
        // the backend compiler, which lists them in its own depfile).
        std::vector<std::string> read;
        if (options.input != "-") read.push_back(options.input);
        if (!options.targetProfile.empty()) read.push_back(options.targetProfile);
        read.insert(read.end(), options.measured.begin(), options.measured.end());
        files.push_back({options.depfilePath.empty() ? besideOutput(options.output, ".d") : options.depfilePath,
                         makeDepfile(options.depTarget.empty() ? options.output : options.depTarget, read,
                                     options.depPhony)});
    }
    std::string error;
    if (!writeFilesAtomically(files, error)) {
        err << "tlc: error: " << error << '\n';
        return kExitUsage;
    }
    return kExitOk;
}

// The target of --target or --target-profile; null with an exit code in `exitCode` on failure
// (or when neither is given: then exitCode stays kExitOk).
const Target* resolveTarget(const DriverOptions& options, std::ostream& err, int& exitCode) {
    exitCode = kExitOk;
    if (!options.targetProfile.empty()) {
        if (!options.target.empty()) {
            usageError(err, "give --target or --target-profile, not both");
            exitCode = kExitUsage;
            return nullptr;
        }
        std::string error;
        const Target* t = loadTargetProfile(options.targetProfile, error);
        if (!t) {
            err << error << '\n';
            exitCode = kExitInputErrors;
        }
        return t;
    }
    if (options.target.empty()) return nullptr;
    const Target* t = findTarget(options.target);
    if (!t) {
        usageError(err, fmt::format("unknown target '{}' (see --list-targets)", options.target));
        exitCode = kExitUsage;
    }
    return t;
}

// The measured sweeps shown beside the recommender's estimates: those of --measured files, and
// bench/'s (embedded, read on the first lookup); null with the exit code set when a file is bad.
std::unique_ptr<MeasuredSet> measuredSweeps(const DriverOptions& options, std::ostream& err, int& exitCode) {
    auto set = std::make_unique<MeasuredSet>(/*withEmbedded=*/true);
    for (const std::string& path : options.measured) {
        std::string error;
        if (!set->addFile(path, error)) {
            err << "tlc: error: --measured: " << error << '\n';
            exitCode = kExitInputErrors;
            return nullptr;
        }
    }
    return set;
}

} // namespace

int runDriver(const DriverOptions& options, std::ostream& out, std::ostream& err) {
    // --emit=python is --emit=source plus the binding beside the output (OUT_python.cpp), which
    // includes the header: it needs -o.
    if (options.emit == EmitKind::Python && options.output.empty() && !options.syntaxOnly) {
        usageError(err, "--emit=python writes the kernel source, its header and the binding beside them "
                        "(OUT_python.cpp): give -o FILE");
        return kExitUsage;
    }
    const bool source = emitsSource(options.emit);
    int targetExit = kExitOk;
    const Target* target = resolveTarget(options, err, targetExit);
    if (targetExit != kExitOk) return targetExit;
    if (!target && source && !options.syntaxOnly && !options.verify) {
        usageError(err, "no --target given (see --list-targets)");
        return kExitUsage;
    }

    AutoSearch autoSearch;
    if (std::string error; !parseShapeOption(options.shape, autoSearch.given, error)) {
        usageError(err, error);
        return kExitUsage;
    }
    std::unique_ptr<MeasuredSet> measured = measuredSweeps(options, err, targetExit);
    if (!measured) return targetExit;
    autoSearch.measured = measured.get();

    std::string text, readError;
    if (!readInput(options.input, text, readError)) {
        usageError(err, readError);
        return kExitUsage;
    }
    SourceFile sourceFile(options.input == "-" ? "<stdin>" : options.input, std::move(text));
    DiagnosticEngine diags(sourceFile);
    diags.setWarningsAsErrors(options.warningsAsErrors);
    for (const std::string& flag : options.warningFlags) {
        if (diags.applyWarningFlag(flag)) continue;
        // As clang: a warning, naming the nearest warning's flag.
        std::vector<std::string> known;
        for (int i = 0; i < int(DiagId::Count); ++i)
            if (std::string w = warningName(DiagId(i)); !w.empty()) known.push_back(w);
        std::string best = sema::closestMatch(warningFlagName(flag), known);
        diags.reportCommandLine(DiagId::warn_unknown_warning_option, flag,
                                best.empty() ? std::string() : fmt::format("; did you mean '-W{}'?", best));
    }
    diags.setErrorLimit(options.errorLimit);

    std::string result;
    std::ostringstream dumps;
    std::vector<ir::Kernel> kernels;
    std::vector<ExplainedKernel> explained;
    std::vector<VariantSet> variantSets;
    std::map<std::string, Recommendation> rankings;  // --report: `auto` kernels' top candidates
    bool kernelMissing = false;
    runWithLargeStack([&] {
        std::unique_ptr<Program> program = Program::parse(sourceFile, diags, options.defines, options.autoParams);
        if (!program) return;
        // The kernels to compile: all, or --kernel's.
        std::vector<const ast::Kernel*> selected;
        for (const auto& k : program->syntax().kernels) selected.push_back(k.get());
        if (!options.kernel.empty()) {
            const ast::Kernel* k = program->kernel(options.kernel);
            if (!k) {
                kernelMissing = true;
                return;
            }
            selected = {k};
        }
        CompileOptions compileOptions;
        compileOptions.target = target;
        compileOptions.defines = options.defines;
        compileOptions.passes = {options.printAfter, options.printAfterAll, options.timePasses};
        compileOptions.dumps = &dumps;
        // General variants are part of the source (the IR dumps show the kernels as written).
        compileOptions.generalVariants = source && !options.assumeAligned;
        compileOptions.assumeAligned = options.assumeAligned;
        compileOptions.keepTileIR = !options.report.empty();
        // --emit=tile-source: the file as the developer level writes it (whole-tensor kernels
        // lowered), printed before sema's own rewrites; checked, so that it is known to compile.
        if (options.emit == EmitKind::TileSource) result = ast::printSource(program->syntax());
        if (options.emit == EmitKind::Ast || options.emit == EmitKind::TileSource || options.syntaxOnly || !target)
            compileOptions.stop = CompileStage::Checked;
        else if (options.emit == EmitKind::TileIR || options.emit == EmitKind::Layouts) compileOptions.stop = CompileStage::TileIR;
        // --emit-variants: kernels with `auto` parameters become their variants (compiled
        // here) and leave the file; the rest compile as usual.
        if (target && options.emitVariants > 0 && source && !options.syntaxOnly && !diags.hasErrors()) {
            std::erase_if(selected, [&](const ast::Kernel* k) {
                if (!hasOpenAutoParams(*k, options.defines)) return false;
                if (std::string what = severalGridsOrScratch(*k); !what.empty()) {
                    diags.report(DiagId::err_auto_multi_grid, k->nameRange, k->name, what);
                    return true;  // nothing more to say about it
                }
                VariantSet set;
                std::optional<Recommendation> ranking;
                const size_t first = kernels.size();
                if (!compileVariants(*program, *k, options.emitVariants, compileOptions, autoSearch, diags, kernels,
                                     explained, set, options.report.empty() ? nullptr : &ranking))
                    return false;
                // The report shows each variant with the ranking it came from.
                if (ranking)
                    for (size_t i = first; i < kernels.size(); ++i) rankings.emplace(kernels[i].name, *ranking);
                variantSets.push_back(std::move(set));
                return true;
            });
            if (selected.empty()) return;
        }
        // The other kernels' `auto` parameters: the recommender's best values.
        const bool recommend = target && !options.syntaxOnly && options.emit != EmitKind::Ast &&
                               options.emit != EmitKind::TileSource && !diags.hasErrors();
        std::vector<KernelConfig> configs;
        for (const ast::Kernel* k : selected) {
            if (!recommend) {
                configs.push_back(KernelConfig{k});
                continue;
            }
            // --explain: written tiles the model finds far slower than its pick get a note.
            if (options.explain) noteWrittenSlower(*program, *k, *target, options.defines, autoSearch, diags);
            // The report shows the recommender's top four: the search lowers max(4 x top, 16) of
            // its candidates, so up to four it is the search a plain compile makes, and the kernel
            // gets the same values with and without --report.
            std::optional<Recommendation> ranking;
            configs.push_back(autoConfig(*program, *k, *target, options.defines, autoSearch, diags,
                                         options.report.empty() ? nullptr : &ranking, options.report.empty() ? 1 : 4));
            if (ranking) rankings.emplace(k->name, std::move(*ranking));
        }
        Compiled compiled = compile(*program, configs, compileOptions, diags);
        // --shape names sizes of the kernels with `auto` parameters; a name none of them has
        // is a mistake on the command line (as a -D that names nothing is).
        if (recommend)
            for (const auto& [name, value] : autoSearch.given)
                if (!autoSearch.used.count(name)) diags.reportCommandLine(DiagId::err_shape_unknown, name);
        if (!compiled.checked) return;
        if (options.emit == EmitKind::Ast) {
            result = ast::dump(*compiled.file);
            return;
        }
        if (options.emit == EmitKind::TileSource) return;
        explained.insert(explained.end(), compiled.explained.begin(), compiled.explained.end());
        for (ir::Kernel& k : compiled.kernels) {
            switch (options.emit) {
            case EmitKind::TileIR: result += ir::printKernel(k); break;
            case EmitKind::Layouts: result += describeLayouts(k, *target, diags); break;
            case EmitKind::ThreadIR: result += ir::printKernel(k); break;
            case EmitKind::Shared: result += describeSharedPlan(k); break;
            case EmitKind::Ast:
            case EmitKind::TileSource:
            case EmitKind::Source:
            case EmitKind::Python: break;
            }
            if (source) kernels.push_back(std::move(k));
        }
    });
    if (kernelMissing) {
        usageError(err, fmt::format("no kernel named '{}' in {}", options.kernel, sourceFile.name()));
        return kExitUsage;
    }

    if (options.verify) {
        std::ostringstream report;
        bool ok = verifyDiagnostics(diags, report);
        err << report.str();
        return ok ? kExitOk : kExitInputErrors;
    }
    err << dumps.str();
    if (options.jsonDiagnostics) diags.printJson(err);
    else diags.printText(err, options.color);
    // --explain replaces the source on stdout (with -o the files are still written), also when
    // there are errors: what was chosen is part of understanding a contradiction.
    if (options.explain && source && !options.syntaxOnly)
        out << (options.jsonDiagnostics ? explainJson(explained, sourceFile.name(), target->name)
                                        : explainText(explained, sourceFile.name(), target->name));
    if (diags.hasErrors()) return kExitInputErrors;
    if (options.syntaxOnly) return kExitOk;

    if (!source) {
        // The dumps (--emit=ast, tile-source, tile-ir, ...) go where -o says, as the source does.
        if (options.output.empty()) {
            out << result;
            return kExitOk;
        }
        if (std::string error; !writeFilesAtomically({{options.output, result}}, error)) {
            err << "tlc: error: " << error << '\n';
            return kExitUsage;
        }
        return kExitOk;
    }
    if (options.explain && options.output.empty() && options.report.empty()) return kExitOk;
    return writeOutputs(options, sourceFile, kernels, variantSets, *target, rankings, out, err);
}

int runRecommend(const DriverOptions& options, const RecommendDriverOptions& rec, std::ostream& out,
                 std::ostream& err) {
    int targetExit = kExitOk;
    const Target* target = resolveTarget(options, err, targetExit);
    if (targetExit != kExitOk) return targetExit;
    if (!target) {
        usageError(err, "recommend: no --target given (see --list-targets)");
        return kExitUsage;
    }
    if (rec.top < 1 || rec.top > 1000) {
        usageError(err, fmt::format("recommend: --top must be between 1 and 1000, not {}", rec.top));
        return kExitUsage;
    }
    std::unique_ptr<MeasuredSet> measured = measuredSweeps(options, err, targetExit);
    if (!measured) return targetExit;
    RecommendOptions ro;
    ro.target = target;
    ro.measured = measured.get();
    ro.top = rec.top;
    ro.kernel = options.kernel;
    ro.defines = options.defines;
    if (std::string error; !parseShapeOption(rec.shape, ro.shape, error)) {
        usageError(err, error);
        return kExitUsage;
    }
    std::string text, readError;
    if (!readInput(options.input, text, readError)) {
        usageError(err, readError);
        return kExitUsage;
    }
    SourceFile source(options.input == "-" ? "<stdin>" : options.input, std::move(text));
    std::optional<Recommendation> r;
    std::string error;
    runWithLargeStack([&] {
        DiagnosticEngine diags(source);
        std::unique_ptr<Program> program = Program::parse(source, diags, options.defines, options.autoParams);
        if (!program || diags.hasErrors()) error = firstError(diags);
        else r = recommend(*program, ro, error);
    });
    if (!r) {
        err << source.name() << ": error: " << error << '\n';
        return kExitInputErrors;
    }
    out << recommendationJson(*r, *target);
    if (r->ranked.empty()) {
        err << source.name() << ": error: no configuration of the 'auto' parameters of '" << r->kernel
            << "' compiles for target '" << target->name << "'"
            << (r->firstRejection.empty() ? std::string() : "; first rejection: " + r->firstRejection) << '\n';
        return kExitInputErrors;
    }
    return kExitOk;
}

} // namespace tlc
