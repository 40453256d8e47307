// The decision log of tile inference: every value the compiler chose where the author left it
// open (an `auto` parameter, an omitted `threads`, `stages` or gemm `policy`, a copy's vector
// width and cp.async choice, a shared layout, a fallback), with the rule that forced it.
// Inference and lowering append to it as they decide (LowerContext::decide); `--explain`
// prints it (driver/Explain). Nothing reads it back to make a decision.
#pragma once

#include "support/SourceFile.h"

#include <string>
#include <vector>

namespace tlc {

struct Decision {
    std::string subject;  // what was decided: "threads", "stages of pipelined(k)", "copy(A[...], A_s)"
    std::string value;    // "128", "3", "8 x f16, cp.async"
    std::string origin;   // "auto" (recommender), "inferred" (omitted by the author), "lowering"
    std::string reason;   // the op or rule that forced it
    SourceLoc loc;        // where in the source; invalid for the kernel as a whole
};

class DecisionLog {
public:
    // Appends; the same value for the same subject at the same place is kept once (the software
    // pipeline lowers one statement several times: prologue, steady state, epilogue).
    void add(Decision d);
    void append(const DecisionLog& other);
    const std::vector<Decision>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

private:
    std::vector<Decision> entries_;
};

// A compiled kernel's log, by the kernel's name (--explain lists them in compile order).
struct ExplainedKernel {
    std::string kernel;
    DecisionLog decisions;
};

} // namespace tlc
