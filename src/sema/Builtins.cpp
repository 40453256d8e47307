#include "sema/Builtins.h"

#include <array>

namespace tlc {

namespace {

using P = BuiltinParam;
using K = ParamKind;

constexpr P req(std::string_view n, K k) { return {n, k, std::nullopt, false}; }
constexpr P opt(std::string_view n, K k, ConstValue v) { return {n, k, v, true}; }
// An optional parameter with no value: absent means "let the compiler decide".
constexpr P absent(std::string_view n, K k) { return {n, k, std::nullopt, true}; }

constexpr P kAlloc[] = {req("shape", K::Shape), req("dtype", K::DType)};
constexpr P kView[] = {req("tensor", K::Tile), req("shape", K::Dims)};
// TileLang's T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad).
constexpr P kIm2col[] = {req("img", K::Tile),          req("col", K::Tile),          req("nhw_step", K::Int),
                         req("c_step", K::Int),        req("kernel", K::ConstInt),   req("stride", K::ConstInt),
                         req("dilation", K::ConstInt), req("pad", K::ConstInt)};
constexpr P kAllocGlobal[] = {req("shape", K::GlobalShape), req("dtype", K::DType)};
constexpr P kAllocVar[] = {req("dtype", K::DType), absent("init", K::Scalar)};
constexpr P kCopy[] = {req("src", K::Tile), req("dst", K::Tile)};
constexpr P kGemm[] = {req("A", K::Tile), req("B", K::Tile), req("C", K::Tile),
                       opt("transpose_A", K::ConstBool, false), opt("transpose_B", K::ConstBool, false),
                       absent("policy", K::Name), opt("clear_accum", K::ConstBool, false)};
constexpr P kClear[] = {req("buffer", K::Tile)};
constexpr P kFill[] = {req("buffer", K::Tile), req("value", K::Scalar)};
constexpr P kReduce[] = {req("src", K::Tile), req("dst", K::Tile), opt("dim", K::ConstInt, int64_t(-1)),
                         opt("clear", K::ConstBool, true)};
constexpr P kArgReduce[] = {req("src", K::Tile), req("dst", K::Tile), opt("dim", K::ConstInt, int64_t(-1))};
constexpr P kCumsum[] = {req("src", K::Tile), req("dst", K::Tile), opt("dim", K::ConstInt, int64_t(0)),
                         opt("reverse", K::ConstBool, false)};
constexpr P kAtomicAdd[] = {req("dst", K::Tile), req("src", K::TileOrScalar), absent("order", K::Name)};
constexpr P kAtomicMinMax[] = {req("dst", K::Tile), req("value", K::Scalar), absent("order", K::Name)};
constexpr P kUseSwizzle[] = {opt("panel", K::ConstInt, int64_t(10)), opt("enable", K::ConstBool, true)};
constexpr P kAnnotateLayout[] = {req("buffer", K::Buffer), req("layout", K::Name)};
// range(stop) / range(start, stop[, step]): positional only.
constexpr P kRange[] = {req("a", K::Int), absent("b", K::Int), absent("step", K::Int)};
constexpr P kSerial[] = {req("n", K::Int)};
constexpr P kUnroll[] = {req("n", K::Int)};
constexpr P kVectorized[] = {req("n", K::ConstInt)};
constexpr P kParallel[] = {req("extent", K::ConstInt)};
// pipelined(stop) / pipelined(start, stop), as TileLang's T.Pipelined (one argument is the stop).
constexpr P kPipelined[] = {req("start", K::Int), absent("stop", K::Int), absent("stages", K::ConstInt),
                            absent("order", K::IntList), absent("stage", K::IntList),
                            absent("warp_specialize", K::ConstBool), absent("deepen", K::ConstBool),
                            absent("unroll", K::ConstInt),
                            absent("overlap", K::ConstBool)};
constexpr P kGrid[] = {req("x", K::Int), absent("y", K::Int), absent("z", K::Int),
                       absent("threads", K::Threads), absent("persistent", K::ConstBool),
                       absent("split_k", K::ConstInt), absent("cluster", K::ConstInt)};
constexpr P kTwoInts[] = {req("a", K::Int), req("b", K::Int)};
constexpr P kMinMax[] = {req("a", K::Scalar), req("b", K::Scalar)};
constexpr P kClamp[] = {req("x", K::Scalar), req("lo", K::Scalar), req("hi", K::Scalar)};
// TileLang's argument order: T.reinterpret(dtype, value).
constexpr P kReinterpret[] = {req("dtype", K::DType), req("value", K::Scalar)};
constexpr P kOne[] = {req("x", K::Scalar)};
constexpr P kPow[] = {req("x", K::Scalar), req("y", K::Scalar)};
constexpr P kPrint[] = {req("value", K::Scalar), absent("msg", K::String)};
constexpr P kAssert[] = {req("cond", K::Bool), absent("msg", K::String)};
constexpr P kThreadId[] = {absent("dim", K::ConstInt)};
// shfl_xor(value, lane_mask), shfl_down/up(value, delta), shfl_idx(value, lane); `width` a
// power of two up to the warp size (default: the warp, or the block when it is smaller).
constexpr P kShfl[] = {req("value", K::Scalar), req("lane", K::Int), absent("width", K::ConstInt)};
constexpr P kWarpReduce[] = {req("value", K::Scalar), absent("width", K::ConstInt)};
constexpr P kBlockReduce[] = {req("value", K::Scalar)};
constexpr P kVote[] = {req("pred", K::Bool)};
constexpr P kDp4a[] = {req("a", K::Scalar), req("b", K::Scalar), req("c", K::Scalar)};

constexpr BuiltinInfo kBuiltins[] = {
    {Builtin::AllocShared, "alloc_shared", BuiltinKind::Alloc, kAlloc},
    {Builtin::AllocFragment, "alloc_fragment", BuiltinKind::Alloc, kAlloc},
    {Builtin::AllocLocal, "alloc_local", BuiltinKind::Alloc, kAlloc},
    {Builtin::AllocVar, "alloc_var", BuiltinKind::Alloc, kAllocVar},
    {Builtin::AllocGlobal, "alloc_global", BuiltinKind::Alloc, kAllocGlobal},
    {Builtin::View, "view", BuiltinKind::Alloc, kView},
    {Builtin::Copy, "copy", BuiltinKind::TileOp, kCopy},
    {Builtin::Gemm, "gemm", BuiltinKind::TileOp, kGemm},
    {Builtin::Clear, "clear", BuiltinKind::TileOp, kClear},
    {Builtin::Fill, "fill", BuiltinKind::TileOp, kFill},
    {Builtin::ReduceMax, "reduce_max", BuiltinKind::TileOp, kReduce},
    {Builtin::ReduceMin, "reduce_min", BuiltinKind::TileOp, kReduce},
    {Builtin::ReduceSum, "reduce_sum", BuiltinKind::TileOp, kReduce},
    {Builtin::ReduceAbsSum, "reduce_abssum", BuiltinKind::TileOp, kReduce},
    {Builtin::ReduceAbsMax, "reduce_absmax", BuiltinKind::TileOp, kReduce},
    // Rewritten into reductions before they are checked (Sugar.cpp): never lowered as such.
    {Builtin::ArgMax, "argmax", BuiltinKind::TileOp, kArgReduce},
    {Builtin::ArgMin, "argmin", BuiltinKind::TileOp, kArgReduce},
    {Builtin::Cumsum, "cumsum", BuiltinKind::TileOp, kCumsum},
    {Builtin::AtomicAdd, "atomic_add", BuiltinKind::TileOp, kAtomicAdd},
    {Builtin::UseSwizzle, "use_swizzle", BuiltinKind::TileOp, kUseSwizzle},
    {Builtin::AnnotateLayout, "annotate_layout", BuiltinKind::TileOp, kAnnotateLayout},
    {Builtin::Im2col, "im2col", BuiltinKind::TileOp, kIm2col},
    {Builtin::Range, "range", BuiltinKind::LoopIter, kRange, 3, 1},
    {Builtin::Serial, "serial", BuiltinKind::LoopIter, kSerial},
    {Builtin::Unroll, "unroll", BuiltinKind::LoopIter, kUnroll},
    {Builtin::Parallel, "parallel", BuiltinKind::LoopIter, kParallel, 8, 1},
    {Builtin::Pipelined, "pipelined", BuiltinKind::LoopIter, kPipelined, 2, 1},
    {Builtin::Grid, "grid", BuiltinKind::Grid, kGrid, 3, 1},
    {Builtin::Ceildiv, "ceildiv", BuiltinKind::IntHelper, kTwoInts},
    {Builtin::Floordiv, "floordiv", BuiltinKind::IntHelper, kTwoInts},
    {Builtin::Floormod, "floormod", BuiltinKind::IntHelper, kTwoInts},
    {Builtin::Min, "min", BuiltinKind::IntHelper, kMinMax},
    {Builtin::Max, "max", BuiltinKind::IntHelper, kMinMax},
    {Builtin::Clamp, "clamp", BuiltinKind::IntHelper, kClamp},
    {Builtin::Exp, "exp", BuiltinKind::Math, kOne},
    {Builtin::Exp2, "exp2", BuiltinKind::Math, kOne},
    {Builtin::Log, "log", BuiltinKind::Math, kOne},
    {Builtin::Log2, "log2", BuiltinKind::Math, kOne},
    {Builtin::Sqrt, "sqrt", BuiltinKind::Math, kOne},
    {Builtin::Rsqrt, "rsqrt", BuiltinKind::Math, kOne},
    {Builtin::Abs, "abs", BuiltinKind::Math, kOne},
    {Builtin::Tanh, "tanh", BuiltinKind::Math, kOne},
    {Builtin::Sigmoid, "sigmoid", BuiltinKind::Math, kOne},
    {Builtin::Silu, "silu", BuiltinKind::Math, kOne},
    {Builtin::Gelu, "gelu", BuiltinKind::Math, kOne},
    {Builtin::Relu, "relu", BuiltinKind::Math, kOne},
    {Builtin::Erf, "erf", BuiltinKind::Math, kOne},
    {Builtin::Pow, "pow", BuiltinKind::Math, kPow},
    {Builtin::FastExp, "fast_exp", BuiltinKind::Math, kOne},
    {Builtin::FastExp2, "fast_exp2", BuiltinKind::Math, kOne},
    {Builtin::FastLog, "fast_log", BuiltinKind::Math, kOne},
    {Builtin::FastLog2, "fast_log2", BuiltinKind::Math, kOne},
    {Builtin::FastTanh, "fast_tanh", BuiltinKind::Math, kOne},
    {Builtin::Reinterpret, "reinterpret", BuiltinKind::Bits, kReinterpret},
    {Builtin::Print, "print", BuiltinKind::Debug, kPrint},
    {Builtin::Assert, "assert", BuiltinKind::Debug, kAssert},
    {Builtin::ThreadId, "thread_id", BuiltinKind::ThreadPos, kThreadId},
    {Builtin::LaneId, "lane_id", BuiltinKind::ThreadPos, {}},
    {Builtin::WarpId, "warp_id", BuiltinKind::ThreadPos, {}},
    {Builtin::WarpSize, "warp_size", BuiltinKind::ThreadPos, {}},
    {Builtin::ShflXor, "shfl_xor", BuiltinKind::Collective, kShfl},
    {Builtin::ShflDown, "shfl_down", BuiltinKind::Collective, kShfl},
    {Builtin::ShflUp, "shfl_up", BuiltinKind::Collective, kShfl},
    {Builtin::ShflIdx, "shfl_idx", BuiltinKind::Collective, kShfl},
    {Builtin::WarpReduceSum, "warp_reduce_sum", BuiltinKind::Collective, kWarpReduce},
    {Builtin::WarpReduceMax, "warp_reduce_max", BuiltinKind::Collective, kWarpReduce},
    {Builtin::WarpReduceMin, "warp_reduce_min", BuiltinKind::Collective, kWarpReduce},
    {Builtin::BlockReduceSum, "block_reduce_sum", BuiltinKind::Collective, kBlockReduce},
    {Builtin::BlockReduceMax, "block_reduce_max", BuiltinKind::Collective, kBlockReduce},
    {Builtin::BlockReduceMin, "block_reduce_min", BuiltinKind::Collective, kBlockReduce},
    {Builtin::SyncThreads, "sync_threads", BuiltinKind::Sync, {}},
    {Builtin::SyncWarp, "sync_warp", BuiltinKind::Sync, {}},
    {Builtin::Vectorized, "vectorized", BuiltinKind::LoopIter, kVectorized},
    {Builtin::Ballot, "ballot", BuiltinKind::Collective, kVote},
    {Builtin::Any, "any", BuiltinKind::Collective, kVote},
    {Builtin::All, "all", BuiltinKind::Collective, kVote},
    {Builtin::Dp4a, "dp4a", BuiltinKind::Bits, kDp4a},
    {Builtin::AtomicMax, "atomic_max", BuiltinKind::TileOp, kAtomicMinMax},
    {Builtin::AtomicMin, "atomic_min", BuiltinKind::TileOp, kAtomicMinMax},
    {Builtin::CallExtern, "call_extern", BuiltinKind::Math, {}},
};
static_assert(std::size(kBuiltins) == size_t(Builtin::Count));
// builtinInfo indexes the table by id: a row out of the enum's order would answer for another
// builtin (two branches adding builtins side by side merge into exactly that).
constexpr bool inEnumOrder() {
    for (size_t i = 0; i < std::size(kBuiltins); ++i)
        if (size_t(kBuiltins[i].id) != i) return false;
    return true;
}
static_assert(inEnumOrder(), "kBuiltins lists the builtins in the order of enum Builtin");

constexpr std::string_view kPolicies[] = {"square", "full_row", "full_col"};
constexpr std::string_view kLayouts[] = {"row_major", "col_major", "padded", "swizzle_32B", "swizzle_64B",
                                         "swizzle_128B"};

} // namespace

std::span<const BuiltinInfo> allBuiltins() { return kBuiltins; }

const BuiltinInfo* findBuiltin(std::string_view name) {
    for (const auto& b : kBuiltins)
        if (b.name == name) return &b;
    return nullptr;
}

const BuiltinInfo& builtinInfo(Builtin id) { return kBuiltins[size_t(id)]; }

// The memory orders of the element atomics: relaxed (the default) or fences around them.
constexpr std::string_view kMemoryOrders[] = {"relaxed", "acquire", "release", "acq_rel", "seq_cst"};

std::span<const std::string_view> allowedNames(Builtin id, std::string_view param) {
    if (id == Builtin::Gemm && param == "policy") return kPolicies;
    if (id == Builtin::AnnotateLayout && param == "layout") return kLayouts;
    if ((id == Builtin::AtomicAdd || id == Builtin::AtomicMax || id == Builtin::AtomicMin) && param == "order")
        return kMemoryOrders;
    return {};
}

} // namespace tlc
