// The emitter on hand-built thread IR (test_emit_kernels.h): what the CUDA, HIP and C++ output
// and the launcher headers must contain. tests/emit/compile_check.py compiles the same kernels.
#include "emit/Emit.h"
#include "emit/Names.h"
#include "emit/Runtime.h"
#include "test_emit_kernels.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace tlc;
using namespace tlc::emit_test;

namespace {

const Target& target(const char* name) {
    const Target* t = findTarget(name);
    REQUIRE(t != nullptr);
    return *t;
}

EmitResult emitOne(const Kernel& k, const char* targetName, EmitOptions options = {}) {
    if (options.headerName.empty()) options.headerName = k.name + ".h";
    options.sourceName = k.sourceName;
    return emit({k}, target(targetName), options);
}

#define CHECK_HAS(text, needle) CHECK_MESSAGE((text).find(needle) != std::string::npos, "missing: " << (needle) << "\n---\n" << (text))
#define CHECK_HAS_NOT(text, needle) CHECK_MESSAGE((text).find(needle) == std::string::npos, "unexpected: " << (needle) << "\n---\n" << (text))

// A kernel around a body, for expression and statement details: one tensor X: f32[N] written
// by the body, size N, grid (N), 32 threads on a GPU (1 on the cpu).
Kernel tiny(const Target& t, const Buffer& X, const VarPtr& N, Stmt body) {
    Kernel k;
    k.name = "tiny";
    k.sourceName = "tiny.tl";
    k.loc = L(1);
    k.params = {tensorParam(X), sizeParam(N)};
    k.gridExtents = {Expr(N)};
    k.threads = t.backend == Backend::Cpu ? 1 : 32;
    k.body = body;
    return planned(k, t);
}

} // namespace

TEST_CASE("emit: the runtime headers are embedded and their sections resolve") {
    using namespace tlc::codegen;
    std::vector<std::string> files;
    for (const auto& f : runtimeFiles()) files.push_back(f.first);
    CHECK(files == std::vector<std::string>{"tl_common.h", "tl_cpu.h", "tl_cpu_gemm.h", "tl_cpu_gemm_amx.h",
                                            "tl_cpu_gemm_common.h", "tl_cpu_gemm_dot.h", "tl_cpu_gemm_fma.h",
                                            "tl_cuda.h", "tl_cuda_async.h", "tl_cuda_cluster.h", "tl_cuda_mbarrier.h", "tl_cuda_mma.h",
                                            "tl_cuda_tma.h", "tl_cuda_tma_host.h", "tl_cuda_wgmma.h", "tl_gpu.h",
                                            "tl_gpu_spelling.h", "tl_hip.h", "tl_hip_mfma.h", "tl_python.h",
                                            "tl_types.h"});
    CHECK(findRuntimeSection("tl_gpu.h", "vector_moves") != nullptr);
    CHECK(findRuntimeSection("tl_types.h", "half") != nullptr);
    for (const auto& s : runtimeSections()) {
        CHECK_MESSAGE(!s.text.empty(), s.id());
        for (const auto& need : s.needs) {
            size_t colon = need.find(':');
            CHECK_MESSAGE(findRuntimeSection(need.substr(0, colon), need.substr(colon + 1)) != nullptr, s.id() << " needs " << need);
        }
    }
    RuntimeNeeds needs;
    needs.add("tl_types.h", "half");
    std::string text = needs.render();
    // What it needs comes first, each section once, inside an include guard.
    CHECK(text.find("TL_HOST_DEVICE __host__") < text.find("struct half"));
    CHECK_HAS(text, "#ifndef TLC_RUNTIME_TL_TYPES_H_HALF");
    RuntimeNeeds more;
    more.add("tl_types.h", "bfloat16");
    std::string rest = more.render(&needs);
    CHECK_HAS(rest, "struct bfloat16");
    CHECK_HAS_NOT(rest, "encode_float");  // already rendered by `needs`
}

TEST_CASE("emit: a backend finds its sections by name among its runtime files") {
    using namespace tlc::codegen;
    // Section names are unique among each backend's files (findBackendSection throws otherwise).
    const std::vector<std::vector<std::string>> backends = {{"tl_cuda", "tl_gpu"}, {"tl_hip", "tl_gpu"}, {"tl_cpu"}};
    for (const auto& prefixes : backends)
        for (const auto& s : runtimeSections()) CHECK_NOTHROW((void)findBackendSection(prefixes, s.name));
    const RuntimeSection* mma = findBackendSection({"tl_cuda", "tl_gpu"}, "mma");
    REQUIRE(mma != nullptr);
    CHECK(mma->file == "tl_cuda_mma.h");
    CHECK(findBackendSection({"tl_cuda", "tl_gpu"}, "warp")->file == "tl_gpu.h");
    CHECK(findBackendSection({"tl_hip", "tl_gpu"}, "mfma_fp8")->file == "tl_hip_mfma.h");
    CHECK(findBackendSection({"tl_cpu"}, "gemm")->file == "tl_cpu_gemm.h");
    CHECK(findBackendSection({"tl_cpu"}, "math")->file == "tl_cpu.h");
    CHECK(findBackendSection({"tl_hip", "tl_gpu"}, "mma") == nullptr);
    CHECK(findBackendSection({"tl_cpu"}, "warp") == nullptr);
}

TEST_CASE("emit: the spelling table spells CUDA's and HIP's calls, in emitted code and in sections") {
    using namespace tlc::codegen;
    CHECK(spell("cuda", "TL_SHFL_XOR", {"v", "offset", "Width"}) == "__shfl_xor_sync(0xffffffffu, v, offset, Width)");
    CHECK(spell("hip", "TL_SHFL_XOR", {"v", "offset", "Width"}) == "__shfl_xor(v, offset, Width)");
    CHECK(spell("hip", "TL_SYNC_WARP", {}) == "__builtin_amdgcn_wave_barrier()");
    // Arguments replace whole parameters only; a row's continuation lines read as one.
    CHECK(spell("hip", "TL_SET_MAX_DYNAMIC_SHARED", {"k_kernel", "65536"}) ==
          "hipFuncSetAttribute(reinterpret_cast<const void*>(&k_kernel), hipFuncAttributeMaxDynamicSharedMemorySize, "
          "65536)");
    CHECK_THROWS_AS((void)spell("cuda", "TL_SHFL_XOR", {"v"}), std::logic_error);
    CHECK_THROWS_AS((void)spell("opencl", "TL_TRAP", {}), std::logic_error);
    // A call in a section, nested parentheses and commas in its arguments.
    CHECK(spellCalls("x = TL_SHFL_IDX(f(a, b), (i + 1), 32); TL_TRAP();", "cuda") ==
          "x = __shfl_sync(0xffffffffu, f(a, b), (i + 1), 32); __trap();");
    CHECK(spellCalls("TL_SHFL_XORS(v); TL_TRAP;", "hip") == "TL_SHFL_XORS(v); TL_TRAP;");  // not calls of rows
    CHECK_THROWS_AS((void)spellCalls("TL_TRAP();", ""), std::logic_error);
    // tl_gpu.h's warp section, one source for both.
    RuntimeNeeds cuda("cuda"), hip("hip");
    cuda.add("tl_gpu.h", "warp");
    hip.add("tl_gpu.h", "warp");
    CHECK_HAS(cuda.render(), "v += __shfl_xor_sync(0xffffffffu, v, offset, Width);");
    CHECK_HAS(hip.render(), "v += __shfl_xor(v, offset, Width);");
    CHECK_HAS_NOT(hip.render(), "TL_SHFL");
}

TEST_CASE("emit: runtime sections' includes are listed apart, each once, for the file's top") {
    using namespace tlc::codegen;
    for (const auto& s : runtimeSections()) CHECK_MESSAGE(s.text.find("#include") == std::string::npos, s.id());
    const RuntimeSection* half = findRuntimeSection("tl_types.h", "half");
    REQUIRE(half != nullptr);
    CHECK(half->includes ==
          std::vector<std::string>{"#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__)\n"
                                   "#include <immintrin.h>\n#endif"});
    CHECK_HAS(half->text, "#define TL_HALF_F16C 1");  // the group's other lines stay in the section

    RuntimeNeeds needs;
    needs.add("tl_cpu.h", "narrow_atomic_add");
    needs.add("tl_cpu.h", "atomic_minmax");
    std::vector<std::string> includes = needs.includes();
    CHECK(includes == std::vector<std::string>{"#include <cstring>", "#include <cstdint>", "#include <type_traits>"});
    RuntimeNeeds more;
    more.add("tl_cpu.h", "debug");
    more.add("tl_cpu.h", "atomic_minmax");
    CHECK(more.includes(&needs) == std::vector<std::string>{"#include <cstdio>", "#include <cstdlib>"});
    CHECK(includeLines({"#include <cstdio>", "#include <vector>"}, more.includes()) ==
          "#include <cstdio>\n#include <vector>\n#include <cstring>\n#include <cstdlib>\n");
}

TEST_CASE("emit: include lines name each header once") {
    using tlc::codegen::includeLines;
    const std::string sse = "#if defined(__SSE2__)\n#include <immintrin.h>\n#endif";
    const std::string avx = "#if defined(__AVX512F__)\n#include <immintrin.h>\n#endif";
    const std::string unistd = "#if defined(__unix__)\n#include <unistd.h>\n#endif";
    // Conditions of one header join, at its first place.
    CHECK(includeLines({"#include <cstdint>"}, {sse, unistd, avx, sse}) ==
          "#include <cstdint>\n#if defined(__SSE2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\n"
          "#if defined(__unix__)\n#include <unistd.h>\n#endif\n");
    // An unconditional include covers the conditional ones, before or after it.
    CHECK(includeLines({"#include <immintrin.h>"}, {sse}) == "#include <immintrin.h>\n");
    CHECK(includeLines({sse}, {"#include <immintrin.h>", avx}) == "#include <immintrin.h>\n");
    // A term already there is not named again.
    CHECK(includeLines({avx}, {"#if defined(__AVX2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif"}) ==
          "#if defined(__AVX512F__) || defined(__AVX2__)\n#include <immintrin.h>\n#endif\n");
    // A comment after the header does not make it another.
    CHECK(includeLines({sse}, {"#if B\n#include <immintrin.h>  // why\n#endif"}) ==
          "#if defined(__SSE2__) || B\n#include <immintrin.h>\n#endif\n");
    // Compound conditions keep their meaning.
    CHECK(includeLines({}, {"#if A && B\n#include <x.h>\n#endif", "#if C\n#include <x.h>\n#endif",
                            "#if N>1\n#include <x.h>\n#endif", "#if P ? Q : R\n#include <x.h>\n#endif"}) ==
          "#if (A && B) || C || N>1 || (P ? Q : R)\n#include <x.h>\n#endif\n");
    // A group of several includes is kept whole.
    const std::string group = "#if X\n#include <a.h>\n#include <b.h>\n#endif";
    CHECK(includeLines({group}, {group, "#include <a.h>"}) == group + "\n#include <a.h>\n");
}

TEST_CASE("emit: vector add for CUDA") {
    EmitResult r = emitOne(vectorAdd(target("sm90")), "sm90");
    const std::string& s = r.source;
    CHECK_HAS(s, "#include \"vector_add.h\"");
    CHECK_HAS(s, "__global__ void __launch_bounds__(256) vector_add_kernel(const float* __restrict__ A,");
    CHECK_HAS(s, "float* __restrict__ C,");
    CHECK_HAS(s, "    const int bx = blockIdx.x;\n    const int tx = threadIdx.x;\n");
    CHECK_HAS(s, "    // vadd.tl:4\n    const int i = bx * 256 + tx;\n    // vadd.tl:5\n    if (i < N) {\n"
                 "        C[i] = A[i] + B[i];\n    }\n");
    CHECK_HAS(s, "cudaError_t vector_add(const float* A, const float* B, float* C, int N, cudaStream_t stream)");
    CHECK_HAS(s, "if (N < 0) return cudaErrorInvalidValue;");
    CHECK_HAS(s, "const int blocks_x = tl::ceildiv(N, 256);");
    CHECK_HAS(s, "if (blocks_x <= 0) return cudaSuccess;");
    CHECK_HAS(s, "vector_add_kernel<<<blocks_x, 256, 0, stream>>>(A, B, C, N);");
    CHECK_HAS(s, "return cudaGetLastError();");
    CHECK_HAS(s, "extern \"C\" int tl_vector_add(const void* A, const void* B, void* C, int N, void* stream)");
    CHECK_HAS(s, "static_cast<cudaStream_t>(stream)");
    CHECK_HAS_NOT(s, "fits_int32_offsets");  // rank-1 tensors always fit

    const std::string& h = r.header;
    CHECK_HAS(h, "#pragma once");
    CHECK_HAS(h, "#include <cuda_runtime.h>");
    CHECK_HAS(h, "namespace tl_kernels {");
    CHECK_HAS(h, "//   A: f32[N], row-major, read");
    CHECK_HAS(h, "//   C: f32[N], row-major, written");
    CHECK_HAS(h, "grid (ceildiv(N, 256)) of 256-thread blocks");
    CHECK_HAS(h, "cudaStream_t stream = nullptr);");
    CHECK_HAS(h, "extern \"C\" int tl_vector_add(const void* A, const void* B, void* C, int N, void* stream);");
    CHECK_HAS_NOT(h, "__global__");
}

TEST_CASE("emit: vector add for HIP and the CPU") {
    EmitResult hip = emitOne(vectorAdd(target("gfx90a")), "gfx90a");
    CHECK_HAS(hip.source, "#include <hip/hip_runtime.h>");
    CHECK_HAS(hip.source, "hipError_t vector_add(");
    CHECK_HAS(hip.source, "return hipGetLastError();");
    CHECK_HAS(hip.header, "#include <hip/hip_runtime_api.h>");
    CHECK_HAS(hip.header, "#define __HIP_PLATFORM_AMD__");
    CHECK_HAS(hip.header, "hipStream_t stream = nullptr);");

    EmitResult cpu = emitOne(vectorAdd(target("cpu")), "cpu");
    const std::string& s = cpu.source;
    CHECK_HAS(s, "static void vector_add_block(const float* __restrict__ A,");
    CHECK_HAS(s, "int bx)\n{\n    // vadd.tl:3\n    for (int t = 0; t < 256; ++t) {\n");
    CHECK_HAS(s, "    #pragma omp parallel for schedule(static)\n    for (int bx = 0; bx < blocks_x; ++bx) {\n"
                 "        vector_add_block(A, B, C, N, bx);\n    }\n    return tl::cpu_success;\n");
    CHECK_HAS(s, "if (N < 0) return tl::cpu_error_invalid_value;");
    CHECK_HAS(s, "void* /*stream: unused on the CPU*/)");
    CHECK_HAS_NOT(s, "__syncthreads");
    CHECK_HAS(cpu.header, "int vector_add(const float* A, const float* B, float* C, int N);");
    CHECK_HAS(cpu.header, "cpu_error_invalid_value = 1");  // the status codes, for host programs
}

TEST_CASE("emit: shared memory, barrier and warp shuffle") {
    EmitResult cuda = emitOne(rowSum(target("sm80")), "sm80");
    const std::string& s = cuda.source;
    CHECK_HAS(s, "float acc = 0.0f;");
    CHECK_HAS(s, "extern __shared__ __align__(1024) unsigned char tl_smem[];  // 16 bytes, set at launch");
    CHECK_HAS(s, "float* const partial = reinterpret_cast<float*>(tl_smem + 0);  // [4] f32, offset 0");
    CHECK_HAS(s, "row_sum_kernel<<<blocks_x, 128, 16, stream>>>");
    CHECK_HAS_NOT(s, "cudaFuncSetAttribute");  // 48 KB or less needs no opt-in
    CHECK_HAS(s, "// rowsum.tl:7: reduce_sum(x, row, dim = 1)");
    CHECK_HAS(s, "acc += X[bx * N + j];");
    CHECK_HAS(s, "#pragma unroll\n    for (int s = 0; s < 5; ++s) {\n"
                 "        acc += __shfl_xor_sync(0xffffffffu, acc, 16 >> s, 32);\n");
    CHECK_HAS(s, "__syncthreads();");
    CHECK_HAS(s, "if (tx == 0 && bx < M) {");
    CHECK_HAS(s, "if (!tl::fits_int32_offsets({M, N})) return cudaErrorInvalidValue;  // X: 32-bit offsets");
    CHECK_HAS(s, "const int blocks_x = M;");

    EmitResult hip = emitOne(rowSum(target("gfx942")), "gfx942");
    CHECK_HAS(hip.source, "acc += __shfl_xor(acc, 16 >> s, 32);");
    CHECK_HAS(hip.source, "float* const partial = reinterpret_cast<float*>(tl_smem + 0);  // [4] f32, offset 0");

    EmitResult cpu = emitOne(rowSum(target("cpu")), "cpu");
    CHECK_HAS(cpu.source, "float partial[1];");
    CHECK_HAS_NOT(cpu.source, "__shared__");
    CHECK_HAS_NOT(cpu.source, "syncthreads");
    CHECK_THROWS_AS(emit({rowSum(target("sm80"))}, target("cpu"), {}), EmitError);  // shuffles, 128 threads
}

TEST_CASE("emit: f16 casts, vector moves and launch checks") {
    EmitResult cuda = emitOne(halfScale(target("sm90")), "sm90");
    const std::string& s = cuda.source;
    CHECK_HAS(s, "#include <cuda_fp16.h>");
    CHECK_HAS(s, "__global__ void __launch_bounds__(128) half_scale_kernel(const __half* __restrict__ A,");
    CHECK_HAS(s, "__half* const A_s = reinterpret_cast<__half*>(tl_smem + 0);  // [64][64] f16, offset 0");
    CHECK_HAS(s, "__align__(16) __half out[8];");
    CHECK_HAS(s, "tl::copy_vec<16>(&A_s[r * 64 + c], &A[(by * 64 + r) * K + bx * 64 + c]);");
    CHECK_HAS(s, "tl::fill_zero<16>(&out[0]);");
    CHECK_HAS(s, "out[v] = __half(float(A_s[r * 64 + c + v]) * alpha);");
    CHECK_HAS(s, "tl::copy_vec<16>(&B[(by * 64 + r) * K + bx * 64 + c], &out[0]);");
    CHECK_HAS(s, "// half_scale.tl:4: copy(A[by * 64, bx * 64], A_s)");
    CHECK_HAS(s, "if (M % 64 != 0) return cudaErrorInvalidValue;  // M must be a multiple of 64");
    CHECK_HAS(s, "if (!tl::is_aligned(A, 16)) return cudaErrorInvalidValue;  // 16-byte vector loads of A");
    CHECK_HAS(s, "if (!tl::fits_int32_offsets({M, K})) return cudaErrorInvalidValue;  // A, B: 32-bit offsets");
    CHECK_HAS(s, "half_scale_kernel<<<dim3(blocks_x, blocks_y), 128, 8192, stream>>>(A, B, alpha, M, K);");
    CHECK_HAS(s, "struct vector_word");  // the runtime section was pasted
    CHECK_HAS(cuda.header, "#include <cuda_fp16.h>");
    CHECK_HAS(cuda.header, "cudaError_t half_scale(const __half* A,\n");
    CHECK_HAS(cuda.header, "M % 64 == 0 (M must be a multiple of 64)");

    EmitResult cpu = emitOne(halfScale(target("cpu")), "cpu");
    CHECK_HAS(cpu.source, "tl::half A_s[4096];  // 64 x 64");
    CHECK_HAS(cpu.source, "out[v] = tl::half(float(A_s[r * 64 + c + v]) * alpha);");
    CHECK_HAS(cpu.source, "int /*M*/,");  // unused in the block: named in a comment
    CHECK_HAS(cpu.source, "#pragma omp parallel for schedule(static) collapse(2)\n    for (int by = 0; by < blocks_y; ++by) {\n"
                          "        for (int bx = 0; bx < blocks_x; ++bx) {\n");
    CHECK_HAS(cpu.header, "struct half {");  // a host program gets tl::half from the header
    CHECK_HAS_NOT(cpu.source, "struct half {");  // ... and the source does not repeat it
    CHECK_HAS(cpu.header, "int half_scale(const tl::half* A, tl::half* B, float alpha, int M, int K);");
}

TEST_CASE("emit: more than 48 KB of shared memory needs the opt-in; large CPU buffers are hoisted") {
    for (const char* t : {"sm80", "sm90"}) {
        EmitResult r = emitOne(bigShared(target(t)), t);
        CHECK_HAS(r.source, "extern __shared__ __align__(1024) unsigned char tl_smem[];");
        CHECK_HAS(r.source, "float* const tile = reinterpret_cast<float*>(tl_smem + 0);  // [128][64] f32, offset 0");
        CHECK_HAS(r.source, "float* const tile_t = reinterpret_cast<float*>(tl_smem + 32768);  // [64][128] f32, offset 32768");
        CHECK_HAS(r.source, "const cudaError_t attribute = cudaFuncSetAttribute(big_transpose_kernel,\n"
                            "            cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
                            "    if (attribute != cudaSuccess) return attribute;\n");
        CHECK_HAS(r.source, "big_transpose_kernel<<<blocks_x, 256, 65536, stream>>>(S, T, R);");
        CHECK_HAS(r.header, "65536 bytes of shared memory (dynamic)");
    }
    EmitResult hip = emitOne(bigShared(target("gfx90a")), "gfx90a");
    CHECK_HAS(hip.source, "hipFuncSetAttribute(reinterpret_cast<const void*>(&big_transpose_kernel),");
    CHECK_HAS(hip.source, "if (attribute != hipSuccess) return attribute;");

    EmitResult cpu = emitOne(bigShared(target("cpu")), "cpu");
    CHECK_HAS(cpu.source, "    #pragma omp parallel\n    {\n");
    CHECK_HAS(cpu.source, "std::vector<float> tile(8192);");
    CHECK_HAS(cpu.source, "#pragma omp for schedule(static)\n");
    CHECK_HAS(cpu.source, "big_transpose_block(S, T, R, bx, tile.data(), tile_t.data());");
    CHECK_HAS(cpu.source, "float* __restrict__ tile_t)");
    CHECK_HAS(cpu.source, "// tile: shared f32[128, 64], per-thread storage from the launcher");
    CHECK_HAS(cpu.source, "#include <vector>");

    // Every kernel of a file declares the pool alike (nvcc sees one array).
    EmitResult two = emit({rowSum(target("sm80")), bigShared(target("sm80"))}, target("sm80"), {});
    size_t first = two.source.find("extern __shared__ __align__(1024) unsigned char tl_smem[];  // 16 bytes");
    CHECK(first != std::string::npos);
    CHECK(two.source.find("extern __shared__ __align__(1024) unsigned char tl_smem[];  // 65536 bytes", first) !=
          std::string::npos);

    // Small pools need no opt-in.
    EmitResult small = emitOne(halfScale(target("sm80")), "sm80");
    CHECK_HAS(small.source, "tl_smem[];  // 8192 bytes, set at launch");
    CHECK_HAS_NOT(small.source, "cudaFuncSetAttribute");
}

TEST_CASE("emit: element types, atomics, math and names") {
    EmitResult cuda = emitOne(mixedTypes(target("sm89")), "sm89");
    const std::string& s = cuda.source;
    CHECK_HAS(s, "#include <cuda_bf16.h>");
    CHECK_HAS(s, "#include <cuda_fp8.h>");
    CHECK_HAS(s, "const __nv_bfloat16* __restrict__ X,");
    CHECK_HAS(s, "float best = -INFINITY;");
    CHECK_HAS(s, "const float x = float(X[i]);");
    CHECK_HAS(s, "Q[i] = __nv_fp8_e4m3(y * scale);");
    CHECK_HAS(s, "atomicAdd(&H[tl::floormod(i, 16)], __half(y));");
    CHECK_HAS(s, "atomicAdd(reinterpret_cast<unsigned long long*>(&C[tl::floordiv(i, 16) % 4]),");
    CHECK_HAS(s, "static_cast<long long>(i) * 1099511627776LL");
    CHECK_HAS(s, "tl::atomic_add_narrow(&counts[i % 8], 1);");
    CHECK_HAS(s, "flags[0] = uint32_t(i) * 2654435761u;");
    CHECK_HAS(s, "flags[1] = flags[0] ^ (flags[0] >> 16u);");
    CHECK_HAS(s, "const bool new_ = x >= 0.0f && !(i < 0 || (i > 1000000 && i < N));");
    CHECK_HAS(s, "exp2f(x * 1.44269504f)");
    CHECK_HAS(s, "rsqrtf(x * x + 1.0f)");
    CHECK_HAS(s, "tl::sigmoid(x)");
    CHECK_HAS(s, "__expf(x)");
    CHECK_HAS(s, "powf(x, 2.0f)");
    CHECK_HAS(s, "tl::fast_tanh(x)");
    CHECK_HAS(s, "fminf(x, -0.5f)");
    CHECK_HAS(s, "best = fmaxf(best, x + wide[i % 8]);");
    CHECK_HAS(s, "tl::fill_zero<32>(&wide[0]);");
    CHECK_HAS(s, "// print(y): compiled out");
    CHECK_HAS_NOT(s, "unused");  // a let nothing reads is not declared
    CHECK_HAS_NOT(s, "printf(\"mixed");

    EmitResult hip = emitOne(mixedTypes(target("gfx942")), "gfx942");
    CHECK_HAS(hip.source, "const hip_bfloat16* __restrict__ X,");
    CHECK_HAS(hip.source, "tl::fp8_e4m3* __restrict__ Q,");
    CHECK_HAS(hip.source, "tl::atomic_add_narrow(&H[tl::floormod(i, 16)], __half(y));");
    CHECK_HAS(hip.header, "struct fp8_e4m3 {");
    CHECK_HAS(hip.header, "#include <hip/hip_bfloat16.h>");

    EmitResult cpu = emitOne(mixedTypes(target("cpu")), "cpu");
    CHECK_HAS(cpu.source, "tl::exp2(x * 1.44269504f)");  // vectorisable, no library call
    CHECK_HAS(cpu.source, "tl::rsqrt(x * x + 1.0f)");
    CHECK_HAS(cpu.source, "tl::fmin(x, -0.5f)");
    CHECK_HAS(cpu.source, "#pragma omp atomic\n");
    CHECK_HAS(cpu.source, "tl::atomic_add_narrow(&H[tl::floormod(i, 16)], tl::half(y));");
    CHECK_HAS(cpu.header, "struct bfloat16 {");
    CHECK_HAS(cpu.header, "struct fp8_e4m3 {");
}

TEST_CASE("emit: --debug keeps print and assert; #line directives") {
    EmitOptions options;
    options.debug = true;
    options.lineDirectives = true;
    options.outputName = "mixed.cu";
    EmitResult r = emitOne(mixedTypes(target("sm90")), "sm90", options);
    CHECK_HAS(r.source, "printf(\"mixed.tl:8: y = %f\\n\", double(y));");
    // assert's message first, then its condition; print's message before the value's text.
    CHECK_HAS(r.source, "if (!(i >= 0)) tl::assert_fail(\"mixed.tl:8\", \"i is \\\"non-negative\\\" (i >= 0)\");");
    CHECK_HAS(r.source, "printf(\"mixed.tl:8: row 100%%: i = %d\\n\", i);");
    CHECK_HAS(r.source, "#line 4 \"mixed.tl\"\n");
    CHECK_HAS_NOT(r.source, "// mixed.tl:4\n");
    // After the kernel, lines are the output file's own again.
    size_t restore = r.source.find("\"mixed.cu\"");
    REQUIRE(restore != std::string::npos);
    size_t lineStart = r.source.rfind('\n', restore) + 1;
    int lineNo = 1;
    for (size_t i = 0; i < lineStart; ++i) lineNo += r.source[i] == '\n';
    CHECK(r.source.substr(lineStart, restore - lineStart) == "#line " + std::to_string(lineNo + 1) + " ");

    EmitResult cpu = emitOne(mixedTypes(target("cpu")), "cpu", options);
    CHECK_HAS(cpu.source, "std::printf(\"mixed.tl:8: y = %f\\n\", double(y));");
    CHECK_HAS(cpu.source, "#include <cstdio>");
}

TEST_CASE("emit: output is deterministic and every kernel of a file is there") {
    for (const Target& t : allTargets()) {
        EmitOptions options;
        options.headerName = "all.h";
        options.nameSpace = "a::b";
        EmitResult first = emit(allKernels(t), t, options);
        EmitResult second = emit(allKernels(t), t, options);
        CHECK(first.source == second.source);
        CHECK(first.header == second.header);
        CHECK_HAS(first.source, "namespace a::b {");
        for (const auto& k : allKernels(t)) CHECK_HAS(first.header, "tl_" + k.name + "(");
        // Each runtime section is pasted once.
        size_t at = first.source.find("#define TLC_RUNTIME_TL_COMMON_H_HOST_DEVICE");
        if (at != std::string::npos)
            CHECK(first.source.find("#define TLC_RUNTIME_TL_COMMON_H_HOST_DEVICE", at + 1) == std::string::npos);
        // No tabs, no trailing spaces, lines of at most 100 characters outside the runtime.
        CHECK_HAS_NOT(first.source, "\t");
        CHECK_HAS_NOT(first.source, " \n");
    }
}

TEST_CASE("emit: without a header the source declares the launchers itself") {
    EmitOptions options;
    options.sourceName = "vadd.tl";
    EmitResult r = emit({vectorAdd(target("sm80"))}, target("sm80"), options);
    CHECK(r.header.empty());
    CHECK_HAS_NOT(r.source, "#include \"");
    CHECK_HAS(r.source, "cudaStream_t stream = nullptr);");
    CHECK_HAS(r.source, "extern \"C\" int tl_vector_add(const void* A, const void* B, void* C, int N, void* stream);");
    EmitResult cpu = emit({halfScale(target("cpu"))}, target("cpu"), options);
    CHECK_HAS(cpu.source, "struct half {");
    CHECK_HAS(cpu.source, "cpu_success = 0");
}

TEST_CASE("emit: expressions print with the parentheses C and -Wall need") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    VarPtr a = makeVar("a"), b = makeVar("b"), c = makeVar("c");
    Expr A(a), B(b), C(c);
    auto text = [&](Expr value) {
        Stmt body = letStmt(a, intImm(1), letStmt(b, intImm(2), letStmt(c, intImm(3), store(X, {intImm(0)}, cast(DType::F32, value)))));
        return emit({tiny(t, X, N, body)}, t, {}).source;
    };
    CHECK_HAS(text(A - (B - C)), "float(a - (b - c))");
    CHECK_HAS(text((A - B) - C), "float(a - b - c)");
    CHECK_HAS(text(A * (B + C)), "float(a * (b + c))");
    CHECK_HAS(text(binary(BinaryOp::Or, A < B, logicalAnd(B < C, A < C))), "a < b || (b < c && a < c)");
    CHECK_HAS(text(binary(BinaryOp::BitAnd, A, B + C)), "float(a & (b + c))");
    CHECK_HAS(text(binary(BinaryOp::BitOr, binary(BinaryOp::BitAnd, A, B), C)), "float((a & b) | c)");
    CHECK_HAS(text(binary(BinaryOp::Shl, A, B + C)), "float(a << (b + c))");
    CHECK_HAS(text(binary(BinaryOp::Eq, unary(UnaryOp::Not, A < B), boolImm(true))), "(!(a < b)) == true");
    CHECK_HAS(text(unary(UnaryOp::Neg, unary(UnaryOp::Neg, A))), "float(-(-a))");
    CHECK_HAS(text(A - intImm(-5)), "float(a - -5)");
    CHECK_HAS(text(select(A < B, A, select(B < C, B, C))), "float(a < b ? a : b < c ? b : c)");
    CHECK_HAS(text(intImm(INT32_MIN) + A), "(-2147483647 - 1) + a");
    CHECK_HAS(text(minExpr(A, B)), "float(min(a, b))");
}

TEST_CASE("emit: literals") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    auto text = [&](Expr value) { return emit({tiny(t, X, N, store(X, {intImm(0)}, value))}, t, {}).source; };
    CHECK_HAS(text(floatImm(0.1)), "X[0] = 0.1f;");
    CHECK_HAS(text(floatImm(2.0)), "X[0] = 2.0f;");
    CHECK_HAS(text(floatImm(1e-5)), "X[0] = 1e-05f;");
    CHECK_HAS(text(floatImm(0.5, DType::F32, "0.50")), "X[0] = 0.50f;");
    CHECK_HAS(text(floatImm(-0.5, DType::F32, "0.5")), "X[0] = -0.5f;");  // the spelling is of another value
    CHECK_HAS(text(floatImm(INFINITY)), "X[0] = INFINITY;");
    CHECK_HAS(text(floatImm(-INFINITY)), "X[0] = -INFINITY;");
    CHECK_HAS(text(cast(DType::F32, floatImm(0.25, DType::F64))), "X[0] = float(0.25);");
    CHECK_HAS(text(cast(DType::F32, floatImm(-INFINITY, DType::F64))), "float(-double(INFINITY))");
    CHECK_HAS(text(cast(DType::F32, floatImm(1.5, DType::F16))), "float(__half(1.5f))");
    CHECK_HAS(text(cast(DType::F32, intImm(3, DType::U64))), "float(3ULL)");
    CHECK_HAS(text(cast(DType::F32, intImm(3, DType::I64))), "float(3LL)");
    CHECK_HAS(text(cast(DType::F32, boolImm(true))), "float(true)");
    CHECK_HAS(text(cast(DType::F32, cast(DType::F16, intImm(3)))), "float(__half(float(3)))");
    CHECK_HAS(text(cast(DType::F32, cast(DType::I64, cast(DType::BF16, floatImm(1.0))))),
              "float(static_cast<long long>(float(__nv_bfloat16(1.0f))))");
}

TEST_CASE("emit: names") {
    using tlc::codegen::NameScope;
    using tlc::codegen::sanitizeIdentifier;
    CHECK(sanitizeIdentifier("x") == "x");
    CHECK(sanitizeIdentifier("class") == "class_");
    CHECK(sanitizeIdentifier("threadIdx") == "threadIdx_");
    CHECK(sanitizeIdentifier("__x") == "v__x");
    CHECK(sanitizeIdentifier("_X") == "v_X");
    CHECK(sanitizeIdentifier("9lives") == "v9lives");
    CHECK(sanitizeIdentifier("a-b") == "a_b");
    NameScope names;
    int x1, x2, x3;
    CHECK(names.declare(&x1, "x") == "x");
    names.push();
    CHECK(names.declare(&x2, "x") == "x_1");  // no shadowing
    CHECK(*names.lookup(&x1) == "x");
    names.pop();
    CHECK(names.lookup(&x2) == nullptr);
    CHECK(names.declare(&x3, "x") == "x_1");  // same block as x: still taken
    CHECK(names.declare(nullptr, "x_1") == "x_1_1");

    // In a kernel: a loop variable named like an outer let, a buffer named like a keyword.
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    VarPtr outer = makeVar("i"), inner = makeVar("i");
    Buffer tmp = makeBuffer("float", DType::F32, MemScope::Local, {intImm(4)});
    Stmt body = allocate(tmp, letStmt(outer, intImm(2),
                                      forLoop(inner, intImm(0), Expr(outer), ForKind::Serial,
                                              seq({store(tmp, {Expr(inner)}, floatImm(1.0)),
                                                   store(X, {Expr(inner) + Expr(outer)}, load(tmp, {Expr(inner)}))}))));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    CHECK_HAS(s, "float float_[4];");
    CHECK_HAS(s, "const int i = 2;");
    CHECK_HAS(s, "for (int i_1 = 0; i_1 < i; ++i_1) {");
    CHECK_HAS(s, "X[i_1 + i] = float_[i_1];");
}

TEST_CASE("emit: loops, conditions and statements") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    VarPtr i = makeVar("i");
    auto text = [&](Stmt body) { return emit({tiny(t, X, N, body)}, t, {}).source; };
    CHECK_HAS(text(forLoop(i, intImm(2), intImm(10), ForKind::Serial, store(X, {Expr(i)}, floatImm(0.0)), {}, {}, intImm(3))),
              "for (int i = 2; i < 12; i += 3) {");
    CHECK_HAS(text(forLoop(i, Expr(N), intImm(-4), ForKind::Serial, store(X, {Expr(i)}, floatImm(0.0)), {}, {}, intImm(-1))),
              "for (int i = N; i > N + -4; --i) {");
    CHECK_HAS(text(ifThenElse(Expr(N) < 4, store(X, {intImm(0)}, floatImm(1.0)),
                              ifThenElse(Expr(N) < 8, store(X, {intImm(0)}, floatImm(2.0)), store(X, {intImm(0)}, floatImm(3.0))))),
              "    if (N < 4) {\n        X[0] = 1.0f;\n    } else if (N < 8) {\n        X[0] = 2.0f;\n    } else {\n"
              "        X[0] = 3.0f;\n    }\n");
    CHECK_HAS(text(seq({comment("two\nlines"), store(X, {intImm(0)}, floatImm(1.0))})), "    // two\n    // lines\n");
    CHECK_HAS(text(seq({comment("ends with \\"), store(X, {intImm(0)}, floatImm(1.0))})), "// ends with \\.\n");
}

TEST_CASE("emit: IR outside the thread-IR contract is an EmitError") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer H = makeBuffer("H", DType::F16, MemScope::Local, {intImm(4)});
    VarPtr i = makeVar("i");
    auto fails = [&](Stmt body) {
        CHECK_THROWS_AS(emit({tiny(t, X, N, body)}, t, {}), EmitError);
    };
    fails(forLoop(i, intImm(0), intImm(4), ForKind::Parallel, store(X, {Expr(i)}, floatImm(0.0))));
    fails(allocate(H, store(X, {intImm(0)}, cast(DType::F32, load(H, {intImm(0)}) + load(H, {intImm(1)})))));  // f16 math
    fails(store(X, {intImm(0)}, call("no_such_function", DType::F32, {floatImm(1.0)})));
    fails(store(X, {intImm(0)}, Expr(std::make_shared<FloatImm>(DType::F32, 1.0, "", 4))));  // a broadcast of 1
    Buffer Q = makeBuffer("Q", DType::I4, MemScope::Global, {Expr(N)});
    Kernel k = tiny(t, X, N, store(X, {intImm(0)}, floatImm(0.0)));
    k.params.insert(k.params.begin(), tensorParam(Q));
    CHECK_THROWS_AS(emit({k}, t, {}), EmitError);  // packed 4-bit tensors
}

TEST_CASE("emit: a reshaped view of an allocation uses its storage") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer flat = makeBuffer("stage", DType::F16, MemScope::Shared, {intImm(4096)});
    Buffer view = makeBuffer("stage", DType::F16, MemScope::Shared, {intImm(64), intImm(64)});
    Stmt body = allocate(flat, seq({store(view, {intImm(1), intImm(2)}, cast(DType::F16, floatImm(1.0))),
                                    store(X, {intImm(0)}, cast(DType::F32, load(view, {intImm(1), intImm(2)})))}));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    CHECK_HAS(s, "__half* const stage = reinterpret_cast<__half*>(tl_smem + 0);  // [4096] f16, offset 0");
    CHECK_HAS(s, "stage[66] = __half(1.0f);");
    CHECK_HAS(s, "X[0] = float(stage[66]);");
}

TEST_CASE("emit: location comments only where code follows") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer unused = makeBuffer("unused", DType::F32, MemScope::Shared, {intImm(8)});
    VarPtr dead = makeVar("dead");
    Stmt body = allocate(unused, letStmt(dead, intImm(1), store(X, {intImm(0)}, floatImm(1.0), L(12)), L(11)), L(10));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    CHECK_HAS(s, "{\n    // tiny.tl:12\n    X[0] = 1.0f;\n}");
    CHECK_HAS_NOT(s, "tiny.tl:10");
    CHECK_HAS_NOT(s, "tiny.tl:11");
    CHECK_HAS_NOT(s, "unused");
}

TEST_CASE("emit: instruction helpers are tl:: calls that paste their runtime section") {
    const Target& t = target("sm80");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer A_s = makeBuffer("A_s", DType::F16, MemScope::Shared, {intImm(16), intImm(16)});
    Buffer frag = makeBuffer("frag", DType::F16, MemScope::Local, {intImm(8)});
    auto addressOf = [](const Buffer& b, std::vector<Expr> idx) { return call("address_of", DType::I64, {load(b, idx)}); };
    Stmt body = allocate(A_s, allocate(frag, evaluate(call("ldmatrix_x4_trans", DType::I32,
                                                          {addressOf(frag, {intImm(0)}), addressOf(A_s, {intImm(3), intImm(8)})}))));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    CHECK_HAS(s, "tl::ldmatrix_x4_trans(&frag[0], &A_s[56]);");
    CHECK_HAS(s, "#ifndef TLC_RUNTIME_TL_CUDA_MMA_H_LDMATRIX");
    CHECK_HAS(s, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
    CHECK_HAS_NOT(s, "TLC_RUNTIME_TL_CUDA_MMA_H_MMA");  // only the section that is used
}

TEST_CASE("emit: sm90 helpers paste their runtime section and what it needs") {
    const Target& t = target("sm90");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer bar = makeBuffer("bar", DType::U64, MemScope::Shared, {intImm(1)});
    auto addressOf = [](const Buffer& b, std::vector<Expr> idx) { return call("address_of", DType::I64, {load(b, idx)}); };
    Stmt body = allocate(bar, seq({evaluate(call("mbarrier_wait_parity", DType::I32, {addressOf(bar, {intImm(0)}), intImm(1)})),
                                   evaluate(call("fence_proxy_async_shared", DType::I32, {}))}));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    CHECK_HAS(s, "tl::mbarrier_wait_parity(&bar[0], 1);");
    CHECK_HAS(s, "tl::fence_proxy_async_shared();");
    CHECK_HAS(s, "#ifndef TLC_RUNTIME_TL_CUDA_MBARRIER_H_MBARRIER");
    CHECK_HAS(s, "#ifndef TLC_RUNTIME_TL_CUDA_TMA_H_TMA\n");
    CHECK_HAS(s, "#ifndef TLC_RUNTIME_TL_CUDA_H_SMEM_U32");  // needed by both, pasted once
    CHECK(s.find("TLC_RUNTIME_TL_CUDA_H_SMEM_U32") < s.find("TLC_RUNTIME_TL_CUDA_MBARRIER_H_MBARRIER"));
    CHECK_HAS(s, "mbarrier.try_wait.parity.shared::cta.b64");
    CHECK_HAS_NOT(s, "TLC_RUNTIME_TL_CUDA_WGMMA_H_WGMMA");
    CHECK_HAS_NOT(s, "TLC_RUNTIME_TL_CUDA_TMA_HOST_H_TMA_HOST");
}

TEST_CASE("emit: wgmma helpers take their immediates as template arguments") {
    // One table (findInstructionHelper) gives each helper its section, its template arguments
    // and whether it takes registers by address (those arrays are declared 16-byte aligned).
    const Target& t = target("sm90");
    VarPtr N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(N)});
    Buffer acc = makeBuffer("acc", DType::F32, MemScope::Local, {intImm(32)});
    Buffer tile = makeBuffer("tile", DType::F16, MemScope::Shared, {intImm(64), intImm(64)});
    auto addressOf = [](const Buffer& b, std::vector<Expr> idx) { return call("address_of", DType::I64, {load(b, idx)}); };
    VarPtr desc = makeVar("desc", DType::U64);
    Expr make = call("make_smem_desc", DType::U64, {addressOf(tile, {intImm(0), intImm(0)}), intImm(128), intImm(16), intImm(1024)});
    Expr step = call("wgmma_desc_advance", DType::U64, {Expr(desc), intImm(32)});
    Stmt mma = evaluate(call("wgmma_m64nNk16_f32_f16_ss", DType::I32,
                             {intImm(64), boolImm(false), boolImm(true), addressOf(acc, {intImm(0)}), step, step, boolImm(true)}));
    Stmt body = allocate(tile, allocate(acc, letStmt(desc, make, seq({evaluate(call("wgmma_fence", DType::I32, {})), mma,
                                                                       evaluate(call("wgmma_wait_group", DType::I32, {intImm(0)})),
                                                                       store(X, {intImm(0)}, load(acc, {intImm(0)}))}))));
    std::string s = emit({tiny(t, X, N, body)}, t, {}).source;
    // The call wraps between its arguments, never inside the template's.
    CHECK_HAS(s, "tl::wgmma_m64nNk16_f32_f16_ss<64, false, true>(&acc[0], tl::wgmma_desc_advance(desc, 32),\n");
    CHECK_HAS(s, "tl::wgmma_wait_group<0>();");
    CHECK_HAS(s, "__align__(16) float acc[32];");
    CHECK_HAS(s, "#ifndef TLC_RUNTIME_TL_CUDA_WGMMA_H_WGMMA");
}
