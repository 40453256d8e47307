// The builtins of the language as data: tile primitives, allocations, loop iterators, the grid,
// scalar math and debugging helpers. Sema checks calls against this table (arity, keywords,
// defaults); later stages switch on the id. A new primitive starts with a row here.
#pragma once

#include "ast/Type.h"

#include <optional>
#include <span>
#include <string_view>

namespace tlc {

enum class Builtin {
    // allocation
    AllocShared, AllocFragment, AllocLocal, AllocVar, AllocGlobal,
    // a reshaped view of a contiguous global tensor (a `let` initialiser, like the allocations)
    View,
    // tile operations
    Copy, Gemm, Clear, Fill, ReduceMax, ReduceMin, ReduceSum, ReduceAbsSum, ReduceAbsMax, ArgMax, ArgMin, Cumsum,
    AtomicAdd, UseSwizzle, AnnotateLayout, Im2col,
    // loop iterators and the launch
    Range, Serial, Unroll, Parallel, Pipelined, Grid,
    // integer helpers
    Ceildiv, Floordiv, Floormod, Min, Max, Clamp,
    // math
    Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Abs, Tanh, Sigmoid, Silu, Gelu, Relu, Erf, Pow,
    FastExp, FastExp2, FastLog, FastLog2, FastTanh,
    // bits
    Reinterpret,
    // debugging
    Print, Assert,
    // the expert level: the thread's position, collectives and synchronisation (docs/language.md)
    ThreadId, LaneId, WarpId, WarpSize,
    ShflXor, ShflDown, ShflUp, ShflIdx,
    WarpReduceSum, WarpReduceMax, WarpReduceMin,
    BlockReduceSum, BlockReduceMax, BlockReduceMin,
    SyncThreads, SyncWarp,
    Vectorized,
    Ballot, Any, All,  // warp votes
    Dp4a,              // four byte products summed into a 32-bit integer
    AtomicMax, AtomicMin,  // element atomics (atomic_add is the tile ops')
    CallExtern,            // call_extern(dtype, "name", args...): checked by checkCallExtern
    Count
};

enum class BuiltinKind {
    Alloc, TileOp, LoopIter, Grid, IntHelper, Math, Bits, Debug,
    ThreadPos,   // thread_id(), lane_id(), warp_id(), warp_size(): values, inside the grid
    Collective,  // shuffles and warp / block reductions: values every thread of a group must reach
    Sync,        // sync_threads(), sync_warp(): statements
};

// What an argument must be. Sema turns violations into diagnostics.
enum class ParamKind {
    Tile,        // a buffer, tensor or region of one
    TileOrScalar,// a tile, or a scalar value (atomic_add's source)
    Buffer,      // a whole on-chip buffer (alloc_*)
    Shape,       // [a, b, ...] of compile-time integers
    Dims,        // [a, b, ...] of integer expressions known at launch (view's shape)
    GlobalShape, // [a, b, ...] of integers over sizes and compile-time parameters (alloc_global)
    DType,       // f16, bf16, ...
    ConstInt,    // an integer that folds at compile time
    ConstBool,
    Int,         // any integer expression
    Scalar,      // any numeric scalar
    Bool,
    String,
    Name,        // a bare identifier from a fixed vocabulary (policy = full_row, layouts)
    IntList,     // [0, 1, 2] of compile-time integers (pipelined order/stage)
    Threads,     // the block's threads: a positive constant, or (x, y[, z]) of them
};

struct BuiltinParam {
    std::string_view name;
    ParamKind kind;
    std::optional<ConstValue> defaultValue;  // nullopt: required (unless the builtin is variadic)
    bool hasDefault = false;                 // true when a default applies (value or "absent")
};

struct BuiltinInfo {
    Builtin id;
    std::string_view name;
    BuiltinKind kind;
    std::span<const BuiltinParam> params;
    // For variadic builtins (parallel, grid, range, min/max ...): positional arguments beyond
    // the named ones are allowed up to this count in total; 0 = not variadic.
    int maxPositional = 0;
    int minPositional = 0;
};

std::span<const BuiltinInfo> allBuiltins();
const BuiltinInfo* findBuiltin(std::string_view name);
const BuiltinInfo& builtinInfo(Builtin id);

// Words allowed where a ParamKind::Name is expected, per builtin and parameter.
std::span<const std::string_view> allowedNames(Builtin id, std::string_view param);

} // namespace tlc
