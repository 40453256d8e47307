// tl_cuda_async.h -- asynchronous copies from global to shared memory (cp.async, sm_80 and
// later) for tlc's CUDA output. Sections: see tl_common.h.
#pragma once

#include "tl_cuda.h"

// tlc:section async_copy
namespace tl {
// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80 and
// later); when `valid` is false nothing is read and the 16 bytes are zero-filled.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(global_src), "r"(valid ? 16 : 0)
                 : "memory");
}
// Waits until every cp.async this thread issued has landed in shared memory.
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}
// Closes the group of this thread's cp.async issued since the last commit (a software
// pipeline commits once per step, an empty group included).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's most recently committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
} // namespace tl
// tlc:end
