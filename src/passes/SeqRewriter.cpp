#include "passes/SeqRewriter.h"

namespace tlc {

using namespace ir;

Stmt SeqRewriter::mutateSeq(const Seq* n, const Stmt& self) {
    std::set<size_t> removed;
    std::map<size_t, Stmt> replaced;
    rewriteSequence(n->stmts, removed, replaced);
    bool changed = !removed.empty() || !replaced.empty();
    std::vector<Stmt> out;
    for (size_t i = 0; i < n->stmts.size(); ++i) {
        if (removed.count(i)) continue;
        if (auto r = replaced.find(i); r != replaced.end()) {
            out.push_back(r->second);
            continue;
        }
        if (i + 1 < n->stmts.size() && !removed.count(i + 1) && !replaced.count(i + 1))
            if (std::optional<Stmt> pair = rewritePair(n->stmts[i], n->stmts[i + 1])) {
                out.push_back(*pair);
                changed = true;
                ++i;
                continue;
            }
        out.push_back(mutate(n->stmts[i]));
        changed |= !out.back().same(n->stmts[i]);
    }
    return changed ? seq(std::move(out), n->loc) : self;
}

Stmt SeqRewriter::mutateFor(const For* n, const Stmt& self) {
    bool listed = !n->pipeline.order.empty() || !n->pipeline.stage.empty();
    return n->forKind == ForKind::Pipelined && listed ? self : IRMutator::mutateFor(n, self);
}

} // namespace tlc
