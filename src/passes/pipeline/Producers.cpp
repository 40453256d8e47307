// Producers: copies from global into a shared tile that the pipeline can issue ahead of their
// readers (asynchronously, into a version of the tile of their own).
#include "passes/pipeline/LoopPlan.h"

namespace tlc::pipeline {

using namespace ir;

const ops::CopyOp& copyOf(const Item& producer) {
    return *static_cast<const ops::CopyOp*>(producer.stmt.as<TileOpStmt>()->op.get());
}

int64_t tileBytes(const Region& r) { return (r.elements() * dtypeBits(r.buffer->dtype) + 7) / 8; }

// Why statement i cannot be a producer stage (a copy into a shared buffer that is versioned
// by the pipeline); empty when it can. `wrongSchedule` is set when the reason makes a schedule
// that puts the tile's uses at several stages wrong in itself (two writers, a read before the
// fill), rather than beyond what this compiler's pipelines can version.
std::string producerIssue(const LoopPlan& plan, size_t i, const AccessCounts& inKernel, bool* wrongSchedule) {
    const std::vector<Item>& items = plan.items;
    const auto* t = items[i].stmt.as<TileOpStmt>();
    const auto* copy = t ? dynamic_cast<const ops::CopyOp*>(t->op.get()) : nullptr;
    if (!copy || copy->src().buffer->scope != MemScope::Global || copy->dst().buffer->scope != MemScope::Shared)
        return "it is not a copy from global to shared memory";
    const BufferNode* b = copy->dst().buffer.get();
    std::string name = "'" + copy->dst().buffer->name + "'";
    if (!copy->dst().coversWholeBuffer()) return "the copy fills only part of " + name;
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
    if (plan.loopWrites.count(copy->src().buffer.get()))
        return "the loop writes '" + copy->src().buffer->name + "', which the copy reads";
    for (const auto& e : copy->src().starts) {
        Footprint f = Footprint::of(e);
        for (const auto* r : f.reads)
            if (plan.loopWrites.count(r))
                return "the copy's position depends on '" + r->name + "', which the loop writes";
    }
    return "";
}

// The copies that can be producers (producerIssue) and whose tile a later statement reads.
std::vector<size_t> readProducers(const LoopPlan& plan, const AccessCounts& inKernel) {
    const std::vector<Item>& items = plan.items;
    std::vector<size_t> producers;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!producerIssue(plan, i, inKernel).empty()) continue;
        const BufferNode* b = copyOf(items[i]).dst().buffer.get();
        bool read = false;
        for (size_t j = i + 1; j < items.size(); ++j) read |= items[j].fp.reads.count(b) > 0;
        if (read) producers.push_back(i);
    }
    return producers;
}

} // namespace tlc::pipeline
