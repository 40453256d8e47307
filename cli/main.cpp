// The tlc command line. The only file that includes CLI11 (slow to compile); everything else
// lives in the driver.
#include "driver/Driver.h"
#include "support/Diagnostics.h"
#include "target/Target.h"

#include <algorithm>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <unistd.h>

namespace {

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : "|") + s;
    return out;
}

std::string targetNames() {
    std::string out;
    for (const auto& t : tlc::allTargets()) out += (out.empty() ? "" : ", ") + std::string(t.name);
    return out;
}

void listTargets() {
    size_t nameWidth = 8, archWidth = 8;  // the columns fit the longest name and arch
    for (const auto& t : tlc::allTargets()) {
        nameWidth = std::max(nameWidth, t.name.size());
        archWidth = std::max(archWidth, t.arch.size());
    }
    fmt::print("{:<{}} {:<6} {:<{}} {:>5} {:>8} {:>5}  {}\n", "target", nameWidth, "lang", "arch", archWidth, "warp",
               "smem/blk", "SMs", "description; features");
    for (const auto& t : tlc::allTargets()) {
        std::string features = tlc::featureList(t);
        fmt::print("{:<{}} {:<6} {:<{}} {:>5} {:>8} {:>5}  {}; {}\n", t.name, nameWidth, tlc::backendName(t.backend),
                   t.arch, archWidth, t.warpSize, t.sharedMemPerBlock, t.smCount, t.description,
                   features.empty() ? "no optional features" : features);
    }
}

CLI::Validator cPrefixValidator() {
    return CLI::Validator(
        [](std::string& p) -> std::string {
            bool ok = !p.empty() && !std::isdigit(static_cast<unsigned char>(p[0]));
            for (char c : p) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
            return ok ? "" : "'" + p + "' is not the start of a C name (letters, digits and '_')";
        },
        "C name prefix");
}

// Parses a subcommand's arguments (argv[2..]): nothing when they parse, else the exit code
// (0 after --help; a usage error, reported, otherwise).
std::optional<int> parseSubcommand(CLI::App& app, int argc, char** argv, const char* name) {
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 2; --i) args.push_back(argv[i]);
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::cerr << "tlc: error: " << e.what() << "\ntlc: note: see 'tlc " << name << " --help'\n";
        return tlc::kExitUsage;
    }
    return std::nullopt;
}

// `tlc dispatch MANIFEST.json... -o FILE.cpp [--namespace NS] [--c-prefix P]`.
int dispatchMain(int argc, char** argv) {
    tlc::DispatchDriverOptions options;
    CLI::App app{"tlc dispatch: launchers that run the target built for the current CUDA device, over the outputs "
                 "of one .tl file for several targets, read from their manifests (tlc --emit-manifest); writes "
                 "FILE.cpp and FILE.h (docs/integration.md)",
                 "tlc dispatch"};
    app.add_option("manifests", options.manifests, "The manifest of each target's output, in the order of the "
                                                   "target indices");
    app.add_option("-o,--output", options.output, "The dispatcher's source (host C++ using the CUDA runtime)");
    app.add_option("--header", options.header, "Its header (default: the output with .h)");
    app.add_option("--namespace", options.nameSpace, "C++ namespace of the dispatching launchers")
        ->capture_default_str();
    app.add_option("--c-prefix", options.cPrefix, "Prefix of their extern \"C\" twins")
        ->capture_default_str()
        ->check(cPrefixValidator());
    if (std::optional<int> exit = parseSubcommand(app, argc, argv, "dispatch")) return *exit;
    return tlc::runDispatch(options, std::cerr);
}

// `tlc recommend FILE --target=T [--shape M=8192,N=8192,K=8192] [--top N]`.
int recommendMain(int argc, char** argv) {
    tlc::DriverOptions options;
    tlc::RecommendDriverOptions rec;
    CLI::App app{"tlc recommend: ranks values for the 'auto' compile-time parameters of a kernel on a target "
                 "and prints them as JSON (docs/recommend.md)",
                 "tlc recommend"};
    app.add_option("input", options.input, "Input .tl file, or - for standard input");
    app.add_option("--target,-t", options.target, "Target: " + targetNames());
    app.add_option("--target-profile", options.targetProfile, "A hardware profile (JSON) to use as the target");
    app.add_option("--shape", rec.shape,
                   "Sizes for the model: NAME=N,... (others: 4096, less where a tensor would pass 2^30 elements)");
    app.add_option("--top", rec.top, "How many candidates to print")->capture_default_str();
    app.add_option("--kernel", options.kernel, "The kernel (default: the first with 'auto' parameters)");
    app.add_option("--measured", options.measured,
                   "Measured sweeps (JSON, the format of bench/cpu/sweep.py) to show beside the estimates "
                   "(repeatable; bench/data's are built in)");
    std::vector<std::string> defines;
    app.add_option("-D,--define", defines,
                   "Fix a compile-time parameter or size: -D NAME=VALUE (NAME=auto: leave it to the recommender)")
        ->allow_extra_args(false);
    if (std::optional<int> exit = parseSubcommand(app, argc, argv, "recommend")) return *exit;
    if (options.input.empty()) {
        std::cerr << "tlc: error: recommend: no input file (see 'tlc recommend --help')\n";
        return tlc::kExitUsage;
    }
    if (std::string error; !tlc::parseDefines(defines, options.defines, error)) {
        std::cerr << "tlc: error: " << error << '\n';
        return tlc::kExitUsage;
    }
    options.autoParams = tlc::takeAutoDefines(options.defines);
    return tlc::runRecommend(options, rec, std::cout, std::cerr);
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string_view(argv[1]) == "recommend") return recommendMain(argc, argv);
    if (argc >= 2 && std::string_view(argv[1]) == "dispatch") return dispatchMain(argc, argv);
    tlc::DriverOptions options;
    CLI::App app{"tlc: the tile-language compiler. Turns .tl tile kernels into readable CUDA, HIP or C++.",
                 "tlc"};
    app.footer("Also:\n"
               "  tlc recommend FILE --target=T [--shape M=8192,...] [--top N]\n"
               "      ranks values for a kernel's 'auto' parameters (tlc recommend --help, docs/recommend.md)\n"
               "  tlc dispatch MANIFEST.json... -o FILE.cpp\n"
               "      launchers that run the CUDA target built for the current device (tlc dispatch --help,\n"
               "      docs/integration.md)");
    app.set_version_flag("--version", std::string("tlc ") + TLC_VERSION);
    app.add_option("input", options.input, "Input .tl file, or - for standard input");
    app.add_option("--target,-t", options.target, "Target: " + targetNames());
    app.add_option("--target-profile", options.targetProfile,
                   "Use the hardware profile in this JSON file as the target (docs/recommend.md)");
    app.add_option("-o,--output", options.output, "Output file (default: standard output)");
    app.add_option("--header", options.header, "Launcher header path (default: the output with .h)");
    app.add_option("--namespace", options.nameSpace, "C++ namespace of the launchers")->capture_default_str();
    app.add_option("--c-prefix", options.cPrefix,
                   "Prefix of the extern \"C\" launchers (tl_NAME); another one lets two outputs of one kernel "
                   "link into one program")
        ->capture_default_str()
        ->check(cPrefixValidator());
    app.add_flag("--line-directives", options.lineDirectives, "Write #line directives instead of // file.tl:N comments");
    app.add_flag("--debug", options.debug, "Keep print(...) and assert(...) in the emitted code");
    app.add_flag("--assume-aligned", options.assumeAligned,
                 "Emit each kernel's fast variant alone: its launcher refuses rows and pointers its vector and TMA "
                 "moves cannot take, instead of running a general variant (docs/language.md, \"Shapes\")");
    std::vector<std::string> defines;
    app.add_option("-D,--define", defines, "Set a compile-time parameter or size: -D NAME=VALUE (NAME=auto: leave it to the recommender)")
        ->allow_extra_args(false);
    app.add_option("--kernel", options.kernel, "Compile only this kernel");
    std::string emit = "source";
    app.add_option("--emit", emit, "What to produce: " + joined(tlc::emitKindNames()))->capture_default_str();
    app.add_option("--print-after", options.printAfter, "Print the IR after this pass (repeatable)");
    app.add_flag("--print-after-all", options.printAfterAll, "Print the IR after every pass");
    app.add_flag("--time-passes", options.timePasses, "Report the time each pass takes");
    app.add_option("--emit-variants", options.emitVariants,
                   "Emit the recommender's top N configurations of each kernel with 'auto' parameters, and a "
                   "launcher that picks one by problem size (docs/recommend.md)")
        ->check(CLI::Range(1, 16));
    app.add_option("--shape", options.shape,
                   "Sizes the recommender models 'auto' kernels at: NAME=N,... (others: 4096, less where a tensor "
                   "would pass 2^30 elements; docs/recommend.md)");
    app.add_option("--measured", options.measured,
                   "Measured sweeps (JSON, the format of bench/cpu/sweep.py) shown beside the recommender's "
                   "estimates in --explain and --report (repeatable; bench/data's are built in)");
    app.add_flag("--explain", options.explain,
                 "Print every value the compiler chose (inferred or 'auto') and why, instead of the source "
                 "(with -o, besides the files); JSON with --diagnostics-format=json");
    app.add_flag("--syntax-only,--fsyntax-only", options.syntaxOnly, "Check the input; produce nothing");
    std::string diagFormat = "text";
    app.add_option("--diagnostics-format", diagFormat, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_flag("--Werror", options.warningsAsErrors,
                 "Treat warnings as errors (also, as in clang: -w, -W<name>, -Wno-<name>, -Werror=<name>, "
                 "-Wno-error=<name>; each warning prints its name, as [-Wtile-covers-part])");
    app.add_flag("--verify", options.verify,
                 "Check diagnostics against // expected-error {{...}} comments in the input");
    app.add_option("--error-limit,--ferror-limit", options.errorLimit, "Stop after this many errors (0: no limit)")
        ->capture_default_str();
    std::string color = "auto";
    app.add_option("--color", color, "Colour diagnostics: auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_flag("--emit-manifest", options.emitManifest,
                 "With -o: also describe every launcher as JSON (the output with .json; docs/integration.md)");
    app.add_option("--report", options.report,
                   "Also write the kernel report, one self-contained HTML page: source beside the emitted code, "
                   "dataflow, layouts, banks, pipeline, resources, choices (docs/report.md)");
    app.add_flag("--report-ptxas", options.reportPtxas,
                 "With --report on a CUDA target: registers and spills from nvcc -Xptxas -v when nvcc is found");
    app.add_flag("--MD", options.depfile, "With -o: also write a Make-style depfile (the output with .d)");
    app.add_option("--MF", options.depfilePath, "With -MD: the depfile's path");
    app.add_option("--MT", options.depTarget, "With -MD: the rule's target (default: the output)");
    app.add_flag("--MP", options.depPhony, "With -MD: an empty rule per dependency (deleting one does not break make)");
    bool list = false;
    app.add_flag("--list-targets", list, "List the targets and their features");
    // Hidden: the ids of every diagnostic, one per line (tests/check_diag_coverage.py uses it).
    bool listDiagnostics = false;
    app.add_flag("--list-diagnostics", listDiagnostics, "List the diagnostic ids")->group("");

    // -Werror, -verify and the depfile options are single-dash long flags, as in clang and nvcc;
    // CLI11 wants them spelled with two (-MFfile and -MTname, joined as gcc allows, too).
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 1; --i) {
        std::string a = argv[i];
        // clang's warning flags (-w, -Wno-<name>, -Werror=<name>, ...) go to the diagnostics
        // engine in the order given; CLI11 never sees them.
        if (a == "-w" || (a.size() > 2 && a.rfind("-W", 0) == 0 && a != "-Werror")) {
            options.warningFlags.insert(options.warningFlags.begin(), a);
            continue;
        }
        if (a == "-Werror" || a == "-verify" || a == "-fsyntax-only" || a.rfind("-ferror-limit", 0) == 0 ||
            a == "-MD" || a == "-MP" || a == "-MF" || a == "-MT")
            a = "-" + a;
        else if (a.size() > 3 && (a.rfind("-MF", 0) == 0 || a.rfind("-MT", 0) == 0))
            a = "-" + a.substr(0, 3) + "=" + a.substr(3);
        args.push_back(a);
    }
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        // --help and --version end parsing with a "success" exception: print what they print.
        if (e.get_exit_code() == 0) return app.exit(e);
        std::cerr << "tlc: error: " << e.what() << "\ntlc: note: see 'tlc --help'\n";
        return tlc::kExitUsage;
    }
    if (list) {
        listTargets();
        return tlc::kExitOk;
    }
    if (listDiagnostics) {
        for (int i = 0; i < int(tlc::DiagId::Count); ++i) std::cout << tlc::diagInfo(tlc::DiagId(i)).name << '\n';
        return tlc::kExitOk;
    }
    // A -D that swallowed the input's name is reported before the missing input.
    if (std::string error; !tlc::parseDefines(defines, options.defines, error)) {
        std::cerr << "tlc: error: " << error << '\n';
        return tlc::kExitUsage;
    }
    options.autoParams = tlc::takeAutoDefines(options.defines);
    if (options.input.empty()) {
        std::cerr << "tlc: error: no input file (see 'tlc --help')\n";
        return tlc::kExitUsage;
    }
    if (std::optional<tlc::EmitKind> kind = tlc::parseEmitKind(emit)) {
        options.emit = *kind;
    } else {
        std::cerr << "tlc: error: unknown --emit kind '" << emit << "'\n";
        return tlc::kExitUsage;
    }
    // `-o -` is standard output, as for clang and gcc (a file named "-" is `-o ./-`).
    if (options.output == "-") options.output.clear();
    // --emit-manifest and the depfile options describe the files that -o writes.
    const bool writesFiles =
        !options.output.empty() && tlc::emitsSource(options.emit) && !options.syntaxOnly;
    if (options.emitManifest && !writesFiles) {
        std::cerr << "tlc: error: --emit-manifest describes the files -o writes: give -o FILE (with the default "
                     "--emit=source)\n";
        return tlc::kExitUsage;
    }
    // The report draws the source a run emits.
    if (!options.report.empty() && (!tlc::emitsSource(options.emit) || options.syntaxOnly || options.verify)) {
        std::cerr << "tlc: error: --report draws the code a compile emits: use it with --emit=source (the default) "
                     "or --emit=python, not with --syntax-only or --verify\n";
        return tlc::kExitUsage;
    }
    if (!options.report.empty() && (options.report == options.output || options.report == options.header)) {
        std::cerr << "tlc: error: --report=" << options.report << " would overwrite the output; give the report "
                  << "its own file\n";
        return tlc::kExitUsage;
    }
    if (options.reportPtxas && options.report.empty()) {
        std::cerr << "tlc: error: --report-ptxas adds ptxas's registers to the report: give --report=FILE\n";
        return tlc::kExitUsage;
    }
    // -MF alone asks for a depfile too (as nvcc reads it); -MT and -MP only shape one.
    options.depfile = options.depfile || !options.depfilePath.empty();
    if ((options.depfile || !options.depTarget.empty() || options.depPhony) && !writesFiles) {
        std::cerr << "tlc: error: -MD, -MF, -MT and -MP describe the files -o writes: give -o FILE (with the "
                     "default --emit=source)\n";
        return tlc::kExitUsage;
    }
    options.jsonDiagnostics = diagFormat == "json";
    options.color = color == "always" || (color == "auto" && isatty(STDERR_FILENO));
    return tlc::runDriver(options, std::cout, std::cerr);
}
