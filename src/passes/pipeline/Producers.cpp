// Producers: ops that fill a shared tile from global memory (ops::Op::asyncFillTile: a copy, an
// im2col gather) which the pipeline can issue ahead of their readers, asynchronously, into a
// version of the tile of their own.
#include "passes/pipeline/LoopPlan.h"

namespace tlc::pipeline {

using namespace ir;

const ops::Op* fillOf(const Item& item) {
    const auto* t = item.stmt.as<TileOpStmt>();
    const auto* op = t ? dynamic_cast<const ops::Op*>(t->op.get()) : nullptr;
    return op && op->asyncFillTile() ? op : nullptr;
}

const Region& producerTile(const Item& producer) { return *fillOf(producer)->asyncFillTile(); }

const ops::CopyOp* copyOf(const Item& producer) {
    const auto* t = producer.stmt.as<TileOpStmt>();
    return t ? dynamic_cast<const ops::CopyOp*>(t->op.get()) : nullptr;
}

int64_t tileBytes(const Region& r) { return (r.elements() * dtypeBits(r.buffer->dtype) + 7) / 8; }

// Why statement i cannot be a producer stage (an op filling a shared buffer from global memory
// that the pipeline versions); empty when it can. `wrongSchedule` is set when the reason makes a
// schedule that puts the tile's uses at several stages wrong in itself (two writers, a read
// before the fill), rather than beyond what this compiler's pipelines can version.
std::string producerIssue(const LoopPlan& plan, size_t i, const AccessCounts& inKernel, bool* wrongSchedule) {
    const std::vector<Item>& items = plan.items;
    const ops::Op* fill = fillOf(items[i]);
    if (!fill) return "it is not a copy (or im2col) from global to shared memory";
    const Region& tile = *fill->asyncFillTile();
    const BufferNode* b = tile.buffer.get();
    std::string name = "'" + tile.buffer->name + "'";
    if (!tile.coversWholeBuffer()) return "the " + fill->name() + " fills only part of " + name;
    auto total = inKernel.find(b);
    auto inside = plan.inLoop.find(b);
    if (total == inKernel.end() || inside == plan.inLoop.end() || total->second != inside->second)
        return name + " is also used outside the loop";
    for (size_t j = 0; j < items.size(); ++j) {
        if (j == i) continue;
        if ((items[j].fp.writes.count(b) || (j < i && items[j].fp.reads.count(b))) && wrongSchedule)
            *wrongSchedule = true;
        if (items[j].fp.writes.count(b)) return name + " is written by another statement of the loop";
        if (j < i && items[j].fp.reads.count(b)) return name + " is read before the copy fills it";
        if (items[j].fp.touches(b))
            for (const TileOp* op : items[j].fp.ops) {
                bool uses = false;
                for (const Region* r : op->reads()) uses |= r->buffer.get() == b;
                if (uses && !op->mapRegions([](const Region& r) { return r; }))
                    return "'" + op->name() + "' cannot read a versioned " + name;
            }
    }
    for (const Region* r : fill->reads())
        if (plan.loopWrites.count(r->buffer.get()))
            return "the loop writes '" + r->buffer->name + "', which the " + fill->name() + " reads";
    // Every expression of the op (where it reads, which tile of the image): visited, unchanged.
    std::string moves;
    fill->mapExprs([&](const Expr& e) {
        for (const auto* r : Footprint::of(e).reads)
            if (moves.empty() && plan.loopWrites.count(r))
                moves = "the " + fill->name() + "'s position depends on '" + r->name + "', which the loop writes";
        return e;
    });
    return moves;
}

// The copies that can be producers (producerIssue) and whose tile a later statement reads.
std::vector<size_t> readProducers(const LoopPlan& plan, const AccessCounts& inKernel) {
    const std::vector<Item>& items = plan.items;
    std::vector<size_t> producers;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!producerIssue(plan, i, inKernel).empty()) continue;
        const BufferNode* b = producerTile(items[i]).buffer.get();
        bool read = false;
        for (size_t j = i + 1; j < items.size(); ++j) read |= items[j].fp.reads.count(b) > 0;
        if (read) producers.push_back(i);
    }
    return producers;
}

} // namespace tlc::pipeline
