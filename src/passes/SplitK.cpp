// Split-K (docs/lowering.md, "Split-K"): `grid(..., split_k = S)` on a grid whose body is one
// GEMM tile runs each tile as S blocks, each over a contiguous run of the pipelined k-loop's
// iterations. Each block writes its partial accumulator to the workspace and counts itself in
// at its tile's arrival counter; the last of the S to arrive adds the others' partials to its
// own and runs the rest of the body (the epilogue: casts, bias, activations, the store), so the
// epilogue sees the full sum once and the output may have any dtype. The workspace holds the
// partials (f32 as the accumulator, tiles x S x the accumulator's shape) and one counter per
// tile, which the launcher zeroes on the stream before the grid (emit/Group.cpp): nothing is
// asked of the caller but the workspace itself. The cpu keeps one block per tile.
#include "passes/Passes.h"

#include "ir/Accesses.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/fill/Fill.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

#include <functional>

namespace tlc {

using namespace ir;

namespace {

// The most blocks a tile may be split over: more would only add partial tiles to sum.
constexpr int64_t kMaxSplitK = 64;

const For* asPipelined(const Stmt& s) {
    const auto* f = s.as<For>();
    return f && f->forKind == ForKind::Pipelined ? f : nullptr;
}

int countPipelined(const Stmt& s) {
    struct Count : IRVisitor {
        int n = 0;
        void visitFor(const For* f) override {
            n += f->forKind == ForKind::Pipelined;
            IRVisitor::visitFor(f);
        }
    } c;
    c.visit(s);
    return c.n;
}

// Where the k-loop sits: a Seq reached from the body through lets and allocations only.
struct LoopSite {
    const Seq* seq = nullptr;
    size_t index = 0;
    const For* loop = nullptr;
};

void findSite(const Stmt& s, LoopSite& site) {
    if (!s || site.loop) return;
    switch (s->kind) {
    case NodeKind::LetStmt: return findSite(s.as<LetStmt>()->body, site);
    case NodeKind::Allocate: return findSite(s.as<Allocate>()->body, site);
    case NodeKind::Seq: {
        const auto* q = s.as<Seq>();
        for (size_t i = 0; i < q->stmts.size() && !site.loop; ++i) {
            if (const For* f = asPipelined(q->stmts[i])) site = {q, i, f};
            else findSite(q->stmts[i], site);
        }
        return;
    }
    default: return;
    }
}

const ops::GemmOp* asGemm(const Stmt& s) {
    const auto* t = s.as<TileOpStmt>();
    return t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
}

std::vector<Stmt> statementsOf(const Stmt& s) {
    if (const auto* q = s.as<Seq>()) return q->stmts;
    return {s};
}

// Why the grid's body is not one GEMM tile split-K can split (empty when it is); `acc` gets the
// accumulator.
std::string formIssue(const Kernel& k, const LoopSite& site, Buffer& acc) {
    if (k.persistent) return "it is also persistent (split_k and persistent = true together are not supported yet)";
    const int loops = countPipelined(k.body);
    if (loops != 1 || !site.loop)
        return loops == 0 ? "its body has no pipelined k-loop ('for k in pipelined(...)' around the gemm)"
               : loops > 1 ? fmt::format("its body has {} pipelined loops; split-K splits the one k-loop of a GEMM tile", loops)
                           : "its pipelined loop runs inside another loop or a condition";
    const For* loop = site.loop;
    if (const int64_t* st = loop->step ? asConstInt(loop->step) : nullptr; loop->step && (!st || *st != 1)) return "its pipelined loop has a step";
    for (const Stmt& s : statementsOf(loop->body)) {
        const ops::GemmOp* g = asGemm(s);
        if (!g) continue;
        if (acc && g->c().buffer != acc) return "the gemms of its k-loop accumulate into different fragments";
        acc = g->c().buffer;
        if (acc->scope != MemScope::Fragment) return fmt::format("the gemm accumulates into '{}', which is not a fragment", acc->name);
        if (g->clearAccum()) return "the gemm clears its accumulator (clear_accum = true) in every iteration";
    }
    if (!acc) return "its pipelined loop has no gemm at its top level";
    if (!isFloat(acc->dtype) && acc->dtype != DType::I32)
        return fmt::format("the accumulator '{}' is {}", acc->name, dtypeName(acc->dtype));
    // The accumulator starts at zero: each block adds its run of k-tiles to nothing else.
    bool cleared = false;
    for (size_t i = 0; i < site.index; ++i) {
        Footprint f = Footprint::of(site.seq->stmts[i]);
        if (!f.writes.count(acc.get())) continue;
        const auto* t = site.seq->stmts[i].as<TileOpStmt>();
        const auto* fill = t ? dynamic_cast<const ops::FillOp*>(t->op.get()) : nullptr;
        const int64_t* iv = fill ? asConstInt(fill->value()) : nullptr;
        const auto* fv = fill ? fill->value().as<FloatImm>() : nullptr;
        cleared = fill && fill->dst().coversWholeBuffer() && (fill->isClear() || (iv && *iv == 0) || (fv && fv->value == 0));
    }
    if (!cleared)
        return fmt::format("'{}' is not cleared (clear({})) before the k-loop: the S blocks of a tile would each "
                           "add what it held",
                           acc->name, acc->name);
    // The loop's other statements: only the gemms touch the accumulator, and nothing they
    // write outlives the loop (each block would keep its own run's value).
    std::set<const BufferNode*> after;
    for (size_t i = site.index + 1; i < site.seq->stmts.size(); ++i) {
        Footprint f = Footprint::of(site.seq->stmts[i]);
        after.insert(f.reads.begin(), f.reads.end());
    }
    for (const Stmt& s : statementsOf(loop->body)) {
        if (asGemm(s)) continue;
        Footprint f = Footprint::of(s);
        if (f.touches(acc.get())) return fmt::format("a statement of the k-loop besides the gemms uses '{}'", acc->name);
        for (const BufferNode* b : f.writes) {
            if (b->scope == MemScope::Global) return fmt::format("the k-loop writes global memory ('{}')", b->name);
            if (after.count(b) && b->scope != MemScope::Shared)
                return fmt::format("'{}' is written in the k-loop and read after it: each block would hold its own "
                                   "run's value",
                                   b->name);
        }
    }
    return "";
}

} // namespace

bool splitK(Kernel& k, LowerContext& ctx) {
    if (!k.splitKWritten) return true;
    const int64_t S = k.splitK;
    const SourceLoc at = k.splitKLoc.valid() ? k.splitKLoc : k.loc;
    auto refuse = [&](const std::string& why) {
        ctx.diags.report(DiagId::err_split_k_form, SourceRange(at), S, why);
        return false;
    };
    if (S < 1 || S > kMaxSplitK) return refuse(fmt::format("a tile is split over 1 to {} blocks", kMaxSplitK));
    LoopSite site;
    findSite(k.body, site);
    Buffer acc;
    // Checked on every target, the cpu too: what one compiles, every other does.
    if (std::string why = formIssue(k, site, acc); !why.empty()) return refuse(why);
    const std::string subject = "split-K";
    if (ctx.target.backend == Backend::Cpu) {
        ctx.decide(subject, "none (one block per tile)", fmt::format("lowering (split_k = {})", S),
                   "the cpu's launcher runs the tiles as an OpenMP loop over its cores; a block per tile keeps them "
                   "busy, and its k-loop runs in order",
                   at);
        return true;
    }
    if (S == 1) {
        ctx.decide(subject, "none (split_k = 1: one block per tile)", "lowering (split_k = 1)",
                   "the kernel as without split_k; its launcher still takes a workspace (of 0 bytes)", at);
        return true;
    }
    const For* loop = site.loop;
    const SourceLoc loc = loop->loc;

    // The grid: a dimension of S blocks after the author's (folded into z when there are three).
    // Each tile's linear index over the author's extents addresses its partials and counter.
    std::vector<Expr> extents = k.gridExtents;
    k.blockVars.resize(3);
    static const VarRole roles[] = {VarRole::BlockIndexX, VarRole::BlockIndexY, VarRole::BlockIndexZ};
    static const char* names[] = {"block_x", "block_y", "block_z"};
    std::vector<Expr> coords;
    for (size_t i = 0; i < extents.size(); ++i) {
        if (!k.blockVars[i]) {
            k.blockVars[i] = makeVar(ctx.freshName(names[i]), DType::I32, roles[i]);
            ctx.reserveName(k.blockVars[i]->name);
        }
        coords.push_back(Expr(k.blockVars[i]));
    }
    Expr split;
    VarPtr oldZ, newZ, rawZ;  // three dimensions: the author's z, and what replaces it
    const size_t dims = extents.size();
    if (dims < 3) {
        VarPtr z = makeVar(ctx.freshName("split"), DType::I32, VarRole::BlockIndexZ);
        ctx.reserveName(z->name);
        k.blockVars[2] = z;
        split = Expr(z);
        while (k.gridExtents.size() < 2) k.gridExtents.push_back(intImm(1));
        k.gridExtents.push_back(intImm(S));
    } else {
        // blockIdx.z = the author's z * S + the split: the body sees its z as before.
        rawZ = makeVar(ctx.freshName("block_z"), DType::I32, VarRole::BlockIndexZ);
        ctx.reserveName(rawZ->name);
        oldZ = k.blockVars[2];
        newZ = makeVar(oldZ->name, DType::I32);
        coords[2] = Expr(newZ);
        split = Expr(rawZ) % intImm(S);
        k.blockVars[2] = rawZ;
        k.gridExtents[2] = simplify(extents[2] * intImm(S));
    }
    Expr tiles = extents[0], tile = coords[0];
    for (size_t i = 1; i < dims; ++i) {
        tile = tile + coords[i] * tiles;
        tiles = tiles * extents[i];
    }
    tiles = simplify(tiles);

    // The workspace: partial tiles and arrival counters, scratch of the kernel's group.
    std::vector<Expr> pshape = {tiles, intImm(S)};
    for (const Expr& e : acc->shape) pshape.push_back(e);
    auto scratch = [&](const std::string& base, DType t, std::vector<Expr> shape, bool zeroed) {
        KernelParam p;
        p.kind = KernelParam::Kind::Tensor;
        p.name = ctx.freshName(base);
        ctx.reserveName(p.name);
        p.dtype = t;
        p.buffer = makeBuffer(p.name, t, MemScope::Global, shape, rowMajorStrides(shape));
        p.scratch = true;
        p.zeroed = zeroed;
        k.params.push_back(p);
        return p.buffer;
    };
    Buffer partials = scratch(acc->name + "_partials", acc->dtype, pshape, false);
    Buffer counters = scratch(acc->name + "_arrivals", DType::I32, {tiles}, true);

    // The k-loop over this block's run: ceil(n / S) iterations each, the last runs short or empty.
    VarPtr tileVar = ctx.freshVar("split_tile"), per = ctx.freshVar("k_per_split"), first = ctx.freshVar("k_first"),
           count = ctx.freshVar("k_count");
    for (const auto& v : {tileVar, per, first, count}) ctx.reserveName(v->name);
    const Expr n = loop->extent;
    // Pipelined loops start at 0 (docs/lowering.md, "Passes"): the body reads the run's first
    // k-tile plus the step where it read the loop's variable.
    VarPtr step = makeVar(loop->var->name, loop->var->dtype);
    Stmt newLoop = forLoop(step, intImm(0), Expr(count), ForKind::Pipelined,
                           substitute(loop->body, {{loop->var, simplify(loop->min + Expr(first) + Expr(step))}}), loc,
                           loop->pipeline, loop->step);

    // Every element of the accumulator, as a parallel loop over its shape (its layout decides
    // which thread holds what: the same in every block of the kernel).
    auto overAcc = [&](const std::function<Stmt(const std::vector<Expr>&)>& fn) {
        std::vector<VarPtr> vars;
        std::vector<Expr> idx;
        for (size_t d = 0; d < acc->shape.size(); ++d) {
            vars.push_back(ctx.freshVar(d == 0 ? "i" : d == 1 ? "j" : "l"));
            idx.push_back(Expr(vars.back()));
        }
        Stmt s = fn(idx);
        for (size_t d = vars.size(); d-- > 0;) s = forLoop(vars[d], intImm(0), acc->shape[d], ForKind::Parallel, s, loc);
        return s;
    };
    auto cell = [&](const Expr& part, const std::vector<Expr>& idx) {
        std::vector<Expr> out = {Expr(tileVar), part};
        out.insert(out.end(), idx.begin(), idx.end());
        return out;
    };
    Buffer last = makeBuffer(ctx.freshName("split_last"), DType::I32, MemScope::Shared, {intImm(1)});
    ctx.reserveName(last->name);
    Stmt publish = overAcc([&](const std::vector<Expr>& idx) { return store(partials, cell(split, idx), load(acc, idx), loc); });
    // Thread 0 counts the block in after every thread's stores are fenced and the block met;
    // split_k_arrive fences again (cumulative over what the barrier ordered) and returns the
    // count before its own.
    Expr arrivals = call("split_k_arrive", DType::I32, {call("address_of", DType::I64, {load(counters, {Expr(tileVar)})})});
    Stmt arrive = ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)),
                             store(last, {intImm(0)}, select(binary(BinaryOp::Eq, arrivals, intImm(S - 1)), intImm(1), intImm(0)), loc),
                             {}, loc);
    VarPtr s = ctx.freshVar("part");
    ctx.reserveName(s->name);
    Stmt gather = forLoop(
        s, intImm(0), intImm(S), ForKind::Serial,
        ifThenElse(binary(BinaryOp::Ne, Expr(s), split),
                   overAcc([&](const std::vector<Expr>& idx) {
                       return store(acc, idx, load(acc, idx) + load(partials, cell(Expr(s), idx)), loc);
                   }),
                   {}, loc),
        loc);
    std::vector<Stmt> rest(site.seq->stmts.begin() + long(site.index) + 1, site.seq->stmts.end());
    Stmt lastBlock = seq({comment("split-K: the last block of the tile to arrive adds the others' partial tiles to its own "
                                  "and runs the rest",
                                  loc),
                          evaluate(call("memory_fence", DType::I32, {}), loc), gather, seq(rest, loc)},
                         loc);
    Stmt reduce = allocate(
        last,
        seq({comment(fmt::format("split-K: this block's partial tile to the workspace, then its arrival at the tile's "
                                 "counter ({} blocks a tile)",
                                 S),
                     loc),
             publish, evaluate(call("memory_fence", DType::I32, {}), loc), barrier(loc), arrive, barrier(loc),
             ifThenElse(binary(BinaryOp::Ne, load(last, {intImm(0)}), intImm(0)), lastBlock, {}, loc)},
            loc),
        loc);
    Stmt tail = seq({comment(fmt::format("split-K: this block runs k-tiles {} .. {} + {} of {}", first->name, first->name,
                                         count->name, printExpr(n)),
                             loc),
                     newLoop, reduce},
                    loc);
    tail = letStmt(count, simplify(maxExpr(intImm(0), minExpr(Expr(per), n - Expr(first)))), tail, loc);
    tail = letStmt(first, simplify(split * Expr(per)), tail, loc);
    tail = letStmt(per, simplify((n + int64_t(S - 1)) / intImm(S)), tail, loc);
    tail = letStmt(tileVar, simplify(tile), tail, loc);
    std::vector<Stmt> before(site.seq->stmts.begin(), site.seq->stmts.begin() + long(site.index));
    before.push_back(tail);
    Stmt replaced = seq(before, site.seq->loc);

    // Put the rewritten sequence in place of the old one.
    struct Replace : IRMutator {
        const Seq* target;
        Stmt with;
        Stmt mutateSeq(const Seq* n, const Stmt& self) override { return n == target ? with : IRMutator::mutateSeq(n, self); }
    } replace;
    replace.target = site.seq;
    replace.with = replaced;
    k.body = replace.mutate(k.body);
    if (rawZ)
        k.body = letStmt(newZ, Expr(rawZ) / intImm(S), substitute(k.body, {{oldZ, Expr(newZ)}}), k.body->loc);
    ctx.decide(subject, fmt::format("{} blocks a tile, each over a run of ceil(k-tiles / {}) k-tiles", S, S),
               fmt::format("lowering (split_k = {})", S),
               fmt::format("each block writes its partial {} tile to the workspace and counts itself in; the last of a "
                           "tile's {} adds the others' and runs the epilogue once on the full sum (the launcher zeroes the "
                           "{} counters)",
                           dtypeName(acc->dtype), S, printExpr(tiles)),
               at);
    return true;
}

} // namespace tlc
