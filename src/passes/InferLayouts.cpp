// Layout inference over the tile graph. Constraints, strongest first:
//   gemm          the accumulator's layout is fixed by the chosen instruction (here: SIMT)
//   reduce        dst = src with the reduced dimension projected away
//   copy          fragment to fragment: the same layout
//   parallel      every fragment indexed by bare loop variables is the loop's domain layout
//                 projected onto those variables; dimensions indexed by no loop variable (a
//                 serial loop's `k`, a constant) are held whole by each thread, and `x[j / c]`
//                 merges c neighbouring elements of the domain (layout follows the reader)
// Propagation runs to a fixed point; a fragment nothing constrains gets the default layout of
// its shape and propagation resumes, except fragments only a reader can place: those read
// with such indices wait for their loop, and those read outside parallel loops (by every
// thread) are replicated. A parallel loop that only reads a fragment laid out for another
// use reads it through shared memory (lowerParallel); other contradictions are reported
// naming both sources.
#include "passes/Passes.h"

#include "ir/Visitor.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/copy/Copy.h"
#include "ops/copy/SharedAccess.h"
#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmInfer.h"
#include "ops/gemm/GemmMfma.h"
#include "ops/gemm/GemmPlan.h"
#include "ops/gemm/GemmWgmma.h"
#include "ops/parallel/Parallel.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

#include <set>
#include <tuple>

namespace tlc {

using namespace ir;
using layout::Fragment;

namespace {

struct Constraint {
    enum class Kind { Equal, Project } kind;
    Buffer from, to;               // to = from (Equal) or from.project(keep)
    std::vector<size_t> keep;
    std::string source;            // the op, for messages
    SourceLoc loc;
};

struct Graph {
    std::vector<Buffer> fragments;            // in program order
    std::vector<Constraint> constraints;
    std::vector<const ops::GemmOp*> gemms;  // their accumulators' layouts are fixed
    std::vector<SourceLoc> gemmLocs;
    std::vector<ops::ParallelNest> loops;
    std::vector<std::pair<const ops::AnnotateLayoutOp*, SourceLoc>> annotations;
    std::vector<const ops::CopyOp*> sharedCopies;  // copies with a shared side, for the layout cost
    std::set<const BufferNode*> readOutside;       // fragments accessed outside parallel loops
};

class GraphBuilder : public IRVisitor {
public:
    Graph g;

protected:
    void visitAllocate(const Allocate* n) override {
        if (n->buffer->scope == MemScope::Fragment) g.fragments.push_back(n->buffer);
        IRVisitor::visitAllocate(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        const TileOp* op = n->op.get();
        if (const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(op)) {
            g.annotations.emplace_back(a, n->loc);
        } else if (const auto* gemm = dynamic_cast<const ops::GemmOp*>(op)) {
            g.gemms.push_back(gemm);
            g.gemmLocs.push_back(n->loc);
        } else if (const auto* r = dynamic_cast<const ops::ReduceOp*>(op)) {
            std::vector<size_t> keep;
            for (size_t d = 0; d < r->src().rank(); ++d)
                if (d != size_t(r->dim())) keep.push_back(d);
            g.constraints.push_back({Constraint::Kind::Project, r->src().buffer, r->dst().buffer, keep, r->str(), n->loc});
        } else if (const auto* c = dynamic_cast<const ops::CopyOp*>(op)) {
            if (c->src().buffer->scope == MemScope::Fragment && c->dst().buffer->scope == MemScope::Fragment)
                g.constraints.push_back({Constraint::Kind::Equal, c->src().buffer, c->dst().buffer, {}, c->str(), n->loc});
            if (c->src().buffer->scope == MemScope::Shared || c->dst().buffer->scope == MemScope::Shared)
                g.sharedCopies.push_back(c);
        }
    }
    void visitLoad(const Load* n) override {
        if (n->buffer->scope == MemScope::Fragment) g.readOutside.insert(n->buffer.get());
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        if (n->buffer->scope == MemScope::Fragment) g.readOutside.insert(n->buffer.get());
        IRVisitor::visitStore(n);
    }
    void visitFor(const For* n) override {
        if (n->forKind == ForKind::Parallel) {
            if (auto nest = ops::parallelNest(n)) {
                g.loops.push_back(*nest);
                return;  // the nest's inner loops are part of it
            }
        }
        IRVisitor::visitFor(n);
    }
};

// The region's tile (its dimensions that are not 1) is the last two of its buffer.
bool tileDimsAreLast(const Region& r) {
    size_t rank = r.rank();
    for (size_t d = 0; d + 2 < rank; ++d)
        if (r.extents[d] != 1) return false;
    return rank >= 2 && r.extents[rank - 1] > 1 && r.extents[rank - 2] > 1;
}

class Solver {
public:
    Solver(Graph& g, const std::vector<ops::GemmPlan>& plans, LowerContext& ctx, std::string kernelName)
        : g_(g), plans_(plans), ctx_(ctx), kernel_(std::move(kernelName)) {}

    bool run() {
        for (size_t i = 0; i < g_.gemms.size(); ++i)
            assign(g_.gemms[i]->c().buffer, plans_[i].accumulator, g_.gemms[i]->str(), g_.gemmLocs[i]);
        while (true) {
            propagate();
            if (failed_) return false;
            size_t before = ctx_.layouts.size();
            Buffer pending = nextUnassigned();
            // What a loop's default domain placed propagates before readers place anything.
            if (!pending && ctx_.layouts.size() != before) continue;
            if (!pending && placeByReaders()) continue;
            if (!pending) pending = firstUnknown();
            if (!pending) break;
            assign(pending, layout::defaultFragment(shapeOf(pending), ctx_.threads), "its default layout");
        }
        return !failed_;
    }

private:
    Graph& g_;
    const std::vector<ops::GemmPlan>& plans_;  // one per gemm
    LowerContext& ctx_;
    std::string kernel_;
    std::map<const BufferNode*, std::string> why_;
    bool failed_ = false;

    static std::vector<int64_t> shapeOf(const Buffer& b) {
        std::vector<int64_t> s;
        constantShape(b, s);
        return s;
    }

    bool known(const Buffer& b) const { return ctx_.layouts.count(b.get()) > 0; }

    void assign(const Buffer& b, const Fragment& given, const std::string& source, SourceLoc loc = {}) {
        // A rule may derive a layout without the buffer's unit dimensions (a reduction into
        // [1, N]): the buffer gets it in its own rank, or lowering indexes it wrongly.
        Fragment f = given;
        std::vector<int64_t> shape;
        if (ir::constantShape(b, shape) && shape != f.shape())
            if (auto fitted = f.withUnitDims(shape)) f = *fitted;
        auto it = ctx_.layouts.find(b.get());
        if (it == ctx_.layouts.end()) {
            ctx_.layouts.emplace(b.get(), f);
            why_[b.get()] = source;
            return;
        }
        if (it->second.sameAs(f) || it->second.samePlacement(f)) return;
        if (!failed_)
            ctx_.diags.report(DiagId::err_layout_conflict, SourceRange(loc), b->name,
                              fmt::format("'{}' gives {} but '{}' needs {}", why_[b.get()], it->second.str(), source, f.str()));
        failed_ = true;
    }

    // The layouts a loop's accesses ask for, given its domain. A fragment the loop only reads
    // that is laid out for another use keeps that layout: the loop reads it through shared
    // memory (lowerParallel decides, access by access, and logs it). Accesses by other than
    // bare loop variables only place fragments nothing else placed: where the fragment has a
    // layout, lowering finds out whether the thread holds the element.
    void assignFromLoop(const ops::ParallelNest& nest, const Fragment& domain) {
        std::string source = fmt::format("the parallel loop at line {}", nest.loc.line);
        auto accesses = ops::fragmentAccesses(nest.body);
        for (const auto& a : accesses) {
            auto dims = ops::directDims(a, nest);
            if (!dims) continue;
            Fragment wanted = domain.project(*dims);
            if (known(a.buffer) && !ctx_.layoutOf(a.buffer).samePlacement(wanted)) {
                bool writes = std::any_of(accesses.begin(), accesses.end(),
                                          [&](const ops::FragmentAccess& w) { return w.isStore && w.buffer == a.buffer; });
                if (!writes) continue;
            }
            assign(a.buffer, wanted, source, nest.loc);
        }
        for (const auto& a : accesses)
            if (!known(a.buffer) && !ops::directDims(a, nest))
                if (auto wanted = ops::layoutForAccess(a, nest, domain)) assign(a.buffer, *wanted, source, nest.loc);
    }

    // Fragments whose layout their readers decide: read with a loop variable divided, or with
    // indices of no loop variable, in some parallel loop, or read outside parallel loops.
    // Those a loop also indexes with bare loop variables are placed by that loop instead.
    bool placedByReader(const Buffer& b) const {
        if (g_.readOutside.count(b.get())) return true;
        bool partial = false;
        for (const auto& nest : g_.loops)
            for (const auto& a : ops::fragmentAccesses(nest.body)) {
                if (a.buffer != b) continue;
                if (ops::directDims(a, nest)) return false;
                partial |= ops::layoutForAccess(a, nest, layout::defaultFragment(nest.extents, ctx_.threads)).has_value();
            }
        return partial;
    }

    void propagate() {
        for (bool changed = true; changed && !failed_;) {
            size_t before = ctx_.layouts.size();
            for (const auto& c : g_.constraints) {
                if (c.kind == Constraint::Kind::Equal) {
                    if (known(c.from)) assign(c.to, ctx_.layoutOf(c.from), c.source, c.loc);
                    else if (known(c.to)) assign(c.from, ctx_.layoutOf(c.to), c.source, c.loc);
                } else if (known(c.from)) {
                    assign(c.to, ctx_.layoutOf(c.from).project(c.keep), c.source, c.loc);
                }
            }
            for (const auto& nest : g_.loops) {
                bool anyKnown = false;
                for (const auto& a : ops::fragmentAccesses(nest.body)) {
                    auto dims = ops::directDims(a, nest);
                    anyKnown |= dims && dims->size() == nest.vars.size() && known(a.buffer);
                }
                if (!anyKnown) continue;
                Fragment domain = *ops::domainOf(nest, ctx_.layouts, ctx_.threads);
                assignFromLoop(nest, domain);
            }
            changed = ctx_.layouts.size() != before;
        }
    }

    // After the tiles: fragments their readers place (placedByReader). One step at a time, so
    // that propagation follows each; false when there is none.
    bool placeByReaders() {
        // Loops whose readers place fragments: their domain is the loop's default, or, when a
        // tile is read by every loop variable in order (x[i, k] in a loop over i, k serial),
        // the rows of that tile's default layout, so that a row is read by the threads that
        // would hold it.
        for (const auto& nest : g_.loops) {
            bool placesUnknown = false;
            std::optional<Fragment> domain;
            for (const auto& a : ops::fragmentAccesses(nest.body)) {
                if (known(a.buffer) || ops::directDims(a, nest) || !placedByReader(a.buffer)) continue;
                std::vector<int64_t> shape;
                if (!constantShape(a.buffer, shape)) continue;
                auto uses = ops::indexUses(a, nest);
                std::vector<size_t> loopDims;
                for (size_t d = 0; d < uses.size(); ++d)
                    if (uses[d].kind == ops::IndexUse::Kind::Loop && uses[d].divisor == 1 && uses[d].dim == loopDims.size())
                        loopDims.push_back(d);
                placesUnknown |= ops::layoutForAccess(a, nest, layout::defaultFragment(nest.extents, ctx_.threads)).has_value();
                if (!domain && loopDims.size() == nest.vars.size() && shape.size() > loopDims.size()) {
                    Fragment rows = layout::defaultFragment(shape, ctx_.threads).project(loopDims);
                    if (rows.shape() == nest.extents) domain = rows;
                }
            }
            if (!placesUnknown) continue;
            size_t before = ctx_.layouts.size();
            if (!domain) domain = *ops::domainOf(nest, ctx_.layouts, ctx_.threads);
            std::string source = fmt::format("the parallel loop at line {}", nest.loc.line);
            for (const auto& a : ops::fragmentAccesses(nest.body))
                if (auto dims = ops::directDims(a, nest); dims && !known(a.buffer))
                    assign(a.buffer, domain->project(*dims), source, nest.loc);
            for (const auto& a : ops::fragmentAccesses(nest.body))
                if (!known(a.buffer) && !ops::directDims(a, nest))
                    if (auto wanted = ops::layoutForAccess(a, nest, *domain)) assign(a.buffer, *wanted, source, nest.loc);
            // Only progress counts: a domain of another shape than the default one (a loop over
            // part of a larger fragment) may place nothing, and the caller would ask again forever.
            if (ctx_.layouts.size() != before || failed_) return true;
        }
        // Read by every thread outside parallel loops: every thread holds it.
        for (const auto& b : g_.fragments)
            if (!known(b) && g_.readOutside.count(b.get())) {
                std::vector<int64_t> shape;
                if (!constantShape(b, shape)) continue;
                assign(b, layout::replicatedFragment(shape, ctx_.threads), "its reads outside parallel loops");
                return true;
            }
        return false;
    }

    // The next fragment to give a default layout. Tiles (rank >= 2) first, largest first, so
    // that vectors derive from the tiles they belong to (a reduction's result, a row vector
    // in a loop over a tile); then loops whose vectors are indexed by some of their variables
    // but that hold no tile take their default domain; then the remaining vectors.
    // Whether a reduction will give b its layout from a source not placed yet (a [1, N] result
    // keeps rank 2, but takes its source's placement, not a default of its own).
    bool projectedFromUnknown(const Buffer& b) const {
        for (const auto& c : g_.constraints)
            if (c.kind == Constraint::Kind::Project && c.to == b && !known(c.from)) return true;
        return false;
    }

    Buffer nextUnassigned() {
        Buffer best;
        for (const auto& b : g_.fragments)
            if (!known(b) && b->shape.size() >= 2 && (!best || b->shape.size() > best->shape.size()) && !placedByReader(b) &&
                !projectedFromUnknown(b))
                best = b;
        if (best) return best;
        for (const auto& nest : g_.loops) {
            if (nest.vars.size() < 2) continue;
            bool touchesUnknown = false;
            for (const auto& a : ops::fragmentAccesses(nest.body))
                touchesUnknown |= !known(a.buffer) && ops::directDims(a, nest).has_value();
            if (!touchesUnknown) continue;
            Fragment domain = layout::defaultFragment(nest.extents, ctx_.threads);
            for (const auto& a : ops::fragmentAccesses(nest.body))
                if (auto dims = ops::directDims(a, nest); dims && !known(a.buffer))
                    assign(a.buffer, domain.project(*dims), fmt::format("the parallel loop at line {}", nest.loc.line), nest.loc);
            return nextUnassigned();
        }
        return {};
    }

    Buffer firstUnknown() const {
        for (const auto& b : g_.fragments)
            if (!known(b)) return b;
        return {};
    }
};

} // namespace

namespace {

// Layouts the author asked for (annotate_layout) come first: gemm planning sees them, and a
// wgmma operand whose layout is taken keeps the mma.sync form.
std::set<const BufferNode*> annotateLayouts(const Graph& g, LowerContext& ctx) {
    std::set<const BufferNode*> annotated;
    for (const auto& [a, loc] : g.annotations) {
        const Buffer& b = a->buffer();
        annotated.insert(b.get());
        if (b->shape.size() < 2) continue;
        int64_t elemBytes = dtypeBytes(b->dtype);
        LowerContext::SharedLayout chosen{.swizzle = layout::swizzleOf(a->layout(), elemBytes), .reason = a->str()};
        if (a->layout() == layout::SharedLayoutName::Padded) chosen.padElems = 16 / elemBytes;
        if (!chosen.swizzle.isIdentity() || chosen.padElems) ctx.sharedLayouts[b.get()] = chosen;
    }
    return annotated;
}

// Destinations of TMA loads whose rows are wider than one swizzle span come as stacked boxes
// (ops::claimTmaLayout): fixed before gemm planning, which then sees the layout as it will be.
void claimTmaLayouts(const Graph& g, LowerContext& ctx) {
    for (const ops::CopyOp* c : g.sharedCopies)
        if (c->tmaBarrier()) ops::claimTmaLayout(*c, ctx);
}

// Shared operands of wgmma gemms get the canonical layout the descriptors describe (planning
// checked that they can). Those of mma.sync gemms are read eight rows at a time (ldmatrix, or
// the same pattern element by element): a swizzle keeps those reads free of bank conflicts.
// Only tiles that are a buffer's last two dimensions qualify, so that the swizzle's row is the
// tile's row.
void chooseSharedLayouts(const Graph& g, const std::vector<ops::GemmPlan>& plans,
                         const std::set<const BufferNode*>& annotated, LowerContext& ctx) {
    for (size_t i = 0; i < g.gemms.size(); ++i) {
        if (plans[i].kind != ops::GemmPlan::Kind::Wgmma) continue;
        for (const Region* r : {&g.gemms[i]->a(), &g.gemms[i]->b()})
            if (r->buffer->scope == MemScope::Shared && !ctx.sharedLayouts.count(r->buffer.get()))
                ctx.sharedLayouts[r->buffer.get()] = *ops::wgmmaSharedLayout(r->buffer, "wgmma in " + g.gemms[i]->str());
    }
    if (!ctx.target.has(Feature::Ldmatrix)) return;
    for (size_t i = 0; i < g.gemms.size(); ++i) {
        const ops::GemmOp* gemm = g.gemms[i];
        if (plans[i].kind != ops::GemmPlan::Kind::MmaSm80) continue;
        for (const Region* r : {&gemm->a(), &gemm->b()})
            if (r->buffer->scope == MemScope::Shared && tileDimsAreLast(*r) && !annotated.count(r->buffer.get()))
                ctx.swizzleForTensorCores(r->buffer, gemm->str());
    }
}

// Shared tiles that neither a gemm nor an annotation fixed: the cheapest layout for the
// accesses of the copies that move them and of the MFMA gemms that read them
// (layout/BankConflicts.h). One thread (the cpu) has no banks to spread.
void chooseByCost(const Graph& g, const std::vector<ops::GemmPlan>& plans, LowerContext& ctx) {
    if (ctx.threads <= 1) return;
    std::set<const BufferNode*> fixed;
    for (const auto& [a, loc] : g.annotations) fixed.insert(a->buffer().get());
    std::vector<Buffer> order;
    std::map<const BufferNode*, std::vector<layout::SharedAccess>> accesses;
    auto add = [&](const Buffer& b, std::optional<layout::SharedAccess> a) {
        if (!a) return;
        if (!accesses.count(b.get())) order.push_back(b);
        accesses[b.get()].push_back(std::move(*a));
    };
    auto free = [&](const Buffer& b) {
        return b->scope == MemScope::Shared && !fixed.count(b.get()) && !ctx.sharedLayouts.count(b.get());
    };
    for (const ops::CopyOp* c : g.sharedCopies)
        for (const Buffer& b : {c->src().buffer, c->dst().buffer})
            if (free(b)) add(b, ops::sharedAccess(*c, b, ctx));
    for (size_t i = 0; i < g.gemms.size(); ++i)
        for (const Region* r : {&g.gemms[i]->a(), &g.gemms[i]->b()})
            if (free(r->buffer)) add(r->buffer, ops::mfmaOperandAccess(*g.gemms[i], plans[i], r->buffer, ctx));
    for (const Buffer& b : order) {
        std::vector<int64_t> shape;
        constantShape(b, shape);
        layout::LayoutChoice choice = layout::cheapestLayout(shape, dtypeBytes(b->dtype), accesses[b.get()], ctx.sharedBanks());
        LowerContext::SharedLayout& chosen = ctx.sharedLayouts[b.get()];
        chosen.swizzle = choice.layout.swizzle();
        chosen.padElems = choice.layout.pad();
        chosen.reason = choice.reason;
    }
}

// The bank-conflict wavefronts of every access the cost model knows (copies to and from
// shared memory, MFMA operand reads) under the layout each buffer got, and stored row-major,
// for the kernel report. Boxes (wgmma, TMA) are read by the hardware's own pattern: not modelled.
void recordAccessCosts(const Graph& g, const std::vector<ops::GemmPlan>& plans, LowerContext& ctx) {
    if (ctx.threads <= 1) return;
    auto record = [&](const Buffer& b, std::optional<layout::SharedAccess> a) {
        if (!a || b->scope != MemScope::Shared) return;
        std::vector<int64_t> shape;
        if (!constantShape(b, shape) || shape.empty()) return;
        layout::Layout stored = layout::Layout::rowMajor(shape);
        if (auto it = ctx.sharedLayouts.find(b.get()); it != ctx.sharedLayouts.end()) {
            if (it->second.boxCols) return;
            stored = layout::Layout::rowMajor(shape, it->second.padElems).compose(it->second.swizzle);
        }
        const int64_t bytes = dtypeBytes(b->dtype);
        ctx.sharedAccessCosts.push_back({b, a->what, layout::conflictWavefronts(*a, stored, bytes, ctx.sharedBanks()),
                                         layout::conflictWavefronts(*a, layout::Layout::rowMajor(shape), bytes,
                                                                    ctx.sharedBanks())});
    };
    for (const ops::CopyOp* c : g.sharedCopies)
        for (const Buffer& b : {c->src().buffer, c->dst().buffer})
            if (b->scope == MemScope::Shared) record(b, ops::sharedAccess(*c, b, ctx));
    for (size_t i = 0; i < g.gemms.size(); ++i)
        for (const Region* r : {&g.gemms[i]->a(), &g.gemms[i]->b()})
            if (r->buffer->scope == MemScope::Shared)
                record(r->buffer, ops::mfmaOperandAccess(*g.gemms[i], plans[i], r->buffer, ctx));
}

} // namespace

bool inferLayouts(const Kernel& kernel, LowerContext& ctx) {
    GraphBuilder builder;
    builder.visit(kernel.body);
    std::set<const BufferNode*> annotated = annotateLayouts(builder.g, ctx);
    claimTmaLayouts(builder.g, ctx);
    std::vector<ops::GemmPlan> plans;
    for (size_t i = 0; i < builder.g.gemms.size(); ++i) {
        plans.push_back(ops::planGemm(*builder.g.gemms[i], ctx));
        if (std::string note = ops::describePlan(plans.back()); !note.empty())
            ctx.gemmPlans.push_back(fmt::format("{} (line {}): {}", builder.g.gemms[i]->str(), builder.g.gemmLocs[i].line, note));
        ops::explainGemmPlan(*builder.g.gemms[i], plans.back(), ctx, builder.g.gemmLocs[i]);
    }
    Solver solver(builder.g, plans, ctx, kernel.name);
    if (!solver.run()) return false;
    chooseSharedLayouts(builder.g, plans, annotated, ctx);
    chooseByCost(builder.g, plans, ctx);
    recordAccessCosts(builder.g, plans, ctx);
    return true;
}

} // namespace tlc
