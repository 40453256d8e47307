// A pipelined loop's body as the schedules see it: a flat list of top-level statements, each with
// what it touches, its position in a step and (later) its stage.
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "passes/BufferUses.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

namespace {

bool flatten(const Stmt& s, std::vector<std::pair<VarPtr, Expr>>& lets, FlatBody& out) {
    if (!s) return true;
    switch (s->kind) {
    case NodeKind::Seq:
        for (const auto& c : s.as<Seq>()->stmts)
            if (!flatten(c, lets, out)) return false;
        return true;
    case NodeKind::LetStmt: {
        const auto* l = s.as<LetStmt>();
        if (readsMemory(l->value)) return false;
        lets.push_back({l->var, substitute(l->value, lets)});
        bool ok = flatten(l->body, lets, out);
        lets.pop_back();
        return ok;
    }
    case NodeKind::Allocate: {
        const auto* a = s.as<Allocate>();
        out.allocs.push_back(a);
        if (a->init) out.stmts.push_back(store(a->buffer, {}, substitute(a->init, lets), a->loc));
        return flatten(a->body, lets, out);
    }
    case NodeKind::Comment: return true;
    default: out.stmts.push_back(lets.empty() ? s : substitute(s, lets)); return true;
    }
}

} // namespace

std::string loopSubject(const For* n) { return fmt::format("pipelined loop over {}", n->var->name); }

AccessCounts countAccesses(const Stmt& s) { return countBufferUses(s, LayoutAnnotations::AreNotUses); }

bool flattenBody(const Stmt& body, FlatBody& out) {
    std::vector<std::pair<VarPtr, Expr>> lets;
    return flatten(body, lets, out);
}

bool countsFromZero(const For* n) {
    const int64_t* mn = asConstInt(n->min);
    const int64_t* st = asConstInt(n->step);
    return mn && *mn == 0 && (st ? *st == 1 : !n->step);
}

LoopPlan analyseLoop(const For* n, FlatBody flat, int depth) {
    LoopPlan plan;
    plan.loop = n;
    plan.depth = depth;
    plan.flat = std::move(flat);
    const PipelineInfo& info = n->pipeline;
    const size_t m = plan.flat.stmts.size();
    plan.items.resize(m);
    for (size_t i = 0; i < m; ++i) {
        Item& it = plan.items[i];
        it.stmt = plan.flat.stmts[i];
        it.fp = Footprint::of(it.stmt);
        it.pos = info.order.empty() ? int(i) : info.order[i];
        plan.loopWrites.insert(it.fp.writes.begin(), it.fp.writes.end());
    }
    plan.byPos.resize(m);
    for (size_t i = 0; i < m; ++i) plan.byPos[size_t(plan.items[i].pos)] = i;
    plan.inLoop = countAccesses(n->body);
    plan.inFlight = m;
    return plan;
}

} // namespace tlc::pipeline
