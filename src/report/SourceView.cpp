// The source beside the emitted code. The emitted code says which .tl line each part came from
// in its line comments (`// gemm.tl:12: copy(...)`, or `#line 12 "gemm.tl"` with
// --line-directives): a comment maps the lines after it, at its indentation or deeper, until the
// next comment or the end of its block. Each source line links to the output lines it became,
// each output line back to its source line. And the launch: grid, threads, shared memory and
// what the launcher checks before launching.
#include "report/Html.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace tlc::report {

namespace {

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> out;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) out.push_back(line);
    return out;
}

size_t indentOf(const std::string& line) {
    size_t i = line.find_first_not_of(' ');
    return i == std::string::npos ? line.size() : i;
}

// The .tl line a mapping comment names ("// gemm.tl:12" or "// gemm.tl:12: ..."), or 0.
int mappedLine(const std::string& line, const std::string& sourceName) {
    size_t i = indentOf(line);
    std::string rest = line.substr(i);
    std::string prefix = "// " + sourceName + ":";
    if (rest.rfind(prefix, 0) == 0) {
        size_t p = prefix.size();
        int n = 0;
        while (p < rest.size() && rest[p] >= '0' && rest[p] <= '9') n = n * 10 + (rest[p++] - '0');
        if (p < rest.size() && rest[p] != ':' && rest[p] != ' ') return 0;
        return n;
    }
    std::string directive = "#line ";
    if (rest.rfind(directive, 0) == 0 && rest.find("\"" + sourceName + "\"") != std::string::npos)
        return std::atoi(rest.c_str() + directive.size());
    return 0;
}

std::string baseName(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The emitted lines of kernel `name`: from its "// ---- NAME (" banner to the next banner or
// the end of the namespace; [first, last) in 0-based line numbers. The launcher's declaration
// comment (before the first banner) describes the launch; the banner starts the kernel.
std::pair<size_t, size_t> kernelSlice(const std::vector<std::string>& lines, const std::string& name) {
    std::string banner = "// ---- " + name + " (";
    size_t first = lines.size();
    for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i].rfind(banner, 0) == 0) {
            first = i;
            break;
        }
    if (first == lines.size()) return {0, 0};
    size_t last = first + 1;
    while (last < lines.size() && lines[last].rfind("// ---- ", 0) != 0 && lines[last].rfind("} // namespace", 0) != 0)
        ++last;
    return {first, last};
}

} // namespace

std::string sourceSection(const KernelView& k) {
    const ReportInput& in = *k.input;
    const ir::Kernel& kernel = *k.kernel;
    const std::string sourceName = baseName(in.source->name());
    std::vector<std::string> out = splitLines(in.emitted);
    auto [first, last] = kernelSlice(out, kernel.name);
    if (first == last) return "<p class=\"muted\">The emitted source has no section for this kernel.</p>\n";

    // Output line -> source line, by the comments' nesting.
    std::map<size_t, int> outToSrc;
    std::map<int, std::vector<size_t>> srcToOut;
    std::vector<std::pair<size_t, int>> stack;  // (indent, source line)
    for (size_t i = first; i < last; ++i) {
        const std::string& line = out[i];
        if (line.find_first_not_of(' ') == std::string::npos) continue;
        // A line less indented than a comment has left the comment's block; a closing brace at
        // the comment's indentation closes a statement that comment began.
        size_t ind = indentOf(line);
        while (!stack.empty() && ind < stack.back().first) stack.pop_back();
        if (int src = mappedLine(line, sourceName)) {
            if (!stack.empty() && stack.back().first == ind) stack.pop_back();
            stack.push_back({ind, src});
        }
        if (!stack.empty()) {
            outToSrc[i] = stack.back().second;
            srcToOut[stack.back().second].push_back(i);
        }
    }

    // The kernel's .tl lines: from its declaration to the line before the next kernel's (or the
    // last line any output line maps to, whichever is later), within the file.
    std::vector<std::string> src = splitLines(std::string(in.source->text()));
    int from = std::max(1, int(kernel.loc.line));
    int to = int(src.size());
    for (const ir::Kernel& other : *in.kernels)
        if (int(other.loc.line) > from && int(other.loc.line) - 1 < to) to = int(other.loc.line) - 1;
    if (!srcToOut.empty()) to = std::max(to, srcToOut.rbegin()->first);
    to = std::min<int>(to, int(src.size()));

    std::string html = fmt::format("<p class=\"muted\">Click a line number to see what it became (source) or where it "
                                   "came from (output). {} of {} source lines map to output lines.</p>\n",
                                   srcToOut.size(), std::max(0, to - from + 1));
    html += "<div class=\"panes\">\n";
    html += fmt::format("<div class=\"pane code\" id=\"{}-src\"><h3>{} (lines {}&ndash;{})</h3>\n", k.id,
                        esc(sourceName), from, to);
    for (int l = from; l <= to; ++l) {
        auto it = srcToOut.find(l);
        std::string text = esc(src[size_t(l - 1)]);
        if (it != srcToOut.end())
            html += fmt::format("<div class=\"ln mapped\" id=\"{0}-s{1}\" data-k=\"{0}\" data-line=\"{1}\" data-out=\"{2}\">"
                                "<a class=\"no\" href=\"#{0}-o{3}\" title=\"{4} output line{5}\">{1}</a>{6}</div>\n",
                                k.id, l, it->second.size(), it->second.front() + 1, it->second.size(),
                                it->second.size() == 1 ? "" : "s", text);
        else
            html += fmt::format("<div class=\"ln\" id=\"{0}-s{1}\" data-k=\"{0}\" data-line=\"{1}\"><span class=\"no\">{1}"
                                "</span>{2}</div>\n",
                                k.id, l, text);
    }
    html += "</div>\n";
    html += fmt::format("<div class=\"pane code\" id=\"{}-out\"><h3>{} (lines {}&ndash;{})</h3>\n", k.id,
                        esc(in.emittedName), first + 1, last);
    for (size_t i = first; i < last; ++i) {
        auto it = outToSrc.find(i);
        std::string text = esc(out[i]);
        if (it != outToSrc.end() && it->second >= from && it->second <= to)
            html += fmt::format("<div class=\"ln\" id=\"{0}-o{1}\" data-k=\"{0}\" data-src=\"{2}\"><a class=\"no\" "
                                "href=\"#{0}-s{2}\" title=\"{3}:{2}\">{1}</a>{4}</div>\n",
                                k.id, i + 1, it->second, esc(sourceName), text);
        else
            html += fmt::format("<div class=\"ln\" id=\"{0}-o{1}\" data-k=\"{0}\"><span class=\"no\">{1}</span>{2}</div>\n",
                                k.id, i + 1, text);
    }
    html += "</div>\n</div>\n";
    return html;
}

std::string launchSection(const KernelView& k) {
    const ir::Kernel& kernel = *k.kernel;
    std::string grid;
    for (size_t d = 0; d < kernel.gridExtents.size(); ++d)
        grid += (d ? ", " : "") + ir::printExpr(kernel.gridExtents[d]);
    std::string html = "<table>\n";
    auto row = [&](const std::string& what, const std::string& value) {
        html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(what), value);
    };
    row("grid", "<code>(" + esc(grid) + ")</code>");
    std::string threads = std::to_string(kernel.threads);
    if (kernel.producerThreads)
        threads += fmt::format(" ({} compute + {} producer warpgroup, warp-specialised)",
                               kernel.threads - kernel.producerThreads, kernel.producerThreads);
    row("threads per block", threads);
    row("shared memory per block", fmtBytes(kernel.sharedBytes));
    std::string params;
    for (const auto& p : kernel.params) {
        if (!params.empty()) params += ", ";
        params += esc(p.name);
        if (p.kind == ir::KernelParam::Kind::Tensor) {
            std::string shape;
            for (const auto& e : p.buffer->shape) shape += (shape.empty() ? "" : ", ") + ir::printExpr(e);
            params += fmt::format(": {}[{}]", esc(dtypeName(p.dtype)), esc(shape));
        } else if (p.kind == ir::KernelParam::Kind::Size) {
            params += " (size)";
        }
    }
    row("parameters", "<code>" + params + "</code>");
    if (!kernel.templateValues.empty()) {
        std::string values;
        for (const auto& [n, v] : kernel.templateValues) values += (values.empty() ? "" : ", ") + n + " = " + v;
        row("compile-time values", "<code>" + esc(values) + "</code>");
    }
    if (kernel.generalShapes) row("variant", "the general variant: any shape and element-aligned pointer");
    html += "</table>\n";
    std::vector<std::string> checks;
    for (const auto& p : kernel.preconditions) checks.push_back("require " + p.text + " (the author's precondition)");
    for (const auto& c : kernel.launchChecks) checks.push_back(ir::describe(c));
    for (const auto& t : kernel.tensorMaps) {
        std::string box;
        for (int64_t b : t.box) box += (box.empty() ? "" : " x ") + std::to_string(b);
        checks.push_back(fmt::format("a TMA tensor map of {} (boxes of {}{})", t.tensor, box,
                                     t.swizzleBytes ? fmt::format(", {}-byte swizzle", t.swizzleBytes) : ""));
    }
    if (checks.empty()) html += "<p>The launcher checks only that sizes are non-negative and tensors fit 32-bit offsets.</p>\n";
    else {
        html += "<p>Before launching, the launcher checks (a failed check runs the general variant where there is one, "
                "else returns an error):</p>\n<ul>\n";
        for (const auto& c : checks) html += "<li><code>" + esc(c) + "</code></li>\n";
        html += "</ul>\n";
    }
    return html;
}

} // namespace tlc::report
