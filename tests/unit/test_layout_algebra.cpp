// The layout algebra (layout/Layout.h): composition of swizzles with row-major layouts and of
// fragments with layouts, and the inverses; the bank-conflict cost (layout/BankConflicts.h).
#include "layout/BankConflicts.h"
#include "layout/Layout.h"
#include "ops/gemm/GemmPlan.h"

#include <doctest/doctest.h>

#include <map>
#include <vector>

using namespace tlc;
using layout::Fragment;
using layout::Layout;
using layout::Swizzle;

namespace {

// Layouts of a [rows, cols] tile of elemBytes-byte elements: row-major, padded, each swizzle
// that fits.
std::vector<Layout> layoutsOf(int64_t rows, int64_t cols, int64_t elemBytes) {
    std::vector<Layout> out{Layout::rowMajor({rows, cols}), Layout::rowMajor({rows, cols}, 16 / elemBytes)};
    for (int64_t span : {2, 4, 8})
        if ((cols * elemBytes / 16) % span == 0)
            out.push_back(Layout::rowMajor({rows, cols}).compose(Swizzle(16 / elemBytes, span, 8 / span)));
    return out;
}

std::vector<Fragment> fragmentsOf(int64_t rows, int64_t cols) {
    return {layout::defaultFragment({rows, cols}, 128), layout::defaultFragment({rows, cols}, 32, 2),
            ops::mmaAccumulator(rows, cols, 128, 2, 2), ops::mmaAccumulator(rows, cols, 128, 4, 1)};
}

// Every fragment of a [64, 64] f16 tile composed with every layout of it.
template <typename Fn> void forEachComposition(Fn fn) {
    for (const Layout& l : layoutsOf(64, 64, 2))
        for (const Fragment& f : fragmentsOf(64, 64)) {
            CAPTURE(l.str());
            CAPTURE(f.str());
            fn(f, l, layout::compose(f, l));
        }
}

} // namespace

TEST_CASE("layout: composition with the identity changes nothing") {
    Layout plain = Layout::rowMajor({16, 64});
    Layout composed = plain.compose(Swizzle());
    CHECK(composed.isIdentity());
    for (int64_t i = 0; i < 16; ++i)
        for (int64_t j = 0; j < 64; ++j) CHECK(composed.offset({i, j}) == i * 64 + j);
    // A fragment composed with the row-major layout: the flat index of the element it holds.
    Fragment f = ops::mmaAccumulator(64, 64, 128, 2, 2);
    layout::ThreadLayout c = layout::compose(f, Layout::rowMajor({64, 64}).compose(Swizzle()).compose(Swizzle()));
    for (int64_t t = 0; t < f.threads(); ++t)
        for (int64_t l = 0; l < f.locals(); ++l) {
            std::vector<int64_t> e = f.elementAt(t, l);
            CHECK(c.offset(t, l) == e[0] * 64 + e[1]);
        }
}

TEST_CASE("layout: a swizzle composed with a row-major layout permutes each row") {
    for (const Layout& l : layoutsOf(32, 64, 2)) {
        CAPTURE(l.str());
        std::vector<int> hits(size_t(l.span()), 0);
        for (int64_t i = 0; i < 32; ++i)
            for (int64_t j = 0; j < 64; ++j) {
                int64_t off = l.offset({i, j});
                CHECK(off / l.storedShape()[1] == i);  // stays in its row
                ++hits[size_t(off)];
                // 16-byte chunks stay whole: 8 halves move together.
                CHECK(l.offset({i, j}) - l.offset({i, j / 8 * 8}) == j % 8);
            }
        for (int64_t off = 0; off < l.span(); ++off) {
            bool padding = off % l.storedShape()[1] >= 64;
            CHECK(hits[size_t(off)] == (padding ? 0 : 1));
            CHECK(l.index(off).has_value() == !padding);
        }
    }
    CHECK_THROWS(Layout::rowMajor({8, 64}).compose(Swizzle(8, 8, 1)).compose(Swizzle(8, 2, 4)));
}

TEST_CASE("layout: the inverse of a composition is the composition of the inverses") {
    forEachComposition([](const Fragment& f, const Layout& l, const layout::ThreadLayout& c) {
        for (int64_t off = 0; off < l.span(); ++off) {
            auto index = l.index(off);
            auto holder = c.holder(off);
            REQUIRE(index.has_value() == holder.has_value());
            if (!index) continue;
            CHECK(*holder == f.holderOf(*index));
            CHECK(l.offset(*index) == off);
            CHECK(c.offset(holder->first, holder->second) == off);
        }
    });
}

TEST_CASE("layout: a fragment composed with a bijective layout covers every element once per replica") {
    forEachComposition([](const Fragment& f, const Layout& l, const layout::ThreadLayout& c) {
        std::map<int64_t, int64_t> hits;
        for (int64_t t = 0; t < f.threads(); ++t)
            for (int64_t s = 0; s < f.locals(); ++s) ++hits[c.offset(t, s)];
        CHECK(int64_t(hits.size()) == 64 * 64);
        for (const auto& [off, n] : hits) {
            CHECK(n == f.replicas());
            CHECK(l.index(off).has_value());  // never padding
        }
    });
}

TEST_CASE("bank conflicts: mma accumulator stores conflict eight ways row-major, not swizzled") {
    Fragment f = ops::mmaAccumulator(128, 128, 128, 2, 2);
    layout::SharedAccess store = layout::fragmentAccess(f, 32, 2, "copy(C_f, C_s)");
    // Each 4-byte store of a warp: 8 rows x 16 bytes; rows 256 bytes apart share their banks.
    int64_t steps = f.locals() / 2, warps = 4;
    CHECK(layout::conflictWavefronts(store, Layout::rowMajor({128, 128}), 2) == 7 * steps * warps);
    Layout swizzled = Layout::rowMajor({128, 128}).compose(Swizzle(8, 8, 1));
    CHECK(layout::conflictWavefronts(store, swizzled, 2) == 0);
    CHECK(layout::conflictWavefronts(store, Layout::rowMajor({128, 128}, 8), 2) == 0);  // padding works too ...
    layout::LayoutChoice choice = layout::cheapestLayout({128, 128}, 2, {store});
    CHECK(choice.layout.swizzle() == Swizzle(8, 8, 1));  // ... but costs bytes
    CHECK(choice.layout.pad() == 0);
    CHECK(choice.reason.find("copy(C_f, C_s)") != std::string::npos);
}

TEST_CASE("bank conflicts: row-wise 16-byte vectors are conflict-free, and a tie stays row-major") {
    // 128 threads move a [64, 64] f16 tile in 16-byte vectors, row after row.
    layout::SharedAccess copy;
    copy.what = "copy(A[..], A_s)";
    copy.lanes = 32;
    copy.warps = 4;
    copy.vec = 8;
    copy.steps = 64 * 64 / 8 / 128;
    copy.element = [](int64_t lane, int64_t step) {
        int64_t e = (step * 128 + lane) * 8;
        return std::vector<int64_t>{e / 64, e % 64};
    };
    CHECK(layout::conflictWavefronts(copy, Layout::rowMajor({64, 64}), 2) == 0);
    layout::LayoutChoice choice = layout::cheapestLayout({64, 64}, 2, {copy});
    CHECK(choice.layout.isIdentity());
    // Reading one column per lane (each lane a row): 32 rows of 128 bytes all hit one bank group.
    layout::SharedAccess column = copy;
    column.vec = 1;
    column.steps = 1;
    column.warps = 1;
    column.element = [](int64_t lane, int64_t) { return std::vector<int64_t>{lane, 0}; };
    CHECK(layout::conflictWavefronts(column, Layout::rowMajor({64, 64}), 2) == 31);
    CHECK(layout::conflictWavefronts(column, Layout::rowMajor({64, 64}, 8), 2) < 31);
}

TEST_CASE("bank conflicts: MFMA's A reads conflict row-major and not under the 64-byte swizzle") {
    // One wave reads an f16 [64, 32] A tile for v_mfma_f32_16x16x16f16: lane l takes 4 elements
    // (8 bytes) of row l % 16 at column 4 (l / 16); a phase (128 bytes) is 16 lanes, 16 rows of
    // 64 bytes, so rows r and r + 2 share banks: 8 words per bank, 7 extra wavefronts a phase.
    layout::SharedAccess read;
    read.what = "gemm(A_s, B_s, C_f) (A)";
    read.lanes = 64;
    read.vec = 4;
    read.element = [](int64_t lane, int64_t) { return std::vector<int64_t>{lane % 16, 4 * (lane / 16)}; };
    CHECK(layout::conflictWavefronts(read, Layout::rowMajor({64, 32}), 2) == 4 * 7);
    Layout swizzled = Layout::rowMajor({64, 32}).compose(Swizzle(8, 4, 2));  // 64-byte pattern
    CHECK(layout::conflictWavefronts(read, swizzled, 2) < 4 * 7);
    CHECK(layout::cheapestLayout({64, 32}, 2, {read}).layout.swizzle() == Swizzle(8, 4, 2));
    // The same reads on a made-up LDS of 64 banks: a phase is 256 bytes, 32 lanes.
    layout::BankModel wide{64, 4};
    CHECK(layout::conflictWavefronts(read, Layout::rowMajor({64, 32}), 2, wide) !=
          layout::conflictWavefronts(read, Layout::rowMajor({64, 32}), 2));
}
