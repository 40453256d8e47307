// Barrier placement at the tile level, where each statement's shared-memory footprint is
// known: a tile op's regions, or the loads and stores of a parallel loop. Within one such
// statement every thread touches what it owns, or the op synchronises internally; between two
// statements a barrier is needed when the second reads what the first wrote, or writes what
// the first read or wrote. Loops are walked until the state carried around the back edge
// stops growing, so that `copy(A, A_s); gemm(A_s, ...)` in a loop also gets the barrier that
// keeps the next iteration's copy from overwriting A_s while the gemm still reads it.
//
// Accesses that fix the first index of a buffer to one value the whole block agrees on (a
// version of a pipelined buffer, A_s[k % 3]) only conflict with accesses that may fix it to the
// same value: A_s[k % 3] and A_s[(k - 2) % 3] do not. Such indices are compared only between
// accesses of the same iteration: around a loop's back edge (where the loop's variables have
// moved on) they count as the whole buffer. Barriers already in the code (the pipeline's)
// count as barriers. Buffers the pipeline orders with mbarriers (TMA-filled tiles and the
// barrier arrays themselves: BufferNode::mbarrierOrdered) need no block barrier and are not tracked.
//
// Global tensors are tracked the same way on the GPUs (a tile op that overwrites or reads what
// an earlier one in the block wrote, through other threads: difftest finding 14), by region: two
// tiles whose starts differ by a constant at least their extent do not conflict, and a tile
// whose start moves with the loop's own variable by at least its extent a step
// (`Y[.., jt * bn : +bn]`) does not conflict with itself in other iterations. A parallel
// loop's element accesses are the region their loop variables sweep.
#include "passes/Passes.h"
#include "passes/ThreadDependence.h"

#include "ir/Accesses.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace tlc {

using namespace ir;

namespace {

// The part of a buffer an access covers. Of a shared buffer: all of it (slot empty), or the part
// with first index `slot`; of a global tensor: all of it, or the tile at `starts` of `extents`,
// of this iteration or (`moved`) of another iteration of the loop whose variable that is.
struct Span {
    const BufferNode* buffer = nullptr;
    std::string key = {};  // the slot's or tile's text, "" for the whole buffer
    Expr slot = {};
    std::vector<Expr> starts = {};
    std::vector<int64_t> extents = {};
    const Var* moved = nullptr;
    friend bool operator<(const Span& a, const Span& b) {
        return a.buffer != b.buffer ? a.buffer < b.buffer : a.key < b.key;
    }
    friend bool operator==(const Span& a, const Span& b) { return a.buffer == b.buffer && a.key == b.key; }
};
using SpanSet = std::set<Span>;

// e as a sum of terms times constants plus a constant (terms compared structurally).
void linearTerms(const Expr& e, int64_t scale, std::vector<std::pair<Expr, int64_t>>& terms, int64_t& constant) {
    if (const int64_t* c = asConstInt(e)) {
        constant += scale * *c;
        return;
    }
    if (const auto* b = e.as<Binary>()) {
        if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
            linearTerms(b->a, scale, terms, constant);
            linearTerms(b->b, b->op == BinaryOp::Add ? scale : -scale, terms, constant);
            return;
        }
        if (b->op == BinaryOp::Mul) {
            if (const int64_t* c = asConstInt(b->b)) return linearTerms(b->a, scale * *c, terms, constant);
            if (const int64_t* c = asConstInt(b->a)) return linearTerms(b->b, scale * *c, terms, constant);
        }
    }
    for (auto& [t, k] : terms)
        if (equal(t, e)) {
            k += scale;
            return;
        }
    terms.push_back({e, scale});
}

// a - b when it is a constant.
std::optional<int64_t> constantDifference(const Expr& a, const Expr& b) {
    std::vector<std::pair<Expr, int64_t>> terms;
    int64_t constant = 0;
    linearTerms(a, 1, terms, constant);
    linearTerms(b, -1, terms, constant);
    for (const auto& [t, k] : terms)
        if (k != 0) return std::nullopt;
    return constant;
}

// Whether two first indices certainly differ: by a nonzero constant, or `x % V` and `y % V`
// where x - y is a constant that V does not divide.
bool distinct(const Expr& a, const Expr& b) {
    if (!a || !b) return false;
    const auto* ma = a.as<Binary>();
    const auto* mb = b.as<Binary>();
    if (ma && mb && ma->op == BinaryOp::Mod && mb->op == BinaryOp::Mod) {
        const int64_t* va = asConstInt(ma->b);
        const int64_t* vb = asConstInt(mb->b);
        if (va && vb && *va == *vb && *va > 0)
            if (auto d = constantDifference(ma->a, mb->a)) return *d % *va != 0;
    }
    auto d = constantDifference(a, b);
    return d && *d != 0;
}

// The coefficient of v in e when e is linear in it.
std::optional<int64_t> coefficientOf(const Expr& e, const Var* v) {
    std::vector<std::pair<Expr, int64_t>> terms;
    int64_t constant = 0;
    linearTerms(e, 1, terms, constant);
    int64_t k = 0;
    for (const auto& [t, c] : terms) {
        if (t.as<Var>() == v) k += c;
        else if (uses(t, v)) return std::nullopt;
    }
    return k;
}

// Whether in dimension d one tile ends before the other starts.
bool apartIn(const Span& a, const Span& b, size_t d) {
    auto diff = constantDifference(a.starts[d], b.starts[d]);
    return diff && (*diff >= b.extents[d] || -*diff >= a.extents[d]);
}

// Whether two tiles of one tensor certainly share no element: some dimension where one ends
// before the other starts, or (one of them from another iteration of the loop of `moved`) such
// a dimension whose starts do not use the loop's variable (only it differs between the
// iterations), or the same tile moving by at least its extent a step.
bool disjointTiles(const Span& a, const Span& b) {
    if (a.starts.empty() || b.starts.empty() || a.starts.size() != b.starts.size()) return false;
    if (a.moved || b.moved) {
        const Var* v = a.moved ? a.moved : b.moved;
        if (a.moved && b.moved) return false;
        for (size_t d = 0; d < a.starts.size(); ++d)
            if (!uses(a.starts[d], v) && !uses(b.starts[d], v) && apartIn(a, b, d)) return true;
        if (a.extents != b.extents) return false;
        for (size_t d = 0; d < a.starts.size(); ++d)
            if (constantDifference(a.starts[d], b.starts[d]) != std::optional<int64_t>(0)) return false;
        for (size_t d = 0; d < a.starts.size(); ++d)
            if (auto k = coefficientOf(a.starts[d], v); k && std::abs(*k) >= a.extents[d]) return true;
        return false;
    }
    for (size_t d = 0; d < a.starts.size(); ++d)
        if (apartIn(a, b, d)) return true;
    return false;
}

bool conflicts(const Span& a, const Span& b) {
    if (a.buffer != b.buffer) return false;
    if (!a.starts.empty() || !b.starts.empty()) return !disjointTiles(a, b);
    return !distinct(a.slot, b.slot);
}

bool intersects(const SpanSet& a, const SpanSet& b) {
    for (const auto& x : a)
        for (auto it = b.lower_bound(Span{x.buffer, "", {}}); it != b.end() && it->buffer == x.buffer; ++it)
            if (conflicts(x, *it)) return true;
    return false;
}

// Atomic updates of one kind (all adds, all maxima) commute: they need no barrier between
// them, only against plain reads and writes and updates of another kind.
struct State {
    SpanSet reads, writes;
    std::map<StoreKind, SpanSet> atomics;
    void clear() { reads.clear(); writes.clear(); atomics.clear(); }
    bool empty() const { return reads.empty() && writes.empty() && atomics.empty(); }
    void merge(const State& o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
        for (const auto& [kind, set] : o.atomics) atomics[kind].insert(set.begin(), set.end());
    }
    friend bool operator==(const State&, const State&) = default;
};

// The block barriers in a statement (as written: one inside a loop counts once).
int countBarriers(const Stmt& s) {
    class Count : public IRVisitor {
    public:
        int n = 0;

    protected:
        void visitBarrier(const Barrier*) override { ++n; }
    } count;
    count.visit(s);
    return count.n;
}

// Collects the variables that loops and lets inside the visited code bind.
class BoundVars : public AccessVisitor {
public:
    std::set<const Var*> bound;
    std::map<const Var*, const For*> loops;
    std::map<const Var*, const LetStmt*> lets;

protected:
    void visitFor(const For* n) override {
        bound.insert(n->var.get());
        loops[n->var.get()] = n;
        AccessVisitor::visitFor(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        bound.insert(n->var.get());
        lets[n->var.get()] = n;
        AccessVisitor::visitLetStmt(n);
    }
};

// Variables bound inside the statement take many values in it: indices that use them are not
// one slot.
class SharedAccesses : public BoundVars {
public:
    explicit SharedAccesses(bool globals) : globals_(globals) {}
    State s;

protected:
    void onAccess(const ir::Access& a) override {
        if (!tracked(a.buffer)) return;
        using Via = ir::Access::Via;
        const std::vector<int64_t> element(a.indices.size(), 1);
        if (a.via == Via::Region && !a.write) s.reads.insert(access(a.buffer, a.indices, *a.extents));
        if (a.via == Via::Region && a.write)
            (a.op->name() == "atomic_add" ? s.atomics[StoreKind::AtomicAdd] : s.writes)
                .insert(access(a.buffer, a.indices, *a.extents));
        if (a.via == Via::Load || a.via == Via::Address) s.reads.insert(access(a.buffer, a.indices, element));
        if (a.via == Via::Store)
            (a.storeKind == StoreKind::Plain ? s.writes : s.atomics[a.storeKind]).insert(access(a.buffer, a.indices, element));
    }

private:
    bool globals_;

    bool tracked(const Buffer& b) const {
        return (b->scope == MemScope::Shared || (globals_ && b->scope == MemScope::Global)) && !b->mbarrierOrdered();
    }

    Span access(const Buffer& b, const std::vector<Expr>& indices, const std::vector<int64_t>& extents) {
        if (b->scope == MemScope::Global) return tile(b, indices, extents);
        if (b->shape.size() < 2 || indices.empty() || extents.empty() || extents[0] != 1) return {b.get(), "", {}};
        Expr slot = simplify(indices[0]);
        for (const Var* v : bound)
            if (uses(slot, v)) return {b.get(), "", {}};
        VarIds vars;
        vars.visit(slot);
        if (vars.thread) return {b.get(), "", {}};
        return {b.get(), printExpr(slot) + vars.ids, slot};
    }

    // A global tile the whole block agrees on: an index over the statement's own loops and lets
    // is the span it sweeps (sweep); one that sweep cannot bound, or over the thread's
    // position, makes the access the whole tensor.
    Span tile(const Buffer& b, const std::vector<Expr>& starts, const std::vector<int64_t>& extents) {
        Span a{b.get(), "", {}};
        if (starts.size() != extents.size() || starts.empty()) return a;
        std::string key;
        VarIds vars;
        for (size_t d = 0; d < starts.size(); ++d) {
            auto span = sweep(simplify(starts[d]), extents[d]);
            if (!span) return Span{b.get(), "", {}};
            vars.visit(span->first);
            key += fmt::format("{}{} +{}", d ? ", " : "", printExpr(span->first), span->second);
            a.starts.push_back(span->first);
            a.extents.push_back(span->second);
        }
        if (vars.thread) return Span{b.get(), "", {}};
        a.key = key + vars.ids;
        return a;
    }

    // The start and extent of what `start +extent` covers over all iterations of the
    // statement's loops, where it is linear in their variables (loops of step 1 and constant
    // extent whose bounds use no other variable of the statement): the start at the loop ends
    // that make it least, the extent grown by each coefficient times its loop's extent - 1
    // (`Y[bx * 64 + i, k]` over `i in parallel(64)` is `Y[bx * 64, k]` of extent 64 x 1).
    std::optional<std::pair<Expr, int64_t>> sweep(Expr start, int64_t extent) const {
        // The statement's lets by their values (a let's value may name an earlier let).
        for (size_t round = 0; round <= lets.size(); ++round) {
            std::vector<std::pair<VarPtr, Expr>> values;
            for (const auto& [v, let] : lets)
                if (uses(start, v)) values.push_back({let->var, let->value});
            if (values.empty()) break;
            start = simplify(substitute(start, values));
        }
        std::vector<std::pair<VarPtr, Expr>> ends;
        for (const Var* v : bound) {
            if (!uses(start, v)) continue;
            auto loop = loops.find(v);
            if (loop == loops.end()) return std::nullopt;
            const For* f = loop->second;
            const int64_t* n = asConstInt(f->extent);
            const int64_t* step = asConstInt(f->step);
            std::optional<int64_t> k = coefficientOf(start, v);
            if (!n || *n <= 0 || !step || *step != 1 || !k) return std::nullopt;
            for (const Var* w : bound)
                if (uses(f->min, w)) return std::nullopt;
            ends.push_back({f->var, *k >= 0 ? f->min : simplify(f->min + (*n - 1))});
            extent += std::abs(*k) * (*n - 1);
        }
        return std::pair<Expr, int64_t>{ends.empty() ? start : simplify(substitute(start, ends)), extent};
    }

    // An index's variables for its key, by identity (equal text is not the same index when two
    // variables share a name), and whether one is the thread's position.
    class VarIds : public IRVisitor {
    public:
        std::string ids;
        bool thread = false;

    protected:
        void visitVar(const Var* v) override {
            thread |= v->role == VarRole::ThreadIndex;
            ids += fmt::format(" {}", static_cast<const void*>(v));
        }
    };
};


// Variables a loop binds: its own and those bound in its body.
std::set<const Var*> boundIn(const For* f) {
    BoundVars c;
    c.bound.insert(f->var.get());
    c.visit(f->body);
    return c.bound;
}

// The state as the next iteration sees it: slots over the loop's variables become whole
// buffers; a global tile over the loop's own variable `own` alone (a for loop's: it differs
// in every iteration) becomes that tile in another iteration. A tile of another iteration of
// an inner loop is the whole tensor here: the outer loop's variables have moved on too.
State acrossBackEdge(const State& s, const std::set<const Var*>& vars, const Var* own) {
    auto widen = [&](const SpanSet& in) {
        SpanSet out;
        for (const auto& a : in) {
            bool moves = false, movesOnlyOwn = true;
            for (const Var* v : vars) {
                bool used = (a.slot && uses(a.slot, v)) ||
                            std::any_of(a.starts.begin(), a.starts.end(), [&](const Expr& e) { return uses(e, v); });
                moves |= used;
                movesOnlyOwn &= !used || v == own;
            }
            if (!moves || (a.moved && a.moved == own)) {
                out.insert(a);
            } else if (!a.starts.empty() && movesOnlyOwn) {
                Span other = a;
                other.moved = own;
                other.key = "another iteration: " + a.key;
                out.insert(other);
            } else {
                out.insert(Span{a.buffer, "", {}});
            }
        }
        return out;
    };
    State out{widen(s.reads), widen(s.writes), {}};
    for (const auto& [kind, set] : s.atomics) out.atomics[kind] = widen(set);
    return out;
}

class Inserter {
public:
    Inserter(const ThreadDependence& threads, bool globals) : threads_(threads), globals_(globals) {}

    Stmt process(const Stmt& s, State& st) {
        if (!s) return s;
        // Thread-level code under a condition only some threads meet (if (lane == 0) ...) is
        // one statement here: a barrier inside would not be reached by the others. What it
        // needs goes before it; ordering inside it is the author's (sync_threads()).
        if (onlySomeThreads(s)) return seq({leaf(accessesOf(s), st, s->loc), s});
        switch (s->kind) {
        case NodeKind::Seq: {
            std::vector<Stmt> out;
            for (const auto& c : s.as<Seq>()->stmts) out.push_back(process(c, st));
            return seq(out, s->loc);
        }
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            Stmt pre = leaf(accessesOf(l->value), st, l->loc);
            Stmt body = process(l->body, st);
            return seq({pre, letStmt(l->var, l->value, body, l->loc)});
        }
        case NodeKind::Allocate: {
            const auto* a = s.as<Allocate>();
            return allocate(a->buffer, process(a->body, st), a->loc, a->init);
        }
        case NodeKind::IfThenElse: {
            const auto* i = s.as<IfThenElse>();
            Stmt pre = leaf(accessesOf(i->cond), st, i->loc);
            State elseState = st;
            Stmt t = process(i->thenCase, st);
            Stmt e = process(i->elseCase, elseState);
            st.merge(elseState);
            return seq({pre, ifThenElse(i->cond, t, e, i->loc)});
        }
        case NodeKind::For: {
            const auto* f = s.as<For>();
            if (f->forKind == ForKind::Parallel) return seq({leaf(accessesOf(s), st, f->loc), s});
            const std::set<const Var*> vars = boundIn(f);
            auto walkLoop = [&](const State& in) {
                return iterate(in, vars, f->var.get(), [&](State& end) { return process(f->body, end); });
            };
            auto [body, out] = walkLoop(st);
            // What the code before the loop left pending may put a barrier inside the loop that
            // only its first iteration needs (Q_s filled before a loop that reads it): one barrier
            // before the loop instead, when the body then needs fewer.
            if (!st.empty()) {
                auto [clean, cleanOut] = walkLoop(State{});
                if (countBarriers(clean) < countBarriers(body)) {
                    st = cleanOut;
                    return seq({barrier(f->loc),
                                forLoop(f->var, f->min, f->extent, f->forKind, clean, f->loc, f->pipeline, f->step)});
                }
            }
            st = out;
            return forLoop(f->var, f->min, f->extent, f->forKind, body, f->loc, f->pipeline, f->step);
        }
        case NodeKind::While: {
            // As a loop, with the condition read before the first iteration and after each one:
            // a barrier the condition needs after the body goes at the body's end.
            const auto* w = s.as<While>();
            Stmt pre = leaf(accessesOf(w->cond), st, w->loc);
            BoundVars c;
            c.visit(w->body);
            auto [body, out] = iterate(st, c.bound, nullptr, [&](State& end) {
                return seq({process(w->body, end), leaf(accessesOf(w->cond), end, w->loc)}, w->body->loc);
            });
            st = out;
            return seq({pre, whileLoop(w->cond, body, w->loc)});
        }
        case NodeKind::Barrier: st.clear(); return s;
        default: return seq({leaf(accessesOf(s), st, s->loc), s});
        }
    }

private:
    const ThreadDependence& threads_;
    bool globals_;

    // A loop's body walked from the state `in` at its entry until the state at its head stops
    // changing (what the end of an iteration leaves pending, across the back edge, merged into
    // `in`; at most 8 rounds): the last walk's body and the state at the head, which is also
    // the state after the loop. `walkBody` walks one iteration from the state it is given.
    template <typename WalkBody>
    std::pair<Stmt, State> iterate(State in, const std::set<const Var*>& bound, const Var* own, WalkBody walkBody) {
        Stmt body;
        for (int round = 0; round < 8; ++round) {
            State end = in;
            body = walkBody(end);
            State merged = in;
            merged.merge(acrossBackEdge(end, bound, own));
            if (merged == in) break;
            in = merged;
        }
        return {body, in};
    }

    bool onlySomeThreads(const Stmt& s) const {
        bool varies = false;
        if (const auto* i = s.as<IfThenElse>()) varies = threads_.varies(i->cond);
        else if (const auto* f = s.as<For>())
            varies = threads_.varies(f->min) || threads_.varies(f->extent) || (f->step && threads_.varies(f->step));
        else if (const auto* w = s.as<While>()) varies = threads_.varies(w->cond);
        return varies && !hasSplit(s);
    }

    template <typename Node>
    State accessesOf(const Node& n) const {
        SharedAccesses a(globals_);
        a.visit(n);
        return a.s;
    }

    // A barrier before a statement with accesses `acc` when they conflict with `st`.
    static Stmt leaf(const State& acc, State& st, SourceLoc loc) {
        bool hazard = intersects(acc.reads, st.writes) || intersects(acc.writes, st.writes) ||
                      intersects(acc.writes, st.reads);
        for (const auto& [kind, set] : acc.atomics) {
            hazard |= intersects(set, st.reads) || intersects(set, st.writes);
            for (const auto& [other, done] : st.atomics) hazard |= other != kind && intersects(set, done);
        }
        for (const auto& [kind, done] : st.atomics) hazard |= intersects(acc.reads, done) || intersects(acc.writes, done);
        Stmt b;
        if (hazard) {
            b = barrier(loc);
            st.clear();
        }
        st.merge(acc);
        return b;
    }
};

} // namespace

Stmt insertBarriers(const Stmt& body, const LowerContext& ctx) {
    State st;
    ThreadDependence threads(body, ctx.threadIndex.get());
    // On the cpu a block is one thread: tile ops follow each other in it.
    return Inserter(threads, ctx.target.backend != Backend::Cpu).process(body, st);
}

} // namespace tlc
