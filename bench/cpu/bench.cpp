// CPU benchmark driver: tlc's cpu output against OpenBLAS, oneDNN and memory bandwidth, each
// pair measured in the same run on the same buffers. bench/cpu/run.sh builds it against the
// launchers it generates (TLC_GEN is the folder of the generated headers).
#include "beginner.h"
#include "bgemm.h"
#include "flash_attention.h"
#include "gemm_auto.h"
#include "igemm.h"
#include "layernorm.h"
#include "layernorm_auto.h"
#include "reduce_sum.h"
#include "rmsnorm.h"
#include "sgemm.h"
#include "softmax.h"
#include "softmax_auto.h"

#include <cblas.h>
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

// Median seconds of `reps` calls after one warm-up call.
double timeIt(const std::function<void()>& fn, int reps) {
    fn();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        auto start = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Two functions timed in alternation (a, b, a, b, ...), the median of each: on a shared machine
// whose memory bandwidth drifts, both see the same conditions, so their ratio holds still.
std::pair<double, double> timeSideBySide(const std::function<void()>& a, const std::function<void()>& b, int reps) {
    a();
    b();
    std::vector<double> ta, tb;
    auto once = [](const std::function<void()>& fn) {
        auto start = std::chrono::steady_clock::now();
        fn();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (int r = 0; r < reps; ++r) {
        ta.push_back(once(a));
        tb.push_back(once(b));
    }
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    return {ta[ta.size() / 2], tb[tb.size() / 2]};
}

int repsFor(double flopsOrBytes, double perSecond) {
    double seconds = flopsOrBytes / perSecond;
    return std::clamp(static_cast<int>(1.0 / std::max(seconds, 1e-6)), 5, 50);
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

double maxRelError(const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0, scale = 1e-6;
    for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / scale);
    return worst;
}

void check(int rc, const char* what) {
    if (rc != 0) {
        std::fprintf(stderr, "bench: %s returned %d\n", what, rc);
        std::exit(1);
    }
}

void row(const std::string& kernel, const std::string& shape, double tlc, const std::string& base, double baseline,
         const char* unit, double err) {
    std::printf("| %s | %s | %.1f %s | %s %.1f %s | %.2f | %.1e |\n", kernel.c_str(), shape.c_str(), tlc, unit,
                base.c_str(), baseline, unit, tlc / baseline, err);
    std::fflush(stdout);
}

void sgemm(int M, int N, int K) {
    auto A = randomFloats(size_t(M) * K, 1), B = randomFloats(size_t(K) * N, 2);
    std::vector<float> C(size_t(M) * N), Ref(size_t(M) * N);
    double flops = 2.0 * M * N * K;
    int reps = repsFor(flops, 5e10);
    double tTlc = timeIt([&] { check(tl_kernels::sgemm(A.data(), B.data(), C.data(), M, K, N), "sgemm"); }, reps);
    double tBlas = timeIt([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f,
                    Ref.data(), N);
    }, reps);
    double tDnnl = timeIt([&] {
        check(dnnl_sgemm('N', 'N', M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, Ref.data(), N), "dnnl_sgemm");
    }, reps);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, Ref.data(), N);
    std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    double err = maxRelError(C, Ref);
    row("f32 gemm", shape, flops / tTlc * 1e-9, "OpenBLAS", flops / tBlas * 1e-9, "GFLOP/s", err);
    row("f32 gemm", shape, flops / tTlc * 1e-9, "dnnl_sgemm", flops / tDnnl * 1e-9, "GFLOP/s", err);
}

// oneDNN's matmul of row-major A[M, K] x B[K, N] -> C[M, N] with the given element types, on
// buffers it owns (tlc's kernel reads the same A and B).
struct OneDnnMatmul {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::memory a, b, c;
    dnnl::matmul prim;
    OneDnnMatmul(int M, int N, int K, dnnl::memory::data_type in, dnnl::memory::data_type out) {
        using dnnl::memory;
        memory::desc aDesc({M, K}, in, memory::format_tag::ab), bDesc({K, N}, in, memory::format_tag::ab);
        memory::desc cDesc({M, N}, out, memory::format_tag::ab);
        prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(aDesc, bDesc, cDesc), eng));  // oneDNN 2.x
        a = memory(aDesc, eng), b = memory(bDesc, eng), c = memory(cDesc, eng);
    }
    void run() {
        prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
        strm.wait();
    }
};

void bgemm(int M, int N, int K) {
    OneDnnMatmul dnnlMatmul(M, N, K, dnnl::memory::data_type::bf16, dnnl::memory::data_type::f32);
    auto Af = randomFloats(size_t(M) * K, 3), Bf = randomFloats(size_t(K) * N, 4);
    // The same bf16 bits for both: round to nearest even, as tl::bfloat16 does.
    auto toBf16 = [](const std::vector<float>& v, void* out) {
        auto* o = static_cast<tl::bfloat16*>(out);
        for (size_t i = 0; i < v.size(); ++i) o[i] = tl::bfloat16(v[i]);
    };
    toBf16(Af, dnnlMatmul.a.get_data_handle());
    toBf16(Bf, dnnlMatmul.b.get_data_handle());
    auto* A = static_cast<const tl::bfloat16*>(dnnlMatmul.a.get_data_handle());
    auto* B = static_cast<const tl::bfloat16*>(dnnlMatmul.b.get_data_handle());
    std::vector<float> C(size_t(M) * N);
    double flops = 2.0 * M * N * K;
    int reps = repsFor(flops, 5e10);
    double tTlc = timeIt([&] { check(tl_kernels::bgemm(A, B, C.data(), M, K, N), "bgemm"); }, reps);
    double tDnnl = timeIt([&] { dnnlMatmul.run(); }, reps);
    const auto* ref = static_cast<const float*>(dnnlMatmul.c.get_data_handle());
    double err = maxRelError(C, std::vector<float>(ref, ref + C.size()));
    row("bf16 gemm (f32 out)", std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
        flops / tTlc * 1e-9, "oneDNN matmul", flops / tDnnl * 1e-9, "GFLOP/s", err);
}

// i8 x i8 -> i32 against oneDNN's s8 matmul; integer sums, so the results must be equal.
void igemm(int M, int N, int K) {
    OneDnnMatmul dnnlMatmul(M, N, K, dnnl::memory::data_type::s8, dnnl::memory::data_type::s32);
    std::mt19937 gen(5);
    std::uniform_int_distribution<int> dist(-128, 127);
    auto* A = static_cast<std::int8_t*>(dnnlMatmul.a.get_data_handle());
    auto* B = static_cast<std::int8_t*>(dnnlMatmul.b.get_data_handle());
    for (size_t i = 0; i < size_t(M) * K; ++i) A[i] = std::int8_t(dist(gen));
    for (size_t i = 0; i < size_t(K) * N; ++i) B[i] = std::int8_t(dist(gen));
    std::vector<std::int32_t> C(size_t(M) * N);
    double ops = 2.0 * M * N * K;
    int reps = repsFor(ops, 2e11);
    double tTlc = timeIt([&] { check(tl_kernels::igemm(A, B, C.data(), M, K, N), "igemm"); }, reps);
    double tDnnl = timeIt([&] { dnnlMatmul.run(); }, reps);
    const auto* ref = static_cast<const std::int32_t*>(dnnlMatmul.c.get_data_handle());
    size_t differ = 0;
    for (size_t i = 0; i < C.size(); ++i) differ += C[i] != ref[i];
    row("i8 gemm (i32 out)", std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
        ops / tTlc * 1e-9, "oneDNN matmul", ops / tDnnl * 1e-9, "GOP/s", double(differ) / double(C.size()));
}

// A kernel moving `bytes` (reads + writes) against a copy of the same amount from one buffer to
// another on every OpenMP thread (the bandwidth such a kernel could reach), side by side.
void againstMemcpy(const std::string& name, const std::string& shape, double bytes, const std::function<void()>& fn,
                   double err) {
    const size_t half = static_cast<size_t>(bytes / 2);
    std::vector<char> src(half, 1), dst(half);
    auto copy = [&] {
        #pragma omp parallel
        {
            size_t n = omp_get_num_threads(), t = omp_get_thread_num();
            size_t chunk = (half / n + 63) / 64 * 64, begin = std::min(half, t * chunk);
            std::memcpy(dst.data() + begin, src.data() + begin, std::min(half, begin + chunk) - begin);
        }
    };
    auto [t, tCopy] = timeSideBySide(fn, copy, repsFor(bytes, 2e10));
    row(name, shape, bytes / t * 1e-9, "memcpy", bytes / tCopy * 1e-9, "GB/s", err);
}

struct Rows {
    int M, N;
    std::vector<float> X, W, Bias, Y, Ref;
    Rows(int m, int n)
        : M(m), N(n), X(randomFloats(size_t(m) * n, 5)), W(randomFloats(n, 6)), Bias(randomFloats(n, 7)),
          Y(size_t(m) * n), Ref(size_t(m) * n) {}
    std::string shape() const { return std::to_string(M) + "x" + std::to_string(N); }
    double bytes() const { return 2.0 * M * N * 4; }
};

// softmax.tl is built with N = 1024.
void softmax(int M) {
    Rows r(M, 1024);
    auto& [M_, N, X, W, Bias, Y, Ref] = r;
    for (int i = 0; i < M; ++i) {
        const float* x = &X[size_t(i) * N];
        double mx = *std::max_element(x, x + N), sum = 0;
        for (int j = 0; j < N; ++j) sum += std::exp(double(x[j]) - mx);
        for (int j = 0; j < N; ++j) Ref[size_t(i) * N + j] = float(std::exp(double(x[j]) - mx) / sum);
    }
    check(tl_kernels::softmax(X.data(), Y.data(), M), "softmax");
    againstMemcpy("softmax f32", r.shape(), r.bytes(), [&] { tl_kernels::softmax(X.data(), Y.data(), M); },
              maxRelError(Y, Ref));
}

// rmsnorm.tl and layernorm.tl are built with N = 4096.
void norms(int M) {
    Rows r(M, 4096);
    auto& [M_, N, X, W, Bias, Y, Ref] = r;
    const float eps = 1e-5f;
    for (int i = 0; i < M; ++i) {
        const float* x = &X[size_t(i) * N];
        double ss = 0;
        for (int j = 0; j < N; ++j) ss += double(x[j]) * x[j];
        double r = 1.0 / std::sqrt(ss / N + eps);
        for (int j = 0; j < N; ++j) Ref[size_t(i) * N + j] = float(x[j] * r * W[j]);
    }
    check(tl_kernels::rmsnorm(X.data(), W.data(), Y.data(), eps, M), "rmsnorm");
    againstMemcpy("rmsnorm f32", r.shape(), r.bytes(), [&] { tl_kernels::rmsnorm(X.data(), W.data(), Y.data(), eps, M); },
              maxRelError(Y, Ref));
    // layernorm
    for (int i = 0; i < M; ++i) {
        const float* x = &X[size_t(i) * N];
        double mean = 0, var = 0;
        for (int j = 0; j < N; ++j) mean += x[j];
        mean /= N;
        for (int j = 0; j < N; ++j) var += (x[j] - mean) * (x[j] - mean);
        double r = 1.0 / std::sqrt(var / N + eps);
        for (int j = 0; j < N; ++j) Ref[size_t(i) * N + j] = float((x[j] - mean) * r * W[j] + Bias[j]);
    }
    check(tl_kernels::layernorm(X.data(), W.data(), Bias.data(), Y.data(), eps, M), "layernorm");
    againstMemcpy("layernorm f32", r.shape(), r.bytes(),
              [&] { tl_kernels::layernorm(X.data(), W.data(), Bias.data(), Y.data(), eps, M); }, maxRelError(Y, Ref));
}

// reduce_sum reads M x N and writes M.
void reduceSum(int M, int N) {
    auto X = randomFloats(size_t(M) * N, 8);
    std::string shape = std::to_string(M) + "x" + std::to_string(N);
    std::vector<float> S(M), SRef(M);
    for (int i = 0; i < M; ++i) {
        double s = 0;
        for (int j = 0; j < N; ++j) s += X[size_t(i) * N + j];
        SRef[i] = float(s);
    }
    check(tl_kernels::reduce_sum(X.data(), S.data(), M, N), "reduce_sum");
    againstMemcpy("reduce_sum f32", shape, double(M) * N * 4, [&] { tl_kernels::reduce_sum(X.data(), S.data(), M, N); },
                  maxRelError(S, SRef));
}

// Flash attention forward (samples/flash_attention.tl, f16, D = 128) against a plain
// reference: float loops over each query row (scores, softmax, weighted sum of V), OpenMP over
// the rows, on inputs converted to float beforehand (not timed).
void flashAttention(int B, int S, int H) {
    const int D = 128;
    size_t n = size_t(B) * S * H * D;
    auto Qf = randomFloats(n, 9), Kf = randomFloats(n, 10), Vf = randomFloats(n, 11);
    std::vector<tl::half> Q(n), K(n), V(n), O(n);
    for (size_t i = 0; i < n; ++i) {
        Q[i] = tl::half(Qf[i]), K[i] = tl::half(Kf[i]), V[i] = tl::half(Vf[i]);
        Qf[i] = float(Q[i]), Kf[i] = float(K[i]), Vf[i] = float(V[i]);  // the same values
    }
    std::vector<float> Ref(n);
    auto at = [&](int b, int s, int h) { return ((size_t(b) * S + s) * H + h) * D; };
    auto reference = [&] {
        #pragma omp parallel for collapse(3) schedule(static)
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < H; ++h)
                for (int i = 0; i < S; ++i) {
                    std::vector<float> scores(S);
                    const float* q = &Qf[at(b, i, h)];
                    float mx = -INFINITY;
                    for (int j = 0; j < S; ++j) {
                        const float* k = &Kf[at(b, j, h)];
                        float dot = 0;
                        for (int d = 0; d < D; ++d) dot += q[d] * k[d];
                        scores[j] = dot / std::sqrt(float(D));
                        mx = std::max(mx, scores[j]);
                    }
                    float sum = 0;
                    for (int j = 0; j < S; ++j) sum += scores[j] = std::exp(scores[j] - mx);
                    float* o = &Ref[at(b, i, h)];
                    for (int d = 0; d < D; ++d) o[d] = 0;
                    for (int j = 0; j < S; ++j) {
                        const float* v = &Vf[at(b, j, h)];
                        for (int d = 0; d < D; ++d) o[d] += scores[j] / sum * v[d];
                    }
                }
    };
    double flops = 4.0 * B * H * double(S) * S * D;
    int reps = 3;
    double tTlc = timeIt([&] { check(tl_kernels::flash_attention(Q.data(), K.data(), V.data(), O.data(), B, S, H), "fa"); }, reps);
    double tRef = timeIt(reference, reps);
    std::vector<float> got(n);
    for (size_t i = 0; i < n; ++i) got[i] = float(O[i]);
    row("flash attention f16 (D 128)", std::to_string(B) + "x" + std::to_string(S) + "x" + std::to_string(H),
        flops / tTlc * 1e-9, "plain loops", flops / tRef * 1e-9, "GFLOP/s", maxRelError(got, Ref));
}

// The beginner level (kernels/beginner.tl) against the developer-level kernel of the same
// computation with `auto` tiles, timed in alternation: the "tlc" column is the beginner's, the
// baseline the developer level's; the error compares the two outputs.
void beginner(int n, int rowsM) {
    {
        std::vector<tl::half> A(size_t(n) * n), B(size_t(n) * n), C(size_t(n) * n), Ref(size_t(n) * n);
        auto Af = randomFloats(A.size(), 11), Bf = randomFloats(B.size(), 12);
        for (size_t i = 0; i < A.size(); ++i) A[i] = tl::half(Af[i]);
        for (size_t i = 0; i < B.size(); ++i) B[i] = tl::half(Bf[i]);
        const double flops = 2.0 * n * n * n;
        auto [tB, tD] = timeSideBySide([&] { check(tl_kernels::b_gemm(A.data(), B.data(), C.data(), n, n, n), "b_gemm"); },
                                       [&] { check(tl_kernels::gemm_auto(A.data(), B.data(), Ref.data(), n, n, n), "gemm_auto"); },
                                       repsFor(flops, 5e10));
        std::vector<float> c(C.size()), ref(C.size());
        for (size_t i = 0; i < C.size(); ++i) {
            c[i] = float(C[i]);
            ref[i] = float(Ref[i]);
        }
        const std::string shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
        row("beginner 'C = A @ B' f16", shape, flops / tB * 1e-9, "gemm_auto.tl", flops / tD * 1e-9, "GFLOP/s",
            maxRelError(c, ref));
    }
    for (int N : {1024, 4096}) {
        Rows r(rowsM, N);
        std::vector<float> Dev(r.Y.size());
        auto side = [&](const char* name, const char* dev, const std::function<void()>& b, const std::function<void()>& d) {
            auto [tB, tD] = timeSideBySide(b, d, repsFor(r.bytes(), 2e10));
            row(name, r.shape(), r.bytes() / tB * 1e-9, dev, r.bytes() / tD * 1e-9, "GB/s", maxRelError(r.Y, Dev));
        };
        auto devSoftmax = [&] { check(tl_kernels::softmax_auto(r.X.data(), Dev.data(), rowsM), "softmax_auto"); };
        auto devLayernorm = [&] {
            check(tl_kernels::layernorm_auto(r.X.data(), r.W.data(), r.Bias.data(), Dev.data(), 1e-5f, rowsM), "layernorm_auto");
        };
        if (N == 1024) {
            side("beginner 'Y = softmax(X)' f32", "softmax_auto.tl",
                 [&] { check(tl_kernels::b_softmax(r.X.data(), r.Y.data(), rowsM, N), "b_softmax"); }, devSoftmax);
            side("beginner 'Y = softmax(X)' f32, N = 1024 known", "softmax_auto.tl",
                 [&] { check(tl_kernels::b_softmax_1024(r.X.data(), r.Y.data(), rowsM), "b_softmax_1024"); }, devSoftmax);
        } else {
            side("beginner 'Y = layernorm(X, g, b)' f32", "layernorm_auto.tl",
                 [&] { check(tl_kernels::b_layernorm(r.X.data(), r.W.data(), r.Bias.data(), r.Y.data(), rowsM, N), "b_layernorm"); },
                 devLayernorm);
            side("beginner 'Y = layernorm(X, g, b)' f32, N = 4096 known", "layernorm_auto.tl",
                 [&] { check(tl_kernels::b_layernorm_4096(r.X.data(), r.W.data(), r.Bias.data(), r.Y.data(), rowsM), "b_layernorm_4096"); },
                 devLayernorm);
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    std::string only = argc > 1 ? argv[1] : "all";
    std::printf("| kernel | shape | tlc | baseline | ratio | max rel. error |\n| --- | --- | --- | --- | --- | --- |\n");
    if (only == "all" || only == "sgemm") {
        for (int n : {512, 1024, 2048, 4096}) sgemm(n, n, n);
        sgemm(64, 4096, 4096);
    }
    if (only == "all" || only == "bgemm") {
        for (int n : {512, 1024, 2048, 4096}) bgemm(n, n, n);
        bgemm(64, 4096, 4096);
    }
    if (only == "all" || only == "igemm") {
        for (int n : {512, 1024, 2048, 4096}) igemm(n, n, n);
        igemm(64, 4096, 4096);
    }
    if (only == "all" || only == "attention") flashAttention(1, 2048, 8);
    if (only == "all" || only == "rows") {
        softmax(16384);
        norms(4096);
        reduceSum(4096, 4096);
    }
    // Not in `all`: the beginner level against the developer level (issue 48).
    if (only == "beginner") {
        for (int n : {1024, 2048}) beginner(n, 4096);
    }
    return 0;
}
