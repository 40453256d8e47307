// Loop-invariant math out of loops (cpu targets). `for (j) { y[j] = (x[j] - mean[i] / 4096.0f) *
// rsqrt(var[i] / 4096.0f + eps) }` computes the same quotients and square root every iteration.
// A C++ compiler moves such code out of loops itself, but not a square root: std::sqrt may set
// errno, so g++ keeps a vsqrtps, a vdivps and a branch to the library per vector of layernorm's
// rows, which held it to 0.55 of memcpy. Each loop's invariant calls of math functions and float
// divisions become lets: before the loop when they use nothing the loop binds, at the top of its
// body when they use only its variable but sit in a loop inside it. Equal expressions share one
// let. Only what cannot fault moves, since the loop may run no iteration or reach them under an
// `if`: float arithmetic, math functions, and loads of the block's own arrays that nothing in the
// loop writes, at indices known to lie inside them.
#include "passes/Passes.h"

#include "ir/Accesses.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <set>

namespace tlc {

using namespace ir;

namespace {

bool pureMath(const std::string& name) {
    static const std::set<std::string> functions = {"exp",   "exp2", "log",  "log2",    "sqrt", "rsqrt", "tanh",
                                                    "erf",   "abs",  "pow",  "sigmoid", "silu", "gelu", "relu", "fast_exp", "fast_exp2",
                                                    "fast_log", "fast_log2", "fast_sqrt", "fast_rsqrt", "fast_tanh"};
    return functions.count(name) != 0;
}

// What a loop's body binds and writes.
struct LoopFacts : AccessVisitor {
    std::set<const Var*> bound;
    std::set<const BufferNode*> written;
    bool opaque = false;  // something this pass does not know how to move code across

    void onAccess(const Access& a) override {
        // Helpers may write through any address they take.
        if (a.write || a.via == Access::Via::Address) written.insert(a.buffer.get());
    }
    void visitFor(const For* n) override {
        bound.insert(n->var.get());
        AccessVisitor::visitFor(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        bound.insert(n->var.get());
        AccessVisitor::visitLetStmt(n);
    }
    void visitAllocate(const Allocate* n) override {
        written.insert(n->buffer.get());  // fresh each iteration
        AccessVisitor::visitAllocate(n);
    }
    void visitTileOpStmt(const TileOpStmt*) override { opaque = true; }
};

class Hoist : public IRMutator {
public:
    explicit Hoist(LowerContext& ctx) : ctx_(ctx), bounds_(ctx.bounds()) {}

protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        LoopFacts facts;
        facts.visit(n->body);
        facts.bound.insert(n->var.get());
        // Before the loop: what uses nothing it binds. At the top of its body: what uses only
        // its variable, inside a loop of the body (with the variable's range known).
        std::vector<Hoisted> before, top;
        if (!facts.opaque) collect(n->body, facts, 0, false, before);
        Stmt body = replaceAll(n->body, before);
        if (boundsKnown(n)) bounds_.push_back({n->var.get(), loopBounds(n)});
        if (!facts.opaque && boundsKnown(n)) {
            LoopFacts inner = facts;
            inner.bound.erase(n->var.get());
            collect(body, inner, 0, true, top);
            body = replaceAll(body, top);
        }
        body = mutate(body);
        if (boundsKnown(n)) bounds_.pop_back();
        for (auto it = top.rbegin(); it != top.rend(); ++it) body = letStmt(it->var, it->value, body, n->loc);
        Stmt loop = self;
        if (!body.same(n->body))
            loop = Stmt(std::make_shared<For>(n->loc, n->var, n->min, n->extent, n->step, n->forKind, body, n->pipeline));
        for (auto it = before.rbegin(); it != before.rend(); ++it) loop = letStmt(it->var, it->value, loop, n->loc);
        return loop;
    }

private:
    struct Hoisted {
        VarPtr var;
        Expr value;
    };

    static bool boundsKnown(const For* n) {
        return asConstInt(n->min) && asConstInt(n->extent) && *asConstInt(n->extent) > 0;
    }
    static Interval loopBounds(const For* n) {
        const int64_t lo = *asConstInt(n->min);
        return {lo, lo + *asConstInt(n->extent) - 1};
    }

    // Worth a let: a math function or a float division somewhere in it.
    static bool costly(const Expr& e) {
        struct Finder : IRVisitor {
            bool found = false;
            void visitCall(const Call* n) override {
                found = found || pureMath(n->name);
                IRVisitor::visitCall(n);
            }
            void visitBinary(const Binary* n) override {
                found = found || (n->op == BinaryOp::Div && isFloat(n->dtype));
                IRVisitor::visitBinary(n);
            }
        } finder;
        finder.visit(e);
        return finder.found;
    }

    // Evaluating e anywhere in the loop's surroundings cannot fault and gives the value it has in
    // every iteration.
    bool movable(const Expr& e, const LoopFacts& facts) const {
        if (!e || e->lanes != 1) return false;
        switch (e->kind) {
        case NodeKind::IntImm: case NodeKind::FloatImm: return true;
        case NodeKind::Var: return !facts.bound.count(e.as<Var>());
        case NodeKind::Cast: {
            const Cast* c = e.as<Cast>();
            return isFloat(c->dtype) && movable(c->value, facts);  // float -> int may overflow
        }
        case NodeKind::Unary: {
            const Unary* u = e.as<Unary>();
            return u->op == UnaryOp::Neg && isFloat(u->dtype) && movable(u->operand, facts);
        }
        case NodeKind::Binary: {
            const Binary* b = e.as<Binary>();
            static const std::set<BinaryOp> ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                                                   BinaryOp::Min, BinaryOp::Max};
            return isFloat(b->dtype) && ops.count(b->op) && movable(b->a, facts) && movable(b->b, facts);
        }
        case NodeKind::Call: {
            const Call* c = e.as<Call>();
            if (!pureMath(c->name) || !isFloat(c->dtype)) return false;
            for (const Expr& a : c->args)
                if (!movable(a, facts)) return false;
            return true;
        }
        case NodeKind::Load: return inside(e.as<Load>(), facts);
        default: return false;
        }
    }

    // A load of one of the block's arrays that the loop does not write, at indices within it.
    bool inside(const Load* l, const LoopFacts& facts) const {
        const Buffer& b = l->buffer;
        std::vector<int64_t> shape;
        if (b->scope == MemScope::Global || b->viewOf || facts.written.count(b.get()) || !constantShape(b, shape) ||
            shape.size() != l->indices.size())
            return false;
        for (size_t d = 0; d < shape.size(); ++d) {
            for (const Var* v : facts.bound)
                if (uses(l->indices[d], v)) return false;
            std::optional<Interval> range = boundsOf(l->indices[d], bounds_);
            if (!range || range->lo < 0 || range->hi >= shape[d]) return false;
        }
        return true;
    }

    // The largest movable, costly expressions of s (those inside a loop of s only, when
    // `nestedOnly`), each once.
    void collect(const Stmt& s, const LoopFacts& facts, int depth, bool nestedOnly, std::vector<Hoisted>& out) {
        if (!s) return;
        auto exprs = [&](const Expr& e) { collectExpr(e, facts, depth, nestedOnly, out); };
        switch (s->kind) {
        case NodeKind::Seq:
            for (const Stmt& c : s.as<Seq>()->stmts) collect(c, facts, depth, nestedOnly, out);
            break;
        case NodeKind::LetStmt:
            exprs(s.as<LetStmt>()->value);
            collect(s.as<LetStmt>()->body, facts, depth, nestedOnly, out);
            break;
        case NodeKind::Store:
            for (const Expr& i : s.as<Store>()->indices) exprs(i);
            exprs(s.as<Store>()->value);
            break;
        case NodeKind::Evaluate: exprs(s.as<Evaluate>()->value); break;
        case NodeKind::IfThenElse:
            exprs(s.as<IfThenElse>()->cond);
            collect(s.as<IfThenElse>()->thenCase, facts, depth, nestedOnly, out);
            collect(s.as<IfThenElse>()->elseCase, facts, depth, nestedOnly, out);
            break;
        case NodeKind::For:
            collect(s.as<For>()->body, facts, depth + 1, nestedOnly, out);
            break;
        case NodeKind::Allocate: collect(s.as<Allocate>()->body, facts, depth, nestedOnly, out); break;
        default: break;  // While, Barrier, Comment: nothing moves out of them
        }
    }

    void collectExpr(const Expr& e, const LoopFacts& facts, int depth, bool nestedOnly, std::vector<Hoisted>& out) {
        if (!e) return;
        if ((!nestedOnly || depth > 0) && isFloat(e.dtype()) && costly(e) && movable(e, facts)) {
            for (const Hoisted& h : out)
                if (equal(h.value, e)) return;
            out.push_back({ctx_.freshVar(nameFor(e), e.dtype()), e});
            return;
        }
        auto sub = [&](const Expr& c) { collectExpr(c, facts, depth, nestedOnly, out); };
        switch (e->kind) {
        case NodeKind::Cast: sub(e.as<Cast>()->value); break;
        case NodeKind::Unary: sub(e.as<Unary>()->operand); break;
        case NodeKind::Binary: sub(e.as<Binary>()->a), sub(e.as<Binary>()->b); break;
        case NodeKind::Select:
            sub(e.as<Select>()->cond), sub(e.as<Select>()->thenValue), sub(e.as<Select>()->elseValue);
            break;
        case NodeKind::Call:
            for (const Expr& a : e.as<Call>()->args) sub(a);
            break;
        case NodeKind::Load:
            for (const Expr& i : e.as<Load>()->indices) sub(i);
            break;
        default: break;
        }
    }

    static std::string nameFor(const Expr& e) {
        if (const Call* c = e.as<Call>()) return c->name.rfind("fast_", 0) == 0 ? c->name.substr(5) : c->name;
        if (const Binary* b = e.as<Binary>(); b && b->op == BinaryOp::Div) {
            const FloatImm* one = b->a.as<FloatImm>();
            return one && one->value == 1.0 ? "reciprocal" : "quotient";
        }
        return "invariant";
    }

    // s with every expression equal to a hoisted value replaced by its variable.
    static Stmt replaceAll(const Stmt& s, const std::vector<Hoisted>& hoisted) {
        if (hoisted.empty()) return s;
        struct Replacer : IRMutator {
            const std::vector<Hoisted>& hoisted;
            explicit Replacer(const std::vector<Hoisted>& h) : hoisted(h) {}
            std::optional<Expr> find(const Expr& self) const {
                for (const Hoisted& h : hoisted)
                    if (equal(h.value, self)) return Expr(h.var);
                return std::nullopt;
            }
            Expr mutateCall(const Call* n, const Expr& self) override {
                if (auto v = find(self)) return *v;
                return IRMutator::mutateCall(n, self);
            }
            Expr mutateBinary(const Binary* n, const Expr& self) override {
                if (auto v = find(self)) return *v;
                return IRMutator::mutateBinary(n, self);
            }
            Expr mutateUnary(const Unary* n, const Expr& self) override {
                if (auto v = find(self)) return *v;
                return IRMutator::mutateUnary(n, self);
            }
            Expr mutateCast(const Cast* n, const Expr& self) override {
                if (auto v = find(self)) return *v;
                return IRMutator::mutateCast(n, self);
            }
        } replacer(hoisted);
        return replacer.mutate(s);
    }

    LowerContext& ctx_;
    VarBounds bounds_;
};

} // namespace

Stmt hoistInvariants(const Stmt& body, LowerContext& ctx) {
    return Hoist(ctx).mutate(body);
}

} // namespace tlc
