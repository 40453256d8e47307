// Runs the example's kernels on random inputs and checks them against plain loops: on the CPU
// always, on the GPU through the dispatching launchers when the program was built with the GPU
// targets. Exits 0 when every check that could run passed.
#include "gemm.cpu.h"
#include "softmax.cpu.h"
#ifdef EXAMPLE_GPU
#include "gemm.h"
#include "softmax.h"
#endif

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int M = 100, K = 64, N = 96;  // gemm: sizes that are not multiples of the tiles
constexpr int rows = 37, cols = 1024;   // softmax: its N is a compile-time 1024

struct Inputs {
    std::vector<tl::half> a, b;  // gemm's A[M, K], B[K, N]
    std::vector<float> x;        // softmax's X[rows, cols]
};

Inputs randomInputs() {
    std::mt19937 rng(18);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Inputs in;
    for (int i = 0; i < M * K; ++i) in.a.push_back(tl::half(dist(rng)));
    for (int i = 0; i < K * N; ++i) in.b.push_back(tl::half(dist(rng)));
    for (int i = 0; i < rows * cols; ++i) in.x.push_back(4.0f * dist(rng));
    return in;
}

std::vector<float> gemmReference(const Inputs& in) {
    std::vector<float> c(M * N, 0.0f);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int k = 0; k < K; ++k) c[i * N + j] += float(in.a[i * K + k]) * float(in.b[k * N + j]);
    return c;
}

std::vector<float> softmaxReference(const Inputs& in) {
    std::vector<float> y(rows * cols);
    for (int i = 0; i < rows; ++i) {
        float top = in.x[i * cols];
        for (int j = 0; j < cols; ++j) top = std::fmax(top, in.x[i * cols + j]);
        double sum = 0;
        for (int j = 0; j < cols; ++j) sum += std::exp(double(in.x[i * cols + j] - top));
        for (int j = 0; j < cols; ++j) y[i * cols + j] = float(std::exp(double(in.x[i * cols + j] - top)) / sum);
    }
    return y;
}

// Counts the outputs further than tolerance (relative to the value, at least absolute) from the
// reference, and prints the first.
int mismatches(const char* what, const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::fabs(got[i] - want[i]) <= tolerance * std::fmax(1.0f, std::fabs(want[i]))) continue;
        if (bad++ == 0) std::printf("%s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
    }
    return bad;
}

// f16 outputs: 11-bit mantissas; the sums of 64 products also differ in order.
constexpr float kHalfTolerance = 1e-2f, kFloatTolerance = 1e-5f;

int checkCpu(const Inputs& in) {
    std::vector<tl::half> c(M * N);
    std::vector<float> y(rows * cols);
    if (int status = example::cpu::gemm(in.a.data(), in.b.data(), c.data(), M, K, N); status != tl::cpu_success) {
        std::printf("cpu gemm: status %d\n", status);
        return 1;
    }
    if (int status = example::cpu::softmax(in.x.data(), y.data(), rows); status != tl::cpu_success) {
        std::printf("cpu softmax: status %d\n", status);
        return 1;
    }
    std::vector<float> cf(c.size());
    for (size_t i = 0; i < c.size(); ++i) cf[i] = float(c[i]);
    int bad = mismatches("cpu gemm", cf, gemmReference(in), kHalfTolerance) +
              mismatches("cpu softmax", y, softmaxReference(in), kFloatTolerance);
    std::printf("cpu: gemm %dx%dx%d and softmax %dx%d: %s\n", M, K, N, rows, cols, bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}

#ifdef EXAMPLE_GPU
// On the GPU through the dispatchers. Without a usable device they must return an error (not
// crash, not exit): that is what this checks then.
int checkGpu(const Inputs& in) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        cudaError_t status = example::gemm(nullptr, nullptr, nullptr, M, K, N);
        std::printf("gpu: no device; the dispatcher returned %s\n", cudaGetErrorName(status));
        return status == cudaSuccess ? 1 : 0;
    }
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    const int target = example::gemm_pick_target(major, minor);
    std::printf("gpu: compute capability %d.%d runs target %s\n", major, minor,
                target < 0 ? "(none)" : example::gemm_target_name(target));
    __half *a = nullptr, *b = nullptr, *c = nullptr;
    float *x = nullptr, *y = nullptr;
    cudaMalloc(&a, in.a.size() * sizeof(__half));
    cudaMalloc(&b, in.b.size() * sizeof(__half));
    cudaMalloc(&c, size_t(M) * N * sizeof(__half));
    cudaMalloc(&x, in.x.size() * sizeof(float));
    cudaMalloc(&y, in.x.size() * sizeof(float));
    // tl::half and __half are both the IEEE binary16 bits.
    cudaMemcpy(a, in.a.data(), in.a.size() * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(b, in.b.data(), in.b.size() * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(x, in.x.data(), in.x.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t gemmStatus = example::gemm(a, b, c, M, K, N);
    cudaError_t softmaxStatus = example::softmax(x, y, rows);
    cudaError_t done = cudaDeviceSynchronize();
    int bad = 0;
    if (target < 0) {
        // No target for this device: the launchers must say so.
        std::printf("gpu: gemm returned %s, softmax %s\n", cudaGetErrorName(gemmStatus), cudaGetErrorName(softmaxStatus));
        bad = gemmStatus != cudaErrorNoKernelImageForDevice || softmaxStatus != cudaErrorNoKernelImageForDevice;
    } else if (gemmStatus != cudaSuccess || softmaxStatus != cudaSuccess || done != cudaSuccess) {
        std::printf("gpu: gemm %s, softmax %s, synchronize %s\n", cudaGetErrorName(gemmStatus),
                    cudaGetErrorName(softmaxStatus), cudaGetErrorName(done));
        bad = 1;
    } else {
        std::vector<tl::half> ch(size_t(M) * N);
        std::vector<float> cf(ch.size()), yh(in.x.size());
        cudaMemcpy(ch.data(), c, ch.size() * sizeof(__half), cudaMemcpyDeviceToHost);
        cudaMemcpy(yh.data(), y, yh.size() * sizeof(float), cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < ch.size(); ++i) cf[i] = float(ch[i]);
        bad = mismatches("gpu gemm", cf, gemmReference(in), kHalfTolerance) +
              mismatches("gpu softmax", yh, softmaxReference(in), 1e-4f);
        std::printf("gpu: gemm and softmax: %s\n", bad ? "WRONG" : "ok");
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(x);
    cudaFree(y);
    return bad ? 1 : 0;
}
#endif

} // namespace

int main() {
    const Inputs in = randomInputs();
    int failed = checkCpu(in);
#ifdef EXAMPLE_GPU
    failed += checkGpu(in);
#endif
    return failed ? 1 : 0;
}
