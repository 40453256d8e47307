// The GPU kit's test executables run the run layer's drivers (tests/run, tests/corpus) as they
// are: they hand the launchers std::vector data, which in the SIMT simulator is device memory.
// On a real GPU it is not, so the kit links this file: every C++ allocation comes from CUDA
// managed memory, valid on the host and on the device. The kit runs the executables with
// CUDA_LAUNCH_BLOCKING=1, so a launcher has finished (and reported the kernel's faults) before
// the driver reads its outputs.
//
// Each block starts with a 64-byte header saying where it came from (the tests ask for at most
// 64-byte alignment; the launchers check 16). Allocations made while CUDA is itself allocating
// (the runtime initialising) or after it failed come from malloc and are freed there.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr size_t kHeader = 64;
constexpr uint64_t kManaged = 0x6d616e6167656421ull;  // "managed!"
constexpr uint64_t kMalloc = 0x6d616c6c6f632121ull;   // "malloc!!"

thread_local bool inCuda = false;
bool cudaBroken = false;

void* allocate(size_t size, size_t align) noexcept {
    if (align > kHeader) return nullptr;
    size_t total = size + kHeader;
    void* base = nullptr;
    uint64_t kind = kMalloc;
    if (!inCuda && !cudaBroken) {
        inCuda = true;
        if (cudaMallocManaged(&base, total) == cudaSuccess) kind = kManaged;
        else {
            base = nullptr;
            cudaBroken = true;  // no device (a build check): plain memory from here on
        }
        inCuda = false;
    }
    if (!base) base = std::malloc(total);
    if (!base) return nullptr;
    *static_cast<uint64_t*>(base) = kind;
    return static_cast<char*>(base) + kHeader;
}

void release(void* p) noexcept {
    if (!p) return;
    void* base = static_cast<char*>(p) - kHeader;
    if (*static_cast<uint64_t*>(base) == kManaged) {
        inCuda = true;
        cudaFree(base);  // fails harmlessly once the runtime has shut down at exit
        inCuda = false;
    } else {
        std::free(base);
    }
}

void* allocateOrThrow(size_t size, size_t align) {
    void* p = allocate(size ? size : 1, align);
    if (!p) throw std::bad_alloc();
    return p;
}

} // namespace

void* operator new(size_t n) { return allocateOrThrow(n, alignof(std::max_align_t)); }
void* operator new[](size_t n) { return allocateOrThrow(n, alignof(std::max_align_t)); }
void* operator new(size_t n, std::align_val_t a) { return allocateOrThrow(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a) { return allocateOrThrow(n, size_t(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n ? n : 1, alignof(std::max_align_t)); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n ? n : 1, alignof(std::max_align_t)); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, size_t) noexcept { release(p); }
void operator delete[](void* p, size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { release(p); }
