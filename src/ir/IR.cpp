// Constructors and small helpers of the IR nodes.
#include "ir/Expr.h"
#include "ir/Stmt.h"
#include "ir/TileOp.h"
#include "ir/Printer.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace tlc::ir {

namespace {
void require(bool cond, const char* what) {
    if (!cond) throw std::logic_error(std::string("IR invariant violated: ") + what);
}
} // namespace

// ---- buffers -------------------------------------------------------------------------------

std::vector<Expr> rowMajorStrides(const std::vector<Expr>& shape) {
    std::vector<Expr> strides(shape.size());
    Expr running = intImm(1);
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = running;
        const int64_t* r = asConstInt(running);
        const int64_t* s = asConstInt(shape[i]);
        running = r && s ? intImm(*r * *s) : (r && *r == 1 ? shape[i] : running * shape[i]);
    }
    return strides;
}

Buffer makeBuffer(std::string name, DType dtype, MemScope scope, std::vector<Expr> shape, std::vector<Expr> strides) {
    if (strides.empty()) strides = rowMajorStrides(shape);
    require(strides.size() == shape.size(), "buffer strides and shape differ in rank");
    return std::make_shared<BufferNode>(BufferNode{std::move(name), dtype, scope, std::move(shape), std::move(strides), 0, nullptr, std::nullopt});
}

bool constantShape(const Buffer& b, std::vector<int64_t>& out) {
    out.clear();
    for (const auto& e : b->shape) {
        const int64_t* v = asConstInt(e);
        if (!v) return false;
        out.push_back(*v);
    }
    return true;
}

// ---- expressions ---------------------------------------------------------------------------

bool isComparison(BinaryOp op) {
    switch (op) {
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: case BinaryOp::Eq:
    case BinaryOp::Ne: case BinaryOp::And: case BinaryOp::Or:
        return true;
    default: return false;
    }
}

const char* spelling(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    }
    return "?";
}

Expr intImm(int64_t v, DType t) {
    require(isInteger(t) || t == DType::Bool, "intImm of a non-integer type");
    return Expr(std::make_shared<IntImm>(t, v));
}

Expr floatImm(double v, DType t, std::string spelling) {
    require(isFloat(t), "floatImm of a non-float type");
    return Expr(std::make_shared<FloatImm>(t, v, std::move(spelling)));
}

Expr boolImm(bool v) { return Expr(std::make_shared<IntImm>(DType::Bool, v ? 1 : 0)); }

Expr zero(DType t, int lanes) {
    if (isFloat(t)) return Expr(std::make_shared<FloatImm>(t, 0.0, "", lanes));
    return Expr(std::make_shared<IntImm>(t, 0, lanes));
}

VarPtr makeVar(std::string name, DType t, VarRole role) { return std::make_shared<Var>(t, std::move(name), role); }

Expr cast(DType t, Expr v) {
    require(bool(v), "cast of a null expression");
    if (v.dtype() == t) return v;
    return Expr(std::make_shared<Cast>(t, std::move(v)));
}

Expr unary(UnaryOp op, Expr e) {
    require(bool(e), "unary of a null expression");
    DType t = op == UnaryOp::Not ? DType::Bool : e.dtype();
    return Expr(std::make_shared<Unary>(t, op, std::move(e)));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
    require(bool(a) && bool(b), "binary operand is null");
    if (isComparison(op)) {
        if (op != BinaryOp::And && op != BinaryOp::Or && a.dtype() != b.dtype()) {
            DType t = promote(a.dtype(), b.dtype());
            a = cast(t, a);
            b = cast(t, b);
        }
        return Expr(std::make_shared<Binary>(DType::Bool, op, std::move(a), std::move(b)));
    }
    DType t = promote(a.dtype(), b.dtype());
    // Integer immediates adopt the other operand's type rather than widening it.
    if (a.dtype() != b.dtype()) {
        if (a.is<IntImm>() && isInteger(b.dtype())) t = b.dtype();
        else if (b.is<IntImm>() && isInteger(a.dtype())) t = a.dtype();
    }
    if (op == BinaryOp::Shl || op == BinaryOp::Shr) t = a.dtype();
    return Expr(std::make_shared<Binary>(t, op, cast(t, std::move(a)), op == BinaryOp::Shl || op == BinaryOp::Shr ? std::move(b) : cast(t, std::move(b))));
}

Expr select(Expr c, Expr a, Expr b) {
    require(bool(c) && bool(a) && bool(b), "select operand is null");
    DType t = promote(a.dtype(), b.dtype());
    return Expr(std::make_shared<Select>(t, std::move(c), cast(t, std::move(a)), cast(t, std::move(b))));
}

Expr call(std::string name, DType t, std::vector<Expr> args) {
    for (const auto& a : args) require(bool(a), "call argument is null");
    return Expr(std::make_shared<Call>(t, std::move(name), std::move(args)));
}

Expr load(Buffer b, std::vector<Expr> indices, int lanes) {
    require(b != nullptr, "load from a null buffer");
    require(indices.size() == b->shape.size(), "load index count differs from the buffer's rank");
    return Expr(std::make_shared<Load>(std::move(b), std::move(indices), lanes));
}

Expr minExpr(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
Expr maxExpr(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }

const int64_t* asConstInt(const Expr& e) {
    const IntImm* i = e.as<IntImm>();
    return i && i->lanes == 1 ? &i->value : nullptr;
}

bool isConstInt(const Expr& e, int64_t v) {
    const int64_t* c = asConstInt(e);
    return c && *c == v;
}

// ---- statements ----------------------------------------------------------------------------

const char* forKindName(ForKind k) {
    switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Unroll: return "unroll";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Rolled: return "rolled";
    case ForKind::Parallel: return "parallel";
    case ForKind::Pipelined: return "pipelined";
    }
    return "serial";
}

Stmt seq(std::vector<Stmt> stmts, SourceLoc loc) {
    std::vector<Stmt> flat;
    for (auto& s : stmts) {
        if (!s) continue;
        if (const Seq* inner = s.as<Seq>()) {
            for (const auto& c : inner->stmts) flat.push_back(c);
        } else {
            flat.push_back(std::move(s));
        }
    }
    if (flat.size() == 1) return flat[0];
    return Stmt(std::make_shared<Seq>(loc, std::move(flat)));
}

Stmt letStmt(VarPtr var, Expr value, Stmt body, SourceLoc loc) {
    require(var && bool(value) && bool(body), "let with a null part");
    return Stmt(std::make_shared<LetStmt>(loc, std::move(var), std::move(value), std::move(body)));
}

Stmt evaluate(Expr e, SourceLoc loc, std::string message) {
    return Stmt(std::make_shared<Evaluate>(loc, std::move(e), std::move(message)));
}

Stmt store(Buffer b, std::vector<Expr> indices, Expr value, SourceLoc loc, StoreKind k) {
    require(b != nullptr && bool(value), "store with a null part");
    require(indices.size() == b->shape.size(), "store index count differs from the buffer's rank");
    return Stmt(std::make_shared<Store>(loc, std::move(b), std::move(indices), std::move(value), k));
}

Stmt forLoop(VarPtr var, Expr min, Expr extent, ForKind kind, Stmt body, SourceLoc loc, PipelineInfo p, Expr step) {
    require(var && bool(min) && bool(extent) && bool(body), "for loop with a null part");
    if (!step) step = intImm(1, var->dtype);
    return Stmt(std::make_shared<For>(loc, std::move(var), std::move(min), std::move(extent), std::move(step), kind,
                                      std::move(body), std::move(p)));
}

Stmt ifThenElse(Expr cond, Stmt thenCase, Stmt elseCase, SourceLoc loc) {
    require(bool(cond) && bool(thenCase), "if with a null part");
    return Stmt(std::make_shared<IfThenElse>(loc, std::move(cond), std::move(thenCase), std::move(elseCase)));
}

Stmt whileLoop(Expr cond, Stmt body, SourceLoc loc) {
    require(bool(cond), "while with a null condition");
    if (!body) body = Stmt(std::make_shared<Seq>(loc, std::vector<Stmt>{}));
    return Stmt(std::make_shared<While>(loc, std::move(cond), std::move(body)));
}

Stmt allocate(Buffer b, Stmt body, SourceLoc loc, Expr init) {
    require(b && bool(body), "allocate with a null part");
    return Stmt(std::make_shared<Allocate>(loc, std::move(b), std::move(init), std::move(body)));
}

Stmt barrier(SourceLoc loc) { return Stmt(std::make_shared<Barrier>(loc)); }
Stmt comment(std::string text, SourceLoc loc) { return Stmt(std::make_shared<Comment>(loc, std::move(text))); }
Stmt tileOp(std::shared_ptr<const TileOp> op, SourceLoc loc) {
    require(op != nullptr, "null tile op");
    return Stmt(std::make_shared<TileOpStmt>(loc, std::move(op)));
}

// ---- regions -------------------------------------------------------------------------------

int64_t Region::elements() const {
    return std::accumulate(extents.begin(), extents.end(), int64_t(1), std::multiplies<>());
}

std::vector<int64_t> Region::squeezedExtents() const {
    std::vector<int64_t> out;
    for (int64_t e : extents)
        if (e != 1) out.push_back(e);
    return out;
}

bool Region::coversWholeBuffer() const {
    std::vector<int64_t> shape;
    if (!constantShape(buffer, shape) || shape != extents) return false;
    for (const auto& s : starts)
        if (!isConstInt(s, 0)) return false;
    return true;
}

Region wholeBuffer(const Buffer& b) {
    Region r;
    r.buffer = b;
    require(constantShape(b, r.extents), "wholeBuffer of a buffer with a symbolic shape");
    r.starts.assign(r.extents.size(), intImm(0));
    return r;
}

Region mapRegion(const Region& r, const std::function<Expr(const Expr&)>& fn) {
    Region out = r;
    for (auto& s : out.starts) s = fn(s);
    return out;
}

} // namespace tlc::ir

namespace tlc::ir {

std::string regionString(const Region& r) {
    if (r.coversWholeBuffer()) return r.buffer->name;
    // Single indices in front of whole trailing dimensions print as the indices alone, as in
    // NumPy: A_s[k % 3] is one version of a pipelined buffer.
    std::vector<int64_t> shape;
    if (constantShape(r.buffer, shape) && shape.size() == r.rank()) {
        size_t whole = r.rank();
        while (whole > 0 && r.extents[whole - 1] == shape[whole - 1] && isConstInt(r.starts[whole - 1], 0))
            --whole;
        bool singles = whole > 0 && whole < r.rank();
        for (size_t d = 0; d < whole; ++d) singles &= r.extents[d] == 1;
        if (singles) {
            std::string out = r.buffer->name + "[";
            for (size_t d = 0; d < whole; ++d) out += (d ? ", " : "") + printExpr(r.starts[d]);
            return out + "]";
        }
    }
    std::string out = r.buffer->name + "[";
    for (size_t d = 0; d < r.starts.size(); ++d) {
        out += d ? ", " : "";
        out += printExpr(r.starts[d]);
        if (r.extents[d] != 1) out += fmt::format(" : +{}", r.extents[d]);
    }
    return out + "]";
}

} // namespace tlc::ir
