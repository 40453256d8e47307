// What a block holds on the chip: the shared-memory plan of the lowered kernel (each buffer's
// bytes, a versioned buffer's per stage, the total against the target's limit), registers per
// thread (ptxas's count with --report-ptxas, else the recommender's estimate from the fragments,
// recommend/CostModel.h) and the occupancy they allow on one SM of the target.
#include "report/Html.h"

#include "recommend/CostModel.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::report {

namespace {

std::string bar(int64_t value, int64_t limit, int width) {
    int w = limit > 0 ? int(std::min<int64_t>(value, limit) * width / limit) : 0;
    return fmt::format("<span class=\"bar\" style=\"width:{}px\"></span><span class=\"bar\" style=\"width:{}px;"
                       "background:#e5e5e5\"></span>",
                       w, width - w);
}

} // namespace

std::string resourceSection(const KernelView& k) {
    const ir::Kernel& kernel = *k.kernel;
    const Target& t = *k.input->target;
    const bool cpu = t.backend == Backend::Cpu;
    std::string html;

    // Shared memory.
    html += "<h4>Shared memory</h4>\n";
    if (kernel.sharedPlan.empty()) html += "<p class=\"muted\">No shared memory.</p>\n";
    else {
        html += "<table class=\"smem\">\n<tr><th>buffer</th><th>offset</th><th>bytes</th><th>versions</th>"
                "<th>per stage</th><th>live (source lines)</th></tr>\n";
        for (const auto& s : kernel.sharedPlan) {
            int versions = s.buffer->pipeline && s.buffer->pipeline->kind == ir::PipelineBuffer::Kind::Versions
                               ? std::max(s.buffer->pipeline->versions, 1)
                               : 1;
            bool barriers = s.buffer->isMbarrierArray();
            html += fmt::format("<tr><td><code>{}</code>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                                "class=\"num\">{}</td><td class=\"num\">{}</td><td>{}&ndash;{}</td></tr>\n",
                                esc(s.buffer->name), barriers ? " (mbarriers)" : "", s.offset, s.bytes, versions,
                                s.bytes / versions, s.firstLoc.line, s.lastLoc.line);
        }
        html += "</table>\n";
    }
    const int64_t limit = cpu ? 0 : t.sharedMemPerBlock;
    html += fmt::format("<p>total <b>{}</b>{} {}</p>\n", fmtBytes(kernel.sharedBytes),
                        limit ? fmt::format(" of {} a block may use on {} ({:.0f}%)", fmtBytes(limit), esc(t.name),
                                            100.0 * double(kernel.sharedBytes) / double(limit))
                              : "",
                        limit ? bar(kernel.sharedBytes, limit, 240) : "");

    // Registers and occupancy.
    html += "<h4>Registers and occupancy</h4>\n";
    if (cpu) return html + "<p class=\"muted\">The cpu target runs blocks as OpenMP iterations: no registers or "
                           "occupancy to report.</p>\n";
    const int threads = std::max(kernel.threads, 1);
    int regs = 0;
    std::string source;
    if (k.ptxas) {
        regs = k.ptxas->registers;
        source = fmt::format("ptxas (spill stores {}, spill loads {}, stack {} bytes)", k.ptxas->spillStores,
                             k.ptxas->spillLoads, k.ptxas->stackBytes);
    } else if (kernel.tileLevel) {
        TileWork work = analyzeTileWork(*kernel.tileLevel, t);
        CandidateEstimate e;
        std::string why = estimate(work, work.blocks, threads, kernel.sharedBytes, t, e);
        regs = e.registersPerThread;
        source = "the recommender's estimate (fragment bytes / threads + 32; docs/recommend.md)";
        if (!why.empty()) source += "; the model says: " + why;
        if (k.input->ptxas && !k.input->ptxas->ran) source += "; ptxas did not run: " + k.input->ptxas->note;
        else if (k.input->ptxas) source += "; ptxas reported nothing for this kernel";
    }
    int64_t byThreads = t.maxThreadsPerSM / threads;
    int64_t byShared = kernel.sharedBytes > 0 ? t.sharedMemPerSM / kernel.sharedBytes : t.maxBlocksPerSM;
    int64_t byRegs = regs > 0 && t.registersPerSM > 0 ? t.registersPerSM / (int64_t(regs) * threads) : t.maxBlocksPerSM;
    int64_t blocks = std::min<int64_t>({int64_t(t.maxBlocksPerSM), byThreads, byShared, byRegs});
    const char* limiter = blocks == byRegs && regs > 0 ? "registers" : blocks == byShared && kernel.sharedBytes ? "shared memory"
                        : blocks == byThreads ? "threads" : "the block limit";
    html += fmt::format("<table class=\"registers\" data-source=\"{}\">\n", k.ptxas ? "ptxas" : "estimate");
    html += fmt::format("<tr><th>registers per thread</th><td class=\"num\">{}</td><td>{}</td></tr>\n",
                        regs ? std::to_string(regs) : "?", esc(source));
    html += fmt::format("<tr><th>blocks per SM by threads</th><td class=\"num\">{}</td><td>{} threads per SM, {} per "
                        "block</td></tr>\n",
                        byThreads, t.maxThreadsPerSM, threads);
    html += fmt::format("<tr><th>blocks per SM by shared memory</th><td class=\"num\">{}</td><td>{} per SM</td></tr>\n",
                        byShared, fmtBytes(t.sharedMemPerSM));
    html += fmt::format("<tr><th>blocks per SM by registers</th><td class=\"num\">{}</td><td>{} registers per SM</td></tr>\n",
                        byRegs, t.registersPerSM);
    double occupancy = double(std::max<int64_t>(blocks, 0) * threads) / double(std::max(t.maxThreadsPerSM, 1));
    html += fmt::format("<tr><th>occupancy</th><td class=\"num\">{:.0f}%</td><td>{} block{} of {} threads per SM "
                        "(limited by {}) {}</td></tr>\n",
                        100.0 * occupancy, blocks, blocks == 1 ? "" : "s", threads, limiter,
                        bar(int64_t(occupancy * 1000), 1000, 160));
    html += "</table>\n";
    if (blocks < 1) html += "<p class=\"warn\">No block fits on one SM with these resources.</p>\n";
    return html;
}

} // namespace tlc::report
