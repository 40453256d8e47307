// --emit-variants=N: the top N configurations the recommender ranks for a kernel's `auto`
// parameters, each compiled as its own kernel named after its values (gemm__bm128_bn128_bk32),
// and the variant set the emitter's dispatcher picks from at run time (emit/Emit.h).
#pragma once

#include "driver/Explain.h"
#include "emit/Emit.h"
#include "ir/Kernel.h"
#include "passes/Passes.h"
#include "support/Diagnostics.h"
#include "support/SourceFile.h"
#include "target/Target.h"

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace tlc {

// "gemm" and {block_M: 128, block_N: 64, stages: 3} -> "gemm__bm128_bn64_s3": each parameter
// by the first letters of its words (all of its name where two would read the same).
std::string variantName(const std::string& kernel, const std::vector<std::pair<std::string, int64_t>>& values);

// Compiles the variants of `kernel` (of `source`, with `defines`), appending the lowered kernels
// to `kernels`, their decision logs to `explained`, and returns the set; false when the
// recommender finds no configuration (a note says why, as without variants).
bool compileVariants(const SourceFile& source, const std::string& kernel, int top, const Target& target,
                     const std::map<std::string, std::string>& defines, DiagnosticEngine& diags,
                     const PassOptions& passOptions, std::ostream& dumps, std::vector<ir::Kernel>& kernels,
                     std::vector<ExplainedKernel>& explained, VariantSet& set);

} // namespace tlc
