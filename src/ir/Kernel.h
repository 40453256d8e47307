// A kernel in IR form: parameters, launch configuration and body.
#pragma once

#include "ir/Stmt.h"
#include "support/DecisionLog.h"

#include <string>
#include <vector>

namespace tlc::ir {

// Something the launcher verifies before launching; failing returns an error code.
struct LaunchCheck {
    Expr condition;        // over size and scalar parameters; null for an alignment check
    std::string tensor;    // alignment check: the tensor parameter
    int alignBytes = 0;    // alignment check: required alignment of its data pointer
    std::string message;   // why it must hold, for the error message
};

struct KernelParam {
    enum class Kind { Tensor, Scalar, Size };
    Kind kind;
    std::string name;
    DType dtype;
    Buffer buffer;  // Tensor: the global buffer
    VarPtr var;     // Scalar and Size: the variable
};

struct Kernel {
    std::string name;
    std::string sourceName;  // the .tl file, for comments
    SourceLoc loc;
    std::vector<std::pair<std::string, std::string>> templateValues;  // name, value: for comments
    std::vector<KernelParam> params;  // tensors and scalars in source order, then sizes
    std::vector<Expr> gridExtents;    // 1 to 3, over params
    std::vector<VarPtr> blockVars;    // as many as named in `as (...)`
    int threads = 1;                  // 0 until inferred when the author left `threads` out
    Stmt body;                        // what one block runs

    // Set by lowering.
    VarPtr threadIndex;               // the thread index within the block
    int64_t sharedBytes = 0;          // static shared memory of the lowered body
    std::vector<LaunchCheck> launchChecks;

    // What inference and lowering chose for the author, and why (--explain).
    DecisionLog decisions;
};

} // namespace tlc::ir
