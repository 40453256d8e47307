#include "sema/Scope.h"

#include <algorithm>

namespace tlc::sema {

namespace {
size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}
} // namespace

std::string closestMatch(std::string_view name, const std::vector<std::string>& candidates) {
    // Only short names are worth comparing; hostile input may have enormous identifiers.
    if (name.size() > 64) return {};
    std::string best;
    size_t bestDistance = std::max<size_t>(1, name.size() / 3) + 1;
    for (const auto& c : candidates) {
        if (c == name || c.size() > 64) continue;
        size_t d = editDistance(name, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

namespace {
struct Spelling {
    std::string_view name;
    std::string_view advice;
};

// Names people bring from CUDA C++, C's math library, PyTorch and TileLang's Python, each with
// tlc's way of saying it. Kept to names that are not near-misses of a tlc name (closestMatch
// finds those).
constexpr Spelling kSpellings[] = {
    {"expf", "tlc's math functions take any float type: write 'exp'"},
    {"exp2f", "tlc's math functions take any float type: write 'exp2'"},
    {"logf", "tlc's math functions take any float type: write 'log'"},
    {"log2f", "tlc's math functions take any float type: write 'log2'"},
    {"sqrtf", "tlc's math functions take any float type: write 'sqrt'"},
    {"rsqrtf", "tlc's math functions take any float type: write 'rsqrt'"},
    {"tanhf", "tlc's math functions take any float type: write 'tanh'"},
    {"erff", "tlc's math functions take any float type: write 'erf'"},
    {"powf", "tlc's math functions take any float type: write 'pow'"},
    {"fabs", "write 'abs'"},
    {"fabsf", "write 'abs'"},
    {"fmaxf", "write 'max'"},
    {"fminf", "write 'min'"},
    {"fmax", "write 'max'"},
    {"fmin", "write 'min'"},
    {"__expf", "CUDA's intrinsic is 'fast_exp' here"},
    {"__exp2f", "CUDA's intrinsic is 'fast_exp2' here"},
    {"__logf", "CUDA's intrinsic is 'fast_log' here"},
    {"__log2f", "CUDA's intrinsic is 'fast_log2' here"},
    {"__tanhf", "CUDA's intrinsic is 'fast_tanh' here"},
    {"__syncthreads", "write 'sync_threads()'"},
    {"syncthreads", "write 'sync_threads()'"},
    {"__syncwarp", "write 'sync_warp()'"},
    {"syncwarp", "write 'sync_warp()'"},
    {"atomicAdd", "write 'atomic_add(dst, value)'"},
    {"atomicMax", "write 'atomic_max(dst, value)'"},
    {"atomicMin", "write 'atomic_min(dst, value)'"},
    {"__shfl_xor_sync", "write 'shfl_xor(x, mask, width)' (no lane mask: the whole warp takes part)"},
    {"__shfl_down_sync", "write 'shfl_down(x, delta, width)' (no lane mask: the whole warp takes part)"},
    {"__shfl_up_sync", "write 'shfl_up(x, delta, width)' (no lane mask: the whole warp takes part)"},
    {"__shfl_sync", "write 'shfl_idx(x, lane, width)' (no lane mask: the whole warp takes part)"},
    {"threadIdx", "write 'thread_id()' (or 'thread_id(d)' for one dimension of the block's shape)"},
    {"blockIdx", "a block's position is the grid's variables: 'grid(...) as (bx, by) { ... }'"},
    {"blockDim", "the block's threads are grid(..., threads = ...)'s; 'thread_id()' is the thread's index"},
    {"get_thread_binding", "write 'thread_id()'"},
    {"Parallel", "write 'for (i, j) in parallel(...)'"},
    {"Pipelined", "write 'for k in pipelined(stop, stages = ...)'"},
    {"Serial", "write 'for k in serial(n)'"},
    {"Kernel", "a kernel's launch is 'grid(x, y, threads = ...) as (bx, by) { ... }'"},
    {"ceil_div", "write 'ceildiv(a, b)'"},
    {"cdiv", "write 'ceildiv(a, b)'"},
    {"div_up", "write 'ceildiv(a, b)'"},
    {"matmul", "a tile product is 'gemm(A, B, C)' (C += A @ B, C a fragment)"},
    {"dot", "a tile product is 'gemm(A, B, C)' (C += A @ B, C a fragment)"},
    {"mma", "a tile product is 'gemm(A, B, C)' (C += A @ B, C a fragment)"},
    {"zeros", "allocate with 'alloc_fragment(shape, dtype)' and zero it with 'clear(buffer)'"},
    {"reduce_mean", "write 'reduce_sum' and divide each element by the extent"},
    {"where", "write 'cond ? a : b'"},
    {"cast", "a conversion is the dtype as a function: 'f32(x)', 'f16(x)'"},
    {"astype", "a conversion is the dtype as a function: 'f32(x)', 'f16(x)'"},
    {"int", "a conversion is the dtype as a function: 'i32(x)'"},
};
} // namespace

std::string_view spellingElsewhere(std::string_view name) {
    for (const auto& s : kSpellings)
        if (s.name == name) return s.advice;
    return {};
}

} // namespace tlc::sema
