// Emission: a lowered kernel (thread IR, see docs and ARCHITECTURE.md) becomes readable
// CUDA (.cu), HIP (.hip) or C++/OpenMP (.cpp) source plus a launcher header.
//
// What emit() accepts ("thread IR"): no TileOpStmt and no Parallel/Pipelined loops; stores of
// one lane, or of several lanes when the value is a Load of the same lanes and dtype (a vector
// move) or a zero broadcast (a zero fill); arithmetic only on f32, f64, integers and bool
// (16- and 8-bit floats appear in buffers and casts only); shared/local buffers with constant
// shapes. Code outside that contract raises EmitError; nothing is printed to stderr.
#pragma once

#include "ir/Kernel.h"
#include "target/Target.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace tlc {

// --emit-variants: kernels that are configurations of one source kernel's `auto` parameters,
// and what the dispatcher launcher (named after that kernel) needs to pick one for the sizes it
// is given: the fewest waves of blocks times the model's time per wave (docs/recommend.md).
struct VariantSet {
    std::string name;               // the source kernel's name: the dispatcher's
    std::vector<size_t> kernels;    // indices into emit()'s kernels, best-ranked first
    std::vector<double> usPerWave;  // per variant: the model's time of one wave of blocks
    std::vector<int64_t> slots;     // per variant: blocks one wave holds (SMs x blocks per SM)
    std::string shape;              // the sizes the model ranked them at, for the comment
};

struct EmitOptions {
    std::string sourceName;                // "gemm.tl", for comments and #line (default: the kernel's)
    std::string headerName;                // what the source includes ("gemm.h"); empty: no header
    std::string outputName;                // the source's own file name ("gemm.cu"), for #line after a kernel
    std::string nameSpace = "tl_kernels";  // of the launchers and kernels ("a::b" nests; empty: global)
    std::string cPrefix = "tl_";           // of the extern "C" launchers
    bool lineDirectives = false;           // #line 12 "gemm.tl" instead of // gemm.tl:12 comments
    bool debug = false;                    // keep print(...) and assert(...) (--debug)
    std::vector<VariantSet> variants;      // dispatchers to add (--emit-variants)
    bool manifest = false;                 // also describe the launchers as JSON (--emit-manifest)
    bool python = false;                   // also a pybind11 binding of the launchers (--emit=python)
};

struct EmitResult {
    std::string source;  // .cu / .hip / .cpp
    std::string header;  // launcher declarations; empty when options.headerName is empty
    std::string manifest;  // the launchers as JSON, when options.manifest (docs/integration.md)
    std::string python;    // the binding (OUT_python.cpp), when options.python (docs/integration.md)
};

// The IR broke the thread-IR contract (a bug in lowering, not in the user's program).
class EmitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

EmitResult emit(const std::vector<ir::Kernel>& kernels, const Target& target, const EmitOptions& options);

} // namespace tlc
