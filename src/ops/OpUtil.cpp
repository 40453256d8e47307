#include "ops/OpUtil.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace tlc::ops {

using namespace ir;

std::vector<size_t> tileDims(const Region& r) {
    std::vector<size_t> dims;
    for (size_t d = 0; d < r.extents.size(); ++d)
        if (r.extents[d] != 1) dims.push_back(d);
    return dims;
}

std::vector<size_t> matrixDims(const Region& r) {
    std::vector<size_t> dims = tileDims(r);
    for (size_t d = r.extents.size(); d-- > 0 && dims.size() < 2;)
        if (r.extents[d] == 1) dims.push_back(d);
    std::sort(dims.begin(), dims.end());
    return dims;
}

std::vector<int64_t> matrixExtents(const Region& r) {
    std::vector<int64_t> out;
    for (size_t d : matrixDims(r)) out.push_back(r.extents[d]);
    return out;
}

namespace {
// The region's starts with offsets[k] added in dimension dims[k].
std::vector<Expr> offsetIn(const Region& r, const std::vector<size_t>& dims, const std::vector<Expr>& offsets) {
    std::vector<Expr> idx = r.starts;
    for (size_t k = 0; k < dims.size() && k < offsets.size(); ++k) idx[dims[k]] = idx[dims[k]] + offsets[k];
    return idx;
}
} // namespace

std::vector<Expr> matrixIndices(const Region& r, const std::vector<Expr>& rowCol) {
    return offsetIn(r, matrixDims(r), rowCol);
}

std::optional<std::vector<int64_t>> trailingTileShape(const Region& r) {
    std::vector<int64_t> shape;
    size_t rank = r.rank();
    if (!constantShape(r.buffer, shape) || rank < 2 || r.extents[rank - 1] != shape[rank - 1] ||
        r.extents[rank - 2] != shape[rank - 2])
        return std::nullopt;
    for (size_t d = 0; d + 2 < rank; ++d)
        if (r.extents[d] != 1) return std::nullopt;
    return shape;
}

std::vector<Expr> regionIndices(const Region& r, const std::vector<Expr>& tileOffsets) {
    return offsetIn(r, tileDims(r), tileOffsets);
}

Expr inBounds(const Buffer& b, const std::vector<Expr>& indices, int64_t lanes) {
    Expr cond = boolImm(true);
    if (b->scope != MemScope::Global) return cond;
    for (size_t d = 0; d < indices.size(); ++d) {
        Expr last = d + 1 == indices.size() && lanes > 1 ? indices[d] + (lanes - 1) : indices[d];
        cond = logicalAnd(cond, last < b->shape[d]);
    }
    return simplify(cond);
}

bool contiguousTensorRows(const Region& r) {
    if (r.buffer->scope != MemScope::Global) return false;
    const int64_t* unit = asConstInt(r.buffer->strides.back());
    std::vector<size_t> dims = tileDims(r);
    return unit && *unit == 1 && !dims.empty() && dims.back() == r.rank() - 1;
}

bool indicesAre(const std::vector<Expr>& indices, const std::vector<VarPtr>& vars) {
    if (indices.size() != vars.size()) return false;
    for (size_t d = 0; d < vars.size(); ++d)
        if (indices[d].as<Var>() != vars[d].get()) return false;
    return true;
}

bool loadsOnlyAt(const Expr& e, const BufferNode* b, const std::vector<VarPtr>* at) {
    class Check : public IRVisitor {
    public:
        const BufferNode* b;
        const std::vector<VarPtr>* at;
        bool ok = true;

    protected:
        void visitLoad(const Load* n) override {
            if (n->buffer.get() == b) ok = ok && at && indicesAre(n->indices, *at);
            IRVisitor::visitLoad(n);
        }
    } check;
    check.b = b;
    check.at = at;
    check.visit(e);
    return check.ok;
}

Expr tileInside(const Region& r) {
    std::vector<Expr> last = r.starts;
    for (size_t d = 0; d < last.size() && d < r.extents.size(); ++d)
        if (r.extents[d] > 1) last[d] = last[d] + (r.extents[d] - 1);
    return inBounds(r.buffer, last);
}

int64_t widestVector(int64_t inner, int64_t elemBytes) {
    int64_t vec = std::max<int64_t>(1, 16 / std::max<int64_t>(elemBytes, 1));
    while (vec > 1 && inner % vec != 0) vec /= 2;
    return vec;
}

int64_t vectorWidthFor(LowerContext& ctx, const Region& r, int64_t inner, DType moveType) {
    const Buffer& b = r.buffer;
    if (dtypeBits(moveType) < 8) return 1;  // packed 4-bit types move as bytes elsewhere
    int64_t bytes = dtypeBytes(moveType);
    int64_t vec = widestVector(inner, bytes);
    size_t last = b->shape.size() - 1;
    if (vec == 1 || r.extents.empty() || r.extents[last] == 1) return 1;
    if (!isConstInt(b->strides[last], 1)) return 1;
    if (b->scope == MemScope::Global && !ctx.vectorizeGlobal()) return 1;
    while (vec > 1 && knownMultiple(r.starts[last]) % vec != 0) vec /= 2;
    if (b->scope == MemScope::Global && vec > 1) {
        // Every row must start on a vector boundary, and the last dimension's size must be a
        // multiple of the vector for whole-vector bounds checks: checked at launch.
        for (size_t d = 0; d + 1 < b->strides.size(); ++d)
            if (knownMultiple(b->strides[d]) % vec != 0)
                ctx.requireLaunch(binary(BinaryOp::Eq, b->strides[d] % vec, intImm(0)),
                                  fmt::format("the row stride of {} must be a multiple of {} (vectorised access)",
                                              b->name, vec));
        if (knownMultiple(b->shape[last]) % vec != 0)
            ctx.requireLaunch(binary(BinaryOp::Eq, b->shape[last] % vec, intImm(0)),
                              fmt::format("the last dimension of {} must be a multiple of {} (vectorised access)",
                                          b->name, vec));
        ctx.requireAlignment(b, static_cast<int>(vec * bytes));
    }
    return vec;
}

Expr startAlong(const Expr& index, const Var* v) {
    if (index.as<Var>() == v) return intImm(0);
    if (const auto* add = index.as<Binary>(); add && add->op == BinaryOp::Add) {
        if (add->b.as<Var>() == v && !uses(add->a, v)) return add->a;
        if (add->a.as<Var>() == v && !uses(add->b, v)) return add->b;
    }
    return {};
}

std::vector<std::string> indexNames(size_t rank) {
    static const char* kNames[] = {"i", "j", "k"};
    std::vector<std::string> out;
    for (size_t d = 0; d < rank; ++d) out.push_back(d < 3 && rank <= 3 ? kNames[d] : fmt::format("i{}", d));
    return out;
}

namespace {
// On the cpu a block is one thread: a tile's loop is a nest, one loop per dimension with the
// last innermost and unit-stride, which the C++ compiler vectorises (a flat loop's `/` and
// `%` would keep it from doing so).
Stmt nestedLoop(LowerContext& ctx, const std::vector<int64_t>& extents, int64_t vec,
                const std::vector<std::string>& names, const OffsetsBody& body, const std::vector<VarPtr>& vars) {
    std::vector<VarPtr> loopVars;
    std::vector<Expr> offsets;
    for (size_t d = 0; d < extents.size(); ++d) {
        std::string name = d < names.size() ? names[d] : indexNames(extents.size())[d];
        loopVars.push_back(d < vars.size() ? vars[d] : ctx.freshVar(name));
        bool last = d + 1 == extents.size();
        offsets.push_back(last && vec > 1 ? Expr(loopVars.back()) * vec : Expr(loopVars.back()));
    }
    Stmt loop = body(offsets);
    for (size_t d = extents.size(); d-- > 0;) {
        int64_t trips = d + 1 == extents.size() ? extents[d] / vec : extents[d];
        loop = forLoop(loopVars[d], intImm(0), intImm(trips), ctx.slotLoopKind(), loop);
    }
    return simplify(loop, ctx.bounds());
}

// distributedLoop over T threads (T = 1: each thread runs the whole loop).
Stmt spreadLoop(LowerContext& ctx, int64_t T, const std::vector<int64_t>& extents, int64_t vec,
                const std::vector<std::string>& names, const OffsetsBody& body, const std::vector<VarPtr>& vars,
                bool rolled = false, int64_t batch = 0) {
    if (T == 1 && ctx.target.backend == Backend::Cpu && extents.size() > 1)
        return nestedLoop(ctx, extents, vec, names, body, vars);
    int64_t total = std::accumulate(extents.begin(), extents.end(), int64_t(1), std::multiplies<>());
    int64_t vectors = total / vec;
    int64_t iterations = (vectors + T - 1) / T;
    // With one thread, a one-dimensional loop runs over its offset variable itself.
    bool oneDim = extents.size() == 1;
    VarPtr it = oneDim && T == 1 && vec == 1 && !vars.empty() ? vars[0] : ctx.freshVar("it");
    Expr q = iterations == 1 ? ctx.tx() : Expr(it) * T + ctx.tx();
    if (T == 1) q = Expr(it);
    // One dimension needs no flat index of its own: its offset is the flat index.
    VarPtr e = ctx.freshVar("e");
    Expr flat = oneDim ? (vec == 1 ? q : q * vec) : Expr(e);
    // Offsets of each dimension, last fastest.
    std::vector<VarPtr> offsetVars;
    std::vector<Expr> offsetValues;
    int64_t inner = 1;
    for (size_t d = extents.size(); d-- > 0;) {
        Expr v = inner == 1 ? flat : flat / inner;
        if (d > 0) v = v % extents[d];
        inner *= extents[d];
        offsetVars.insert(offsetVars.begin(), d < vars.size() ? vars[d] : ctx.freshVar(d < names.size() ? names[d] : "o"));
        offsetValues.insert(offsetValues.begin(), v);
    }
    std::vector<Expr> offsets(offsetVars.begin(), offsetVars.end());
    Stmt inner_ = body(offsets);
    for (size_t d = offsetVars.size(); d-- > 0;)
        if (offsetVars[d] != it) inner_ = letStmt(offsetVars[d], offsetValues[d], inner_);
    if (!oneDim) inner_ = letStmt(e, vec == 1 ? q : q * vec, inner_);
    if (vectors % T != 0) inner_ = ifThenElse(q < vectors, inner_);
    Stmt loop;
    if (batch > 0 && !rolled && iterations > batch && iterations % batch == 0) {
        // Batches of `batch` unrolled iterations, the batches kept a loop: at most `batch` moves
        // of a thread in flight (and in registers) at once.
        VarPtr outer = ctx.freshVar("pass"), lane = ctx.freshVar("step");
        Stmt unrolled = forLoop(lane, intImm(0), intImm(batch), ctx.slotLoopKind(),
                                letStmt(it, Expr(outer) * batch + Expr(lane), inner_));
        loop = forLoop(outer, intImm(0), intImm(iterations / batch), ForKind::Rolled, unrolled);
    } else {
        loop = forLoop(it, intImm(0), intImm(iterations), rolled ? ForKind::Serial : ctx.slotLoopKind(), inner_);
    }
    VarBounds bounds = ctx.bounds();
    return simplify(loop, bounds);
}
} // namespace

Stmt distributedLoop(LowerContext& ctx, const std::vector<int64_t>& extents, int64_t vec,
                     const std::vector<std::string>& names, const OffsetsBody& body, const std::vector<VarPtr>& vars,
                     bool rolled, int64_t batch) {
    return spreadLoop(ctx, ctx.threads, extents, vec, names, body, vars, rolled, batch);
}

Stmt perThreadLoop(LowerContext& ctx, const std::vector<int64_t>& extents, int64_t vec,
                   const std::vector<std::string>& names, const OffsetsBody& body) {
    return spreadLoop(ctx, 1, extents, vec, names, body, {});
}

bool isCpuTile(const LowerContext& ctx, const layout::Fragment& f) {
    return ctx.target.backend == Backend::Cpu && f.threads() == 1 && f.sameAs(layout::replicatedFragment(f.shape(), 1));
}

Stmt fragmentLoop(LowerContext& ctx, const layout::Fragment& f, int64_t vec, const std::vector<std::string>& names,
                  const SlotBody& body) {
    // A cpu fragment is the whole tile, row-major: visit it as a loop nest.
    if (f.rank() > 1 && isCpuTile(ctx, f)) {
        const auto& shape = f.shape();
        return nestedLoop(ctx, {shape.begin(), shape.end()}, vec, names, [&](const std::vector<Expr>& idx) {
            Expr slot = idx[0];
            for (size_t d = 1; d < idx.size(); ++d) slot = slot * shape[d] + idx[d];
            return body(simplify(slot), idx);
        }, {});
    }
    VarPtr lv = ctx.freshVar("l");
    Expr slot = vec == 1 ? Expr(lv) : Expr(lv) * vec;
    std::vector<Expr> values = f.indicesAt(ctx.tx(), slot);
    std::vector<VarPtr> vars;
    std::vector<Expr> indices;
    for (size_t d = 0; d < values.size(); ++d) {
        vars.push_back(ctx.freshVar(d < names.size() ? names[d] : "o"));
        indices.push_back(Expr(vars.back()));
    }
    Stmt inner = body(slot, indices);
    for (size_t d = vars.size(); d-- > 0;) inner = letStmt(vars[d], values[d], inner);
    Stmt loop = forLoop(lv, intImm(0), intImm(f.locals() / vec), ctx.slotLoopKind(), inner);
    return simplify(loop, ctx.bounds());
}

std::vector<Expr> offsetLast(std::vector<Expr> idx, int64_t delta) {
    if (delta != 0 && !idx.empty()) idx.back() = idx.back() + delta;
    return idx;
}

Stmt moveElements(const Buffer& dst, const std::vector<Expr>& dstIdx, const Buffer& src,
                  const std::vector<Expr>& srcIdx, int64_t lanes, const Expr& valid) {
    auto guarded = [&](Stmt move, Stmt zeroFill) {
        if (!valid || (asConstInt(valid) && *asConstInt(valid))) return move;
        return ifThenElse(valid, move, zeroFill);
    };
    if (lanes > 1 && dst->dtype == src->dtype) {
        int l = static_cast<int>(lanes);
        return guarded(store(dst, dstIdx, load(src, srcIdx, l)), store(dst, dstIdx, zero(dst->dtype, l)));
    }
    bool dstLocal = dst->scope == MemScope::Local, srcLocal = src->scope == MemScope::Local;
    if (lanes > 1 && dstLocal != srcLocal) {
        // A converting move between registers and memory: convert in registers, through a
        // small array of the memory side's type, and touch memory with one vector access.
        int l = static_cast<int>(lanes);
        Buffer packed = makeBuffer("packed", dstLocal ? src->dtype : dst->dtype, MemScope::Local, {intImm(lanes)});
        std::vector<Stmt> converts;
        for (int64_t v = 0; v < lanes; ++v) {
            Stmt c = dstLocal ? store(dst, offsetLast(dstIdx, v), cast(dst->dtype, load(packed, {intImm(v)})))
                              : store(packed, {intImm(v)}, cast(dst->dtype, load(src, offsetLast(srcIdx, v))));
            converts.push_back(c);
        }
        if (dstLocal) {
            Stmt in = store(packed, {intImm(0)}, load(src, srcIdx, l));
            Stmt zeroIn = store(packed, {intImm(0)}, zero(src->dtype, l));
            return allocate(packed, seq({guarded(in, zeroIn), seq(converts)}));
        }
        Stmt out = store(dst, dstIdx, load(packed, {intImm(0)}, l));
        return allocate(packed, guarded(seq({seq(converts), out}), store(dst, dstIdx, zero(dst->dtype, l))));
    }
    std::vector<Stmt> moves, zeros;
    for (int64_t v = 0; v < lanes; ++v) {
        moves.push_back(store(dst, offsetLast(dstIdx, v), cast(dst->dtype, load(src, offsetLast(srcIdx, v)))));
        zeros.push_back(store(dst, offsetLast(dstIdx, v), zero(dst->dtype)));
    }
    return guarded(seq(moves), seq(zeros));
}

} // namespace tlc::ops
