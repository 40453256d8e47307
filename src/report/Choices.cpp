// What the compiler chose for the author: for a kernel with `auto` parameters, the recommender's
// top candidates with the model's estimates (the driver asked for them: driver/AutoParams.h),
// and every entry of the kernel's decision log, with its reason, as `--explain` prints them.
#include "report/Html.h"

#include <fmt/format.h>

namespace tlc::report {

namespace {

std::string candidates(const Recommendation& r) {
    std::string shape;
    for (const auto& [n, v] : r.shape) shape += fmt::format("{}{}={}", shape.empty() ? "" : ", ", n, v);
    std::string html = fmt::format("<p>The recommender compiled {} of {} configurations ({} lowered, {} rejected{}){}; "
                                   "the best {} by the model's estimate{}:</p>\n",
                                   r.tried, r.enumerated, r.compiled, r.rejected, r.staged ? ", staged search" : "",
                                   shape.empty() ? "" : " at " + esc(shape), r.ranked.size(),
                                   r.measured ? "" : " (no measured sweep of this kernel on this target)");
    if (r.measured) {
        const MeasuredSweep& m = *r.measured;
        std::string at;
        for (const auto& [n, v] : m.shape) at += fmt::format("{}{}={}", at.empty() ? "" : ", ", n, v);
        html += fmt::format("<p>Measured: {} configurations timed on {}{} ({}, tlc {}; {}). The fastest took {:.1f} us.</p>\n",
                            m.configs.size(), esc(m.machine), at.empty() ? "" : " at " + esc(at), esc(m.date),
                            esc(m.commit), esc(m.source), m.configs.front().us);
    }
    html += "<table class=\"candidates\">\n<tr><th>rank</th>";
    for (const auto& p : r.params) html += "<th><code>" + esc(p.name) + "</code></th>";
    html += "<th>estimate (us)</th><th>compute (us)</th><th>of it element work (us)</th><th>memory (us)</th><th>TFLOP/s</th>"
            "<th>shared</th><th>threads</th>"
            "<th>blocks/SM</th><th>waves</th><th>registers (est.)</th>";
    if (r.measured) html += "<th>measured (us)</th><th>measured rank</th>";
    html += "</tr>\n";
    int rank = 0;
    for (const auto& c : r.ranked) {
        ++rank;
        html += fmt::format("<tr{}><td class=\"num\">{}</td>", rank == 1 ? " style=\"font-weight:bold\"" : "", rank);
        for (const auto& p : r.params) {
            std::string v = "&ndash;";
            for (const auto& [n, x] : c.values)
                if (n == p.name) v = std::to_string(x);
            html += "<td class=\"num\">" + v + "</td>";
        }
        html += fmt::format("<td class=\"num\">{:.1f}</td><td class=\"num\">{:.1f}</td><td class=\"num\">{:.1f}</td><td "
                            "class=\"num\">{:.1f}</td><td class=\"num\">{:.1f}</td><td class=\"num\">{}</td><td "
                            "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
                            c.timeUs, c.computeUs, c.elementUs, c.memoryUs, c.timeUs > 0 ? c.flops / (c.timeUs * 1e6) : 0.0,
                            c.loweredSharedBytes, c.threads, c.blocksPerSM, c.waves, c.registersPerThread);
        if (r.measured) {
            const MeasuredConfig* m = measuredConfig(*r.measured, c.values);
            html += m ? fmt::format("<td class=\"num\">{:.1f}</td><td class=\"num\">{} of {}</td>", m->us, m->rank,
                                    r.measured->configs.size())
                      : std::string("<td class=\"muted\">not measured</td><td></td>");
        }
        html += "</tr>\n";
    }
    html += "</table>\n";
    if (!r.firstRejection.empty()) html += "<p class=\"muted\">First rejection: " + esc(r.firstRejection) + "</p>\n";
    return html;
}

} // namespace

std::string choiceSection(const KernelView& k) {
    std::string html;
    if (k.ranking) {
        html += "<h4>The recommender's candidates</h4>\n" + candidates(*k.ranking);
    }
    html += "<h4>Decisions (--explain)</h4>\n";
    if (!k.decisions || k.decisions->empty())
        return html + "<p class=\"muted\">Nothing inferred: the author fixed every value.</p>\n";
    html += "<table class=\"decisions\">\n<tr><th>line</th><th>what</th><th>value</th><th>origin</th><th>why</th></tr>\n";
    for (const auto& d : k.decisions->entries()) {
        std::string line = d.loc.valid() ? fmt::format("<a href=\"#{0}-s{1}\">{1}</a>", k.id, d.loc.line) : "";
        html += fmt::format("<tr class=\"decision\"><td class=\"num\">{}</td><td><code>{}</code></td><td><code>{}</code></td>"
                            "<td>{}</td><td>{}</td></tr>\n",
                            line, esc(d.subject), esc(d.value), esc(d.origin), esc(d.reason));
    }
    html += "</table>\n";
    return html;
}

} // namespace tlc::report
