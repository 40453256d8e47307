// The compiler driver: reads the input, runs the pipeline the options ask for, prints
// diagnostics, writes outputs atomically. cli/main.cpp turns the command line into Options.
#pragma once

#include "compile/Defines.h"
#include "compile/EmitKind.h"

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

namespace tlc {

enum ExitCode { kExitOk = 0, kExitInputErrors = 1, kExitUsage = 2 };

struct DriverOptions {
    std::string input;            // path, or "-" for stdin
    std::string target;           // empty: front end only (allowed with --emit=ast / --syntax-only)
    std::string targetProfile;    // --target-profile=FILE: a user hardware profile (JSON) as the target
    std::string output;           // empty: stdout
    std::string header;           // launcher header path (default: output with .h)
    std::string nameSpace = "tl_kernels";
    std::string cPrefix = "tl_";
    bool lineDirectives = false;
    bool debug = false;           // keep print/assert in the emitted code
    bool assumeAligned = false;   // no general variants: launchers refuse what the fast path cannot take
    Defines defines;              // -D NAME=VALUE, checked (compile/Defines.h)
    std::set<std::string> autoParams;  // -D NAME=auto: parameters left to the recommender
    std::string kernel;           // only this kernel
    EmitKind emit = EmitKind::Source;
    std::vector<std::string> printAfter;  // pass names: print the IR after them (stderr)
    bool printAfterAll = false;
    bool timePasses = false;
    bool syntaxOnly = false;
    bool jsonDiagnostics = false;
    bool warningsAsErrors = false;
    std::vector<std::string> warningFlags;  // -w, -W<name>, -Wno-<name>, -Werror=<name>, ... in order
    bool verify = false;
    bool color = false;
    unsigned errorLimit = 50;
    int emitVariants = 0;         // --emit-variants=N: kernels with `auto` parameters as their top N configurations
    std::string shape;            // --shape M=8192,N=8192: the sizes the recommender models `auto` kernels at
    std::vector<std::string> measured;  // --measured=FILE: sweeps (bench/ format) shown beside the model's estimates
    bool explain = false;         // print the decision log (inferred and recommended values) on stdout
    bool depfile = false;         // -MD (or -MF): write a Make-style depfile with the outputs
    std::string depfilePath;      // -MF FILE (default: the output with .d)
    std::string depTarget;        // -MT NAME: the rule's target (default: the output)
    bool depPhony = false;        // -MP: an empty rule per dependency
    bool emitManifest = false;    // --emit-manifest: the launchers as JSON, beside the output (.json)
    std::string report;           // --report=FILE: the kernel report, one HTML page (src/report, docs/report.md)
    bool reportPtxas = false;     // --report-ptxas: the report's registers from ptxas when nvcc is found
};

int runDriver(const DriverOptions& options, std::ostream& out, std::ostream& err);

// `tlc recommend FILE --target=T [--shape M=8192,N=8192] [--top N]`: ranks configurations of the
// kernel's `auto` parameters (src/recommend, docs/recommend.md) and prints them as JSON on `out`.
struct RecommendDriverOptions {
    std::string shape;  // "M=8192,N=8192,K=8192"
    int top = 5;
};
int runRecommend(const DriverOptions& options, const RecommendDriverOptions& recommend, std::ostream& out,
                 std::ostream& err);

// `tlc dispatch MANIFEST.json... -o FILE.cpp`: launchers that run, per kernel, the target built for
// the current CUDA device, over the outputs of one .tl file for several targets (their
// --emit-manifest JSON); FILE.cpp and its header (FILE.h) are written atomically.
struct DispatchDriverOptions {
    std::vector<std::string> manifests;
    std::string output;  // FILE.cpp
    std::string header;  // default: the output with .h
    std::string nameSpace = "tl_kernels";
    std::string cPrefix = "tl_";
};
int runDispatch(const DispatchDriverOptions& options, std::ostream& err);

} // namespace tlc
