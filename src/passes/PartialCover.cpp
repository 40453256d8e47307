// warn_tile_covers_part: a tile op whose region spans a fixed window of a dimension set at launch
// (a size), where no loop, grid or thread index moves the window, only ever touches the first
// elements of that dimension: with a larger size the rest is silently never read or written.
// (A fused residual + RMSNorm holding whole rows of a compile-time block_N computed wrong rows
// for N > block_N on every target, issue 45.) A precondition over the size (`require N <=
// block_N;`) says the author knows, and silences it.
#include "passes/Passes.h"

#include "ir/Printer.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <set>

namespace tlc {

using namespace ir;

namespace {

// Every variable an expression reads, and whether it reads memory.
class Reads : public IRVisitor {
public:
    std::set<const Var*> vars;
    bool loads = false;

protected:
    void visitVar(const Var* n) override { vars.insert(n); }
    void visitLoad(const Load* n) override {
        loads = true;
        IRVisitor::visitLoad(n);
    }
};

Reads readsOf(const Expr& e) {
    Reads r;
    r.visit(e);
    return r;
}

class Finder : public IRVisitor {
public:
    Finder(const Kernel& k, DiagnosticEngine& diags) : kernel_(k), diags_(diags) {
        for (const auto& p : k.params)
            if (p.var) fixed_.insert(p.var.get());
        for (const auto& pre : k.preconditions)
            for (const Var* v : readsOf(pre.condition).vars) required_.insert(v);
    }

protected:
    // A let over fixed values is fixed too (`let n = N / 2;`).
    void visitLetStmt(const LetStmt* n) override {
        if (isFixed(n->value)) fixed_.insert(n->var.get());
        IRVisitor::visitLetStmt(n);
    }

    void visitTileOpStmt(const TileOpStmt* n) override {
        auto look = [&](const Region* r, const char* how) {
            const Buffer& b = r->buffer;
            if (b->scope != MemScope::Global) return;
            for (size_t d = 0; d < r->extents.size() && d < b->shape.size(); ++d) {
                const Expr& size = b->shape[d];
                if (asConstInt(size) || r->extents[d] <= 1 || !isFixed(r->starts[d])) continue;
                Reads sizeReads = readsOf(size);
                bool acknowledged = false;
                for (const Var* v : sizeReads.vars) acknowledged = acknowledged || required_.count(v);
                if (acknowledged || !reported_.insert({n, d}).second) continue;
                std::string sizeText = printExpr(size);
                diags_.report(DiagId::warn_tile_covers_part, SourceRange(n->loc.valid() ? n->loc : kernel_.loc),
                              n->op->str(), how, r->extents[d], d, b->name, sizeText);
                diags_.note(SourceRange(n->loc.valid() ? n->loc : kernel_.loc),
                            fmt::format("if every launch has {} <= {}, say so at the kernel's top with 'require {} <= "
                                        "{};': the launcher then refuses the others",
                                        sizeText, r->extents[d], sizeText, r->extents[d]));
            }
        };
        for (const Region* r : n->op->reads()) look(r, "reads");
        for (const Region* r : n->op->writes()) look(r, "writes");
        IRVisitor::visitTileOpStmt(n);
    }

private:
    const Kernel& kernel_;
    DiagnosticEngine& diags_;
    std::set<const Var*> fixed_;     // the same in every block, thread and iteration
    std::set<const Var*> required_;  // read by a precondition
    std::set<std::pair<const TileOpStmt*, size_t>> reported_;

    bool isFixed(const Expr& e) const {
        Reads r = readsOf(e);
        if (r.loads) return false;
        for (const Var* v : r.vars)
            if (!fixed_.count(v)) return false;
        return true;
    }
};

} // namespace

void warnPartialCover(const Kernel& kernel, DiagnosticEngine& diags) { Finder(kernel, diags).visit(kernel.body); }

} // namespace tlc
