// The page: a header (file, target, the kernels), then a section per lowered kernel with the
// sections of the files beside this one, each collapsible. Style and script are inline and
// written here; nothing is loaded from anywhere, so the page opens from a file.
#include "report/Html.h"

#include "compile/Compile.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

namespace tlc::report {

namespace {

const PtxasKernel* ptxasFor(const PtxasResult& r, const std::string& kernel) {
    // The __global__ function is NAME_kernel (mangled: its length, then the name).
    std::string fn = kernel + "_kernel";
    std::string mangled = std::to_string(fn.size()) + fn;
    for (const auto& [name, k] : r.kernels)
        if (name == fn || name.find(mangled) != std::string::npos) return &k;
    return nullptr;
}

const Recommendation* rankingFor(const ReportInput& in, const ir::Kernel& k) {
    for (std::string name : {k.name, k.group}) {
        if (name.empty()) continue;
        if (auto it = in.rankings.find(name); it != in.rankings.end()) return &it->second;
        const std::string suffix = "_general";
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            if (auto it = in.rankings.find(name.substr(0, name.size() - suffix.size())); it != in.rankings.end())
                return &it->second;
    }
    return nullptr;
}

std::string kernelSection(KernelView& k) {
    const ir::Kernel& kernel = *k.kernel;
    const bool open = !kernel.generalShapes;
    std::string title = kernel.name;
    std::string note;
    if (kernel.generalShapes)
        note = " <span class=\"muted\">(the general variant: what the launcher runs when the fast path's checks fail; "
               "sections closed)</span>";
    if (!kernel.group.empty()) note += fmt::format(" <span class=\"muted\">(grid {} of {} of {})</span>", kernel.part + 1,
                                                   kernel.parts, esc(kernel.group));
    std::string values;
    for (const auto& [n, v] : kernel.templateValues) values += (values.empty() ? "" : ", ") + n + " = " + v;
    std::string html = fmt::format("<section class=\"kernel\" id=\"{}\" data-kernel=\"{}\">\n<h2>{}{}</h2>\n", k.id,
                                   esc(kernel.name), esc(title), note);
    html += fmt::format("<p>line {} of {}; {} threads; {} of shared memory{}</p>\n", kernel.loc.line,
                        esc(k.input->source->name()), kernel.threads, fmtBytes(kernel.sharedBytes),
                        values.empty() ? "" : "; " + esc(values));
    html += section(k.id + "-source", "Source and emitted code", sourceSection(k), open);
    html += section(k.id + "-launch", "Launch", launchSection(k), open);
    html += section(k.id + "-dataflow", "Tile dataflow", dataflowSection(k), open);
    html += section(k.id + "-layouts", "Layouts: fragments and shared-memory banks", layoutSection(k), open);
    html += section(k.id + "-pipeline", "Pipeline", pipelineSection(k), open);
    html += section(k.id + "-resources", "Resources", resourceSection(k), open);
    html += section(k.id + "-choices", "Choices and their reasons", choiceSection(k), open);
    html += "</section>\n";
    return html;
}

} // namespace

std::string renderReport(const ReportInput& in) {
    const Target& target = *in.target;
    std::vector<KernelView> views;
    std::map<std::string, std::pair<std::string, std::string>> drawn;
    for (size_t i = 0; i < in.kernels->size(); ++i) {
        const ir::Kernel& kernel = (*in.kernels)[i];
        KernelView v;
        v.kernel = &kernel;
        v.id = fmt::format("k{}", i);
        v.input = &in;
        v.drawn = &drawn;
        v.decisions = &kernel.decisions;
        v.ranking = rankingFor(in, kernel);
        if (in.ptxas) v.ptxas = ptxasFor(*in.ptxas, kernel.name);
        if (kernel.tileLevel) {
            // Layout inference again on a copy of the Tile IR, as --emit=layouts runs it; what it
            // reports went to the compile already.
            DiagnosticEngine scratch(*in.source);
            ir::Kernel tile = *kernel.tileLevel;
            tile.generalShapes = kernel.generalShapes;  // the general variant's inference (no TMA)
            v.hasFacts = inferLayoutFacts(tile, target, scratch, v.facts);
            if (!v.hasFacts) v.factsError = firstError(scratch);
        }
        views.push_back(std::move(v));
    }

    std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    html += fmt::format("<title>tlc report: {} for {}</title>\n", esc(in.source->name()), esc(target.name));
    html += "<style>" + pageStyle() + "</style>\n</head>\n<body>\n<header>\n";
    html += fmt::format("<h1>tlc report: {} for {}</h1>\n<nav>", esc(in.source->name()), esc(target.name));
    for (const auto& v : views) html += fmt::format("<a href=\"#{}\">{}</a>", v.id, esc(v.kernel->name));
    html += "</nav>\n<button type=\"button\" id=\"expand-all\">expand all</button>"
            "<button type=\"button\" id=\"collapse-all\">collapse all</button>\n</header>\n<main>\n";
    html += fmt::format("<p class=\"muted\">{} ({}); {} kernel{} lowered; output {}{}.</p>\n", esc(target.description),
                        esc(target.device), views.size(), views.size() == 1 ? "" : "s", esc(in.emittedName),
                        in.commandLine.empty() ? "" : "; " + esc(in.commandLine));
    for (auto& v : views) html += kernelSection(v);
    html += "</main>\n<script>" + pageScript() + "</script>\n</body>\n</html>\n";
    return html;
}

} // namespace tlc::report
