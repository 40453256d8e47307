// The reference evaluator: runs a kernel's Tile IR (as irgen builds it, before any pass) one
// statement and one tile op at a time, in double precision, with the language's semantics
// (docs/language.md; the summary is in tests/difftest/README.md). It knows the tile ops' meaning
// from the language, not from their lowerings: nothing here calls into src/ops' lower()
// functions, src/passes or src/emit, so a lowering bug cannot hide in both.
#pragma once

#include "ir/Kernel.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tlc::eval {

// The program uses something the evaluator does not model (exit 3 of tlc-eval).
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The program's own fault at run time: an index outside an on-chip buffer, a read of an element
// nothing wrote, an integer division by zero, a NaN made from numbers... (exit 4).
struct Fault : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Problem {
    std::map<std::string, int64_t> sizes;            // every size parameter's value
    std::map<std::string, double> scalars;           // scalar parameters
    std::map<std::string, std::vector<double>> tensors;  // tensor parameters' storage, updated in place
};

// Runs the grids of one source kernel (irgen's parts, in order) on `problem`. Tensor contents
// are flat storage: element (i, j, ...) lives at i * stride0 + j * stride1 + ...
void runKernel(const std::vector<ir::Kernel>& parts, Problem& problem);

} // namespace tlc::eval
