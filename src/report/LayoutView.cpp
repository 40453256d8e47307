// Layouts as pictures, from layout inference's facts (passes/Passes.h, LayoutFacts: what
// --emit=layouts prints). A fragment is a grid of its elements, each coloured by the warp that
// holds it and labelled with the thread (T) and the register slot (r) it sits in, as TileLang's
// plot_layout draws it; the thread is replica 0 of the element's holders. A shared buffer is a
// grid of its rows' 4-byte words coloured and labelled by the bank the layout puts them in, with
// the bank-conflict wavefronts of each access the cost model knows. Large tiles show their first
// 32 x 32 elements (banks: 16 rows of 32 words): a fragment's pattern repeats, and a page stays small.
#include "report/Html.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::report {

namespace {

constexpr int64_t kMaxRows = 32, kMaxCols = 32;
// Banks: 16 rows show two periods of any swizzle (patterns repeat every 8 rows or fewer), 32
// words one full round of the banks.
constexpr int64_t kBankRows = 16, kMaxWords = 32;

std::string shapeList(const std::vector<int64_t>& shape) {
    std::string s;
    for (int64_t e : shape) s += (s.empty() ? "" : ",") + std::to_string(e);
    return s;
}

// The element at row r, column c of the drawn grid: the last dimension is the columns, the others
// flattened into rows (a vector is one row).
std::vector<int64_t> indexAt(const std::vector<int64_t>& shape, int64_t r, int64_t c) {
    std::vector<int64_t> idx(shape.size(), 0);
    if (shape.empty()) return idx;
    idx.back() = c;
    for (size_t d = shape.size() - 1; d-- > 0;) {
        idx[d] = r % shape[d];
        r /= shape[d];
    }
    return idx;
}

// The whole fragment at a glance: blocks of elements coloured by the warp that holds them
// (grey where a block's elements are held by several warps), at most 32 x 32 blocks.
std::string warpMap(const ir::Buffer& b, const layout::Fragment& f, int64_t warp, int64_t warps) {
    const std::vector<int64_t>& shape = f.shape();
    int64_t cols = shape.empty() ? 1 : shape.back(), rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    const int64_t br = (rows + kMaxRows - 1) / kMaxRows, bc = (cols + kMaxCols - 1) / kMaxCols;
    const int64_t nr = (rows + br - 1) / br, nc = (cols + bc - 1) / bc;
    const int cell = 6, left = 4, top = 4;
    int width = left + int(nc) * cell + 4, height = top + int(nr) * cell + 4;
    std::string svg = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
                                  "aria-label=\"warps of {2}\">\n",
                                  width, height, esc(b->name));
    for (int64_t r = 0; r < nr; ++r)
        for (int64_t c = 0; c < nc; ++c) {
            int64_t w = -1;
            bool mixed = false;
            for (int64_t i = r * br; i < std::min(rows, (r + 1) * br) && !mixed; ++i)
                for (int64_t j = c * bc; j < std::min(cols, (c + 1) * bc); ++j) {
                    int64_t ww = f.holderOf(indexAt(shape, i, j)).first / warp;
                    if (w >= 0 && ww != w) {
                        mixed = true;
                        break;
                    }
                    w = ww;
                }
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", left + int(c) * cell,
                               top + int(r) * cell, cell, cell, mixed ? "#bbb" : warpColour(w, warps));
        }
    svg += "\n</svg>\n";
    return fmt::format("<figure class=\"warpmap\"><div>{}</div><figcaption>all of {}: each square {} x {} element{}, "
                       "coloured by warp</figcaption></figure>\n",
                       svg, esc(b->name), br, bc, br * bc == 1 ? "" : "s");
}

std::string fragmentGrid(const KernelView& k, const ir::Buffer& b, const layout::Fragment& f, const std::string& id) {
    const std::vector<int64_t>& shape = f.shape();
    int64_t cols = shape.empty() ? 1 : shape.back();
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    const int64_t maxCols = shape.size() <= 1 ? 2 * kMaxCols : kMaxCols;
    int64_t showR = std::min(rows, kMaxRows), showC = std::min(cols, maxCols);
    const int64_t warp = std::max(k.input->target->warpSize, 1);
    const int64_t warps = std::max<int64_t>(1, (f.threads() + warp - 1) / warp);
    const int cw = 34, ch = 24, left = 34, top = 20;
    int width = left + int(showC) * cw + 2, height = top + int(showR) * ch + 2;
    std::string svg = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
                                  "{1}\" role=\"img\" aria-label=\"layout of {2}\">\n",
                                  width, height, esc(b->name));
    for (int64_t c = 0; c < showC; ++c)
        svg += fmt::format("<text x=\"{}\" y=\"14\" font-size=\"9\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
                           left + int(c) * cw + cw / 2, c);
    for (int64_t r = 0; r < showR; ++r) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"end\" fill=\"#555\">{}</text>\n", left - 4,
                           top + int(r) * ch + ch / 2 + 3, r);
        for (int64_t c = 0; c < showC; ++c) {
            std::vector<int64_t> idx = indexAt(shape, r, c);
            auto [tx, local] = f.holderOf(idx);
            int x = left + int(c) * cw, y = top + int(r) * ch;
            // Compact: the cell's geometry in its transform, sizes and fonts in the page's style.
            svg += fmt::format("<g class=\"cell\" data-e=\"{}\" data-t=\"{}\" data-l=\"{}\" transform=\"translate({},{})\">"
                               "<rect width=\"{}\" height=\"{}\" fill=\"{}\"/><text x=\"{}\" y=\"10\">T{}</text><text "
                               "class=\"r\" x=\"{}\" y=\"20\">r{}</text></g>\n",
                               shapeList(idx), tx, local, x, y, cw, ch, warpColour(tx / warp, warps), cw / 2, tx, cw / 2,
                               local);
        }
    }
    svg += "</svg>\n";
    std::string legend;
    for (int64_t w = 0; w < std::min<int64_t>(warps, 16); ++w)
        legend += fmt::format("<span style=\"background:{};padding:0 4px;margin-right:2px\">{} {}</span>",
                              warpColour(w, warps), warp == 64 ? "wave" : "warp", w);
    std::string shown = showR < rows || showC < cols
                            ? fmt::format(" Showing rows 0&ndash;{} and columns 0&ndash;{} of {} x {}.", showR - 1,
                                          showC - 1, rows, cols)
                            : "";
    std::string overview = showR < rows || showC < cols ? warpMap(b, f, warp, warps) : "";
    return overview + fmt::format("<figure class=\"fragment\" id=\"{}\" data-buffer=\"{}\" data-shape=\"{}\" data-threads=\"{}\" "
                       "data-locals=\"{}\">\n<div class=\"scroll\">{}</div><figcaption><b>{}</b> {}, {} elements per "
                       "thread{}.{}<br><code>{}</code><br>{}</figcaption></figure>\n",
                       id, esc(b->name), shapeList(shape), f.threads(), f.locals(), svg, esc(b->name),
                       esc(dtypeName(b->dtype)), f.locals(),
                       f.replicas() > 1 ? fmt::format(", {} replicas (T: the first holder)", f.replicas()) : "", shown,
                       esc(f.str()), legend);
}

// Where (row, col) of a [rows, cols] tile is stored under `l` (elements from the tile's start).
int64_t storedOffset(const LowerContext::SharedLayout* l, int64_t rows, int64_t cols, int64_t r, int64_t c) {
    if (!l) return r * cols + c;
    if (l->boxCols > 0) {
        int64_t box = c / l->boxCols;
        return box * rows * l->boxCols + r * l->boxCols + l->swizzle.column(r, c % l->boxCols);
    }
    return r * (cols + l->padElems) + l->swizzle.column(r, c);
}

std::string bankGrid(const KernelView& k, const ir::Buffer& b, const LowerContext::SharedLayout* l) {
    std::vector<int64_t> shape;
    if (!ir::constantShape(b, shape) || shape.empty())
        return fmt::format("<p>{}: symbolic shape, not drawn.</p>\n", esc(b->name));
    const int64_t cols = shape.back();
    const int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    const int64_t elemBytes = dtypeBytes(b->dtype);
    const int64_t banks = std::max(k.input->target->sharedBanks, 1), wordBytes = std::max(k.input->target->sharedBankBytes, 1);
    const int64_t words = std::max<int64_t>(1, cols * elemBytes / wordBytes);
    const int64_t showR = std::min(rows, kBankRows), showW = std::min(words, kMaxWords);
    const int cw = 22, ch = 16, left = 34, top = 18;
    int width = left + int(showW) * cw + 2, height = top + int(showR) * ch + 2;
    std::string svg = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
                                  "{1}\" role=\"img\" aria-label=\"banks of {2}\">\n",
                                  width, height, esc(b->name));
    for (int64_t w = 0; w < showW; w += 4)
        svg += fmt::format("<text x=\"{}\" y=\"12\" font-size=\"8\" fill=\"#555\">w{}</text>\n", left + int(w) * cw, w);
    for (int64_t r = 0; r < showR; ++r) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"end\" fill=\"#555\">{}</text>\n", left - 4,
                           top + int(r) * ch + 12, r);
        for (int64_t w = 0; w < showW; ++w) {
            int64_t c = w * wordBytes / elemBytes;
            int64_t byte = storedOffset(l, rows, cols, r, c) * elemBytes + w * wordBytes % elemBytes;
            int64_t bank = byte / wordBytes % banks;
            int x = left + int(w) * cw, y = top + int(r) * ch;
            svg += fmt::format("<g class=\"bank\" data-bank=\"{}\" transform=\"translate({},{})\"><rect width=\"{}\" "
                               "height=\"{}\" fill=\"{}\"/><text x=\"{}\" y=\"11\">{}</text></g>\n",
                               bank, x, y, cw, ch, bankColour(bank, banks), cw / 2, bank);
        }
    }
    svg += "</svg>\n";
    std::string costs;
    for (const auto& a : k.facts.accessCosts)
        if (a.buffer.get() == b.get())
            costs += fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                                 esc(a.access), a.conflicts, a.rowMajorConflicts);
    costs = costs.empty() ? "<p class=\"muted\">No access of this buffer has a bank model here (gemm operands read by "
                            "ldmatrix or wgmma use the swizzle made for them).</p>\n"
                          : "<table><tr><th>access</th><th>conflict wavefronts (this layout)</th><th>stored row-major"
                            "</th></tr>\n" + costs + "</table>\n";
    std::string shown = showR < rows || showW < words
                            ? fmt::format(" Showing rows 0&ndash;{} and words 0&ndash;{} of {} x {}.", showR - 1,
                                          showW - 1, rows, words)
                            : "";
    return fmt::format("<figure class=\"shared\" data-buffer=\"{}\" data-shape=\"{}\">\n<div class=\"scroll\">{}</div>"
                       "<figcaption><b>{}</b> {} [{}], {}-byte words in {} banks: {}{}{}</figcaption>\n{}</figure>\n",
                       esc(b->name), shapeList(shape), svg, esc(b->name), esc(dtypeName(b->dtype)), shapeList(shape),
                       wordBytes, banks, l ? esc(l->str()) : "row-major",
                       l && !l->reason.empty() ? ", for " + esc(l->reason) : "", shown, costs);
}

} // namespace

std::string layoutSection(const KernelView& k) {
    if (!k.hasFacts)
        return "<p class=\"muted\">Layout inference did not run for this kernel" +
               (k.factsError.empty() ? std::string() : ": " + esc(k.factsError)) + ".</p>\n";
    std::string html;
    html += fmt::format("<h4>Fragments ({} threads)</h4>\n", k.facts.threads);
    if (k.facts.fragments.empty()) html += "<p class=\"muted\">No fragments.</p>\n";
    html += "<div class=\"grids\">\n";
    for (size_t i = 0; i < k.facts.fragments.size(); ++i) {
        const auto& [b, f] = k.facts.fragments[i];
        std::string id = fmt::format("{}-f{}", k.id, i);
        if (k.drawn) {
            auto [it, fresh] = k.drawn->emplace(f.str(), std::make_pair(id, b->name));
            if (!fresh) {
                html += fmt::format("<figure class=\"fragment-same\" id=\"{}\" data-buffer=\"{}\" data-ref=\"{}\"><figcaption>"
                                    "<b>{}</b> {}: the same layout as <a href=\"#{}\">{}</a><br><code>{}</code>"
                                    "</figcaption></figure>\n",
                                    id, esc(b->name), it->second.first, esc(b->name), esc(dtypeName(b->dtype)),
                                    it->second.first, esc(it->second.second), esc(f.str()));
                continue;
            }
        }
        html += fragmentGrid(k, b, f, id);
    }
    html += "</div>\n";
    html += "<h4>Shared memory banks</h4>\n";
    if (k.facts.allShared.empty()) html += "<p class=\"muted\">No shared buffers.</p>\n";
    html += "<div class=\"grids\">\n";
    for (const auto& b : k.facts.allShared) {
        const LowerContext::SharedLayout* l = nullptr;
        for (const auto& [sb, sl] : k.facts.shared)
            if (sb.get() == b.get()) l = &sl;
        html += bankGrid(k, b, l);
    }
    html += "</div>\n";
    if (!k.facts.gemmPlans.empty() || !k.facts.copies.empty()) {
        html += "<h4>How gemms and pipelined copies run</h4>\n<ul>\n";
        for (const auto& p : k.facts.gemmPlans) html += "<li><code>" + esc(p) + "</code></li>\n";
        for (const auto& d : k.facts.copies)
            html += fmt::format("<li><code>{}</code>: {}{}</li>\n", esc(d.copy), d.form == "tma" ? "TMA load" : "cp.async",
                                d.reason.empty() ? "" : ", not TMA: " + esc(d.reason));
        html += "</ul>\n";
    }
    return html;
}

} // namespace tlc::report
