// tl::store_row and tl::copy_streaming (tl_cpu.h, section streaming_stores): every length from 0
// to 300 bytes at every destination offset within a cache line, through the streaming path
// (forced by a result size past the threshold) and the plain one; the bytes around the row
// must stay as they were. tl::store_line (one 64-byte line, streaming or not, at every offset)
// and tl::line_head (where a row's whole lines begin, for each element size). Built once per
// vector form (SSE2, AVX2, AVX-512). Exit 1 on a difference, 77 when the CPU lacks the form.
#include "tl_cpu.h"

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
#if defined(__AVX512F__)
    if (!__builtin_cpu_supports("avx512f")) return 77;
#elif defined(__AVX2__)
    if (!__builtin_cpu_supports("avx2")) return 77;
#endif
    int failures = 0;
    std::vector<std::uint8_t> src(512), dst(512 + 128);
    for (size_t i = 0; i < src.size(); ++i) src[i] = std::uint8_t(i * 37 + 11);
    const long long sizes[] = {0, tl::streaming_threshold()};  // plain, streaming
    for (long long resultBytes : sizes) {
        for (int offset = 0; offset < 64; ++offset) {
            for (int count = 0; count <= 300; ++count) {
                for (auto& b : dst) b = 0xA5;
                // dst.data() + 64 is not necessarily 64-byte aligned: the offsets cover every phase.
                std::uint8_t* row = dst.data() + 64 + offset;
                tl::store_row(row, src.data() + 3, count, resultBytes);
                for (size_t i = 0; i < dst.size(); ++i) {
                    const std::uint8_t* p = dst.data() + i;
                    bool inRow = p >= row && p < row + count;
                    std::uint8_t want = inRow ? src[3 + (p - row)] : 0xA5;
                    if (dst[i] != want && ++failures <= 10)
                        std::printf("FAIL result %lld bytes, offset %d, count %d: byte %zu is 0x%02x, expected 0x%02x\n",
                                    resultBytes, offset, count, i, dst[i], want);
                }
            }
        }
    }
    // Elements wider than a byte: count is in elements.
    std::vector<float> in(100), out(100, -1.0f);
    for (int i = 0; i < 100; ++i) in[i] = float(i) * 0.5f;
    tl::store_row(out.data() + 1, in.data(), 97, 1LL << 40);
    for (int i = 0; i < 100; ++i) {
        float want = i >= 1 && i < 98 ? in[i - 1] : -1.0f;
        if (out[i] != want && ++failures <= 10) std::printf("FAIL float row: out[%d] = %g, expected %g\n", i, out[i], want);
    }
    // store_line: 64 bytes from src, at every offset (non-temporal only where dst starts a line).
    for (bool stream : {false, true}) {
        for (int offset = 0; offset < 64; ++offset) {
            for (auto& b : dst) b = 0xA5;
            std::uint8_t* line = dst.data() + 64 + offset;
            tl::store_line(line, src.data() + 5, stream);
            tl::store_fence(stream);
            for (size_t i = 0; i < dst.size(); ++i) {
                const std::uint8_t* p = dst.data() + i;
                bool inLine = p >= line && p < line + 64;
                std::uint8_t want = inLine ? src[5 + (p - line)] : 0xA5;
                if (dst[i] != want && ++failures <= 10)
                    std::printf("FAIL store_line stream %d, offset %d: byte %zu is 0x%02x, expected 0x%02x\n", stream,
                                offset, i, dst[i], want);
            }
        }
    }
    // line_head: elements before the first 64-byte boundary, 0 where p is not element-aligned.
    alignas(64) static float row[64];
    for (int k = 0; k < 16; ++k) {
        int want = k == 0 ? 0 : 16 - k;
        if (tl::line_head(row + k, 32) != want && ++failures <= 10)
            std::printf("FAIL line_head(row + %d, 32) = %d, expected %d\n", k, tl::line_head(row + k, 32), want);
    }
    const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(row) + 2);
    if (tl::line_head(odd, 32) != 0 && ++failures <= 10) std::printf("FAIL line_head of a misaligned float\n");
    alignas(64) static std::uint16_t halves[64];
    if (tl::line_head(halves + 3, 64) != 29 && ++failures <= 10)
        std::printf("FAIL line_head(halves + 3, 64) = %d, expected 29\n", tl::line_head(halves + 3, 64));
    if (tl::streams(0) || !tl::streams(tl::streaming_threshold())) {
        std::printf("FAIL tl::streams does not follow streaming_threshold()\n");
        ++failures;
    }
    if (tl::streaming_threshold() < (4LL << 20) || tl::streaming_threshold() > (32LL << 20)) {
        std::printf("FAIL streaming_threshold() = %lld, outside 4..32 MiB\n", tl::streaming_threshold());
        ++failures;
    }
    std::printf("%s (%d failures)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
