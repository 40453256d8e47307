#include "irgen/IRGen.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/atomic_add/AtomicAdd.h"
#include "ops/copy/Copy.h"
#include "ops/cumsum/Cumsum.h"
#include "ops/fill/Fill.h"
#include "ops/gemm/Gemm.h"
#include "ops/im2col/Im2Col.h"
#include "ops/reduce/Reduce.h"
#include "sema/Builtins.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace tlc {

using namespace ir;
namespace A = ast;

namespace {

// Thrown for the few things sema accepts that IR building does not handle yet; reported once.
struct Unsupported {
    SourceRange where;
    std::string what, why;
};

// 16-bit and 8-bit floats compute in f32.
DType mathType(DType t) { return isFloat(t) && dtypeBits(t) < 32 ? DType::F32 : t; }

Expr asMath(const Expr& e) { return cast(mathType(e.dtype()), e); }

class KernelBuilder {
public:
    KernelBuilder(const A::Kernel& k, const SourceFile& file, size_t part) : ast_(k), file_(file), part_(part) {}

    Kernel build() {
        Kernel k;
        k.name = ast_.name;
        k.externHeaders = ast_.imports;
        const size_t parts = std::max<size_t>(ast_.grids.size(), 1);
        k.sourceName = file_.name();
        k.loc = ast_.range.begin;
        for (const auto& tp : ast_.templateParams) {
            if (!tp.decl || !tp.decl->constant) throw Unsupported{tp.range, "auto", tp.name};
            k.templateValues.push_back({tp.name, toString(*tp.decl->constant)});
        }
        for (const auto* size : ast_.sizeParams) {
            VarPtr v = makeVar(size->name);
            values_[size] = Expr(v);
            sizeVars_.push_back(v);
        }
        for (const auto& p : ast_.params) {
            KernelParam kp;
            kp.name = p.name;
            kp.dtype = p.decl->type.dtype;
            if (p.type.isTensor()) {
                kp.kind = KernelParam::Kind::Tensor;
                std::vector<Expr> shape, strides;
                for (const auto& d : p.type.dims) shape.push_back(intValue(*d));
                for (const auto& s : p.type.strides) strides.push_back(intValue(*s));
                kp.buffer = makeBuffer(p.name, kp.dtype, MemScope::Global, shape, strides);
                buffers_[p.decl] = kp.buffer;
            } else {
                kp.kind = KernelParam::Kind::Scalar;
                kp.var = makeVar(p.name, kp.dtype);
                values_[p.decl] = Expr(kp.var);
            }
            k.params.push_back(kp);
        }
        for (const auto& v : sizeVars_) k.params.push_back({KernelParam::Kind::Size, v->name, DType::I32, nullptr, v});

        const A::GridStmt* grid = part_ < ast_.grids.size() ? ast_.grids[part_] : ast_.grid;
        if (!grid) throw Unsupported{ast_.nameRange, "a kernel without grid(...)", "nothing would run"};
        // Statements before the grid (other grids left out) are scalar lets and global scratch;
        // the lets are evaluated inside the kernel too.
        std::vector<const A::Stmt*> prefix;
        for (const auto& s : ast_.body->stmts) {
            if (s.get() == grid) break;
            if (s->kind != A::StmtKind::Grid) prefix.push_back(s.get());
        }
        // The launcher computes the grid: lets before the grid are inlined into its extents,
        // and into the extents of global scratch (the workspace layout is over sizes).
        bool scratch = false;
        for (const A::Stmt* s : prefix) {
            // Preconditions over the host values so far: the launcher checks them. One that
            // folded is true (sema refuses a false one): nothing to check.
            if (const auto* req = s->as<A::RequireStmt>(); req && !req->cond->constant)
                k.preconditions.push_back({simplify(truth(value(*req->cond))), file_.text(req->cond->range), req->range.begin});
            const auto* let = s->as<A::LetStmt>();
            if (!let) continue;
            if (const auto* c = let->value->as<A::Call>(); c && c->builtin == int(Builtin::AllocGlobal)) {
                k.params.push_back(scratchParam(*let, *c));
                scratch = true;
                continue;
            }
            if (!let->decl->constant && let->decl->type.isScalar()) values_[let->decl] = asMath(value(*let->value));
        }
        // Scratch declared after this grid belongs to the later grids, but the workspace layout
        // is the kernel's: every part knows every scratch buffer (the launcher passes each part
        // the ones it declares).
        for (const auto& s : ast_.body->stmts) {
            const auto* let = s->as<A::LetStmt>();
            if (!let || std::find(prefix.begin(), prefix.end(), s.get()) != prefix.end()) continue;
            if (const auto* c = let->value->as<A::Call>(); c && c->builtin == int(Builtin::AllocGlobal)) scratch = true;
        }
        // A grid with `split_k` takes a workspace whatever S is (an `auto` S must not change the
        // launcher's signature): its partial tiles and arrival counters (passes/SplitK.cpp).
        const A::Call& launchCall = *grid->launch;
        const bool splitK = launchCall.boundArgs.size() > 5 && launchCall.boundArgs[5];
        if (parts > 1 || scratch || splitK) {
            k.name = ast_.name + "_grid" + std::to_string(part_ + 1);  // the group's launcher takes ast_.name
            k.group = ast_.name;
            k.part = int(part_);
            k.parts = int(parts);
        }
        const A::Call& launch = *grid->launch;
        for (size_t i = 0; i < 3; ++i)
            if (launch.boundArgs.size() > i && launch.boundArgs[i]) k.gridExtents.push_back(simplify(value(*launch.boundArgs[i])));
        const A::Expr* threads = launch.boundArgs.size() > 3 ? launch.boundArgs[3] : nullptr;
        // Left out: 0, inferred from the tile ops and the target before lowering (inferThreads).
        k.threads = threads && threads->constant ? int(std::get<int64_t>(*threads->constant)) : 0;
        // `persistent = true` (or 1, an `auto` parameter's value).
        if (const A::Expr* p = launch.boundArgs.size() > 4 ? launch.boundArgs[4] : nullptr; p && p->constant) {
            k.persistentWritten = true;
            if (const auto* b = std::get_if<bool>(&*p->constant)) k.persistent = *b;
            if (const auto* i = std::get_if<int64_t>(&*p->constant)) k.persistent = *i != 0;
        }
        // `split_k = S` (a constant, or an `auto` parameter's value): passes/SplitK.cpp.
        if (const A::Expr* s = launch.boundArgs.size() > 5 ? launch.boundArgs[5] : nullptr; s && s->constant) {
            k.splitKWritten = true;
            k.splitKLoc = s->range.begin;
            if (const auto* i = std::get_if<int64_t>(&*s->constant)) k.splitK = *i;
        }
        // `cluster = N` (a literal or an `auto` parameter's value).
        if (const A::Expr* c = launch.boundArgs.size() > 6 ? launch.boundArgs[6] : nullptr; c && c->constant)
            if (const auto* i = std::get_if<int64_t>(&*c->constant)) k.cluster = int(*i);

        // Block indices: the user's names stand for blockIdx directly, unless use_swizzle
        // remaps them (then raw block_x/block_y variables are bound to the remapped names).
        static const VarRole roles[] = {VarRole::BlockIndexX, VarRole::BlockIndexY, VarRole::BlockIndexZ};
        std::vector<std::pair<VarPtr, Expr>> blockLets;
        for (size_t i = 0; i < grid->vars.size(); ++i) {
            VarPtr raw = makeVar(std::string("block_") + char('x' + i), DType::I32, roles[i]);
            k.blockVars.push_back(raw);
            VarPtr user = makeVar(grid->vars[i].name);
            values_[grid->vars[i].decl] = Expr(user);
            blockLets.push_back({user, Expr(raw)});
        }
        gridExtents_ = k.gridExtents;
        rawBlocks_ = k.blockVars;
        threadIndex_ = k.threadIndex = makeVar("tx", DType::I32, VarRole::ThreadIndex);
        threadDims_ = grid->threadDims;

        std::vector<const A::Stmt*> body;
        for (const auto& s : grid->body->stmts) body.push_back(s.get());
        // The prefix lets wrap the grid body, in order.
        std::vector<const A::Stmt*> all = prefix;
        all.insert(all.end(), body.begin(), body.end());
        Stmt inner = stmts(all, 0);
        if (swizzlePanel_ > 0 && blockLets.size() >= 2) {
            applySwizzle(blockLets);
            k.rasterPanel = swizzlePanel_;
            for (size_t i = blockLets.size(); i-- > 0;)
                inner = letStmt(blockLets[i].first, blockLets[i].second, inner, grid->range.begin);
        } else {
            std::vector<std::pair<VarPtr, Expr>> rename;
            for (size_t i = 0; i < blockLets.size(); ++i) {
                VarPtr named = makeVar(blockLets[i].first->name, DType::I32, k.blockVars[i]->role);
                rename.push_back({blockLets[i].first, Expr(named)});
                k.blockVars[i] = named;
            }
            inner = substitute(inner, rename);
            for (auto& e : k.gridExtents) e = substitute(e, rename);
        }
        k.body = inner;
        return k;
    }

private:
    const A::Kernel& ast_;
    const SourceFile& file_;
    size_t part_ = 0;

    // `let name = alloc_global([extents], dtype);`: a row-major global tensor over the sizes,
    // a parameter of the grid's kernel that the launcher points into the workspace.
    KernelParam scratchParam(const A::LetStmt& let, const A::Call& c) {
        const auto* list = c.boundArgs[0]->as<A::List>();
        std::vector<Expr> shape;
        for (const auto& el : list->elements) shape.push_back(simplify(intValue(*el)));
        KernelParam kp;
        kp.kind = KernelParam::Kind::Tensor;
        kp.name = let.name;
        kp.dtype = let.decl->type.dtype;
        kp.buffer = makeBuffer(let.name, kp.dtype, MemScope::Global, shape, rowMajorStrides(shape));
        kp.scratch = true;
        buffers_[let.decl] = kp.buffer;
        return kp;
    }
    std::map<const A::Decl*, Expr> values_;
    std::map<const A::Decl*, Buffer> buffers_;
    std::vector<VarPtr> sizeVars_;
    // Lets' values in order: a view's shape is written without them (each let replaced by its
    // value, latest first), so that the launcher can compute it.
    std::vector<std::pair<VarPtr, Expr>> letDefs_;
    std::vector<Expr> gridExtents_;
    std::vector<VarPtr> rawBlocks_;
    // The expert level: the thread's index in the block (the one lowering maps tile ops onto)
    // and the block's shape as `threads =` gave it.
    VarPtr threadIndex_;
    std::vector<int64_t> threadDims_;
    int64_t swizzlePanel_ = 0;
    int parallelDepth_ = 0;  // parallel loops around the statement being built

    // Block rasterisation for L2 reuse: blocks walk panels of `panel` rows column by column.
    void applySwizzle(std::vector<std::pair<VarPtr, Expr>>& lets) {
        Expr gx = gridExtents_[0], gy = gridExtents_[1];
        Expr bx = Expr(rawBlocks_[0]), by = Expr(rawBlocks_[1]);
        int64_t p = swizzlePanel_;
        Expr linear = by * gx + bx;
        Expr panel = linear / (gx * p);
        Expr within = linear % (gx * p);
        Expr rows = minExpr(intImm(p), gy - panel * p);
        lets[0].second = within / rows;
        lets[1].second = panel * p + within % rows;
    }

    [[noreturn]] void unsupported(const A::Expr& e, std::string what, std::string why) {
        throw Unsupported{e.range, std::move(what), std::move(why)};
    }

    // ---- expressions -----------------------------------------------------------------------

    Expr constantOf(const A::Expr& e) {
        const ConstValue& c = *e.constant;
        DType t = e.type.isScalar() ? e.type.dtype : DType::I32;
        if (auto* i = std::get_if<int64_t>(&c)) return isFloat(t) ? floatImm(double(*i), t) : intImm(*i, t == DType::Bool ? DType::I32 : t);
        if (auto* d = std::get_if<double>(&c)) {
            std::string spelling;
            if (const auto* f = e.as<A::FloatLit>()) spelling = f->spelling;
            return floatImm(*d, isFloat(t) ? t : DType::F32, spelling);
        }
        if (auto* b = std::get_if<bool>(&c)) return boolImm(*b);
        unsupported(e, "a dtype", "it is not a value");
    }

    Expr intValue(const A::Expr& e) { return cast(DType::I32, value(e)); }

    Expr value(const A::Expr& e) {
        if (e.constant && !std::holds_alternative<DType>(*e.constant)) return constantOf(e);
        switch (e.kind) {
        case A::ExprKind::Name: return nameValue(*e.as<A::Name>());
        case A::ExprKind::Unary: {
            const auto& u = *e.as<A::Unary>();
            Expr v = asMath(value(*u.operand));
            switch (u.op) {
            case A::UnaryOp::Neg: return unary(UnaryOp::Neg, v);
            case A::UnaryOp::Not: return unary(UnaryOp::Not, truth(v));
            case A::UnaryOp::BitNot: return unary(UnaryOp::BitNot, v);
            }
            break;
        }
        case A::ExprKind::Binary: return binaryValue(*e.as<A::Binary>());
        case A::ExprKind::Ternary: {
            const auto& t = *e.as<A::Ternary>();
            return select(truth(value(*t.cond)), asMath(value(*t.thenExpr)), asMath(value(*t.elseExpr)));
        }
        case A::ExprKind::Index: {
            const auto& ix = *e.as<A::Index>();
            Buffer b = bufferOf(*ix.base);
            std::vector<Expr> idx;
            for (const auto& s : ix.subscripts) idx.push_back(intValue(*s.point));
            return load(b, idx);
        }
        case A::ExprKind::Call: return callValue(*e.as<A::Call>());
        default: break;
        }
        unsupported(e, "this expression", "it has no value");
    }

    // print's and assert's `msg`: the string given, or "".
    static std::string message(const A::Expr* msg) {
        const auto* s = msg ? msg->as<A::StringLit>() : nullptr;
        return s ? s->value : std::string();
    }

    Expr truth(const Expr& v) { return v.dtype() == DType::Bool ? v : binary(BinaryOp::Ne, v, zero(v.dtype())); }

    Expr nameValue(const A::Name& n) {
        if (!n.decl) {
            if (n.name == "inf") return floatImm(INFINITY, DType::F32);
            unsupported(n, "'" + n.name + "'", "it is not a value");
        }
        if (auto it = values_.find(n.decl); it != values_.end()) return it->second;
        if (auto it = buffers_.find(n.decl); it != buffers_.end()) {
            if (it->second->shape.empty()) return load(it->second, {});
            unsupported(n, "'" + n.name + "'", "a buffer is not a value");
        }
        if (n.decl->constant) {
            if (n.decl->kind == A::Decl::Kind::TemplateParam && !n.decl->constant) throw Unsupported{n.range, "auto", n.name};
            A::Name copy(n.range, n.name);
            copy.type = n.decl->type;
            copy.constant = n.decl->constant;
            return constantOf(copy);
        }
        if (n.decl->kind == A::Decl::Kind::TemplateParam) throw Unsupported{n.range, "auto", n.name};
        unsupported(n, "'" + n.name + "'", "it is not bound here");
    }

    // Integer operands in sema's type (docs/language.md's promotion: u8 with an i32 literal is
    // i32), so that ir::binary, which lets an immediate adopt the other operand's type for the
    // compiler's own index arithmetic, cannot narrow what the author wrote (difftest finding 8).
    static void inType(const A::Expr& e, Expr& x, Expr& y) {
        if (!isInteger(e.type.dtype)) return;
        x = cast(e.type.dtype, x);
        y = cast(e.type.dtype, y);
    }

    Expr binaryValue(const A::Binary& b) {
        Expr x = asMath(value(*b.lhs)), y = asMath(value(*b.rhs));
        if (b.op != A::BinaryOp::Lt && b.op != A::BinaryOp::Le && b.op != A::BinaryOp::Gt && b.op != A::BinaryOp::Ge &&
            b.op != A::BinaryOp::Eq && b.op != A::BinaryOp::Ne && b.op != A::BinaryOp::And && b.op != A::BinaryOp::Or)
            inType(b, x, y);
        switch (b.op) {
        case A::BinaryOp::Mul: return x * y;
        case A::BinaryOp::Div: return x / y;
        case A::BinaryOp::Mod: return x % y;
        case A::BinaryOp::Add: return x + y;
        case A::BinaryOp::Sub: return x - y;
        case A::BinaryOp::Shl: return binary(BinaryOp::Shl, x, y);
        case A::BinaryOp::Shr: return binary(BinaryOp::Shr, x, y);
        case A::BinaryOp::Lt: return binary(BinaryOp::Lt, x, y);
        case A::BinaryOp::Le: return binary(BinaryOp::Le, x, y);
        case A::BinaryOp::Gt: return binary(BinaryOp::Gt, x, y);
        case A::BinaryOp::Ge: return binary(BinaryOp::Ge, x, y);
        case A::BinaryOp::Eq: return binary(BinaryOp::Eq, x, y);
        case A::BinaryOp::Ne: return binary(BinaryOp::Ne, x, y);
        case A::BinaryOp::BitAnd: return binary(BinaryOp::BitAnd, x, y);
        case A::BinaryOp::BitXor: return binary(BinaryOp::BitXor, x, y);
        case A::BinaryOp::BitOr: return binary(BinaryOp::BitOr, x, y);
        case A::BinaryOp::And: return binary(BinaryOp::And, truth(x), truth(y));
        case A::BinaryOp::Or: return binary(BinaryOp::Or, truth(x), truth(y));
        case A::BinaryOp::MatMul: break;  // lowered before sema (src/beginner), refused in grids
        }
        return x;
    }

    Expr callValue(const A::Call& c) {
        if (c.builtin < 0) {  // a cast: f16(x)
            return cast(c.type.dtype, value(*c.args.at(0).value));
        }
        Builtin id = static_cast<Builtin>(c.builtin);
        auto arg = [&](size_t i) { return value(*c.boundArgs.at(i)); };
        switch (id) {
        case Builtin::Ceildiv: {
            Expr a = arg(0), b = arg(1);
            return simplify((a + b - intImm(1, b.dtype())) / b);
        }
        case Builtin::Floordiv: return call("floordiv", promote(arg(0).dtype(), arg(1).dtype()), {arg(0), arg(1)});
        case Builtin::Floormod: return call("floormod", promote(arg(0).dtype(), arg(1).dtype()), {arg(0), arg(1)});
        case Builtin::Min:
        case Builtin::Max: {
            Expr x = asMath(arg(0)), y = asMath(arg(1));
            inType(c, x, y);
            return id == Builtin::Min ? minExpr(x, y) : maxExpr(x, y);
        }
        case Builtin::Clamp: {
            Expr x = asMath(arg(0)), lo = asMath(arg(1)), hi = asMath(arg(2));
            inType(c, x, lo);
            inType(c, hi, hi);
            return minExpr(maxExpr(x, lo), hi);
        }
        // The same bits as another dtype of the width (sema checked the widths). The value in
        // its own dtype: f16 arithmetic computes in f32 here, its result is an f16.
        case Builtin::Reinterpret:
            return call("reinterpret", c.type.dtype, {cast(c.boundArgs[1]->type.dtype, arg(1))});
        case Builtin::Dp4a:
            return call("dp4a", c.type.dtype, {arg(0), arg(1), arg(2)});
        case Builtin::CallExtern: {
            std::vector<Expr> args;
            for (size_t i = 2; i < c.boundArgs.size(); ++i) args.push_back(arg(i));
            return call("extern:" + c.boundArgs[1]->as<A::StringLit>()->value, c.type.dtype, args);
        }
        // Votes over the warp (lower-thread-level spells them for the cpu).
        case Builtin::Ballot: return call("ballot", DType::U64, {truth(arg(0))});
        case Builtin::Any: return call("any", DType::Bool, {truth(arg(0))});
        case Builtin::All: return call("all", DType::Bool, {truth(arg(0))});
        case Builtin::ThreadId:
            return threadPosition(c.boundArgs[0] ? std::get<int64_t>(*c.boundArgs[0]->constant) : -1);
        // The warp's size is the target's: the lower-thread-level pass spells these.
        case Builtin::LaneId: return call("lane_id", DType::I32, {});
        case Builtin::WarpId: return call("warp_id", DType::I32, {});
        case Builtin::WarpSize: return call("warp_size", DType::I32, {});
        default: break;
        }
        const BuiltinInfo& info = builtinInfo(id);
        // Collectives keep their name; a width left out is 0, "the warp" (lower-thread-level).
        if (info.kind == BuiltinKind::Collective) {
            Expr v = arg(0);
            std::vector<Expr> args = {v};
            if (c.boundArgs.size() == 3) args.push_back(cast(DType::I32, arg(1)));
            if (c.boundArgs.size() >= 2) args.push_back(c.boundArgs.back() ? arg(c.boundArgs.size() - 1) : intImm(0));
            return call(std::string(info.name), v.dtype(), args);
        }
        if (info.kind == BuiltinKind::Math) {
            std::vector<Expr> args;
            for (size_t i = 0; i < c.boundArgs.size(); ++i) {
                Expr a = arg(i);
                args.push_back(cast(isFloat(a.dtype()) ? mathType(a.dtype()) : DType::F32, a));
            }
            DType t = args[0].dtype();
            if (id == Builtin::Abs && !isFloat(value(*c.boundArgs[0]).dtype())) {
                Expr a = arg(0);
                return call("abs", a.dtype(), {a});
            }
            return call(std::string(info.name), t, args);
        }
        unsupported(c, "'" + c.callee + "'", "it is not a value");
    }

    // thread_id(): the linear index; thread_id(d): the index along dimension d of `threads`
    // (x fastest, as CUDA numbers the threads of a block).
    Expr threadPosition(int64_t dim) {
        Expr tx(threadIndex_);
        if (dim < 0 || threadDims_.size() <= 1) return tx;
        int64_t below = 1;
        for (int64_t d = 0; d < dim; ++d) below *= threadDims_[size_t(d)];
        Expr pos = below == 1 ? tx : tx / below;
        return size_t(dim) + 1 == threadDims_.size() ? pos : pos % threadDims_[size_t(dim)];
    }

    Expr withoutLets(Expr e) {
        for (auto it = letDefs_.rbegin(); it != letDefs_.rend(); ++it) e = substitute(e, {*it});
        return e;
    }

    // ---- buffers and regions ---------------------------------------------------------------

    Buffer bufferOf(const A::Expr& e) {
        const auto* n = e.as<A::Name>();
        if (n && n->decl) {
            if (auto it = buffers_.find(n->decl); it != buffers_.end()) return it->second;
        }
        unsupported(e, "this operand", "it is not a buffer");
    }

    Region region(const A::Expr& e) {
        Region r;
        if (const auto* ix = e.as<A::Index>()) {
            r.buffer = bufferOf(*ix->base);
            for (const auto& s : ix->subscripts) {
                switch (s.form) {
                case A::Subscript::Form::Point: r.starts.push_back(intValue(*s.point)); break;
                case A::Subscript::Form::Range:
                case A::Subscript::Form::Length: r.starts.push_back(s.lo ? intValue(*s.lo) : intImm(0)); break;
                }
            }
        } else {
            r.buffer = bufferOf(e);
            r.starts.assign(r.buffer->shape.size(), intImm(0));
        }
        for (const auto& ext : e.type.shape) {
            if (!ext.isConstant()) unsupported(e, "a tile of symbolic extent " + ext.symbol, "tile extents must be constants");
            r.extents.push_back(*ext.value);
        }
        if (r.extents.size() != r.starts.size())
            unsupported(e, "this region", fmt::format("its {} extents do not match its rank {}", r.extents.size(), r.starts.size()));
        return r;
    }

    static void fitOverlap(Region& whole, const Region& part) {
        if (whole.rank() == part.rank()) {
            whole.extents = part.extents;
            return;
        }
        std::vector<int64_t> extents = part.squeezedExtents();
        size_t k = 0;
        for (auto& e : whole.extents)
            if (e != 1 && k < extents.size()) e = extents[k++];
    }

    // ---- statements ------------------------------------------------------------------------

    Stmt stmts(const std::vector<const A::Stmt*>& list, size_t from) {
        std::vector<Stmt> out;
        for (size_t i = from; i < list.size(); ++i) {
            const A::Stmt& s = *list[i];
            SourceLoc loc = s.range.begin;
            if (s.kind == A::StmtKind::Require) continue;  // the launcher's (Kernel::preconditions)
            if (const auto* let = s.as<A::LetStmt>()) {
                if (auto bound = bindLet(*let, list, i + 1)) {
                    out.push_back(*bound);
                    return seq(out);
                }
                continue;
            }
            if (const auto* var = s.as<A::VarStmt>()) {
                DType t = var->decl->type.dtype;
                Buffer b = makeBuffer(var->name, t, MemScope::Local, {});
                buffers_[var->decl] = b;
                Expr init = var->init ? cast(t, value(*var->init)) : zero(t);
                out.push_back(allocate(b, stmts(list, i + 1), loc, init));
                return seq(out);
            }
            out.push_back(stmt(s));
        }
        return seq(out);
    }

    // A let binds a buffer (alloc_*), a constant (nothing to emit) or a value (a LetStmt).
    std::optional<Stmt> bindLet(const A::LetStmt& let, const std::vector<const A::Stmt*>& list, size_t rest) {
        SourceLoc loc = let.range.begin;
        const A::Decl* decl = let.decl;
        if (const auto* c = let.value->as<A::Call>(); c && c->builtin >= 0) {
            Builtin id = static_cast<Builtin>(c->builtin);
            if (id == Builtin::AllocShared || id == Builtin::AllocFragment || id == Builtin::AllocLocal) {
                const Type& t = decl->type;
                std::vector<Expr> shape;
                for (const auto& ext : t.shape) {
                    if (!ext.isConstant()) unsupported(*let.value, "a buffer of symbolic shape", "buffer extents must be constants");
                    shape.push_back(intImm(*ext.value));
                }
                Buffer b = makeBuffer(let.name, t.dtype, t.scope, shape);
                buffers_[decl] = b;
                return allocate(b, stmts(list, rest), loc);
            }
            if (id == Builtin::View) {
                // No storage and no code: a buffer with the view's shape over the tensor's.
                Buffer base = bufferOf(*c->boundArgs[0]);
                std::vector<Expr> shape;
                for (const auto& el : c->boundArgs[1]->as<A::List>()->elements)
                    shape.push_back(simplify(withoutLets(intValue(*el))));
                auto node = std::make_shared<BufferNode>(*makeBuffer(let.name, base->dtype, MemScope::Global, shape));
                node->viewOf = base->viewOf ? base->viewOf : base;
                buffers_[decl] = node;
                return std::nullopt;
            }
            if (id == Builtin::AllocGlobal) return std::nullopt;  // a parameter (scratchParam)
            if (id == Builtin::AllocVar) {
                DType t = decl->type.dtype;
                Buffer b = makeBuffer(let.name, t, MemScope::Local, {});
                buffers_[decl] = b;
                const A::Expr* init = c->boundArgs.size() > 1 ? c->boundArgs[1] : nullptr;
                return allocate(b, stmts(list, rest), loc, init ? cast(t, value(*init)) : zero(t));
            }
        }
        if (decl->constant) return std::nullopt;  // uses read the folded value
        VarPtr v = makeVar(let.name, mathType(decl->type.dtype));
        Expr val = asMath(value(*let.value));
        values_[decl] = Expr(v);
        letDefs_.push_back({v, val});
        return letStmt(v, val, stmts(list, rest), loc);
    }

    Stmt stmt(const A::Stmt& s) {
        SourceLoc loc = s.range.begin;
        switch (s.kind) {
        case A::StmtKind::Block: {
            std::vector<const A::Stmt*> list;
            for (const auto& c : s.as<A::Block>()->stmts) list.push_back(c.get());
            return stmts(list, 0);
        }
        case A::StmtKind::Assign: return assign(*s.as<A::AssignStmt>());
        case A::StmtKind::ExprStmt: return exprStmt(*s.as<A::ExprStmt>()->expr, loc);
        case A::StmtKind::For: return forStmt(*s.as<A::ForStmt>());
        case A::StmtKind::If: {
            const auto& i = *s.as<A::IfStmt>();
            Stmt thenCase = stmt(*i.thenBlock);
            Stmt elseCase = i.elseStmt ? stmt(*i.elseStmt) : Stmt();
            return ifThenElse(truth(value(*i.cond)), thenCase, elseCase, loc);
        }
        case A::StmtKind::While: {
            const auto& w = *s.as<A::WhileStmt>();
            return whileLoop(truth(value(*w.cond)), stmt(*w.body), loc);
        }
        case A::StmtKind::Grid: throw Unsupported{s.range, "a nested grid", "one grid per kernel"};
        default: break;
        }
        throw Unsupported{s.range, "this statement", "it is not supported inside the grid"};
    }

    Stmt assign(const A::AssignStmt& a) {
        SourceLoc loc = a.range.begin;
        Buffer b;
        std::vector<Expr> idx;
        if (const auto* ix = a.target->as<A::Index>()) {
            b = bufferOf(*ix->base);
            for (const auto& s : ix->subscripts) idx.push_back(intValue(*s.point));
        } else {
            b = bufferOf(*a.target);
        }
        Expr v = value(*a.value);
        if (a.op) {
            Expr old = asMath(load(b, idx));
            v = asMath(v);
            switch (*a.op) {
            case A::BinaryOp::Add: v = old + v; break;
            case A::BinaryOp::Sub: v = old - v; break;
            case A::BinaryOp::Mul: v = old * v; break;
            case A::BinaryOp::Div: v = old / v; break;
            case A::BinaryOp::Mod: v = old % v; break;
            case A::BinaryOp::BitAnd: v = binary(BinaryOp::BitAnd, old, v); break;
            case A::BinaryOp::BitOr: v = binary(BinaryOp::BitOr, old, v); break;
            case A::BinaryOp::BitXor: v = binary(BinaryOp::BitXor, old, v); break;
            case A::BinaryOp::Shl: v = binary(BinaryOp::Shl, old, v); break;
            case A::BinaryOp::Shr: v = binary(BinaryOp::Shr, old, v); break;
            default: break;
            }
        }
        return store(b, idx, cast(b->dtype, v), loc);
    }

    Stmt forStmt(const A::ForStmt& f) {
        SourceLoc loc = f.range.begin;
        const A::Call& it = *f.iter;
        Builtin id = static_cast<Builtin>(it.builtin);
        auto arg = [&](size_t i) -> const A::Expr* { return i < it.boundArgs.size() ? it.boundArgs[i] : nullptr; };
        if (id == Builtin::Parallel) {
            std::vector<VarPtr> vars;
            for (const auto& v : f.vars) {
                vars.push_back(makeVar(v.name));
                values_[v.decl] = Expr(vars.back());
            }
            ++parallelDepth_;
            Stmt body = stmt(*f.body);
            --parallelDepth_;
            for (size_t d = vars.size(); d-- > 0;)
                body = forLoop(vars[d], intImm(0), intValue(*it.boundArgs.at(d)), ForKind::Parallel, body, loc);
            return body;
        }
        VarPtr v = makeVar(f.vars.at(0).name);
        values_[f.vars[0].decl] = Expr(v);
        // pipelined(start, stop): the pipeline passes schedule a loop over 0 .. stop - start (its
        // prologue, steady state, epilogue and warp-specialised sides all count steps from 0),
        // so the loop runs a step variable and the author's variable is start + step. A start
        // that reads a `var` is evaluated once, before the loop.
        Expr start;
        std::optional<std::pair<VarPtr, Expr>> startLet;
        if (id == Builtin::Pipelined && arg(1)) {
            start = intValue(*arg(0));
            if (const int64_t* c = asConstInt(start); !c || *c != 0) {
                if (readsMemory(start)) {
                    VarPtr s = makeVar(f.vars[0].name + "_start");
                    startLet = {s, start};
                    start = Expr(s);
                }
                v = makeVar(f.vars[0].name + "_iter");
                values_[f.vars[0].decl] = start + Expr(v);
            }
        }
        Stmt body = stmt(*f.body);
        switch (id) {
        case Builtin::Range: {
            if (!arg(1)) return forLoop(v, intImm(0), intValue(*arg(0)), ForKind::Serial, body, loc);
            Expr lo = intValue(*arg(0)), hi = intValue(*arg(1));
            Expr step = arg(2) ? intValue(*arg(2)) : intImm(1);
            return forLoop(v, lo, simplify(hi - lo), ForKind::Serial, body, loc, {}, step);
        }
        case Builtin::Serial: return forLoop(v, intImm(0), intValue(*arg(0)), ForKind::Serial, body, loc);
        case Builtin::Unroll: return forLoop(v, intImm(0), intValue(*arg(0)), ForKind::Unroll, body, loc);
        case Builtin::Vectorized: return forLoop(v, intImm(0), intValue(*arg(0)), ForKind::Vectorized, body, loc);
        case Builtin::Pipelined: {
            PipelineInfo p;
            // stages = 0 and stages = 1 are TileLang's "no pipelining": a plain loop whose copies
            // complete in their iteration (the pass leaves a one-stage loop as it is); 0 in
            // PipelineInfo means "left out".
            if (arg(2) && arg(2)->constant) p.stages = std::max(1, int(std::get<int64_t>(*arg(2)->constant)));
            auto intList = [](const A::Expr* e) {
                std::vector<int> out;
                if (const auto* l = e ? e->as<A::List>() : nullptr)
                    for (const auto& x : l->elements)
                        if (x->constant) out.push_back(int(std::get<int64_t>(*x->constant)));
                return out;
            };
            p.order = intList(arg(3));
            p.stage = intList(arg(4));
            if (arg(5)) p.warpSpecialize = boolArg(arg(5), false) ? 1 : 0;
            if (arg(6)) p.deepen = boolArg(arg(6), true) ? 1 : 0;
            if (arg(7) && arg(7)->constant) p.unroll = std::max(0, int(std::get<int64_t>(*arg(7)->constant)));
            if (arg(8)) p.overlap = boolArg(arg(8), false) ? 1 : 0;
            if (!arg(1)) return forLoop(v, intImm(0), intValue(*arg(0)), ForKind::Pipelined, body, loc, p);
            Expr count = start ? simplify(intValue(*arg(1)) - start) : intValue(*arg(1));
            Stmt loop = forLoop(v, intImm(0), count, ForKind::Pipelined, body, loc, p);
            return startLet ? letStmt(startLet->first, startLet->second, loop, loc) : loop;
        }
        default: break;
        }
        throw Unsupported{it.range, "'" + it.callee + "' loops", "unknown loop kind"};
    }

    static bool boolArg(const A::Expr* e, bool fallback) {
        if (!e || !e->constant) return fallback;
        if (auto* b = std::get_if<bool>(&*e->constant)) return *b;
        if (auto* i = std::get_if<int64_t>(&*e->constant)) return *i != 0;
        return fallback;
    }

    static int64_t intArg(const A::Expr* e, int64_t fallback) {
        if (!e || !e->constant) return fallback;
        if (auto* i = std::get_if<int64_t>(&*e->constant)) return *i;
        return fallback;
    }

    // An element atomic with its memory order: relaxed as it stands; the others as fences
    // (memory_fence) after it (acquire), before it (release) or on both sides.
    Stmt ordered(Stmt atomic, const A::Expr* order, SourceLoc loc) {
        const auto* name = order ? order->as<A::Name>() : nullptr;
        std::string o = name ? name->name : "relaxed";
        if (o == "relaxed") return atomic;
        Stmt fence = evaluate(call("memory_fence", DType::I32, {}), loc);
        if (o == "acquire") return seq({atomic, fence}, loc);
        if (o == "release") return seq({fence, atomic}, loc);
        return seq({fence, atomic, fence}, loc);
    }

    Stmt exprStmt(const A::Expr& e, SourceLoc loc) {
        const auto* c = e.as<A::Call>();
        if (!c || c->builtin < 0) return evaluate(value(e), loc);
        Builtin id = static_cast<Builtin>(c->builtin);
        auto arg = [&](size_t i) -> const A::Expr* { return i < c->boundArgs.size() ? c->boundArgs[i] : nullptr; };
        switch (id) {
        case Builtin::Copy: {
            Region s = region(*arg(0)), d = region(*arg(1));
            // A region smaller than the whole buffer it meets (sema's overlap rule): the buffer's
            // leading corner of the region's extents.
            if (s.squeezedExtents() != d.squeezedExtents()) {
                bool srcWhole = arg(0)->type.kind == Type::Kind::Tensor;
                fitOverlap(srcWhole ? s : d, srcWhole ? d : s);
            }
            return tileOp(std::make_shared<ops::CopyOp>(s, d), loc);
        }
        case Builtin::Gemm: {
            ops::GemmPolicy policy = ops::GemmPolicy::Auto;  // left out: inference picks (and says why)
            if (const auto* p = arg(5) ? arg(5)->as<A::Name>() : nullptr)
                policy = p->name == "full_row" ? ops::GemmPolicy::FullRow
                         : p->name == "full_col" ? ops::GemmPolicy::FullCol
                                                 : ops::GemmPolicy::Square;
            return tileOp(std::make_shared<ops::GemmOp>(region(*arg(0)), region(*arg(1)), region(*arg(2)),
                                                        boolArg(arg(3), false), boolArg(arg(4), false), policy,
                                                        boolArg(arg(6), false)),
                          loc);
        }
        case Builtin::Clear: {
            Region r = region(*arg(0));
            return tileOp(std::make_shared<ops::FillOp>(r, zero(r.buffer->dtype), true), loc);
        }
        case Builtin::Fill: return tileOp(std::make_shared<ops::FillOp>(region(*arg(0)), value(*arg(1)), false), loc);
        case Builtin::ReduceMax:
        case Builtin::ReduceMin:
        case Builtin::ReduceSum:
        case Builtin::ReduceAbsSum:
        case Builtin::ReduceAbsMax: {
            static const std::map<Builtin, ops::ReduceKind> kinds = {
                {Builtin::ReduceMax, ops::ReduceKind::Max},     {Builtin::ReduceMin, ops::ReduceKind::Min},
                {Builtin::ReduceSum, ops::ReduceKind::Sum},     {Builtin::ReduceAbsSum, ops::ReduceKind::AbsSum},
                {Builtin::ReduceAbsMax, ops::ReduceKind::AbsMax}};
            Region src = region(*arg(0)), dst = region(*arg(1));
            int64_t dim = intArg(arg(2), -1);
            if (dim < 0) dim += int64_t(src.rank());
            bool clear = boolArg(arg(3), true);
            // Reductions run on whole fragments: other operands pass through one (a source is
            // copied in, so is a destination the reduction accumulates into; a destination is
            // written back).
            std::vector<Stmt> body;
            std::vector<Buffer> staged;
            auto throughFragment = [&](const Region& r, bool readFirst) {
                if (r.buffer->scope == MemScope::Fragment && r.coversWholeBuffer()) return r;
                std::vector<Expr> shape;
                for (int64_t e : r.extents) shape.push_back(intImm(e));
                Buffer f = makeBuffer(r.buffer->name + "_frag", r.buffer->dtype, MemScope::Fragment, shape);
                staged.push_back(f);
                Region whole = wholeBuffer(f);
                if (readFirst) body.push_back(tileOp(std::make_shared<ops::CopyOp>(r, whole), loc));
                return whole;
            };
            Region s = throughFragment(src, true);
            Region d = throughFragment(dst, !clear);
            body.push_back(tileOp(std::make_shared<ops::ReduceOp>(s, d, kinds.at(id), int(dim), clear), loc));
            if (d.buffer != dst.buffer) body.push_back(tileOp(std::make_shared<ops::CopyOp>(d, dst), loc));
            Stmt out = seq(body, loc);
            for (auto it = staged.rbegin(); it != staged.rend(); ++it) out = allocate(*it, out, loc);
            return out;
        }
        case Builtin::Cumsum: {
            Region src = region(*arg(0)), dst = region(*arg(1));
            int64_t dim = intArg(arg(2), 0);
            if (dim < 0) dim += int64_t(src.rank());
            return tileOp(std::make_shared<ops::CumsumOp>(src, dst, int(dim), boolArg(arg(3), false)), loc);
        }
        case Builtin::AtomicAdd: {
            Region dst = region(*arg(0));
            const A::Expr& src = *arg(1);
            if (src.type.isTile())
                return ordered(tileOp(std::make_shared<ops::AtomicAddOp>(dst, region(src), Expr()), loc), arg(2), loc);
            // Inside a parallel loop the scalar form adds into one element, in the iteration
            // that names it: an atomic store, which the loop's lowering places like any store
            // (one replica of its domain writes; global indices are bounds-checked).
            // So does a thread-level one (each thread adds its own value: sema's perThread).
            if (parallelDepth_ > 0 || c->perThread)
                return ordered(store(dst.buffer, dst.starts, cast(dst.buffer->dtype, value(src)), loc, StoreKind::AtomicAdd),
                               arg(2), loc);
            return ordered(tileOp(std::make_shared<ops::AtomicAddOp>(dst, std::nullopt, value(src)), loc), arg(2), loc);
        }
        // Every thread that reaches it updates the element: the same as once, for a min or max.
        case Builtin::AtomicMax:
        case Builtin::AtomicMin: {
            Region dst = region(*arg(0));
            StoreKind kind = id == Builtin::AtomicMax ? StoreKind::AtomicMax : StoreKind::AtomicMin;
            return ordered(store(dst.buffer, dst.starts, cast(dst.buffer->dtype, value(*arg(1))), loc, kind), arg(2), loc);
        }
        case Builtin::Im2col: {
            ops::Im2ColParams p{intArg(arg(4), 1), intArg(arg(5), 1), intArg(arg(6), 1), intArg(arg(7), 0)};
            return tileOp(std::make_shared<ops::Im2ColOp>(bufferOf(*arg(0)), region(*arg(1)), intValue(*arg(2)),
                                                          intValue(*arg(3)), p),
                          loc);
        }
        case Builtin::UseSwizzle:
            if (boolArg(arg(1), true)) swizzlePanel_ = intArg(arg(0), 10);
            return comment(fmt::format("use_swizzle(panel = {})", intArg(arg(0), 10)), loc);
        case Builtin::AnnotateLayout: {
            Region r = region(*arg(0));
            const auto* name = arg(1)->as<A::Name>();
            auto layout = layout::parseSharedLayout(name ? name->name : "");
            if (!layout) return Stmt();  // sema reported it
            return tileOp(std::make_shared<ops::AnnotateLayoutOp>(r, *layout), loc);
        }
        case Builtin::Print: return evaluate(call("print", DType::I32, {value(*arg(0))}), loc, message(arg(1)));
        case Builtin::Assert: return evaluate(call("assert", DType::I32, {truth(value(*arg(0)))}), loc, message(arg(1)));
        case Builtin::SyncThreads: return barrier(loc);
        case Builtin::SyncWarp: return evaluate(call("sync_warp", DType::I32, {}), loc);
        default: break;
        }
        return evaluate(value(e), loc);
    }

};

} // namespace

std::vector<Kernel> buildKernelIRs(const A::Kernel& kernel, const SourceFile& file, DiagnosticEngine& diags) {
    std::vector<Kernel> parts;
    try {
        for (size_t i = 0; i < std::max<size_t>(kernel.grids.size(), 1); ++i)
            parts.push_back(KernelBuilder(kernel, file, i).build());
    } catch (const Unsupported& u) {
        if (u.what == "auto") diags.report(DiagId::err_auto_unresolved, u.where, u.why);
        else diags.report(DiagId::err_not_lowerable, u.where, u.what, u.why);
        return {};
    }
    return parts;
}

} // namespace tlc
