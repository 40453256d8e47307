// The base of the cpu passes that rewrite the statements of a sequence where they stand
// (forward-copies, fuse-reductions).
#pragma once

#include "ir/Visitor.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tlc {

class SeqRewriter : public ir::IRMutator {
protected:
    // Statements replaced (`replaced`) or removed (`removed`, indices) before pairs are looked
    // at: rewrites that move statements of the sequence together.
    virtual void rewriteSequence(const std::vector<ir::Stmt>& stmts, std::set<size_t>& removed,
                                 std::map<size_t, ir::Stmt>& replaced) {
        (void)stmts, (void)removed, (void)replaced;
    }
    // One statement for two adjacent ones, or nothing.
    virtual std::optional<ir::Stmt> rewritePair(const ir::Stmt& first, const ir::Stmt& second) {
        (void)first, (void)second;
        return std::nullopt;
    }

    ir::Stmt mutateSeq(const ir::Seq* n, const ir::Stmt& self) override;
    // A pipelined loop's order/stage lists count its statements: with them its body stays as
    // written. (Without, the cpu runs the loop's iterations in order: no pipeline to keep.)
    ir::Stmt mutateFor(const ir::For* n, const ir::Stmt& self) override;
};

} // namespace tlc
