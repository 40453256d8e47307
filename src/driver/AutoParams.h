// The values the driver compiles a kernel's `auto` parameters with: the recommender's best
// configuration, or with --emit-variants=N its top N, each compiled as its own kernel named
// after its values (gemm__bm128_bn128_bk32) plus the variant set the emitter's dispatcher picks
// from at run time (emit/Emit.h). Both compile through compile() (compile/Compile.h).
#pragma once

#include "compile/Compile.h"
#include "emit/Emit.h"
#include "recommend/Recommend.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc {

// What the recommender is asked for on this run: the problem shape it models the kernels at
// (--shape NAME=VALUE,...: sizes of any of the file's kernels; the others take the defaults of
// recommend/ModelShape.h), which of its names some kernel's recommendation used (a name none used
// is an error on the command line), and the measured sweeps shown beside its estimates.
struct AutoSearch {
    std::map<std::string, int64_t> given;
    std::set<std::string> used;
    const MeasuredSet* measured = nullptr;
};

// The configuration of a kernel whose `auto` parameters `defines` leaves open: the recommender's
// best candidate, each value logged with the model's estimate (--explain; the emitted code's
// comments list the values too). A kernel of several launches is ranked by their total.
// Where no candidate compiles or the search cannot run, the kernel as written after a note
// saying why: IR building then reports what is left `auto`.
// With `ranking`, the recommender's top `top` candidates are kept there (the kernel report).
KernelConfig autoConfig(const Program& program, const ast::Kernel& kernel, const Target& target,
                        const Defines& defines, AutoSearch& shape, DiagnosticEngine& diags,
                        std::optional<Recommendation>* ranking = nullptr, int top = 1);

// --explain on a kernel whose tile, block and pipeline parameters are all written
// (recommend/AutoRoles.h, tunableParams): the recommender ranks their values as if they were
// `auto` at the run's shape and compares the written ones; a note names its pick where the
// written ones are estimated kWrittenSlowerRatio times its time or more (issue 46).
constexpr double kWrittenSlowerRatio = 1.5;
void noteWrittenSlower(const Program& program, const ast::Kernel& kernel, const Target& target, const Defines& defines,
                       AutoSearch& shape, DiagnosticEngine& diags);

// "gemm" and {block_M: 128, block_N: 64, stages: 3} -> "gemm__bm128_bn64_s3": each parameter
// by the first letters of its words (all of its name where two would read the same).
std::string variantName(const std::string& kernel, const std::vector<std::pair<std::string, int64_t>>& values);

// Compiles the variants of `kernel` (with `options`: target, -D values, passes), appending the
// lowered kernels to `kernels`, their decision logs to `explained`, and returns the set; false
// when the recommender finds no configuration.
// With `ranking`, the recommender's ranking the variants came from is kept there (the report).
bool compileVariants(const Program& program, const ast::Kernel& kernel, int top, const CompileOptions& options,
                     AutoSearch& shape, DiagnosticEngine& diags, std::vector<ir::Kernel>& kernels,
                     std::vector<ExplainedKernel>& explained, VariantSet& set,
                     std::optional<Recommendation>* ranking = nullptr);

} // namespace tlc
