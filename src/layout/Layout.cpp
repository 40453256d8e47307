#include "layout/Layout.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tlc::layout {

using namespace tlc::ir;

Layout Layout::rowMajor(std::vector<int64_t> shape, int64_t pad) {
    if (shape.empty() || pad < 0) throw std::logic_error("layout: a row-major layout needs a shape");
    Layout l;
    l.shape_ = std::move(shape);
    l.pad_ = pad;
    return l;
}

Layout Layout::compose(const Swizzle& swizzle) const {
    if (swizzle.isIdentity()) return *this;
    if (!swizzle_.isIdentity()) throw std::logic_error("layout: two swizzles do not compose");
    if (shape_.size() < 2) throw std::logic_error("layout: a swizzle needs rows");
    Layout l = *this;
    l.swizzle_ = swizzle;
    return l;
}

std::vector<int64_t> Layout::storedShape() const {
    std::vector<int64_t> s = shape_;
    s.back() += pad_;
    return s;
}

int64_t Layout::span() const {
    int64_t n = 1;
    for (int64_t e : storedShape()) n *= e;
    return n;
}

int64_t Layout::offset(const std::vector<int64_t>& index) const {
    std::vector<int64_t> stored = storedShape();
    size_t last = shape_.size() - 1;
    int64_t off = 0;
    for (size_t d = 0; d < last; ++d) off = off * stored[d] + index[d];
    int64_t col = last > 0 ? swizzle_.column(index[last - 1], index[last]) : index[last];
    return off * stored[last] + col;
}

std::vector<Expr> Layout::storedIndices(const std::vector<Expr>& index) const {
    std::vector<Expr> out = index;
    if (!swizzle_.isIdentity()) out.back() = swizzle_.column(index[index.size() - 2], index.back());
    return out;
}

std::optional<std::vector<int64_t>> Layout::index(int64_t offset) const {
    if (offset < 0 || offset >= span()) return std::nullopt;
    std::vector<int64_t> stored = storedShape(), out(shape_.size());
    for (size_t d = shape_.size(); d-- > 0;) {
        out[d] = offset % stored[d];
        offset /= stored[d];
    }
    // The swizzle is undone before padding is recognised: it permutes stored columns < row length.
    size_t last = shape_.size() - 1;
    if (out[last] >= shape_[last]) return std::nullopt;
    if (last > 0) out[last] = swizzle_.inverseColumn(out[last - 1], out[last]);
    return out;
}

std::string Layout::str() const {
    if (!swizzle_.isIdentity()) return swizzle_.str() + (pad_ ? fmt::format(", rows padded by {}", pad_) : "");
    return pad_ ? fmt::format("rows padded by {}", pad_) : "row-major";
}

ThreadLayout::ThreadLayout(Fragment fragment, Layout layout) : fragment_(std::move(fragment)), layout_(std::move(layout)) {
    if (fragment_.shape() != layout_.shape()) throw std::logic_error("layout: a fragment composes with a layout of its shape");
}

int64_t ThreadLayout::offset(int64_t thread, int64_t slot) const { return layout_.offset(fragment_.elementAt(thread, slot)); }

std::optional<std::pair<int64_t, int64_t>> ThreadLayout::holder(int64_t offset) const {
    auto index = layout_.index(offset);
    if (!index) return std::nullopt;
    return fragment_.holderOf(*index);
}

ThreadLayout compose(const Fragment& fragment, const Layout& layout) { return ThreadLayout(fragment, layout); }

} // namespace tlc::layout
