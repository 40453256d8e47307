// The tile dataflow of a kernel, from the Tile IR it was lowered from: every buffer (global
// tensors, shared tiles, fragments, locals) with its shape, dtype and bytes, and the tile ops
// between them in program order, drawn as lanes (one per buffer) crossed by one row per op: a
// hollow dot where the op reads a buffer, a filled one where it writes, an arrow from the
// reads to the writes. Loops are brackets on the left, so a long kernel reads top to bottom.
#include "report/Html.h"

#include "ir/Printer.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tlc::report {

namespace {

struct OpRow {
    std::string kind;  // the tile op's name, "parallel" for a parallel loop nest, "store" otherwise
    std::string text;
    int line = 0;
    int depth = 0;  // loops around it
    std::vector<const ir::BufferNode*> reads, writes;
};

struct LoopSpan {
    std::string label;
    int depth = 0;
    size_t first = 0, last = 0;  // rows [first, last)
};

// The buffers a statement below the tile level loads and stores.
class Touches : public ir::IRVisitor {
public:
    std::vector<const ir::BufferNode*> reads, writes;

protected:
    static void add(std::vector<const ir::BufferNode*>& v, const ir::BufferNode* b) {
        if (std::find(v.begin(), v.end(), b) == v.end()) v.push_back(b);
    }
    void visitLoad(const ir::Load* n) override {
        add(reads, n->buffer.get());
        ir::IRVisitor::visitLoad(n);
    }
    void visitStore(const ir::Store* n) override {
        add(writes, n->buffer.get());
        ir::IRVisitor::visitStore(n);
    }
};

class Collector : public ir::IRVisitor {
public:
    std::vector<ir::Buffer> buffers;
    std::vector<OpRow> rows;
    std::vector<LoopSpan> loops;

    void addBuffer(const ir::Buffer& b) {
        for (const auto& x : buffers)
            if (x.get() == b.get()) return;
        buffers.push_back(b);
    }

protected:
    void visitAllocate(const ir::Allocate* n) override {
        addBuffer(n->buffer);
        ir::IRVisitor::visitAllocate(n);
    }
    void visitTileOpStmt(const ir::TileOpStmt* n) override {
        OpRow row{n->op->name(), n->op->str(), int(n->loc.line), depth_, {}, {}};
        for (const ir::Region* r : n->op->reads()) row.reads.push_back(r->buffer.get());
        for (const ir::Region* r : n->op->writes()) row.writes.push_back(r->buffer.get());
        rows.push_back(std::move(row));
    }
    void visitFor(const ir::For* n) override {
        if (n->forKind == ir::ForKind::Parallel) {
            Touches t;
            t.visit(n->body);
            OpRow row{"parallel", "parallel loop over " + n->var->name, int(n->loc.line), depth_, t.reads, t.writes};
            rows.push_back(std::move(row));
            return;
        }
        LoopSpan span{fmt::format("{} {}", n->forKind == ir::ForKind::Pipelined ? "pipelined" : "for", n->var->name),
                      depth_, rows.size(), 0};
        ++depth_;
        ir::IRVisitor::visitFor(n);
        --depth_;
        span.last = rows.size();
        if (span.last > span.first) loops.push_back(span);
    }
    void visitStore(const ir::Store* n) override {
        Touches t;
        t.visit(n->value);
        OpRow row{"store", n->buffer->name + "[...] = " + ir::printExpr(n->value), int(n->loc.line), depth_, t.reads, {n->buffer.get()}};
        rows.push_back(std::move(row));
    }

private:
    int depth_ = 0;
};

std::string shapeText(const ir::Buffer& b) {
    std::string s;
    for (const auto& e : b->shape) s += (s.empty() ? "" : ", ") + ir::printExpr(e);
    return "[" + s + "]";
}

} // namespace

std::string dataflowSection(const KernelView& k) {
    const ir::Kernel* tile = k.kernel->tileLevel.get();
    if (!tile) return "<p class=\"muted\">No Tile IR was kept for this kernel.</p>\n";
    Collector c;
    for (const auto& p : tile->params)
        if (p.kind == ir::KernelParam::Kind::Tensor && p.buffer) c.addBuffer(p.buffer);
    c.visit(tile->body);
    // Lanes: buffers some row touches, globals first, then in order of declaration.
    std::map<const ir::BufferNode*, size_t> lane;
    std::vector<ir::Buffer> lanes;
    for (const auto& b : c.buffers) {
        bool used = false;
        for (const auto& r : c.rows)
            used = used || std::count(r.reads.begin(), r.reads.end(), b.get()) ||
                   std::count(r.writes.begin(), r.writes.end(), b.get());
        if (!used || b->shape.empty()) continue;
        lane[b.get()] = lanes.size();
        lanes.push_back(b);
    }

    std::string html = "<table>\n<tr><th>buffer</th><th>scope</th><th>shape</th><th>dtype</th><th>bytes</th></tr>\n";
    for (const auto& b : c.buffers) {
        if (b->shape.empty()) continue;
        std::vector<int64_t> shape;
        std::string bytes = "per launch (symbolic)";
        if (ir::constantShape(b, shape)) {
            int64_t n = 1;
            for (int64_t e : shape) n *= e;
            bytes = fmtBytes(n * dtypeBytes(b->dtype));
        }
        html += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}"
                            "</td></tr>\n",
                            esc(b->name), scopeName(b->scope), esc(shapeText(b)), esc(dtypeName(b->dtype)), bytes);
    }
    html += "</table>\n";
    if (c.rows.empty()) return html + "<p class=\"muted\">No tile ops.</p>\n";

    // The graph.
    const int rowH = 24, laneW = 86, labelW = 360, top = 44, loopW = 14;
    int maxDepth = 0;
    for (const auto& l : c.loops) maxDepth = std::max(maxDepth, l.depth + 1);
    const int left = maxDepth * loopW + labelW;
    const int width = left + int(lanes.size()) * laneW + 10;
    const int height = top + int(c.rows.size()) * rowH + 10;
    std::string svg = fmt::format("<svg class=\"dataflow\" width=\"{}\" height=\"{}\" "
                                  "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"tile dataflow\">\n",
                                  width, height, width, height);
    svg += "<defs><marker id=\"" + k.id +
           "-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
           "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n";
    auto laneX = [&](size_t i) { return left + int(i) * laneW + laneW / 2; };
    for (size_t i = 0; i < lanes.size(); ++i) {
        const auto& b = lanes[i];
        std::string colour = b->scope == MemScope::Global ? "#c6dbef" : b->scope == MemScope::Shared ? "#c7e9c0"
                           : b->scope == MemScope::Fragment ? "#fdd0a2" : "#e5e5e5";
        svg += fmt::format("<rect x=\"{}\" y=\"4\" width=\"{}\" height=\"{}\" fill=\"{}\" opacity=\"0.35\"/>\n",
                           laneX(i) - laneW / 2 + 3, laneW - 6, height - 8, colour);
        svg += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", laneX(i),
                           esc(clip(b->name, 12)));
        svg += fmt::format("<text x=\"{}\" y=\"32\" font-size=\"9\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
                           laneX(i), scopeName(b->scope));
    }
    for (const auto& l : c.loops) {
        int x = l.depth * loopW + 6;
        int y0 = top + int(l.first) * rowH + 3, y1 = top + int(l.last) * rowH - 3;
        svg += fmt::format("<path d=\"M{0},{1} h-4 v{2} h4\" fill=\"none\" stroke=\"#23395d\" stroke-width=\"2\"><title>{3}"
                           "</title></path>\n",
                           x + 4, y0, y1 - y0, esc(l.label));
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#23395d\" transform=\"rotate(-90 {} {})\">{}"
                           "</text>\n",
                           x + 1, y1, x + 1, y1, esc(clip(l.label, size_t(std::max(4, (y1 - y0) / 6)))));
    }
    for (size_t r = 0; r < c.rows.size(); ++r) {
        const OpRow& row = c.rows[r];
        int y = top + int(r) * rowH + rowH / 2;
        svg += fmt::format("<g class=\"op\" data-kind=\"{}\"><title>line {}: {}</title>\n", esc(row.kind), row.line,
                           esc(row.text));
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{}\"/>\n",
                           maxDepth * loopW + 2, y - rowH / 2 + 2, labelW - 8, rowH - 4, kindColour(row.kind));
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", maxDepth * loopW + 6, y + 4,
                           esc(clip(fmt::format("{}: {}", row.line, row.text), 52)));
        std::vector<size_t> in, outs;
        for (const auto* b : row.reads)
            if (lane.count(b)) in.push_back(lane[b]);
        for (const auto* b : row.writes)
            if (lane.count(b)) outs.push_back(lane[b]);
        for (size_t w : outs)
            for (size_t i : in)
                if (i != w)
                    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\" stroke-width=\"1.3\" "
                                       "marker-end=\"url(#{}-arrow)\"/>\n",
                                       laneX(i), y, laneX(w) + (i < w ? -6 : 6), y, k.id);
        // A buffer read and written (an update in place) gets both marks: a ring around the dot.
        for (size_t i : in)
            svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"1.5\"/>\n",
                               laneX(i), y, std::count(outs.begin(), outs.end(), i) ? 8 : 5);
        for (size_t w : outs)
            svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#333\"/>\n", laneX(w), y);
        svg += "</g>\n";
    }
    svg += "</svg>\n";
    html += "<p class=\"muted\">One row per tile op in program order (brackets: loops); hollow dot: reads, filled dot: "
            "writes, ringed dot: both; hover a row for the whole op.</p>\n";
    html += "<div class=\"scroll\">" + svg + "</div>\n";
    return html;
}

} // namespace tlc::report
