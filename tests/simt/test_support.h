// Host-side scaffolding shared by the simulator self-tests (instructions_test.cu,
// hopper_test.cu), which build both as C++ against the simulator and with nvcc for a real GPU:
// pass/fail counters, a device copy of a host vector, a one-block launch and the device check.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

inline int failures = 0, passes = 0;

// A device copy of a host vector (in the simulator, device memory is host memory), 16-byte
// aligned as cudaMalloc's are (TMA needs it).
template <typename T> class Buffer {
public:
    explicit Buffer(const std::vector<T>& host) : n_(host.size()) {
#ifdef __CUDACC__
        cudaMalloc(&ptr_, n_ * sizeof(T));
        cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice);
#else
        raw_ = new unsigned char[n_ * sizeof(T) + 16];
        ptr_ = reinterpret_cast<T*>(raw_ + (16 - reinterpret_cast<std::uintptr_t>(raw_) % 16) % 16);
        for (size_t i = 0; i < n_; ++i) ptr_[i] = host[i];
#endif
    }
    ~Buffer() {
#ifdef __CUDACC__
        cudaFree(ptr_);
#else
        delete[] raw_;
#endif
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    T* get() const { return ptr_; }
    std::vector<T> read() const {
        std::vector<T> host(n_);
#ifdef __CUDACC__
        cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
#else
        for (size_t i = 0; i < n_; ++i) host[i] = ptr_[i];
#endif
        return host;
    }

private:
    size_t n_;
    T* ptr_ = nullptr;
    unsigned char* raw_ = nullptr;
};

// Runs a kernel on one block of `threads` threads; a failed launch counts as a failure.
template <typename... Params, typename... Args> bool launch(int threads, void (*kernel)(Params...), Args... args) {
#ifdef __CUDACC__
    kernel<<<1, threads>>>(args...);
    cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess) {
        std::printf("FAIL launch: %s\n", cudaGetErrorString(status));
        ++failures;
        return false;
    }
#else
    ::simt::launch<32>(kernel, dim3(1), dim3(threads), 0, nullptr, args...);
#endif
    return true;
}

#ifdef __CUDACC__
// The first CUDA device's properties; false (and a "skip" line) when there is none, so that a
// build of these tests on a machine without a GPU exits 0 without running.
inline bool firstDevice(cudaDeviceProp& prop) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("skip: no CUDA device\n");
        return false;
    }
    cudaGetDeviceProperties(&prop, 0);
    return true;
}
#endif
