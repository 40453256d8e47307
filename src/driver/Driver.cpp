#include "driver/Driver.h"

#include "ast/AST.h"
#include "driver/Depfile.h"
#include "driver/Explain.h"
#include "driver/Variants.h"
#include "emit/Emit.h"
#include "support/AtomicFile.h"
#include "ir/Printer.h"
#include "irgen/IRGen.h"
#include "passes/Passes.h"
#include "parser/Parser.h"
#include "recommend/Recommend.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/LargeStack.h"
#include "support/Verify.h"
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
#include <sstream>

namespace tlc {

const std::vector<std::string>& emitKinds() {
    static const std::vector<std::string> kinds = {"ast", "tile-ir", "layouts", "thread-ir", "shared", "source", "python"};
    return kinds;
}

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

// Drops every kernel but `name`; false if there is none of that name.
bool selectKernel(ast::File& file, const std::string& name) {
    auto& ks = file.kernels;
    auto it = std::find_if(ks.begin(), ks.end(), [&](const auto& k) { return k->name == name; });
    if (it == ks.end()) return false;
    auto keep = std::move(*it);
    ks.clear();
    ks.push_back(std::move(keep));
    return true;
}

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

int writeOutputs(const DriverOptions& options, bool python, const std::string& sourceName,
                 const std::vector<ir::Kernel>& kernels, const std::vector<VariantSet>& variants, const Target& target,
                 std::ostream& out, std::ostream& err) {
    EmitOptions emitOptions;
    emitOptions.variants = variants;
    emitOptions.sourceName = baseName(sourceName);
    emitOptions.nameSpace = options.nameSpace;
    emitOptions.cPrefix = options.cPrefix;
    emitOptions.lineDirectives = options.lineDirectives;
    emitOptions.debug = options.debug;
    emitOptions.manifest = options.emitManifest;
    emitOptions.python = python;
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
    if (options.output.empty()) {
        out << result.source;
        return kExitOk;
    }
    std::vector<std::pair<std::string, std::string>> files{{options.output, result.source}, {headerPath, result.header}};
    if (options.emitManifest) files.push_back({besideOutput(options.output, ".json"), result.manifest});
    if (python) files.push_back({besideOutput(options.output, "_python.cpp"), result.python});
    if (options.depfile) {
        // What tlc read: the source and the profile (imports are #includes of the output, read by
        // the backend compiler, which lists them in its own depfile).
        std::vector<std::string> read;
        if (options.input != "-") read.push_back(options.input);
        if (!options.targetProfile.empty()) read.push_back(options.targetProfile);
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

// "several grids" or "global scratch" when the kernel has them (the recommender ranks kernels of
// one grid: its model and the variant dispatcher know one launch), else "". Read from the
// syntax: the kernel is not checked yet.
std::string severalGridsOrScratch(const ast::Kernel& k) {
    int grids = 0;
    bool scratch = false;
    for (const auto& s : k.body->stmts) {
        grids += s->kind == ast::StmtKind::Grid ? 1 : 0;
        if (const auto* let = s->as<ast::LetStmt>())
            if (const auto* c = let->value->as<ast::Call>(); c && c->callee == "alloc_global") scratch = true;
    }
    if (grids > 1) return fmt::format("{} grids", grids);
    return scratch ? "global scratch (alloc_global)" : "";
}

// Fills the `auto` parameters of every kernel (not given with -D) with the recommender's best
// candidate for the target and logs each value with the model's estimate (--explain; the
// emitted code's comments list the values too). Where no candidate compiles, leaves them
// `auto` (IR building then reports them) after a note saying why. Returns the logs by kernel.
std::map<std::string, DecisionLog> fillAutoParams(ast::File& file, const SourceFile& source, DiagnosticEngine& diags,
                                                  const Target& target,
                                                  const std::map<std::string, std::string>& defines) {
    std::map<std::string, DecisionLog> logs;
    for (auto& k : file.kernels) {
        bool any = false;
        for (const auto& tp : k->templateParams) any = any || (tp.isAuto && !defines.count(tp.name));
        if (!any) continue;
        if (std::string what = severalGridsOrScratch(*k); !what.empty()) {
            diags.report(DiagId::err_auto_multi_grid, k->nameRange, k->name, what);
            continue;
        }
        RecommendOptions ro;
        ro.target = &target;
        ro.defines = defines;
        ro.top = 1;
        ro.kernel = k->name;
        std::string error;
        std::optional<Recommendation> r = recommend(source, ro, error);
        if (!r) continue;  // the checker reports what is wrong with the kernel
        if (r->ranked.empty()) {
            diags.report(DiagId::note_auto_no_candidate, k->nameRange, k->name, r->enumerated, target.name,
                         r->firstRejection);
            continue;
        }
        std::string shape;
        for (const auto& [n, v] : r->shape) shape += fmt::format("{}{}={}", shape.empty() ? "" : ",", n, v);
        const CandidateEstimate& best = r->ranked.front();
        std::string reason = fmt::format(
            "the recommender's best of {} configurations ({} lowered) for target '{}'{}: estimate {:.1f} us "
            "(compute {:.1f} us, memory {:.1f} us), {} bytes of shared memory, {} thread{}, {} block{} per SM, "
            "{} wave{} (see 'tlc recommend')",
            r->enumerated, r->compiled, target.name, shape.empty() ? std::string() : " at " + shape, best.timeUs,
            best.computeUs, best.memoryUs, best.loweredSharedBytes, best.threads, best.threads == 1 ? "" : "s",
            best.blocksPerSM,
            best.blocksPerSM == 1 ? "" : "s", best.waves, best.waves == 1 ? "" : "s");
        for (auto& tp : k->templateParams) {
            for (const auto& [name, value] : best.values) {
                if (tp.name != name || !tp.isAuto) continue;
                tp.isAuto = false;
                tp.defaultValue = std::make_unique<ast::IntLit>(tp.range, value);
                logs[k->name].add({name, std::to_string(value), "auto", reason, tp.range.begin});
            }
        }
    }
    return logs;
}

} // namespace

std::string checkDefine(const std::string& d) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == d.size())
        return fmt::format("-D expects NAME=VALUE, got '{}'", d);
    std::string name = d.substr(0, eq);
    bool identifier = (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                      });
    if (!identifier) return fmt::format("-D {}: '{}' is not a name (letters, digits and '_')", d, name);
    return "";
}

int runDriver(const DriverOptions& given, std::ostream& out, std::ostream& err) {
    if (std::find(emitKinds().begin(), emitKinds().end(), given.emit) == emitKinds().end()) {
        usageError(err, fmt::format("unknown --emit kind '{}'", given.emit));
        return kExitUsage;
    }
    // --emit=python is --emit=source plus the binding beside the output (OUT_python.cpp), which
    // includes the header: it needs -o.
    const bool python = given.emit == "python";
    if (python && given.output.empty() && !given.syntaxOnly) {
        usageError(err, "--emit=python writes the kernel source, its header and the binding beside them "
                        "(OUT_python.cpp): give -o FILE");
        return kExitUsage;
    }
    DriverOptions options = given;
    if (python) options.emit = "source";
    int targetExit = kExitOk;
    const Target* target = resolveTarget(options, err, targetExit);
    if (targetExit != kExitOk) return targetExit;
    if (!target && options.emit == "source" && !options.syntaxOnly && !options.verify) {
        usageError(err, "no --target given (see --list-targets)");
        return kExitUsage;
    }
    SemaOptions semaOptions;
    semaOptions.target = target;
    for (const auto& d : options.defines) {
        if (std::string problem = checkDefine(d); !problem.empty()) {
            usageError(err, problem);
            return kExitUsage;
        }
        size_t eq = d.find('=');
        semaOptions.defines[d.substr(0, eq)] = d.substr(eq + 1);  // the last -D of a name wins
    }

    std::string text, readError;
    if (!readInput(options.input, text, readError)) {
        usageError(err, readError);
        return kExitUsage;
    }
    SourceFile source(options.input == "-" ? "<stdin>" : options.input, std::move(text));
    DiagnosticEngine diags(source);
    diags.setWarningsAsErrors(options.warningsAsErrors);
    diags.setErrorLimit(options.errorLimit);

    std::string result;
    std::string passDumps;
    std::vector<ir::Kernel> kernels;
    std::vector<ExplainedKernel> explained;
    std::vector<VariantSet> variantSets;
    bool kernelMissing = false;
    runWithLargeStack([&] {
        std::unique_ptr<ast::File> file = parseFile(source, diags);
        if (!file) return;
        if (!options.kernel.empty() && !selectKernel(*file, options.kernel)) {
            kernelMissing = true;
            return;
        }
        PassOptions passOptions{options.printAfter, options.printAfterAll, options.timePasses};
        std::ostringstream dumps;
        struct Flush {
            std::string& to;
            std::ostringstream& from;
            ~Flush() { to = from.str(); }
        } flush{passDumps, dumps};
        // --emit-variants: kernels with `auto` parameters become their variants (compiled
        // here) and leave the file; the rest compile as usual.
        if (target && options.emitVariants > 0 && options.emit == "source" && !options.syntaxOnly && !diags.hasErrors()) {
            std::vector<std::string> varied;
            for (const auto& k : file->kernels) {
                bool any = false;
                for (const auto& tp : k->templateParams) any = any || (tp.isAuto && !semaOptions.defines.count(tp.name));
                VariantSet set;
                if (any && !severalGridsOrScratch(*k).empty()) {
                    diags.report(DiagId::err_auto_multi_grid, k->nameRange, k->name, severalGridsOrScratch(*k));
                    varied.push_back(k->name);  // nothing more to say about it
                    continue;
                }
                if (any && compileVariants(source, k->name, options.emitVariants, *target, semaOptions.defines, diags,
                                           passOptions, dumps, kernels, explained, set)) {
                    variantSets.push_back(std::move(set));
                    varied.push_back(k->name);
                }
            }
            std::erase_if(file->kernels, [&](const auto& k) {
                return std::find(varied.begin(), varied.end(), k->name) != varied.end();
            });
            if (file->kernels.empty()) return;
        }
        std::map<std::string, DecisionLog> autoLogs;
        if (target && !options.syntaxOnly && options.emit != "ast" && !diags.hasErrors())
            autoLogs = fillAutoParams(*file, source, diags, *target, semaOptions.defines);
        if (!checkFile(*file, diags, semaOptions)) return;
        if (options.emit == "ast") {
            result = ast::dump(*file);
            return;
        }
        if (!target || options.syntaxOnly) return;
        for (const auto& k : file->kernels) {
            for (ir::Kernel& part : buildKernelIRs(*k, source, diags)) {
            std::optional<ir::Kernel> kernel = std::move(part);
            kernel->decisions = autoLogs[k->name];
            inferThreads(*kernel, *target);
            if (options.emit == "tile-ir") {
                result += ir::printKernel(*kernel);
                continue;
            }
            if (options.emit == "layouts") {
                result += describeLayouts(*kernel, *target, diags);
                continue;
            }
            bool lowered = lowerKernel(*kernel, *target, diags, passOptions, dumps);
            explained.push_back({kernel->name, kernel->decisions});
            if (!lowered) continue;
            if (options.emit == "thread-ir") result += ir::printKernel(*kernel);
            if (options.emit == "shared") result += describeSharedPlan(*kernel);
            kernels.push_back(std::move(*kernel));
            }
            // A group whose parts did not all lower has no launcher: drop the rest of it.
            int lowered = 0;
            for (const auto& o : kernels) lowered += o.group == k->name ? 1 : 0;
            std::erase_if(kernels, [&](const ir::Kernel& kk) { return kk.group == k->name && lowered != kk.parts; });
        }
    });
    if (kernelMissing) {
        usageError(err, fmt::format("no kernel named '{}' in {}", options.kernel, source.name()));
        return kExitUsage;
    }

    if (options.verify) {
        std::ostringstream report;
        bool ok = verifyDiagnostics(diags, report);
        err << report.str();
        return ok ? kExitOk : kExitInputErrors;
    }
    err << passDumps;
    if (options.jsonDiagnostics) diags.printJson(err);
    else diags.printText(err, options.color);
    // --explain replaces the source on stdout (with -o the files are still written), also when
    // there are errors: what was chosen is part of understanding a contradiction.
    if (options.explain && options.emit == "source" && !options.syntaxOnly)
        out << (options.jsonDiagnostics ? explainJson(explained, source.name(), target->name)
                                        : explainText(explained, source.name(), target->name));
    if (diags.hasErrors()) return kExitInputErrors;
    if (options.syntaxOnly) return kExitOk;

    if (options.emit != "source") {
        out << result;
        return kExitOk;
    }
    if (options.explain && options.output.empty()) return kExitOk;
    return writeOutputs(options, python, source.name(), kernels, variantSets, *target, out, err);
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
    RecommendOptions ro;
    ro.target = target;
    ro.top = rec.top;
    ro.kernel = options.kernel;
    for (const auto& d : options.defines) {
        if (std::string problem = checkDefine(d); !problem.empty()) {
            usageError(err, problem);
            return kExitUsage;
        }
        size_t eq = d.find('=');
        ro.defines[d.substr(0, eq)] = d.substr(eq + 1);
    }
    // --shape NAME=N,NAME=N: positive integers.
    std::string_view shape = rec.shape;
    while (!shape.empty()) {
        size_t comma = shape.find(',');
        std::string item(shape.substr(0, comma));
        shape = comma == std::string_view::npos ? std::string_view() : shape.substr(comma + 1);
        size_t eq = item.find('=');
        std::string name = eq == std::string::npos ? item : item.substr(0, eq);
        std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
        bool ok = !name.empty() && !value.empty() && value.size() <= 10 &&
                  std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        int64_t v = ok ? std::stoll(value) : 0;
        if (!ok || v < 1 || v > INT32_MAX) {
            usageError(err, fmt::format("--shape expects NAME=N,... with N a positive 32-bit integer, got '{}'", item));
            return kExitUsage;
        }
        ro.shape[name] = v;
    }
    std::string text, readError;
    if (!readInput(options.input, text, readError)) {
        usageError(err, readError);
        return kExitUsage;
    }
    SourceFile source(options.input == "-" ? "<stdin>" : options.input, std::move(text));
    std::optional<Recommendation> r;
    std::string error;
    runWithLargeStack([&] { r = recommend(source, ro, error); });
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
