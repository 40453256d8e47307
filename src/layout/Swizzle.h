// Swizzled shared-memory layouts. A tile stored row-major in shared memory is read by ldmatrix
// eight rows at a time, the same 16-byte chunk of each row: when rows are a multiple of 128
// bytes apart those eight chunks fall in the same banks and the read is serialised eight
// times. An XOR swizzle permutes the 16-byte chunks of each row by a function of the row, so
// that any eight consecutive rows put a given chunk in eight different bank groups, while
// every 16-byte chunk stays whole (vector moves and cp.async keep working unchanged).
//
//   chunk' = chunk ^ ((row / rowsPerPattern) % span)
//
// `span` chunks form one pattern (32, 64 or 128 bytes); rows shorter than 128 bytes share a
// pattern value between 128 / rowBytes consecutive rows. Because only chunk bits change, the
// column permutation stays inside its row, and XOR with a fixed value is its own inverse.
#pragma once

#include "ir/Expr.h"

#include <string>

namespace tlc::layout {

class Swizzle {
public:
    Swizzle() = default;  // the identity
    // chunkElems elements make 16 bytes; span and rowsPerPattern are powers of two.
    Swizzle(int64_t chunkElems, int64_t span, int64_t rowsPerPattern);

    bool isIdentity() const { return span_ <= 1; }
    int64_t chunkElems() const { return chunkElems_; }
    int64_t span() const { return span_; }
    int64_t rowsPerPattern() const { return rowsPerPattern_; }
    int64_t patternBytes() const { return span_ * 16; }
    // Where a buffer stored with this swizzle must start: eight rows of one pattern (1024 bytes
    // for 128-byte patterns). The rows are what this swizzle XORs by, but TMA and wgmma
    // descriptors XOR by address bits, which agree only from such a boundary; 16 for the identity.
    int64_t baseAlignment() const { return isIdentity() ? 16 : 8 * patternBytes(); }

    // The stored column of the element at (row, col).
    int64_t column(int64_t row, int64_t col) const;
    ir::Expr column(const ir::Expr& row, const ir::Expr& col) const;
    // The logical column stored at (row, storedCol): the inverse permutation.
    int64_t inverseColumn(int64_t row, int64_t storedCol) const;

    std::string str() const;  // "128-byte xor swizzle (chunk ^= row % 8)" or "row-major"
    friend bool operator==(const Swizzle&, const Swizzle&) = default;

private:
    int64_t chunkElems_ = 1, span_ = 1, rowsPerPattern_ = 1;
};

// The swizzle that makes eight consecutive rows' chunks land in different banks for a
// [rows, cols] tile of `elemBytes`-byte elements; the identity when rows are not made of
// whole 16-byte chunks or hold just one.
Swizzle bankConflictFreeSwizzle(int64_t cols, int64_t elemBytes);

} // namespace tlc::layout
