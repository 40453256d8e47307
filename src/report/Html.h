// What every section of the kernel report shares: HTML escaping, the colour of a warp, the
// page's style and script (written here, inline: the page loads nothing), and the per-kernel
// context the sections draw from.
#pragma once

#include "passes/Passes.h"
#include "report/Report.h"

#include <map>
#include <string>
#include <string_view>

namespace tlc::report {

std::string esc(std::string_view text);  // &, <, >, " and ' as entities

// The fill of warp (or wave) `w` of `count`: hues spread around the wheel, light enough for
// black labels. Deterministic, so that pages diff.
std::string warpColour(int64_t w, int64_t count);
// A colour per bank (0..banks-1) and per op kind ("copy", "gemm", ...).
std::string bankColour(int64_t bank, int64_t banks);
std::string kindColour(const std::string& kind);

std::string fmtBytes(int64_t bytes);  // "48 KiB (49152 B)"
std::string clip(const std::string& s, size_t n);  // at most n characters, "..." where cut

// A collapsible section: <details> with an id; open or closed at first.
std::string section(const std::string& id, const std::string& title, const std::string& body, bool open = true);

std::string pageStyle();
std::string pageScript();

// One kernel as the sections see it.
struct KernelView {
    const ir::Kernel* kernel = nullptr;  // lowered
    std::string id;                      // unique in the page: "k0"
    const ReportInput* input = nullptr;
    const DecisionLog* decisions = nullptr;
    const Recommendation* ranking = nullptr;
    const PtxasKernel* ptxas = nullptr;
    bool hasFacts = false;
    LayoutFacts facts;  // layout inference on the Tile IR (tileLevel)
    std::string factsError;
    // Fragment layouts drawn so far on the page (Fragment::str(), which says all of a placement)
    // -> the figure's id and buffer: a layout seen before links there instead of being drawn
    // again (an attention kernel's row vectors, a general variant's fragments).
    std::map<std::string, std::pair<std::string, std::string>>* drawn = nullptr;
};

// The sections (one file each).
std::string sourceSection(const KernelView& k);
std::string launchSection(const KernelView& k);
std::string dataflowSection(const KernelView& k);
std::string layoutSection(const KernelView& k);
std::string pipelineSection(const KernelView& k);
std::string resourceSection(const KernelView& k);
std::string choiceSection(const KernelView& k);

} // namespace tlc::report
