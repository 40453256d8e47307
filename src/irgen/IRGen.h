// Builds the Tile IR of a checked kernel: parameters become buffers and variables,
// compile-time values become constants, tile primitives become TileOp nodes, loops keep their
// kinds (parallel, pipelined) for the passes to lower. 16-bit and 8-bit float arithmetic is
// done in f32, so later stages only see such types in memory and in casts.
#pragma once

#include "ast/AST.h"
#include "ir/Kernel.h"
#include "support/Diagnostics.h"

#include <optional>
#include <vector>

namespace tlc {

// Every kernel: one ir::Kernel per grid, in order (Kernel::group ties them together when there
// are several or when the kernel has global scratch). Empty after reporting when the kernel uses
// something IR building cannot express (sema accepts only what this handles, so that is a
// compiler bug surfaced as a diagnostic).
std::vector<ir::Kernel> buildKernelIRs(const ast::Kernel& kernel, const SourceFile& file, DiagnosticEngine& diags);

} // namespace tlc
