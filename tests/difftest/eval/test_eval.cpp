// Unit tests of the reference evaluator: the dtype rules, and small programs whose results are
// worked out by hand, one per tile op and language form it models. The evaluator is the
// differential tester's oracle, so it is checked against arithmetic done here, never against
// tlc's own output.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "Evaluator.h"
#include "Numeric.h"

#include "irgen/IRGen.h"
#include "parser/Parser.h"
#include "sema/Sema.h"

#include <cmath>
#include <iostream>

using namespace tlc;
using namespace tlc::eval;

namespace {

// Parses, checks and runs the one kernel of `text` on `problem`.
void run(const std::string& text, Problem& problem) {
    SourceFile source("test.tl", text);
    DiagnosticEngine diags(source);
    auto file = parseFile(source, diags);
    bool ok = file && checkFile(*file, diags, {});
    if (!ok) diags.printText(std::cerr);
    REQUIRE(ok);
    std::vector<ir::Kernel> parts = buildKernelIRs(*file->kernels.at(0), source, diags);
    REQUIRE_FALSE(diags.hasErrors());
    runKernel(parts, problem);
}

std::vector<double> iota(size_t n, double from = 0, double step = 1) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = from + step * double(i);
    return v;
}

} // namespace

TEST_CASE("floats round to nearest even in their format") {
    CHECK(roundToFloat(DType::F16, 1.0 + std::ldexp(1.0, -11)) == 1.0);                    // a tie: to even
    CHECK(roundToFloat(DType::F16, 1.0 + 3 * std::ldexp(1.0, -11)) == 1.0 + std::ldexp(1.0, -9));
    CHECK(roundToFloat(DType::F16, 65504.0 + 15.0) == 65504.0);
    CHECK(std::isinf(roundToFloat(DType::F16, 65520.0)));                                   // half an ulp past the top
    CHECK(roundToFloat(DType::F16, std::ldexp(1.0, -25) * 1.5) == std::ldexp(1.0, -24));   // subnormal
    CHECK(roundToFloat(DType::BF16, 1.0 + std::ldexp(1.0, -8)) == 1.0);
    CHECK(roundToFloat(DType::BF16, 3.14159) == 3.140625);
    CHECK(roundToFloat(DType::F8E4M3, 1000.0) == 448.0);   // saturates
    CHECK(roundToFloat(DType::F8E4M3, 0.3) == 0.3125);
    CHECK(roundToFloat(DType::F8E5M2, 1e6) == 57344.0);
    CHECK(roundToFloat(DType::F8E5M2, 2.75) == 3.0);       // 2.5 and 3.0 are neighbours: 3.0 is even
    CHECK(roundToFloat(DType::F32, 0.1) == double(0.1f));
}

TEST_CASE("bits of every float format, both ways") {
    CHECK(bitsOf(Value::ofFloat(DType::F16, 1.0)) == 0x3c00);
    CHECK(bitsOf(Value::ofFloat(DType::F16, -2.0)) == 0xc000);
    CHECK(bitsOf(Value::ofFloat(DType::BF16, 1.0)) == 0x3f80);
    CHECK(bitsOf(Value::ofFloat(DType::F32, 1.0)) == 0x3f800000);
    CHECK(bitsOf(Value::ofFloat(DType::F8E4M3, 448.0)) == 0x7e);
    CHECK(bitsOf(Value::ofFloat(DType::F8E5M2, 1.0)) == 0x3c);
    CHECK(fromBits(DType::F8E4M3, 0x01).f == std::ldexp(1.0, -9));  // the smallest subnormal
    CHECK(std::isnan(fromBits(DType::F8E4M3, 0x7f).f));
    CHECK(std::isinf(fromBits(DType::F8E5M2, 0x7c).f));
    for (DType t : {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2})
        for (uint64_t b = 0; b < 256; ++b) {
            Value v = fromBits(t, b);
            if (!std::isnan(v.f)) CHECK(bitsOf(v) == b);
        }
}

TEST_CASE("integers wrap to their width, casts truncate") {
    CHECK(Value::ofInt(DType::I8, 200).i == -56);
    CHECK(Value::ofInt(DType::U8, -1).i == 255);
    CHECK(Value::ofInt(DType::I4, 9).i == -7);
    CHECK(Value::of(DType::I32, -2.7).i == -2);
    CHECK(convert(Value::ofInt(DType::I32, -1), DType::U16).i == 65535);
    CHECK(convert(Value::ofInt(DType::U8, 255), DType::F16).f == 255.0);
}

TEST_CASE("copies read zero past a tensor's end and drop writes past it") {
    Problem p;
    p.sizes = {{"N", 5}};
    p.tensors = {{"X", iota(5, 1)}, {"Y", std::vector<double>(5, -1)}};
    run(R"(kernel k(X: f32[N], Y: f32[N]) {
        grid(2, threads = 32) as bx {
            let s = alloc_shared([4], f32);
            copy(X[bx * 4], s);
            for i in parallel(4) { s[i] = s[i] * 10.0 + f32(bx); }
            copy(s, Y[bx * 4]);
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{10, 20, 30, 40, 51});
}

TEST_CASE("a region smaller than its buffer moves to the buffer's corner") {
    Problem p;
    p.sizes = {{"N", 6}};
    p.tensors = {{"X", iota(6, 1)}, {"Y", std::vector<double>(8, 0)}};
    run(R"(kernel k(X: f32[N], Y: f32[8]) {
        grid(1, threads = 32) as bx {
            let s = alloc_shared([8], f32);
            fill(s, 7.0);
            copy(X[0 : +3], s);
            copy(s, Y[0]);
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{1, 2, 3, 7, 7, 7, 7, 7});
}

TEST_CASE("gemm in its four transpose forms, rounding the accumulator to its dtype") {
    // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A @ B = [[19, 22], [43, 50]].
    const char* forms[] = {"", ", transpose_A = true", ", transpose_B = true", ", transpose_A = true, transpose_B = true"};
    std::vector<std::vector<double>> want = {{19, 22, 43, 50}, {26, 30, 38, 44}, {17, 23, 39, 53}, {23, 31, 34, 46}};
    for (int f = 0; f < 4; ++f) {
        Problem p;
        p.tensors = {{"A", {1, 2, 3, 4}}, {"B", {5, 6, 7, 8}}, {"C", {0, 0, 0, 0}}};
        run(std::string(R"(kernel k(A: f16[2, 2], B: f16[2, 2], C: f32[2, 2]) {
            grid(1, threads = 32) as bx {
                let a = alloc_shared([2, 2], f16);
                let b = alloc_shared([2, 2], f16);
                let c = alloc_fragment([2, 2], f32);
                copy(A[0, 0], a);
                copy(B[0, 0], b);
                clear(c);
                gemm(a, b, c)") + forms[f] + R"();
                copy(c, C[0, 0]);
            }
        })",
            p);
        CHECK(p.tensors["C"] == want[f]);
    }
}

TEST_CASE("reductions along each dimension, with and without clear") {
    Problem p;
    p.tensors = {{"X", {1, -5, 3, 2, 4, -6}}, {"R", std::vector<double>(2 + 3 + 2 + 2 + 2, 0)}};
    run(R"(kernel k(X: f32[2, 3], R: f32[11]) {
        grid(1, threads = 32) as bx {
            let x = alloc_fragment([2, 3], f32);
            let rows = alloc_fragment([2], f32);
            let cols = alloc_fragment([3], f32);
            let absmax = alloc_fragment([2], f32);
            let acc = alloc_fragment([2], f32);
            let mins = alloc_fragment([2], f32);
            copy(X[0, 0], x);
            reduce_sum(x, rows, dim = 1);
            reduce_max(x, cols, dim = 0);
            reduce_absmax(x, absmax, dim = 1);
            fill(acc, 100.0);
            reduce_abssum(x, acc, dim = 1, clear = false);
            reduce_min(x, mins, dim = -1);
            copy(rows, R[0 : +2]);
            copy(cols, R[2 : +3]);
            copy(absmax, R[5 : +2]);
            copy(acc, R[7 : +2]);
            copy(mins, R[9 : +2]);
        }
    })",
        p);
    CHECK(p.tensors["R"] == std::vector<double>{-1, 0, 2, 4, 3, 5, 6, 109, 112, -5, -6});
}

TEST_CASE("cumsum forwards and in reverse") {
    Problem p;
    p.tensors = {{"X", {1, 2, 3, 4}}, {"Y", std::vector<double>(8, 0)}};
    run(R"(kernel k(X: f32[4], Y: f32[8]) {
        grid(1, threads = 32) as bx {
            let x = alloc_shared([4], f32);
            let f = alloc_shared([4], f32);
            let r = alloc_shared([4], f32);
            copy(X[0], x);
            cumsum(x, f);
            cumsum(x, r, reverse = true);
            copy(f, Y[0 : +4]);
            copy(r, Y[4 : +4]);
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{1, 3, 6, 10, 10, 9, 7, 4});
}

TEST_CASE("atomic_add of tiles and of elements from every block") {
    Problem p;
    p.sizes = {{"N", 4}};
    p.tensors = {{"X", iota(4, 1)}, {"S", {0, 0, 0, 0}}, {"T", {0}}};
    run(R"(kernel k(X: f32[N], S: f32[N], T: f32[1]) {
        grid(3, threads = 32) as bx {
            let x = alloc_fragment([4], f32);
            copy(X[0], x);
            atomic_add(S[0], x);
            for i in parallel(4) { atomic_add(T[0], x[i]); }
        }
    })",
        p);
    CHECK(p.tensors["S"] == std::vector<double>{3, 6, 9, 12});
    CHECK(p.tensors["T"] == std::vector<double>{30});
}

TEST_CASE("integer arithmetic follows the operand dtypes") {
    Problem p;
    p.tensors = {{"B", {0xab}}, {"Y", std::vector<double>(5, 0)}};
    run(R"(kernel k(B: u8[1], Y: i32[5]) {
        grid(1, threads = 32) as bx {
            for i in parallel(1) {
                let byte = B[0];
                Y[i] = i32((byte >> 4) & 15);
                Y[i + 1] = i32(reinterpret(i8, byte));
                Y[i + 2] = floordiv(-7, 2);
                Y[i + 3] = floormod(-7, 2);
                Y[i + 4] = i32(u8(byte << 4));
            }
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{10, -85, -4, 1, 0xb0});
}

TEST_CASE("loops: range with a negative step, while, pipelined from a start") {
    Problem p;
    p.tensors = {{"Y", std::vector<double>(3, 0)}};
    run(R"(kernel k(Y: i32[3]) {
        grid(1, threads = 32) as bx {
            var down = 0;
            for i in range(10, 0, -3) { down = down * 100 + i; }
            var n = 0;
            var count = 0;
            while (n < 20) { n += 7; count += 1; }
            var s = 0;
            for k in pipelined(3, 6, stages = 2) { s += k; }
            for j in parallel(1) {
                Y[j] = down;
                Y[j + 1] = count * 100 + n;
                Y[j + 2] = s;
            }
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{10070401, 321, 12});
}

TEST_CASE("views read the viewed tensor's storage with their own extents") {
    Problem p;
    p.sizes = {{"N", 3}};
    p.tensors = {{"X", iota(6, 1)}, {"Y", std::vector<double>(2, 0)}};
    run(R"(kernel k(X: f32[N, 2], Y: f32[2]) {
        let flat = view(X, [N * 2]);
        grid(1, threads = 32) as bx {
            for i in parallel(2) { Y[i] = flat[i + 4] + flat[i + 5]; }
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{11, 6});  // 5 + 6, then 6 + 0 past the end
}

TEST_CASE("several grids share global scratch, in order") {
    Problem p;
    p.sizes = {{"N", 4}};
    p.tensors = {{"X", iota(4, 1)}, {"Y", std::vector<double>(4, 0)}};
    run(R"(kernel k(X: f32[N], Y: f32[N]) {
        let tmp = alloc_global([N], f32);
        grid(1, threads = 32) as bx {
            for i in parallel(4) { tmp[i] = X[i] * 2.0; }
        }
        grid(1, threads = 32) as bx {
            for i in parallel(4) { Y[i] = tmp[3 - i]; }
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>{8, 6, 4, 2});
}

TEST_CASE("im2col gathers taps, zero in the padding") {
    // One 1 x 3 x 3 x 1 image, kernel 3, pad 1, stride 1: 9 output pixels x 9 taps.
    Problem p;
    p.tensors = {{"img", iota(9, 1)}, {"Y", std::vector<double>(16 * 16, -1)}};
    run(R"(kernel k(img: f32[1, 3, 3, 1], Y: f32[16, 16]) {
        grid(1, threads = 32) as bx {
            let col = alloc_shared([16, 16], f32);
            im2col(img, col, 0, 0, 3, 1, 1, 1);
            copy(col, Y[0, 0]);
        }
    })",
        p);
    const auto& y = p.tensors["Y"];
    // Pixel (1, 1) sees the whole image in order; pixel (0, 0) has padding above and left.
    for (int k = 0; k < 9; ++k) CHECK(y[4 * 16 + k] == k + 1);
    CHECK(std::vector<double>(y.begin(), y.begin() + 9) == std::vector<double>{0, 0, 0, 0, 1, 2, 0, 4, 5});
    CHECK(y[9 * 16] == 0);  // rows past the 9 pixels
    CHECK(y[15] == 0);      // columns past the 9 taps
}

TEST_CASE("im2col of a window wider than the padded image has no output pixels") {
    // W = 2, pad 1, kernel 3, dilation 2: (2 + 2 - 4 - 1) / 1 + 1 is 0 by floor division, as
    // TileLang and tlc's outputs compute it (C's truncation would make it 1).
    Problem p;
    p.tensors = {{"img", {1, 2, 3, 4}}, {"Y", std::vector<double>(16 * 16, -1)}};
    run(R"(kernel k(img: f32[1, 2, 2, 1], Y: f32[16, 16]) {
        grid(1, threads = 32) as bx {
            let col = alloc_shared([16, 16], f32);
            im2col(img, col, 0, 0, 3, 1, 2, 1);
            copy(col, Y[0, 0]);
        }
    })",
        p);
    CHECK(p.tensors["Y"] == std::vector<double>(16 * 16, 0));
}

TEST_CASE("the program's own faults are reported, not computed") {
    Problem p;
    p.tensors = {{"Y", {0, 0}}};
    CHECK_THROWS_AS(run(R"(kernel k(Y: f32[2]) {
        grid(1, threads = 32) as bx {
            let s = alloc_shared([2], f32);
            copy(s, Y[0]);
        }
    })",
                        p),
                    Fault);  // s was never written
    CHECK_THROWS_AS(run(R"(kernel k(Y: f32[2]) {
        grid(1, threads = 32) as bx {
            for i in parallel(2) { Y[i] = log(f32(i) - 1.0); }
        }
    })",
                        p),
                    Fault);  // log(-1)
}
