// Run layer: split-K gemms (tests/run/kernels/gemm_split_k.tl) against references in double, at
// sizes no tile divides: K that splits into ragged runs of k-tiles and K with fewer k-tiles than
// splits (empty runs). The workspace starts as garbage (the launcher zeroes the arrival
// counters), each kernel runs twice on it, and on the simulator once more with its blocks in
// reverse order (SIMT_BLOCK_ORDER), so that another split than the last finishes a tile. Called
// from run_primitives.cpp.
#include "harness.h"

#include "gemm_split_k.h"

#include <cstdlib>
#include <cstring>
#include <functional>

using namespace harness;

namespace {

std::string skAt(std::initializer_list<int> d) {
    std::string s = " ";
    for (int v : d) s += (s.size() > 1 ? "x" : "") + std::to_string(v);
    return s;
}

// A 16-byte aligned workspace of `bytes`, every byte 0xA5 (counters and partials of garbage).
struct Workspace {
    std::vector<double> storage;
    explicit Workspace(size_t bytes) : storage(bytes / sizeof(double) + 2) {
        std::memset(storage.data(), 0xA5, storage.size() * sizeof(double));
    }
    void* get() { return storage.data(); }
};

// Runs `launch` twice on one workspace (and on the simulator a third time, blocks reversed),
// checking each result.
template <typename T>
void twice(const std::string& name, size_t bytes, std::vector<T>& out, const std::vector<double>& want, double atol,
           double rtol, const std::function<int(T*, void*)>& launch) {
    Workspace ws(bytes);
    const int rounds = kGpu ? 3 : 2;
    for (int r = 0; r < rounds; ++r) {
        if (r == 2) setenv("SIMT_BLOCK_ORDER", "reverse", 1);
        std::fill(out.begin(), out.end(), T(-7.0f));
        const std::string what = name + (r == 0 ? "" : r == 1 ? " (again, same workspace)" : " (blocks in reverse order)");
        expectStatus(what + " status", launch(out.data(), ws.get()), 0);
        check(what, out, want, atol, rtol);
        if (r == 2) unsetenv("SIMT_BLOCK_ORDER");
    }
}

void splitKGemm(int M, int N, int K) {
    const std::string at = skAt({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 71), B = random<tl::half>(size_t(K) * N, 72);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    {
        std::vector<float> C(size_t(M) * N);
        size_t bytes = tl_kernels::gemm_splitk_workspace_size(M, K, N);
        if (kGpu) expectStatus("gemm_splitk needs a workspace" + at, bytes > 0 ? 0 : 1, 0);
        twice<float>("split-K gemm_splitk (S = 4, f32)" + at, bytes, C, want, 1e-4, 1e-4, [&](float* c, void* w) {
            return int(tl_kernels::gemm_splitk(A.data(), B.data(), c, M, K, N, w));
        });
        if (kGpu && bytes > 0)
            expectStatus("gemm_splitk refuses a null workspace" + at,
                         int(tl_kernels::gemm_splitk(A.data(), B.data(), C.data(), M, K, N, nullptr)), 1);
    }
    {
        auto bias = random<float>(size_t(N), 73, -0.5, 0.5);
        std::vector<double> wantBR(want.size());
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) wantBR[size_t(i) * N + j] = std::max(want[size_t(i) * N + j] + double(bias[j]), 0.0);
        std::vector<tl::half> C(size_t(M) * N);
        size_t bytes = tl_kernels::gemm_splitk_bias_relu_workspace_size(M, K, N);
        twice<tl::half>("split-K gemm_splitk_bias_relu (S = 3, bias + relu, f16 out)" + at, bytes, C, wantBR, 1e-2,
                        1e-2, [&](tl::half* c, void* w) {
                            return int(tl_kernels::gemm_splitk_bias_relu(A.data(), B.data(), bias.data(), c, M, K, N, w));
                        });
    }
    {
        std::vector<float> C(size_t(M) * N, -7.0f);
        expectStatus("gemm_splitk_one workspace size" + at, int(tl_kernels::gemm_splitk_one_workspace_size(M, K, N)), 0);
        expectStatus("split-K gemm_splitk_one (S = 1, null workspace) status" + at,
                     int(tl_kernels::gemm_splitk_one(A.data(), B.data(), C.data(), M, K, N, nullptr)), 0);
        check("split-K gemm_splitk_one (S = 1)" + at, C, want, 1e-4, 1e-4);
    }
}

void splitKBatched(int G, int M, int N, int K) {
    const std::string at = skAt({G, M, N, K});
    auto A = random<tl::half>(size_t(G) * M * K, 74), B = random<tl::half>(size_t(G) * K * N, 75);
    std::vector<double> want;
    for (int g = 0; g < G; ++g) {
        auto w = matmul(M, N, K, [&](int i, int k) { return toDouble(A[(size_t(g) * M + i) * K + k]); },
                        [&](int k, int j) { return toDouble(B[(size_t(g) * K + k) * N + j]); });
        want.insert(want.end(), w.begin(), w.end());
    }
    std::vector<float> C(size_t(G) * M * N);
    size_t bytes = tl_kernels::gemm_splitk_batched_workspace_size(G, M, K, N);
    twice<float>("split-K gemm_splitk_batched (S = 2, 3-D grid)" + at, bytes, C, want, 1e-4, 1e-4,
                 [&](float* c, void* w) { return int(tl_kernels::gemm_splitk_batched(A.data(), B.data(), c, G, M, K, N, w)); });
}

} // namespace

void splitKGemms() {
    splitKGemm(40, 72, 176);   // 11 k-tiles of 16 over 4 splits: runs of 3, 3, 3, 2; ragged M and N
    splitKGemm(70, 130, 48);   // 3 k-tiles over 4 splits: the last run empty
    splitKBatched(2, 40, 72, 80);
}
