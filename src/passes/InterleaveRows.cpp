// Row passes interleaved (cpu targets, last). A row kernel's block is a run of loops over the
// same rows, one per tile op: layernorm's sum of each row, its variance, then the normalised
// rows streamed to Y. Each pass alone is compute (reductions over rows in L1/L2, softmax's exp)
// or memory (the store's stream), and a core runs them one after the other: compute about as
// long as the memory traffic, so both about half busy. Where no pass touches another pass's
// rows of a buffer that one of them writes, one loop's step r runs the k-th heavy pass (a row
// loop whose chunk loop holds a vector loop) on row r - k, the chunk loops merged so that a
// chunk of each runs in turn; light passes (a reduction's partials set or copied out) join the
// heavy pass before them. softmax 0.64 -> 0.76 of memcpy, layernorm 0.68 -> 0.75 (paired runs,
// bench/RESULTS.md); the result is the same, bit for bit.
//
// Own rows: `buf[row + c]`, `T[row + c, ...]` (the same c in every pass, the other indices free of
// row), or a flat tile of the block `x[row * S + col]` (tile ops keep col within the row). Only
// runs with a heavy pass that stores to a tensor (what overlaps with compute) and heavy passes
// covering as many elements a step (softmax's row max, 64 lanes a step, beside its 16-lane exp
// and store measured slower) are interleaved.
#include "passes/Passes.h"

#include "ir/Accesses.h"
#include "ir/Addends.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

namespace tlc {

using namespace ir;

namespace {

// A declaration that wraps the statements after it: a let or an allocation.
bool isWrapper(const Stmt& s) { return s.as<LetStmt>() || s.as<Allocate>(); }
Stmt wrapperBody(const Stmt& s) {
    if (const auto* l = s.as<LetStmt>()) return l->body;
    return s.as<Allocate>()->body;
}
Stmt rewrap(const Stmt& wrapper, Stmt body) {
    if (const auto* l = wrapper.as<LetStmt>()) return letStmt(l->var, l->value, std::move(body), l->loc);
    const auto* a = wrapper.as<Allocate>();
    return allocate(a->buffer, std::move(body), a->loc, a->init);
}

// The statements of a block with every declaration opened: a let or an allocation becomes an
// item followed by its body's statements (its scope then runs to the block's end: names are
// objects, and the emitter keeps each C++ name unique).
void flattenInto(const Stmt& s, std::vector<Stmt>& items) {
    if (const auto* q = s.as<Seq>()) {
        for (const Stmt& c : q->stmts) flattenInto(c, items);
    } else if (isWrapper(s)) {
        items.push_back(s);
        flattenInto(wrapperBody(s), items);
    } else if (s) {
        items.push_back(s);
    }
}
std::vector<Stmt> flatten(const Stmt& s) {
    std::vector<Stmt> items;
    flattenInto(s, items);
    return items;
}

// Items back into a statement: each wrapper encloses what follows it.
Stmt unflatten(const std::vector<Stmt>& items, size_t from = 0) {
    std::vector<Stmt> plain;
    for (size_t k = from; k < items.size(); ++k) {
        if (isWrapper(items[k])) {
            plain.push_back(rewrap(items[k], unflatten(items, k + 1)));
            return seq(plain);
        }
        plain.push_back(items[k]);
    }
    return seq(plain);
}

bool containsVectorLoop(const Stmt& s) { return containsLoop(s, ForKind::Vectorized); }

// A pass's chunk loop: a serial loop with a vector loop inside (a vector loop of its own, such as
// a reduction's fold of 64 lanes into 16, is a plain statement).
bool isChunkLoop(const Stmt& s) {
    const For* f = s.as<For>();
    return f && f->forKind == ForKind::Serial && containsVectorLoop(f->body);
}

// The elements a step of a row body's chunk loop covers: its vector loop's constant count
// (nothing where it has none).
std::optional<int64_t> chunkLanes(const Stmt& body) {
    std::vector<Stmt> items;
    flattenInto(body, items);
    for (const Stmt& item : items) {
        if (!isChunkLoop(item)) continue;
        struct Lanes : IRVisitor {
            std::optional<int64_t> lanes;
            void visitFor(const For* n) override {
                if (n->forKind == ForKind::Vectorized && !lanes)
                    if (const int64_t* c = asConstInt(n->extent)) lanes = *c;
                IRVisitor::visitFor(n);
            }
        } v;
        v.visit(item.as<For>()->body);
        return v.lanes;
    }
    return std::nullopt;
}

// A loop over rows: serial, from 0, step 1, a constant count.
std::optional<int64_t> rowCount(const Stmt& s) {
    const For* f = s.as<For>();
    if (!f || f->forKind != ForKind::Serial || !isConstInt(f->min, 0) || !isConstInt(f->step, 1)) return std::nullopt;
    const int64_t* n = asConstInt(f->extent);
    if (!n || *n < 2) return std::nullopt;
    return *n;
}

// index = row * stride + rest with rest free of row: the stride (1 for a bare `row`) and rest
// (null for none), or nothing.
std::optional<int64_t> rowTerm(const Expr& index, const Var* row, Expr& rest) {
    std::vector<Expr> terms;
    addends(index, terms);
    std::optional<int64_t> stride;
    rest = Expr();
    for (const Expr& t : terms) {
        if (!uses(t, row)) {
            rest = rest ? rest + t : t;
            continue;
        }
        if (stride) return std::nullopt;  // row in two terms
        if (t.as<Var>() == row) {
            stride = 1;
        } else if (const Binary* mul = t.as<Binary>(); mul && mul->op == BinaryOp::Mul) {
            const int64_t* c = asConstInt(mul->b);
            if (mul->a.as<Var>() != row || !c || *c < 1) return std::nullopt;
            stride = *c;
        } else {
            return std::nullopt;
        }
    }
    return stride;
}

// One buffer access of a pass: where it is in the row, and whether it writes.
struct RowAccess {
    const BufferNode* buffer;
    bool write;
    bool ownRow;     // in the pass's own row (below)
    int64_t stride;  // a flat tile's row length; 1 elsewhere
    Expr offset;     // c of buf[row + c] or T[row + c, ...] (null for none)
};

// A pass's accesses to buffers it does not allocate itself; `opaque` where it does something
// this pass does not reorder (a barrier, a tile op, a call that is not a known helper). An access
// is to the pass's own row where it is buf[row + c] or T[row + c, ...] (the other indices free
// of row), or, for a flat tile of the block (a local buffer), x[row * S + col]: the lowering of
// tile ops keeps col, the element's column, within the row.
struct Accesses : AccessVisitor {
    const Var* row;
    std::vector<RowAccess> list;
    std::set<const BufferNode*> own;
    bool opaque = false;
    explicit Accesses(const Var* r) : row(r) {}

    void note(const Buffer& b, const std::vector<Expr>& indices, bool write) {
        if (own.count(b.get())) return;
        RowAccess a{b.get(), write, false, 1, Expr()};
        Expr rest;
        if (indices.size() == 1 && row) {
            if (auto stride = rowTerm(indices[0], row, rest)) {
                a.stride = *stride;
                if (*stride == 1) a.ownRow = true, a.offset = rest;
                else a.ownRow = b->scope == MemScope::Local;
            }
        } else if (indices.size() >= 2 && row) {
            bool others = true;
            for (size_t d = 1; d < indices.size(); ++d) others &= !uses(indices[d], row);
            if (auto stride = rowTerm(indices[0], row, rest); stride && *stride == 1 && others)
                a.ownRow = true, a.offset = rest;
        }
        list.push_back(a);
    }
    void onAccess(const Access& a) override {
        if (a.via == Access::Via::Region) return;  // tile ops are opaque
        // Helpers that take addresses: prefetch and line_head touch nothing; store_line writes
        // its first argument's line and reads its second. Any other call with an address is opaque.
        if (a.via == Access::Via::Address && a.call) {
            const std::string& helper = a.call->name;
            if (helper == "prefetch" || helper == "line_head") return;
            if (helper != "store_line") opaque = true;
            else note(a.buffer, a.indices, a.argument == 0);
            return;
        }
        note(a.buffer, a.indices, a.write);
    }
    void visitAllocate(const Allocate* n) override {
        own.insert(n->buffer.get());
        AccessVisitor::visitAllocate(n);
    }
    void visitBarrier(const Barrier*) override { opaque = true; }
    void visitTileOpStmt(const TileOpStmt*) override { opaque = true; }
};

// A heavy pass's row body around its chunk loop: the lets and allocations before it (hoisted to
// the top of the iteration), the statements before and after it.
struct Split {
    std::vector<Stmt> wrappers;
    std::vector<Stmt> before, after;
    const For* chunk = nullptr;
};

std::optional<Split> splitAtChunkLoop(const Stmt& body) {
    Split split;
    std::set<const BufferNode*> writtenBefore;
    for (const Stmt& item : flatten(body)) {
        if (split.chunk) {
            split.after.push_back(item);
            continue;
        }
        if (isWrapper(item)) {
            // A let moves above the statements before it: it must not read what they write.
            if (const auto* l = item.as<LetStmt>()) {
                Accesses reads(nullptr);
                reads.visit(l->value);
                for (const RowAccess& a : reads.list)
                    if (writtenBefore.count(a.buffer)) return std::nullopt;
            } else if (item.as<Allocate>()->init) {
                return std::nullopt;
            }
            split.wrappers.push_back(item);
            continue;
        }
        if (isChunkLoop(item)) {
            const For* f = item.as<For>();
            if (!isConstInt(f->min, 0) || !isConstInt(f->step, 1)) return std::nullopt;
            split.chunk = f;
            continue;
        }
        Accesses w(nullptr);
        w.visit(item);
        for (const RowAccess& a : w.list)
            if (a.write) writtenBefore.insert(a.buffer);
        split.before.push_back(item);
    }
    for (const Stmt& item : split.after)
        if (isChunkLoop(item)) return std::nullopt;  // one chunk loop a pass
    if (!split.chunk) return std::nullopt;
    return split;
}

struct Level {
    std::vector<Stmt> lightsBefore, lightsAfter;  // light passes' bodies, on this level's row
    Split heavy;
    VarPtr row;
};

class Interleaver : public IRMutator {
public:
    explicit Interleaver(LowerContext& ctx) : ctx_(ctx) {}

protected:
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt&) override {
        return ifThenElse(n->cond, block(n->thenCase), n->elseCase ? block(n->elseCase) : Stmt(), n->loc);
    }
    Stmt mutateFor(const For* n, const Stmt&) override {
        return forLoop(n->var, n->min, n->extent, n->forKind, block(n->body), n->loc, n->pipeline, n->step);
    }

public:
    // A block with its runs interleaved; as it was (its statements' own blocks visited) where it
    // has none. The runs are found first, so that every nested block is visited once (visiting
    // the items and then, finding no run, the block again took time exponential in the depth).
    Stmt block(const Stmt& s) {
        if (!s) return s;
        std::vector<Stmt> items = flatten(s);
        std::map<size_t, std::pair<size_t, std::vector<Stmt>>> runs;  // first item -> (end, run)
        for (size_t k = 0; k < items.size();) {
            size_t end = k;
            if (auto run = interleave(items, k, end)) {
                runs.emplace(k, std::pair(end, std::move(*run)));
                k = end;
            } else {
                ++k;
            }
        }
        if (runs.empty()) return IRMutator::mutate(s);
        std::vector<Stmt> out;
        for (size_t k = 0; k < items.size();) {
            if (auto run = runs.find(k); run != runs.end()) {
                for (Stmt& item : run->second.second) out.push_back(std::move(item));
                k = run->second.first;
                continue;
            }
            out.push_back(isWrapper(items[k]) ? items[k] : mutate(items[k]));
            ++k;
        }
        return unflatten(out);
    }

private:
    // The run of row loops that starts at items[from] (comments and hoistable declarations
    // between them), interleaved: its declarations, comments and the new loop; `end` past it.
    std::optional<std::vector<Stmt>> interleave(const std::vector<Stmt>& items, size_t from, size_t& end) {
        std::optional<int64_t> rows, chunks;
        std::vector<size_t> passes;
        std::vector<Stmt> hoisted, comments;
        std::set<const BufferNode*> written;
        size_t k = from;
        for (; k < items.size(); ++k) {
            const Stmt& item = items[k];
            if (item.as<Comment>()) {
                comments.push_back(item);
                continue;
            }
            if (isWrapper(item)) {
                if (passes.empty()) break;  // declarations before the run stay where they are
                if (const auto* l = item.as<LetStmt>()) {
                    Accesses reads(nullptr);
                    reads.visit(l->value);
                    bool readsRun = false;
                    for (const RowAccess& a : reads.list) readsRun |= written.count(a.buffer) != 0;
                    if (readsRun) break;
                } else if (item.as<Allocate>()->init) {
                    break;
                }
                hoisted.push_back(item);
                continue;
            }
            auto n = rowCount(item);
            if (!n || (rows && *n != *rows)) break;
            // Heavy passes whose chunk loops cover as many elements a step, so that they run about
            // as many steps: softmax's row max (64 lanes a step) beside its exp and store (16)
            // measured slower than before them (0.65 against 0.76 of memcpy).
            if (auto c = chunkLanes(item.as<For>()->body)) {
                if (chunks && *c != *chunks) break;
                chunks = c;
            }
            rows = n;
            passes.push_back(k);
            Accesses w(nullptr);
            w.visit(item);
            for (const RowAccess& a : w.list)
                if (a.write) written.insert(a.buffer);
        }
        // Trailing comments and declarations belong to what follows the run.
        while (k > from && !passes.empty() && k - 1 > passes.back()) --k;
        if (passes.empty()) return std::nullopt;
        hoisted.clear(), comments.clear();
        for (size_t i = from; i < k; ++i) {
            if (items[i].as<Comment>()) comments.push_back(items[i]);
            else if (isWrapper(items[i])) hoisted.push_back(items[i]);
        }

        // Levels: each heavy pass opens one; light passes join the one before (or the first).
        std::vector<Level> levels;
        std::vector<const For*> loops;
        for (size_t p : passes) loops.push_back(items[p].as<For>());
        std::vector<std::pair<const For*, int>> levelOf;  // each pass's level
        for (const For* f : loops) {
            if (containsVectorLoop(f->body)) {
                Level level;
                level.row = ctx_.freshVar("row");
                auto split = splitAtChunkLoop(substitute(f->body, {{f->var, Expr(level.row)}}));
                if (!split) return std::nullopt;
                level.heavy = *split;
                levels.push_back(std::move(level));
            }
            levelOf.push_back({f, std::max<int>(0, int(levels.size()) - 1)});
        }
        if (levels.size() < 2) return std::nullopt;
        // What pays is a pass that streams a tensor out beside passes that compute: without one
        // (the edge blocks' passes over the copied tile) the passes stay apart.
        bool stores = false;
        for (const Level& level : levels) {
            Accesses a(nullptr);
            a.visit(level.heavy.chunk->body);
            for (const RowAccess& access : a.list) stores |= access.write && access.buffer->scope == MemScope::Global;
        }
        if (!stores) return std::nullopt;
        if (!independentRows(loops)) return std::nullopt;
        for (const auto& [f, l] : levelOf) {
            if (containsVectorLoop(f->body)) continue;
            Level& level = levels[l];
            Stmt body = substitute(f->body, {{f->var, Expr(level.row)}});
            // A light pass before the first heavy one runs before it; any other after its level's.
            bool beforeHeavy = true;
            for (const auto& [g, m] : levelOf) {
                if (g == f) break;
                if (m == l && containsVectorLoop(g->body)) beforeHeavy = false;
            }
            (beforeHeavy ? level.lightsBefore : level.lightsAfter).push_back(body);
        }
        // A heavy pass's lets are hoisted above its level's light passes before it: they must not
        // read what those write.
        for (Level& level : levels) {
            std::set<const BufferNode*> lightWrites;
            for (const Stmt& s : level.lightsBefore) {
                Accesses w(nullptr);
                w.visit(s);
                for (const RowAccess& a : w.list)
                    if (a.write) lightWrites.insert(a.buffer);
            }
            for (const Stmt& wrapper : level.heavy.wrappers)
                if (const auto* l = wrapper.as<LetStmt>()) {
                    Accesses reads(nullptr);
                    reads.visit(l->value);
                    for (const RowAccess& a : reads.list)
                        if (lightWrites.count(a.buffer)) return std::nullopt;
                }
        }

        end = k;
        SourceLoc at;  // the first statement of the run that has a place in the source
        for (size_t i = from; i < k && !at.valid(); ++i) at = items[i]->loc;
        ctx_.decide(fmt::format("{} loops over {} rows", passes.size(), *rows),
                    fmt::format("one loop, {} passes a row apart", levels.size()),
                    "interleave-rows",
                    "where two passes share a buffer that one writes, each touches only its own row of it: step r runs the "
                    "k-th pass with a vector loop on row r - k, a chunk of each in turn, so that memory-bound and "
                    "compute-bound passes run side by side",
                    at);
        std::vector<Stmt> out = hoisted;
        for (const Stmt& c : comments) out.push_back(c);
        out.push_back(comment(fmt::format("interleave-rows: the {} passes over rows above as one loop: step r works "
                                          "on row {}, a chunk of each in turn",
                                          levels.size(), rowsOfLevels(levels.size())),
                              at));
        out.push_back(fusedLoop(levels, *rows, at));
        return out;
    }

    // "r of the first, r - 1 of the second, r - 2 of the third".
    static std::string rowsOfLevels(size_t levels) {
        static const char* nth[] = {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"};
        std::string s;
        for (size_t l = 0; l < levels; ++l) {
            std::string which = l < 8 ? nth[l] : fmt::format("{}th", l + 1);
            s += fmt::format("{}r{} of the {}", l == 0 ? "" : (l + 1 == levels ? " and " : ", "),
                             l ? fmt::format(" - {}", l) : "", which);
        }
        return s;
    }

    // No buffer that two passes touch, one writing, is touched off the pass's own row.
    static bool independentRows(const std::vector<const For*>& loops) {
        std::vector<Accesses> all;
        for (const For* f : loops) {
            Accesses a(f->var.get());
            a.visit(f->body);
            if (a.opaque) return false;
            all.push_back(std::move(a));
        }
        std::map<const BufferNode*, std::set<size_t>> passesOf;
        std::map<const BufferNode*, bool> writtenAt;
        for (size_t p = 0; p < all.size(); ++p)
            for (const RowAccess& a : all[p].list) passesOf[a.buffer].insert(p), writtenAt[a.buffer] |= a.write;
        for (const auto& [buffer, users] : passesOf) {
            if (users.size() < 2 || !writtenAt[buffer]) continue;
            std::optional<Expr> offset;
            int64_t stride = 1;
            bool first = true;
            for (const Accesses& pass : all)
                for (const RowAccess& a : pass.list) {
                    if (a.buffer != buffer) continue;
                    if (!a.ownRow) return false;
                    if (first) offset = a.offset, stride = a.stride, first = false;
                    else if (a.stride != stride || bool(a.offset) != bool(*offset) ||
                             (a.offset && !equal(a.offset, *offset)))
                        return false;
                }
        }
        return true;
    }

    Stmt fusedLoop(std::vector<Level>& levels, int64_t rows, SourceLoc loc) {
        const int64_t K = int64_t(levels.size());
        VarPtr r = ctx_.freshVar("r");
        std::vector<VarPtr> on;
        for (int64_t l = 0; l < K; ++l) on.push_back(ctx_.freshVar("live", DType::Bool));

        std::vector<Stmt> body, chunkSteps;
        VarPtr j = ctx_.freshVar("j");
        Expr chunks;
        for (const Level& level : levels) {
            const Expr& c = level.heavy.chunk->extent;
            if (!chunks) chunks = c;
            else if (!equal(chunks, c)) chunks = maxExpr(chunks, c);
        }
        chunks = simplify(chunks, ctx_.bounds());
        for (int64_t l = 0; l < K; ++l) {
            Level& level = levels[l];
            std::vector<Stmt> before = level.lightsBefore;
            before.insert(before.end(), level.heavy.before.begin(), level.heavy.before.end());
            if (!before.empty()) body.push_back(ifThenElse(Expr(on[l]), seq(before)));
            const For* chunk = level.heavy.chunk;
            Expr runs = Expr(on[l]);
            if (!equal(chunk->extent, chunks)) runs = logicalAnd(runs, Expr(j) < chunk->extent);
            chunkSteps.push_back(ifThenElse(runs, substitute(chunk->body, {{chunk->var, Expr(j)}})));
        }
        body.push_back(forLoop(j, intImm(0), chunks, ForKind::Serial, seq(chunkSteps), loc));
        for (int64_t l = 0; l < K; ++l) {
            std::vector<Stmt> after = levels[l].heavy.after;
            after.insert(after.end(), levels[l].lightsAfter.begin(), levels[l].lightsAfter.end());
            if (!after.empty()) body.push_back(ifThenElse(Expr(on[l]), seq(after)));
        }
        // The heavy passes' declarations around it all, from the first level's; a let's value is
        // computed only on its level's rows (0 elsewhere: it may read or address its row).
        Stmt iteration = seq(body);
        for (int64_t l = K; l-- > 0;) {
            for (size_t w = levels[l].heavy.wrappers.size(); w-- > 0;) {
                const Stmt& wrapper = levels[l].heavy.wrappers[w];
                if (const auto* let = wrapper.as<LetStmt>())
                    iteration = letStmt(let->var, select(Expr(on[l]), let->value, zero(let->value.dtype())), iteration, let->loc);
                else
                    iteration = rewrap(wrapper, iteration);
            }
        }
        for (int64_t l = K; l-- > 0;) {
            Expr row = Expr(r) - l;
            Expr active = l == 0 ? Expr(r) < intImm(rows) : (l == K - 1 ? intImm(l - 1) < Expr(r)
                                                                         : logicalAnd(intImm(l - 1) < Expr(r), Expr(r) < intImm(rows + l)));
            iteration = letStmt(levels[l].row, simplify(row, ctx_.bounds()),
                                letStmt(on[l], active, iteration));
        }
        return forLoop(r, intImm(0), intImm(rows + K - 1), ForKind::Serial, iteration, loc);
    }

    LowerContext& ctx_;
};

} // namespace

Stmt interleaveRows(const Stmt& body, LowerContext& ctx) {
    return Interleaver(ctx).block(body);
}

} // namespace tlc
