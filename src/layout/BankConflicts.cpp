#include "layout/BankConflicts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace tlc::layout {

int64_t conflictWavefronts(const SharedAccess& a, const Layout& layout, int64_t elemBytes, const BankModel& banks) {
    const int64_t bankCount = banks.banks, wordBytes = banks.wordBytes;
    int64_t laneBytes = a.vec * elemBytes;
    int64_t phaseLanes = std::max<int64_t>(1, banks.phaseBytes() / std::max(laneBytes, wordBytes));
    int64_t extra = 0;
    for (int64_t step = 0; step < a.steps; ++step) {
        for (int64_t first = 0; first < a.lanes; first += phaseLanes) {
            std::map<int64_t, std::set<int64_t>> words;  // bank -> distinct words
            for (int64_t lane = first; lane < std::min(a.lanes, first + phaseLanes); ++lane) {
                std::vector<int64_t> index = a.element(lane, step);
                if (index.empty()) continue;
                int64_t start = layout.offset(index) * elemBytes;
                for (int64_t b = start / wordBytes; b * wordBytes < start + laneBytes; ++b) words[b % bankCount].insert(b);
            }
            int64_t wavefronts = 1;
            for (const auto& [bank, w] : words) wavefronts = std::max<int64_t>(wavefronts, int64_t(w.size()));
            extra += wavefronts - 1;
        }
    }
    return extra * a.warps;
}

LayoutChoice cheapestLayout(const std::vector<int64_t>& shape, int64_t elemBytes, const std::vector<SharedAccess>& accesses,
                            const BankModel& banks) {
    std::vector<Layout> candidates{Layout::rowMajor(shape)};
    int64_t rowBytes = shape.back() * elemBytes;
    bool chunks = shape.size() >= 2 && 16 % elemBytes == 0 && rowBytes % 16 == 0;
    if (chunks) {
        for (int64_t pattern : {32, 64, 128})
            if (rowBytes % pattern == 0)
                candidates.push_back(Layout::rowMajor(shape).compose(Swizzle(16 / elemBytes, pattern / 16, 128 / pattern)));
        candidates.push_back(Layout::rowMajor(shape, 16 / elemBytes));
    }
    LayoutChoice best{candidates[0], -1, ""};
    std::string costs;
    for (const Layout& l : candidates) {
        int64_t conflicts = 0;
        for (const auto& a : accesses) conflicts += conflictWavefronts(a, l, elemBytes, banks);
        int64_t padding = (l.span() - Layout::rowMajor(shape).span()) * elemBytes;
        int64_t cost = conflicts * banks.phaseBytes() + padding;
        // Named as annotate_layout spells them.
        std::string name = l.pad() ? "padded" : l.swizzle().isIdentity() ? "row_major"
                                                                        : fmt::format("swizzle_{}B", l.swizzle().patternBytes());
        costs += fmt::format("{}{} {}", costs.empty() ? "" : ", ", name, cost);
        if (best.cost < 0 || cost < best.cost) best = {l, cost, ""};
    }
    std::vector<std::string> what;
    for (const auto& a : accesses) what.push_back(a.what);
    best.reason = fmt::format("the least bank-conflict cost of {} ({})", fmt::join(what, ", "), costs);
    return best;
}

SharedAccess fragmentAccess(const Fragment& f, int64_t warpSize, int64_t vec, std::string what) {
    SharedAccess a;
    a.what = std::move(what);
    a.lanes = std::min(warpSize, f.threads());
    a.warps = std::max<int64_t>(1, f.threads() / a.lanes);
    a.vec = vec;
    a.steps = f.locals() / vec;
    a.element = [f, vec](int64_t lane, int64_t step) {
        std::vector<int64_t> index = f.elementAt(lane, step * vec);
        if (f.holderOf(index).first != lane) return std::vector<int64_t>{};  // a replica: another lane writes it
        return index;
    };
    return a;
}

} // namespace tlc::layout
