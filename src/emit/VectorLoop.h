// The cpu output's explicit vector form of a 16-lane loop: `#pragma omp simd for (v < 16)` whose
// body calls exp or exp2 is written as straight-line code on tl::f32x16 values (tl_cpu.h), one
// per 64-byte line of floats. The C++ compiler vectorises the loop either way, but from tl::exp's
// scalar form it builds twice the instructions of the runtime's vector exp (AVX-512's vscalefps
// scales by 2^n in one instruction where the scalar form needs seven), and in softmax-like rows
// that arithmetic is what stands between the kernel and memory bandwidth.
#pragma once

#include "ir/Stmt.h"

#include <optional>
#include <vector>

namespace tlc::codegen {

// One statement of the vector form, for all lanes at once.
struct VectorStmt {
    enum class Kind { Let, Store } kind;
    ir::VarPtr var;       // Let: the name; a tl::f32x16 when `varying`, else a scalar
    bool varying = false;
    ir::Buffer buffer;    // Store: 16 floats from buffer[indices] on (lane 0's element)
    std::vector<ir::Expr> indices;
    // A lane's value, with each load of one element per lane replaced by a call of
    // "load_f32x16" on the address of lane 0's element; loop-invariant terms stay scalars.
    ir::Expr value;
};

inline constexpr int kVectorLanes = 16;

// The statements of `loop` in vector form: a vectorised loop of 16 iterations from 0 whose body
// is lets and plain stores of f32, every load and store of it either the same element for all
// lanes or 16 consecutive ones, the loop variable used nowhere else, each lane reading of what
// the loop stores only its own element, and at least one call of exp or exp2 on a value that
// differs between lanes. nullopt otherwise (the loop stays as it is).
std::optional<std::vector<VectorStmt>> vectorLoopForm(const ir::For* loop);

} // namespace tlc::codegen
