// `tlc dispatch`: one launcher per kernel over the outputs of one .tl file built for several
// CUDA targets, picking at run time the target built for the current device (docs/integration.md,
// "Several GPU targets in one library"). It reads the manifests (--emit-manifest) of those
// outputs, so it sees exactly the launchers, names and parameter types their headers declare.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tlc {

struct DispatchInput {
    std::string path;     // the manifest, for messages
    std::string text;     // its JSON
    std::string folder;   // from the dispatcher's header to the manifest's header: "" (beside it) or "sm80/"
};

struct DispatchOptions {
    std::string nameSpace = "tl_kernels";  // of the dispatching launchers ("a::b" nests; empty: global)
    std::string cPrefix = "tl_";           // of their extern "C" twins
    std::string headerName;                // what the source includes ("gemm.h")
    std::string outputName;                // the source's own name, for its banner ("gemm.cpp")
};

struct DispatchResult {
    std::string source;  // host C++ using the CUDA runtime
    std::string header;
};

// A manifest tlc cannot dispatch over (another backend, launchers that differ between targets,
// malformed JSON); the message names the manifest and what is wrong.
class DispatchError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

DispatchResult emitDeviceDispatch(const std::vector<DispatchInput>& inputs, const DispatchOptions& options);

} // namespace tlc
