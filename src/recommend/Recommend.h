// The tile recommender: for a kernel with `auto` compile-time parameters, enumerates candidate
// values, rejects those that do not compile or do not fit the target, and ranks the rest with a
// simple performance model over the target's hardware profile. docs/recommend.md describes the
// candidates and the model; `tlc recommend` prints the result as JSON, and the driver fills the
// `auto` parameters of a kernel it compiles with the best candidate.
#pragma once

#include "support/SourceFile.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc {

namespace ast {
struct Kernel;
}

// What an `auto` parameter is used for, from its name (docs/recommend.md): the candidates differ.
enum class AutoRole { TileExtent, Stages, Threads };
const char* autoRoleName(AutoRole r);

struct AutoParam {
    std::string name;
    AutoRole role;
    std::vector<int64_t> values;  // the candidates, ascending
};

// The model's view of one configuration. Times in microseconds.
struct CandidateEstimate {
    std::vector<std::pair<std::string, int64_t>> values;  // the auto parameters, in declaration order
    double timeUs = 0, computeUs = 0, memoryUs = 0, syncUs = 0;
    double flops = 0, globalBytes = 0, intensity = 0;     // whole grid; intensity in flop/byte
    int64_t blocks = 0;
    int blocksPerSM = 0;
    int64_t waves = 0;
    double waveEfficiency = 0;
    int64_t sharedBytes = 0;         // what the model counts (see docs/recommend.md)
    int64_t loweredSharedBytes = 0;  // the lowered kernel's static shared memory
    int threads = 0;
    int registersPerThread = 0;  // estimate: fragments / threads + a fixed overhead
    int stages = 1;
};

struct RecommendOptions {
    const Target* target = nullptr;
    std::map<std::string, std::string> defines;  // -D: fixed values (an auto parameter given here is not searched)
    std::map<std::string, int64_t> shape;        // --shape: values of the symbolic sizes for the model
    int top = 5;
    std::string kernel;                          // empty: the first kernel with auto parameters
};

struct Recommendation {
    std::string kernel;
    std::vector<AutoParam> params;
    std::map<std::string, int64_t> shape;  // every symbolic size, with the value the model used
    int64_t enumerated = 0;                // candidate configurations
    int64_t compiled = 0;                  // lowered and accepted
    int64_t rejected = 0;                  // rejected (by the checker, lowering or the model's limits)
    std::string firstRejection;            // why the first rejected candidate was rejected
    std::vector<CandidateEstimate> ranked; // best first, at most `top`
};

// The size given to a symbolic size the shape does not name.
constexpr int64_t kDefaultShapeExtent = 4096;

// Runs the recommender on the kernel of `source`. Returns nullopt with `error` set when the
// input does not get that far (parse or check errors: `error` holds the first message; no
// kernel with auto parameters; a shape naming no size of the kernel).
std::optional<Recommendation> recommend(const SourceFile& source, const RecommendOptions& options,
                                        std::string& error);

// The -D values that concern `kernel` (a file's other kernels may take others): its
// compile-time parameters and the names among its tensor dimensions.
std::map<std::string, std::string> definesFor(const ast::Kernel& kernel,
                                              const std::map<std::string, std::string>& defines);

// The JSON `tlc recommend` prints.
std::string recommendationJson(const Recommendation& r, const Target& target);

} // namespace tlc
