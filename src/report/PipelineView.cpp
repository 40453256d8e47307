// Each software-pipelined loop as pipeline-loops scheduled it (ir::PipelineSummary): one
// steady-state step as lanes of the threads that run it (all threads, or the producer warpgroup
// and the consumers of a warp-specialised loop), each statement a box in the order the step runs
// them, with the waits and barrier arrivals the schedule puts between them; and the stage
// timeline, iterations against steps, which shows the prologue filling the pipeline, the steady
// state overlapping `stages` iterations and the epilogue draining it.
#include "report/Html.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::report {

namespace {

struct Box {
    std::string title, detail, kind, tip;
    int lane = 0;
};

// The boxes of one steady-state step in order, synchronisation included.
std::vector<Box> stepBoxes(const ir::PipelineSummary& p) {
    std::vector<Box> out;
    const bool ws = p.warpSpecialised;
    const bool cpAsync = !p.mbarriers && p.schedule.rfind("modulo", 0) == 0;
    bool waited = false, anyAsync = false;
    size_t lastReader = p.steps.size();
    for (size_t i = 0; i < p.steps.size(); ++i)
        if (!p.steps[i].async) lastReader = i;
    for (const auto& s : p.steps) anyAsync = anyAsync || s.async;
    if (ws) out.push_back({"wait empty", "mbarrier: the version is free", "wait", "the producer waits until the consumers released the version it refills", 0});
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const auto& s = p.steps[i];
        int lane = ws && s.producer ? 0 : (ws ? 1 : 0);
        if (!s.async && anyAsync && !waited) {
            waited = true;
            if (cpAsync)
                out.push_back({"wait", "cp.async.wait_group + barrier", "wait",
                               "the copies of the iteration this step reads have landed; the barrier publishes them "
                               "to every thread",
                               lane});
            else if (p.mbarriers)
                out.push_back({"wait full", "mbarrier: TMA bytes arrived", "wait",
                               fmt::format("the readers wait until the version's {} bytes have arrived", p.tmaBytes), lane});
        }
        std::string what = s.tma ? "TMA load" : s.async ? "cp.async" : s.kind;
        out.push_back({what, fmt::format("stage {}: iteration t{}", s.stage, s.stage ? fmt::format(" - {}", s.stage) : ""),
                       s.async ? "copy" : s.kind, fmt::format("line {}: {}", s.loc.line, s.text), lane});
        out.back().detail = clip(s.text, 24) + " | " + out.back().detail;
        if (ws && s.producer && (i + 1 == p.steps.size() || !p.steps[i + 1].producer))
            out.push_back({"arrive full", fmt::format("expect_tx {} bytes", p.tmaBytes), "barrier",
                           "the TMA unit signals the version full when its bytes have landed", 0});
        if (p.mbarriers && i == lastReader)
            out.push_back({"arrive empty",
                           p.inFlight.empty() ? "mbarrier: release the version" : "the previous iteration's version",
                           "barrier",
                           p.inFlight.empty() ? "the last reader releases the version for the producer to refill"
                                              : "the wgmma group stays in flight past this step: the version of the "
                                                "iteration before is released once its group has completed",
                           lane});
    }
    return out;
}

std::string stepSvg(const KernelView& k, const ir::PipelineSummary& p) {
    std::vector<Box> boxes = stepBoxes(p);
    const bool ws = p.warpSpecialised;
    const int lanes = ws ? 2 : 1, bw = 170, bh = 46, gap = 10, left = 150, top = 24, laneH = 62;
    // Each lane's boxes in its own order: a warp-specialised loop's producer and consumers run
    // at the same time.
    std::vector<int> column(boxes.size());
    std::vector<int> next(size_t(lanes), 0);
    int columns = 0;
    for (size_t i = 0; i < boxes.size(); ++i) {
        column[i] = next[size_t(boxes[i].lane)]++;
        columns = std::max(columns, column[i] + 1);
    }
    int width = left + columns * (bw + gap) + 10, height = top + lanes * laneH + 8;
    std::string svg = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
                                  "{1}\" role=\"img\" aria-label=\"one steady-state step\">\n",
                                  width, height);
    const int threads = k.kernel->threads;
    for (int l = 0; l < lanes; ++l) {
        std::string name = !ws ? "all threads" : l == 0 ? "producer" : "consumers";
        int count = !ws ? threads : l == 0 ? p.producerThreads : threads - p.producerThreads;
        int y = top + l * laneH;
        svg += fmt::format("<rect x=\"2\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", y, width - 4, laneH - 4,
                           l % 2 ? "#f4f4f4" : "#eef3fb");
        svg += fmt::format("<text x=\"8\" y=\"{}\" font-size=\"11\">{}</text><text x=\"8\" y=\"{}\" font-size=\"10\" "
                           "fill=\"#555\">{} threads</text>\n",
                           y + laneH / 2 - 4, name, y + laneH / 2 + 10, count);
    }
    svg += fmt::format("<text x=\"{}\" y=\"14\" font-size=\"10\" fill=\"#555\">time within one step &#8594;</text>\n", left);
    for (size_t i = 0; i < boxes.size(); ++i) {
        const Box& b = boxes[i];
        int x = left + column[i] * (bw + gap), y = top + b.lane * laneH + (laneH - 4 - bh) / 2;
        svg += fmt::format("<g class=\"step\" data-kind=\"{}\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" "
                           "height=\"{}\" rx=\"4\" fill=\"{}\" stroke=\"#555\"/>",
                           esc(b.kind), esc(b.tip), x, y, bw, bh, kindColour(b.kind));
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" font-weight=\"bold\">{}</text>", x + 5, y + 15,
                           esc(clip(b.title, 26)));
        size_t bar = b.detail.find(" | ");
        std::string l1 = bar == std::string::npos ? b.detail : b.detail.substr(0, bar);
        std::string l2 = bar == std::string::npos ? "" : b.detail.substr(bar + 3);
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\">{}</text>", x + 5, y + 28, esc(clip(l1, 30)));
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#444\">{}</text></g>\n", x + 5, y + 40,
                           esc(clip(l2, 30)));
    }
    svg += "</svg>\n";
    return svg;
}

// Iterations (rows) against steps (columns): step t runs stage s of iteration t - s.
std::string timelineSvg(const ir::PipelineSummary& p) {
    const int S = std::max(p.stages, 1);
    const int iters = S + 2, steps = iters + S - 1;
    const int cw = 86, ch = 26, left = 90, top = 34;
    int width = left + steps * cw + 6, height = top + iters * ch + 6;
    std::string svg = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
                                  "{1}\" role=\"img\" aria-label=\"stage timeline\">\n",
                                  width, height);
    // The phases: prologue steps 0..S-2, steady state while every stage has an iteration, epilogue.
    auto phase = [&](int t) { return t < S - 1 ? "prologue" : t < iters ? "steady" : "epilogue"; };
    for (int t = 0; t < steps; ++t) {
        svg += fmt::format("<text x=\"{}\" y=\"14\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
                           left + t * cw + cw / 2, phase(t));
        svg += fmt::format("<text x=\"{}\" y=\"27\" font-size=\"10\" text-anchor=\"middle\">step {}</text>\n",
                           left + t * cw + cw / 2, t);
    }
    for (int i = 0; i < iters; ++i) {
        svg += fmt::format("<text x=\"6\" y=\"{}\" font-size=\"10\">iteration {}</text>\n", top + i * ch + 17, i);
        for (int s = 0; s < S; ++s) {
            int t = i + s;
            std::string kinds, kind = "other";
            for (const auto& st : p.steps)
                if (st.stage == s) {
                    std::string w = st.tma ? "tma" : st.async ? "cp.async" : st.kind;
                    if (kinds.find(w) == std::string::npos) kinds += (kinds.empty() ? "" : "+") + w;
                    if (kind == "other") kind = st.async ? "copy" : st.kind;
                }
            if (kinds.empty()) kinds = "in flight";
            svg += fmt::format("<g class=\"slot\" data-iter=\"{}\" data-stage=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
                               "height=\"{}\" rx=\"3\" fill=\"{}\" stroke=\"#777\"/><text x=\"{}\" y=\"{}\" font-size=\"9\" "
                               "text-anchor=\"middle\">s{}: {}</text></g>\n",
                               i, s, left + t * cw + 1, top + i * ch + 2, cw - 2, ch - 4, kindColour(kind),
                               left + t * cw + cw / 2, top + i * ch + 17, s, esc(clip(kinds, 13)));
        }
    }
    svg += "</svg>\n";
    return svg;
}

} // namespace

std::string pipelineSection(const KernelView& k) {
    const auto& pipelines = k.kernel->pipelines;
    if (pipelines.empty())
        return "<p class=\"muted\">No software-pipelined loop in this kernel on this target (see the decisions below for "
               "why a pipelined loop runs plainly).</p>\n";
    std::string html;
    for (const auto& p : pipelines) {
        std::string versions;
        for (const auto& [name, n] : p.versions) versions += fmt::format("{}{} x{}", versions.empty() ? "" : ", ", name, n);
        html += fmt::format("<div class=\"pipeline\" data-stages=\"{}\"><h4>{} (line {}): {} stage{}</h4>\n<p>{}</p>\n<ul>\n",
                            p.stages, esc(p.loop), p.loc.line, p.stages, p.stages == 1 ? "" : "s", esc(p.schedule));
        if (!versions.empty()) html += "<li>versioned shared buffers: <code>" + esc(versions) + "</code></li>\n";
        if (p.tmaBytes) html += fmt::format("<li>TMA bytes per iteration: {}</li>\n", p.tmaBytes);
        if (p.producerThreads)
            html += fmt::format("<li>producer warpgroup: {} threads (the last of the block)</li>\n", p.producerThreads);
        if (!p.inFlight.empty())
            html += "<li>wgmma group left in flight past its step: <code>" + esc(p.inFlight) + "</code></li>\n";
        html += "</ul>\n<p class=\"muted\">One steady-state step (iteration t issues stage s of iteration t - s); hover a "
                "box for the statement:</p>\n";
        html += "<div class=\"scroll\">" + stepSvg(k, p) + "</div>\n";
        html += "<p class=\"muted\">Stage timeline: each row an iteration, each column a step of the loop.</p>\n";
        html += "<div class=\"scroll\">" + timelineSvg(p) + "</div>\n</div>\n";
    }
    return html;
}

} // namespace tlc::report
