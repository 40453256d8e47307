// Memory layouts and their algebra. A `Layout` maps a tile's logical index to the element
// offset where it is stored: row-major with rows `pitch` elements apart (longer than the row
// when padded), composed with a swizzle of the column inside its row. Every layout here is
// injective; `index` is its inverse on the offsets it uses.
//
// A fragment composed with a layout (`compose`) is a `ThreadLayout`: (thread, slot) -> the
// offset of the element that thread holds in that slot; its inverse is the fragment's inverse
// (which thread, replica 0, and slot hold an element) after the layout's. Bank-conflict costs
// and the epilogue's coalescing rule evaluate these maps.
#pragma once

#include "ir/Expr.h"
#include "layout/Fragment.h"
#include "layout/Swizzle.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::layout {

class Layout {
public:
    // Row-major over `shape` (rank >= 1), rows of the last dimension `pad` elements longer.
    static Layout rowMajor(std::vector<int64_t> shape, int64_t pad = 0);

    // This layout with the swizzle composed after it: the stored column of (..., row, col) is
    // swizzle.column(row, col). Composing with the identity swizzle changes nothing; two
    // swizzles do not compose (throws).
    Layout compose(const Swizzle& swizzle) const;

    const std::vector<int64_t>& shape() const { return shape_; }
    int64_t pad() const { return pad_; }
    const Swizzle& swizzle() const { return swizzle_; }
    // The shape the buffer is declared with (rows padded) and the elements it spans.
    std::vector<int64_t> storedShape() const;
    int64_t span() const;

    int64_t offset(const std::vector<int64_t>& index) const;
    // The stored indices (padded shape) of a logical index, as IR: only the column changes.
    std::vector<ir::Expr> storedIndices(const std::vector<ir::Expr>& index) const;
    // The inverse: the logical index stored at `offset`, nothing for padding.
    std::optional<std::vector<int64_t>> index(int64_t offset) const;

    bool isIdentity() const { return pad_ == 0 && swizzle_.isIdentity(); }
    std::string str() const;  // "row-major", "rows padded by 8", "128-byte xor swizzle (...)"

private:
    std::vector<int64_t> shape_;
    int64_t pad_ = 0;
    Swizzle swizzle_;
};

// Where a fragment's elements are stored: (thread, slot) -> offset under a layout.
class ThreadLayout {
public:
    ThreadLayout(Fragment fragment, Layout layout);

    const Fragment& fragment() const { return fragment_; }
    const Layout& layout() const { return layout_; }
    int64_t offset(int64_t thread, int64_t slot) const;
    // The inverse on replica 0: the thread and slot whose element is stored at `offset`.
    std::optional<std::pair<int64_t, int64_t>> holder(int64_t offset) const;

private:
    Fragment fragment_;
    Layout layout_;
};

ThreadLayout compose(const Fragment& fragment, const Layout& layout);

} // namespace tlc::layout
