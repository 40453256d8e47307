// A copy into shared memory outside a pipeline waits for its own cp.async (ops/copy), so
// `copy(X, X_s); copy(gamma, G_s); copy(beta, B_s)` waits for global memory three times in a
// row where once would do: each wait is a full round trip that no other work of the block
// hides. A wait followed, up to the next wait, only by the issues of more copies into other
// buffers is dropped; the next wait (cp.async.wait_all waits for every cp.async the thread has
// issued) covers them all, and nothing between reads what they write.
//
// It runs after plan-shared-memory: buffers that share bytes there have a barrier between
// their uses, and a barrier ends the look-ahead, so two copies in flight never write the same
// bytes.
#include "passes/Passes.h"

#include "ir/Visitor.h"

#include <optional>
#include <set>
#include <string>

namespace tlc {

using namespace ir;

namespace {

bool isCallStmt(const Stmt& s, const char* name) {
    if (s->kind != NodeKind::Evaluate) return false;
    const Expr& e = s.as<Evaluate>()->value;
    return e->kind == NodeKind::Call && e.as<Call>()->name == name;
}

// The shared buffers (by name: views share their allocation's) that `s` writes with cp.async
// when that is all it does, around lets, guards and loops; nothing when it does anything else.
std::optional<std::set<std::string>> asyncIssueTargets(const Stmt& s) {
    std::set<std::string> targets;
    bool onlyIssues = true;
    auto walk = [&](auto& self, const Stmt& st) -> void {
        if (!st || !onlyIssues) return;
        switch (st->kind) {
        case NodeKind::Comment: return;
        case NodeKind::Seq:
            for (const auto& item : st.as<Seq>()->stmts) self(self, item);
            return;
        case NodeKind::LetStmt: self(self, st.as<LetStmt>()->body); return;
        case NodeKind::IfThenElse:
            self(self, st.as<IfThenElse>()->thenCase);
            self(self, st.as<IfThenElse>()->elseCase);
            return;
        case NodeKind::For: self(self, st.as<For>()->body); return;
        case NodeKind::Evaluate: {
            const Expr& e = st.as<Evaluate>()->value;
            const Call* c = e->kind == NodeKind::Call ? e.as<Call>() : nullptr;
            // cp_async_16(address_of(dst[...]), address_of(src[...]), valid)
            if (c && c->name == "cp_async_16" && c->args[0]->kind == NodeKind::Call) {
                const Call* address = c->args[0].as<Call>();
                if (address->name == "address_of" && address->args[0]->kind == NodeKind::Load) {
                    targets.insert(address->args[0].as<Load>()->buffer->name);
                    return;
                }
            }
            onlyIssues = false;
            return;
        }
        default: onlyIssues = false; return;
        }
    };
    walk(walk, s);
    if (!onlyIssues) return std::nullopt;
    return targets;
}

using IssueTargets = std::optional<std::set<std::string>>;

class BatchWaits : public IRMutator {
protected:
    Stmt mutateSeq(const Seq* n, const Stmt& self) override {
        Stmt mutated = IRMutator::mutateSeq(n, self);
        if (mutated->kind != NodeKind::Seq) return mutated;
        const auto& stmts = mutated.as<Seq>()->stmts;
        // Each statement's issue targets, once: the look-ahead and the walk both read them.
        std::vector<bool> isWait(stmts.size());
        std::vector<IssueTargets> issues(stmts.size());
        for (size_t i = 0; i < stmts.size(); ++i) {
            isWait[i] = isCallStmt(stmts[i], "cp_async_wait_all");
            if (!isWait[i]) issues[i] = asyncIssueTargets(stmts[i]);
        }
        std::vector<Stmt> out;
        std::set<std::string> inFlight;  // written by the issues since the last wait kept
        bool dropped = false;
        for (size_t i = 0; i < stmts.size(); ++i) {
            if (!isWait[i]) {
                if (issues[i]) inFlight.insert(issues[i]->begin(), issues[i]->end());
                else inFlight.clear();  // something else ran: only its own waits matter from here
                out.push_back(stmts[i]);
                continue;
            }
            if (waitCanMove(isWait, issues, i + 1, inFlight)) {
                dropped = true;
                continue;
            }
            inFlight.clear();
            out.push_back(stmts[i]);
        }
        return dropped ? seq(std::move(out), n->loc) : mutated;
    }

private:
    // Whether the statements from `from` up to the next wait only issue copies into buffers
    // none of `inFlight` is (one wait at the end then serves both).
    static bool waitCanMove(const std::vector<bool>& isWait, const std::vector<IssueTargets>& issues, size_t from,
                            const std::set<std::string>& inFlight) {
        bool issuedAny = false;
        for (size_t j = from; j < issues.size(); ++j) {
            if (isWait[j]) return issuedAny;
            if (!issues[j]) return false;
            for (const auto& t : *issues[j])
                if (inFlight.count(t)) return false;
            issuedAny |= !issues[j]->empty();
        }
        return false;
    }
};

} // namespace

Stmt batchAsyncWaits(const Stmt& body) { return BatchWaits().mutate(body); }

} // namespace tlc
