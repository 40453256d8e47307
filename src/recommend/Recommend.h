// The tile recommender: for a kernel with `auto` compile-time parameters, enumerates candidate
// values, rejects those that do not compile or do not fit the target, and ranks the rest with a
// simple performance model over the target's hardware profile (CostModel.h): a search over the
// one compile path (compile/Compile.h). docs/recommend.md describes the candidates and the model;
// `tlc recommend` prints the result as JSON, and the driver fills the `auto` parameters of a
// kernel it compiles with the best candidate.
#pragma once

#include "compile/Defines.h"
#include "recommend/AutoRoles.h"
#include "recommend/CostModel.h"
#include "recommend/Measured.h"
#include "recommend/ModelShape.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc {

class Program;

struct AutoParam {
    std::string name;
    AutoRole role;
    std::vector<int64_t> values;  // the candidates, ascending
};

struct RecommendOptions {
    const Target* target = nullptr;
    Defines defines;                       // -D: fixed values (an auto parameter given here is not searched)
    std::map<std::string, int64_t> shape;  // --shape: values of the symbolic sizes and integer scalars for the model (ModelShape.h)
    bool shapeMayNameOtherKernels = false;  // a name that is no size of this kernel is left out, not an error
    // Parameters written with a value to search as if `auto` (AutoRoles.h, tunableParams), and
    // estimate the values as written too (Recommendation::written): is the author's choice far
    // from the model's?
    std::vector<std::string> searchWritten;
    int top = 5;
    std::string kernel;                    // empty: the first kernel with auto parameters
    const MeasuredSet* measured = nullptr; // sweeps to show beside the estimates (not used to rank)
};

struct Recommendation {
    std::string kernel;
    std::vector<AutoParam> params;
    std::map<std::string, int64_t> shape;  // every symbolic size, with the value the model used
    // Integer scalar parameters --shape gives: the model's grid and loop extents take these
    // values (the candidates compile for any value; ModelShape.h).
    std::map<std::string, int64_t> scalars;
    int64_t enumerated = 0;                // candidate configurations: every combination of the values
    int64_t tried = 0;                     // of those, compiled and estimated (all, unless the search was staged)
    bool staged = false;                   // tile values first, then stages and threads for the best of them
    int64_t compiled = 0;                  // lowered and accepted
    int64_t rejected = 0;                  // rejected (by the checker, lowering or the model's limits)
    std::string firstRejection;            // why the first rejected candidate was rejected
    std::vector<CandidateEstimate> ranked; // best first, at most `top`
    std::optional<CandidateEstimate> written;  // RecommendOptions::searchWritten: the values as written, lowered
    std::string fingerprint;               // of the kernel's source (Measured.h): what a sweep is filed under
    std::optional<MeasuredSweep> measured; // a sweep of this kernel on this target, if one is known
};

// Runs the recommender on a kernel of `program` (parsed without errors): every candidate
// configuration compiled through compile() (compile/Compile.h), ranked by the cost model
// (recommend/CostModel.h). Returns nullopt with `error` set when the input does not get that
// far (check errors: `error` holds the first message and `*inputErrors` is set; no kernel with
// auto parameters; a shape naming no size of the kernel; too many candidates).
std::optional<Recommendation> recommend(const Program& program, const RecommendOptions& options, std::string& error,
                                        bool* inputErrors = nullptr);

// "block_M=16, block_N=32": a configuration in messages.
std::string configurationText(const std::vector<std::pair<std::string, int64_t>>& values);

// The JSON `tlc recommend` prints.
std::string recommendationJson(const Recommendation& r, const Target& target);

} // namespace tlc
