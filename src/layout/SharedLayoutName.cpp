#include "layout/SharedLayoutName.h"

#include <fmt/format.h>

namespace tlc::layout {

namespace {
struct Entry {
    std::string_view name;
    SharedLayoutName layout;
    int64_t patternBytes;  // swizzles only
};
constexpr Entry kLayouts[] = {
    {"row_major", SharedLayoutName::RowMajor, 0},    {"col_major", SharedLayoutName::ColMajor, 0},
    {"padded", SharedLayoutName::Padded, 0},         {"swizzle_32B", SharedLayoutName::Swizzle32, 32},
    {"swizzle_64B", SharedLayoutName::Swizzle64, 64}, {"swizzle_128B", SharedLayoutName::Swizzle128, 128},
};
const Entry& entry(SharedLayoutName layout) {
    for (const auto& e : kLayouts)
        if (e.layout == layout) return e;
    return kLayouts[0];
}
} // namespace

std::optional<SharedLayoutName> parseSharedLayout(std::string_view name) {
    for (const auto& e : kLayouts)
        if (e.name == name) return e.layout;
    return std::nullopt;
}

std::string_view spelling(SharedLayoutName layout) { return entry(layout).name; }

std::optional<std::string> sharedLayoutMisfit(SharedLayoutName layout, int64_t cols, int64_t elemBytes) {
    int64_t pattern = entry(layout).patternBytes;
    if (layout == SharedLayoutName::ColMajor)
        return std::string("column-major shared buffers are not supported (vector copies move rows); store the "
                           "transpose and use gemm's transpose_A / transpose_B");
    if (layout == SharedLayoutName::Padded && (cols * elemBytes) % 16 != 0)
        return fmt::format("'padded' adds a 16-byte chunk to rows of whole chunks; rows here are {} bytes", cols * elemBytes);
    if (pattern && (cols * elemBytes) % pattern != 0)
        return fmt::format("'{}' permutes the 16-byte chunks of rows of a multiple of {} bytes; rows here are {} bytes",
                           entry(layout).name, pattern, cols * elemBytes);
    return std::nullopt;
}

layout::Swizzle swizzleOf(SharedLayoutName layout, int64_t elemBytes) {
    int64_t span = entry(layout).patternBytes / 16;
    if (span <= 1 || elemBytes <= 0 || 16 % elemBytes != 0) return {};
    return layout::Swizzle(16 / elemBytes, span, 8 / span);
}

} // namespace tlc::layout
