#include "Evaluator.h"

#include "Numeric.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/atomic_add/AtomicAdd.h"
#include "ops/copy/Copy.h"
#include "ops/cumsum/Cumsum.h"
#include "ops/fill/Fill.h"
#include "ops/gemm/Gemm.h"
#include "ops/im2col/Im2Col.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <functional>
#include <optional>
#include <memory>
#include <unordered_map>

namespace tlc::eval {

using namespace ir;

namespace {

// Loop iterations and while-loop turns a program may take in all: beyond, it is taken to hang.
constexpr int64_t kStepLimit = 200'000'000;

// Where a buffer's elements live: one array per dtype family, and which elements were written
// (global tensors the caller supplies start written; scratch and on-chip buffers do not).
struct Storage {
    DType dtype;
    std::vector<double> f;
    std::vector<int64_t> i;
    std::vector<uint8_t> written;  // empty: every element counts as written

    Storage(DType t, size_t n, bool trackWrites) : dtype(t) {
        if (isFloat(t)) f.assign(n, 0.0);
        else i.assign(n, 0);
        if (trackWrites) written.assign(n, 0);
    }
    size_t size() const { return isFloat(dtype) ? f.size() : i.size(); }
};

// A buffer as the running code sees it: its storage, extents and strides.
struct Bound {
    Storage* storage = nullptr;
    std::vector<int64_t> shape, strides;
    bool global = false;
    std::string name;
};

std::string indexText(const std::vector<int64_t>& idx) {
    std::string s;
    for (int64_t v : idx) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
}

// A region with its starts evaluated: the element at position p of the tile is
// buffer[start + p]; `nonUnit` lists the dimensions whose extent is not 1.
struct Tile {
    const BufferNode* buffer;
    std::vector<int64_t> start, extent;
    std::vector<size_t> nonUnit;
};

// Calls fn(position) for every position of a box of these extents, the last fastest.
void forEachIndex(const std::vector<int64_t>& extents, const std::function<void(const std::vector<int64_t>&)>& fn) {
    for (int64_t e : extents)
        if (e <= 0) return;
    std::vector<int64_t> idx(extents.size(), 0);
    while (true) {
        fn(idx);
        size_t d = extents.size();
        while (d > 0) {
            if (++idx[d - 1] < extents[d - 1]) break;
            idx[d - 1] = 0;
            --d;
        }
        if (d == 0) return;
    }
}

class Machine {
public:
    explicit Machine(Problem& problem) : problem_(problem) {}

    void runPart(const Kernel& k) {
        bound_.clear();
        env_.clear();
        for (const KernelParam& p : k.params) {
            if (p.kind == KernelParam::Kind::Size) {
                auto it = problem_.sizes.find(p.name);
                if (it == problem_.sizes.end()) throw Unsupported("no value for size '" + p.name + "'");
                env_[p.var.get()] = Value::ofInt(p.var->dtype, it->second);
            } else if (p.kind == KernelParam::Kind::Scalar) {
                auto it = problem_.scalars.find(p.name);
                if (it == problem_.scalars.end()) throw Unsupported("no value for scalar '" + p.name + "'");
                env_[p.var.get()] = Value::of(p.var->dtype, it->second);
            }
        }
        for (const KernelParam& p : k.params)
            if (p.kind == KernelParam::Kind::Tensor && p.scratch) allocateScratch(p.buffer);
        std::vector<int64_t> grid;
        for (const Expr& e : k.gridExtents) grid.push_back(eval(e).asInt());
        while (grid.size() < 3) grid.push_back(1);
        for (int64_t e : grid)
            if (e <= 0) return;  // an empty grid launches nothing
        for (int64_t bz = 0; bz < grid[2]; ++bz)
            for (int64_t by = 0; by < grid[1]; ++by)
                for (int64_t bx = 0; bx < grid[0]; ++bx) {
                    const int64_t block[3] = {bx, by, bz};
                    for (const VarPtr& v : k.blockVars) {
                        int axis = v->role == VarRole::BlockIndexY ? 1 : v->role == VarRole::BlockIndexZ ? 2 : 0;
                        env_[v.get()] = Value::ofInt(v->dtype, block[axis]);
                    }
                    exec(k.body);
                }
    }

    // The tensors' final contents back into the problem.
    void flush() {
        for (auto& [name, values] : problem_.tensors) {
            auto it = globals_.find(name);
            if (it == globals_.end()) continue;
            const Storage& s = *it->second;
            for (size_t n = 0; n < values.size(); ++n)
                values[n] = isFloat(s.dtype) ? s.f[n] : Value::ofInt(s.dtype, s.i[n]).asDouble();
        }
    }

private:
    Problem& problem_;
    std::unordered_map<const BufferNode*, Bound> bound_;
    std::unordered_map<const Var*, Value> env_;
    std::map<std::string, std::unique_ptr<Storage>> globals_;   // parameters and scratch, by name
    std::vector<std::unique_ptr<Storage>> onChip_;             // live allocations
    int64_t steps_ = 0;

    // ---- buffers ---------------------------------------------------------------------------

    std::vector<int64_t> evalInts(const std::vector<Expr>& es) {
        std::vector<int64_t> out;
        for (const Expr& e : es) out.push_back(eval(e).asInt());
        return out;
    }

    Storage* globalStorage(const std::string& name, DType dtype) {
        auto it = globals_.find(name);
        if (it != globals_.end()) return it->second.get();
        auto data = problem_.tensors.find(name);
        if (data == problem_.tensors.end()) throw Unsupported("no data for tensor '" + name + "'");
        auto s = std::make_unique<Storage>(dtype, data->second.size(), false);
        for (size_t n = 0; n < data->second.size(); ++n) {
            Value v = Value::of(dtype, data->second[n]);
            if (isFloat(dtype)) s->f[n] = v.f;
            else s->i[n] = v.i;
        }
        return (globals_[name] = std::move(s)).get();
    }

    void allocateScratch(const Buffer& b) {
        if (globals_.count(b->name)) return;  // declared for every part: allocated once
        int64_t n = 1;
        for (int64_t e : evalInts(b->shape)) n *= e;
        globals_[b->name] = std::make_unique<Storage>(b->dtype, size_t(std::max<int64_t>(n, 0)), true);
    }

    // Global buffers bind on first use, by name (each part has its own nodes): a view reads the
    // storage of the tensor it views, with its own extents.
    const Bound& bind(const BufferNode* b) {
        auto it = bound_.find(b);
        if (it != bound_.end()) return it->second;
        if (b->scope != MemScope::Global) throw Unsupported("buffer '" + b->name + "' used outside its allocation");
        Bound bd;
        bd.global = true;
        bd.name = b->name;
        bd.storage = globalStorage(b->viewOf ? b->viewOf->name : b->name, b->dtype);
        bd.shape = evalInts(b->shape);
        bd.strides = evalInts(b->strides);
        return bound_[b] = bd;
    }

    // The flat offset of an element, or -1 when it is outside a global tensor (reads give zero,
    // writes are dropped); outside an on-chip buffer it is a fault.
    int64_t offset(const Bound& bd, const std::vector<int64_t>& idx) {
        if (idx.size() != bd.shape.size()) throw Unsupported("'" + bd.name + "' indexed with the wrong rank");
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
            if (idx[d] < 0 || idx[d] >= bd.shape[d]) {
                if (bd.global) return -1;
                throw Fault(fmt::format("index [{}] outside '{}' of extents [{}]", indexText(idx), bd.name,
                                        indexText(bd.shape)));
            }
            off += idx[d] * bd.strides[d];
        }
        if (off < 0 || size_t(off) >= bd.storage->size())
            throw Unsupported(fmt::format("'{}'[{}] lies past the {} elements of its data", bd.name, indexText(idx),
                                          bd.storage->size()));
        return off;
    }

    Value read(const BufferNode* b, const std::vector<int64_t>& idx) {
        const Bound& bd = bind(b);
        int64_t off = offset(bd, idx);
        if (off < 0) return Value::of(b->dtype, 0);
        Storage& s = *bd.storage;
        if (!s.written.empty() && !s.written[size_t(off)])
            throw Fault(fmt::format("'{}'[{}] is read before anything wrote it", bd.name, indexText(idx)));
        Value v;
        v.t = s.dtype;
        if (isFloat(s.dtype)) v.f = s.f[size_t(off)];
        else v.i = s.i[size_t(off)];
        return v;
    }

    void write(const BufferNode* b, const std::vector<int64_t>& idx, const Value& value) {
        const Bound& bd = bind(b);
        int64_t off = offset(bd, idx);
        if (off < 0) return;
        Storage& s = *bd.storage;
        Value v = convert(value, s.dtype);
        if (isFloat(s.dtype)) s.f[size_t(off)] = roundToFloat(s.dtype, v.f);
        else s.i[size_t(off)] = v.i;
        if (!s.written.empty()) s.written[size_t(off)] = 1;
    }

    void atomicAdd(const BufferNode* b, const std::vector<int64_t>& idx, const Value& value) {
        const Bound& bd = bind(b);
        if (offset(bd, idx) < 0) return;
        write(b, idx, add(read(b, idx), value));
    }

    void atomicMinMax(const BufferNode* b, const std::vector<int64_t>& idx, const Value& value, bool max) {
        const Bound& bd = bind(b);
        if (offset(bd, idx) < 0) return;
        Value old = read(b, idx), v = convert(value, old.t);
        bool better = isFloat(old.t) ? (max ? v.f > old.f : v.f < old.f)
                      : isSigned(old.t) ? (max ? v.i > old.i : v.i < old.i)
                                        : (max ? uint64_t(v.i) > uint64_t(old.i) : uint64_t(v.i) < uint64_t(old.i));
        if (better) write(b, idx, v);
    }

    // ---- expressions -----------------------------------------------------------------------

    static Value add(const Value& a, const Value& b) {
        DType t = a.t;
        if (isFloat(t)) return Value{t, a.f + convert(b, t).asDouble(), 0};
        return Value::ofInt(t, int64_t(uint64_t(a.i) + uint64_t(convert(b, t).i)));
    }

    static Value boolValue(bool b) { return Value::ofInt(DType::Bool, b); }

    // A float result that is NaN although its operands were not: the program computed something
    // undefined (log of a negative number, 0 * inf, inf - inf).
    static Value checkedFloat(DType t, double r, std::initializer_list<double> operands, const char* what) {
        if (std::isnan(r)) {
            bool fromNaN = false;
            for (double o : operands) fromNaN = fromNaN || std::isnan(o);
            if (!fromNaN) throw Fault(std::string("NaN made by ") + what);
        }
        return Value{t, r, 0};
    }

    Value eval(const Expr& e) {
        switch (e->kind) {
        case NodeKind::IntImm: return Value::ofInt(e.dtype(), e.as<IntImm>()->value);
        case NodeKind::FloatImm: return Value{e.dtype(), e.as<FloatImm>()->value, 0};
        case NodeKind::Var: {
            auto it = env_.find(e.as<Var>());
            if (it == env_.end()) throw Unsupported("variable '" + e.as<Var>()->name + "' has no value");
            return it->second;
        }
        case NodeKind::Cast: return convert(eval(e.as<Cast>()->value), e.dtype());
        case NodeKind::Unary: return unaryOp(*e.as<Unary>());
        case NodeKind::Binary: return binaryOp(*e.as<Binary>());
        case NodeKind::Select: {
            const auto* s = e.as<Select>();
            return convert(eval(s->cond).truth() ? eval(s->thenValue) : eval(s->elseValue), e.dtype());
        }
        case NodeKind::Call: return callOp(*e.as<Call>());
        case NodeKind::Load: {
            const auto* l = e.as<Load>();
            if (l->lanes != 1) throw Unsupported("vector load in the tile IR");
            return read(l->buffer.get(), evalInts(l->indices));
        }
        default: throw Unsupported("expression node");
        }
    }

    Value unaryOp(const Unary& u) {
        Value x = convert(eval(u.operand), u.dtype);
        switch (u.op) {
        case UnaryOp::Neg: return isFloat(u.dtype) ? Value{u.dtype, -x.f, 0} : Value::ofInt(u.dtype, int64_t(0 - uint64_t(x.i)));
        case UnaryOp::Not: return boolValue(!x.truth());
        case UnaryOp::BitNot: return Value::ofInt(u.dtype, ~x.i);
        }
        throw Unsupported("unary operator");
    }

    Value binaryOp(const Binary& b) {
        if (b.op == BinaryOp::And) return boolValue(eval(b.a).truth() && eval(b.b).truth());  // short-circuit, as C
        if (b.op == BinaryOp::Or) return boolValue(eval(b.a).truth() || eval(b.b).truth());
        Value x = eval(b.a), y = eval(b.b);
        if (isComparison(b.op)) {
            DType t = promote(x.t, y.t);
            return boolValue(compare(b.op, convert(x, t), convert(y, t)));
        }
        DType t = b.dtype;
        if (b.op == BinaryOp::Shl || b.op == BinaryOp::Shr) return shift(b.op, t, convert(x, t), y.asInt());
        x = convert(x, t);
        y = convert(y, t);
        if (isFloat(t)) return floatOp(b.op, t, x.f, y.f);
        return intOp(b.op, t, x, y);
    }

    static bool compare(BinaryOp op, const Value& x, const Value& y) {
        auto cmp = [&](auto a, auto c) {
            switch (op) {
            case BinaryOp::Lt: return a < c;
            case BinaryOp::Le: return a <= c;
            case BinaryOp::Gt: return a > c;
            case BinaryOp::Ge: return a >= c;
            case BinaryOp::Eq: return a == c;
            default: return a != c;
            }
        };
        if (isFloat(x.t)) return cmp(x.f, y.f);
        // Values of up to 32 bits are sign- or zero-extended, so int64 compares them right; u64
        // needs unsigned comparison.
        return x.t == DType::U64 ? cmp(uint64_t(x.i), uint64_t(y.i)) : cmp(x.i, y.i);
    }

    static Value floatOp(BinaryOp op, DType t, double a, double c) {
        switch (op) {
        case BinaryOp::Add: return checkedFloat(t, a + c, {a, c}, "+");
        case BinaryOp::Sub: return checkedFloat(t, a - c, {a, c}, "-");
        case BinaryOp::Mul: return checkedFloat(t, a * c, {a, c}, "*");
        case BinaryOp::Div: return checkedFloat(t, a / c, {a, c}, "/");
        case BinaryOp::Mod: return checkedFloat(t, std::fmod(a, c), {a, c}, "%");
        case BinaryOp::Min: return Value{t, c < a ? c : a, 0};
        case BinaryOp::Max: return Value{t, a < c ? c : a, 0};
        default: throw Unsupported(std::string("operator ") + spelling(op) + " on floats");
        }
    }

    static Value intOp(BinaryOp op, DType t, const Value& x, const Value& y) {
        const bool u64 = t == DType::U64;
        const bool unsignedT = !isSigned(t);
        uint64_t a = uint64_t(x.i), c = uint64_t(y.i);
        switch (op) {
        case BinaryOp::Add: return Value::ofInt(t, int64_t(a + c));
        case BinaryOp::Sub: return Value::ofInt(t, int64_t(a - c));
        case BinaryOp::Mul: return Value::ofInt(t, int64_t(a * c));
        case BinaryOp::Div:
        case BinaryOp::Mod: {
            if (y.i == 0) throw Fault("integer division by zero");
            if (u64 || unsignedT) return Value::ofInt(t, int64_t(op == BinaryOp::Div ? a / c : a % c));
            if (x.i == INT64_MIN && y.i == -1) throw Fault("integer division overflows");
            return Value::ofInt(t, op == BinaryOp::Div ? x.i / y.i : x.i % y.i);
        }
        case BinaryOp::Min: return compare(BinaryOp::Lt, y, x) ? y : x;
        case BinaryOp::Max: return compare(BinaryOp::Lt, x, y) ? y : x;
        case BinaryOp::BitAnd: return Value::ofInt(t, x.i & y.i);
        case BinaryOp::BitOr: return Value::ofInt(t, x.i | y.i);
        case BinaryOp::BitXor: return Value::ofInt(t, x.i ^ y.i);
        default: throw Unsupported(std::string("operator ") + spelling(op) + " on integers");
        }
    }

    static Value shift(BinaryOp op, DType t, const Value& x, int64_t count) {
        int bits = std::max(dtypeBits(t), 8);
        if (count < 0 || count >= bits) throw Fault(fmt::format("shift by {} of a {}-bit value", count, bits));
        if (op == BinaryOp::Shl) return Value::ofInt(t, int64_t(uint64_t(x.i) << count));
        if (isSigned(t)) return Value::ofInt(t, x.i >> count);  // arithmetic on the sign-extended value
        return Value::ofInt(t, int64_t(uint64_t(x.i) >> count));
    }

    Value callOp(const Call& c) {
        std::vector<Value> args;
        for (const Expr& a : c.args) args.push_back(eval(a));
        const std::string& n = c.name;
        DType t = c.dtype;
        if (n == "reinterpret") return fromBits(t, bitsOf(args.at(0)));
        if (n == "floordiv" || n == "floormod") {
            int64_t a = convert(args.at(0), t).i, b = convert(args.at(1), t).i;
            if (b == 0) throw Fault("integer division by zero in " + n);
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                --q;
                r += b;
            }
            return Value::ofInt(t, n == "floordiv" ? q : r);
        }
        if (n == "abs" && !isFloat(t)) return Value::ofInt(t, args.at(0).i < 0 ? int64_t(0 - uint64_t(args[0].i)) : args[0].i);
        if (!isFloat(t)) throw Unsupported("call '" + n + "'");
        double x = args.empty() ? 0 : args[0].asDouble();
        std::string base = n.rfind("fast_", 0) == 0 ? n.substr(5) : n;  // approximations of the same function
        double r;
        if (base == "exp") r = std::exp(x);
        else if (base == "exp2") r = std::exp2(x);
        else if (base == "log") r = std::log(x);
        else if (base == "log2") r = std::log2(x);
        else if (base == "sqrt") r = std::sqrt(x);
        else if (base == "rsqrt") r = 1.0 / std::sqrt(x);
        else if (base == "abs") r = std::fabs(x);
        else if (base == "tanh") r = std::tanh(x);
        else if (base == "sigmoid") r = 1.0 / (1.0 + std::exp(-x));
        else if (base == "erf") r = std::erf(x);
        else if (base == "pow") r = std::pow(x, args.at(1).asDouble());
        else throw Unsupported("call '" + n + "'");
        return checkedFloat(t, r, {x, args.size() > 1 ? args[1].asDouble() : 0.0}, n.c_str());
    }

    // ---- statements ------------------------------------------------------------------------

    void step() {
        if (++steps_ > kStepLimit) throw Fault("the program runs more than 200 million loop iterations (a hang?)");
    }

    // Binds var to value for the duration of fn, then restores what it was.
    template <typename F> void with(const Var* var, const Value& value, F&& fn) {
        auto old = env_.find(var);
        std::optional<Value> saved;
        if (old != env_.end()) saved = old->second;
        env_[var] = value;
        fn();
        if (saved) env_[var] = *saved;
        else env_.erase(var);
    }

    void exec(const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
        case NodeKind::Seq:
            for (const Stmt& c : s.as<Seq>()->stmts) exec(c);
            return;
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            with(l->var.get(), convert(eval(l->value), l->var->dtype), [&] { exec(l->body); });
            return;
        }
        case NodeKind::Evaluate: {
            const auto* c = s.as<Evaluate>()->value.as<Call>();
            if (c && (c->name == "print" || c->name == "assert" || c->name == "memory_fence")) return;  // compiled out without --debug; one thread: fences order nothing
            eval(s.as<Evaluate>()->value);
            return;
        }
        case NodeKind::Store: {
            const auto* st = s.as<Store>();
            if (st->value->lanes != 1) throw Unsupported("vector store in the tile IR");
            Value v = eval(st->value);
            std::vector<int64_t> idx = evalInts(st->indices);
            if (st->storeKind == StoreKind::AtomicAdd) atomicAdd(st->buffer.get(), idx, v);
            else if (st->storeKind != StoreKind::Plain) atomicMinMax(st->buffer.get(), idx, v, st->storeKind == StoreKind::AtomicMax);
            else write(st->buffer.get(), idx, v);
            return;
        }
        case NodeKind::For: return loop(*s.as<For>());
        case NodeKind::IfThenElse: {
            const auto* i = s.as<IfThenElse>();
            exec(eval(i->cond).truth() ? i->thenCase : i->elseCase);
            return;
        }
        case NodeKind::While: {
            const auto* w = s.as<While>();
            while (eval(w->cond).truth()) {
                step();
                exec(w->body);
            }
            return;
        }
        case NodeKind::Allocate: return allocate(*s.as<Allocate>());
        case NodeKind::Barrier:
        case NodeKind::Comment: return;
        case NodeKind::TileOpStmt: return tileOp(*s.as<TileOpStmt>()->op);
        default: throw Unsupported("statement node");
        }
    }

    // Every kind of loop runs its iterations in order: `parallel` loops too (sema accepts only
    // those whose iterations do not depend on each other), and pipelined loops are plain loops
    // by the language's meaning. range(start, stop, step) is Python's, negative steps included.
    void loop(const For& f) {
        int64_t lo = eval(f.min).asInt(), extent = eval(f.extent).asInt();
        int64_t stepBy = f.step ? eval(f.step).asInt() : 1;
        if (stepBy == 0) throw Fault("a range with step 0");
        const int64_t stop = lo + extent;
        for (int64_t v = lo; stepBy > 0 ? v < stop : v > stop; v += stepBy) {
            step();
            with(f.var.get(), Value::ofInt(f.var->dtype, v), [&] { exec(f.body); });
        }
    }

    void allocate(const Allocate& a) {
        const BufferNode* b = a.buffer.get();
        Bound bd;
        bd.name = b->name;
        bd.shape = evalInts(b->shape);
        bd.strides = evalInts(b->strides);
        int64_t n = 1;
        for (int64_t e : bd.shape) n *= e;
        onChip_.push_back(std::make_unique<Storage>(b->dtype, size_t(n), true));
        bd.storage = onChip_.back().get();
        auto previous = bound_.find(b);
        std::optional<Bound> saved;
        if (previous != bound_.end()) saved = previous->second;
        bound_[b] = bd;
        if (a.init) write(b, {}, eval(a.init));
        exec(a.body);
        if (saved) bound_[b] = *saved;
        else bound_.erase(b);
        onChip_.erase(std::find_if(onChip_.begin(), onChip_.end(), [&](const auto& p) { return p.get() == bd.storage; }));
    }

    // ---- tile ops --------------------------------------------------------------------------

    Tile tile(const Region& r) {
        Tile t{r.buffer.get(), evalInts(r.starts), r.extents, {}};
        for (size_t d = 0; d < t.extent.size(); ++d)
            if (t.extent[d] != 1) t.nonUnit.push_back(d);
        return t;
    }

    // The buffer index of position p of the tile's non-unit dimensions.
    static std::vector<int64_t> at(const Tile& t, const std::vector<int64_t>& p) {
        std::vector<int64_t> idx = t.start;
        for (size_t k = 0; k < p.size(); ++k) idx[t.nonUnit[k]] += p[k];
        return idx;
    }

    // Element pairs of two tiles whose shapes match after dropping unit dimensions; a region
    // smaller than the whole buffer it meets moves into (or out of) that buffer's leading
    // corner, so each paired dimension runs to the smaller of the two extents.
    void forEachPair(const Tile& a, const Tile& b, const std::function<void(std::vector<int64_t>, std::vector<int64_t>)>& fn) {
        if (a.nonUnit.size() != b.nonUnit.size())
            throw Unsupported(fmt::format("tiles of {} and {} dimensions other than 1", a.nonUnit.size(), b.nonUnit.size()));
        std::vector<int64_t> ext;
        for (size_t k = 0; k < a.nonUnit.size(); ++k) ext.push_back(std::min(a.extent[a.nonUnit[k]], b.extent[b.nonUnit[k]]));
        forEachIndex(ext, [&](const std::vector<int64_t>& p) { fn(at(a, p), at(b, p)); });
    }

    void tileOp(const TileOp& op) {
        if (const auto* c = dynamic_cast<const ops::CopyOp*>(&op)) {
            Tile src = tile(c->src()), dst = tile(c->dst());
            forEachPair(src, dst, [&](auto s, auto d) { write(dst.buffer, d, read(src.buffer, s)); });
        } else if (const auto* g = dynamic_cast<const ops::GemmOp*>(&op)) {
            gemm(*g);
        } else if (const auto* r = dynamic_cast<const ops::ReduceOp*>(&op)) {
            reduce(*r);
        } else if (const auto* cs = dynamic_cast<const ops::CumsumOp*>(&op)) {
            cumsum(*cs);
        } else if (const auto* f = dynamic_cast<const ops::FillOp*>(&op)) {
            Tile dst = tile(f->dst());
            Value v = f->isClear() ? Value::of(dst.buffer->dtype, 0) : eval(f->value());
            forEachIndex(dst.extent, [&](const std::vector<int64_t>& p) {
                std::vector<int64_t> idx = dst.start;
                for (size_t d = 0; d < p.size(); ++d) idx[d] += p[d];
                write(dst.buffer, idx, v);
            });
        } else if (const auto* a = dynamic_cast<const ops::AtomicAddOp*>(&op)) {
            Tile dst = tile(a->dst());
            if (a->src()) {
                Tile src = tile(*a->src());
                forEachPair(src, dst, [&](auto s, auto d) { atomicAdd(dst.buffer, d, read(src.buffer, s)); });
            } else {
                Value v = eval(a->value());
                forEachIndex(dst.extent, [&](const std::vector<int64_t>& p) {
                    std::vector<int64_t> idx = dst.start;
                    for (size_t d = 0; d < p.size(); ++d) idx[d] += p[d];
                    atomicAdd(dst.buffer, idx, v);
                });
            }
        } else if (const auto* i = dynamic_cast<const ops::Im2ColOp*>(&op)) {
            im2col(*i);
        } else if (dynamic_cast<const ops::AnnotateLayoutOp*>(&op)) {
            // how a buffer is stored, not what it holds
        } else {
            throw Unsupported("tile op '" + op.name() + "'");
        }
    }

    // A gemm operand as a matrix: its last two dimensions (any before them have extent 1).
    struct Matrix {
        Tile t;
        size_t rowDim, colDim;
        int64_t rows() const { return t.extent[rowDim]; }
        int64_t cols() const { return t.extent[colDim]; }
        std::vector<int64_t> index(int64_t r, int64_t c) const {
            std::vector<int64_t> idx = t.start;
            idx[rowDim] += r;
            idx[colDim] += c;
            return idx;
        }
    };

    Matrix matrix(const Region& r, const char* role) {
        Tile t = tile(r);
        if (t.extent.size() < 2 || t.nonUnit.size() > 2 ||
            (t.nonUnit.size() == 2 && t.nonUnit[0] != t.extent.size() - 2))
            throw Unsupported(std::string("gemm operand ") + role + " is not a matrix of its last two dimensions");
        return {t, t.extent.size() - 2, t.extent.size() - 1};
    }

    void gemm(const ops::GemmOp& g) {
        Matrix a = matrix(g.a(), "A"), b = matrix(g.b(), "B"), c = matrix(g.c(), "C");
        const int64_t M = c.rows(), N = c.cols();
        const int64_t K = g.transposeA() ? a.rows() : a.cols();
        if ((g.transposeA() ? a.cols() : a.rows()) != M || (g.transposeB() ? b.rows() : b.cols()) != N ||
            (g.transposeB() ? b.cols() : b.rows()) != K)
            throw Unsupported("gemm operand shapes do not agree");
        const DType ct = c.t.buffer->dtype;
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                auto aAt = [&](int64_t k) { return g.transposeA() ? a.index(k, m) : a.index(m, k); };
                auto bAt = [&](int64_t k) { return g.transposeB() ? b.index(n, k) : b.index(k, n); };
                if (isFloat(ct)) {
                    double acc = g.clearAccum() ? 0.0 : read(c.t.buffer, c.index(m, n)).asDouble();
                    for (int64_t k = 0; k < K; ++k)
                        acc += read(a.t.buffer, aAt(k)).asDouble() * read(b.t.buffer, bAt(k)).asDouble();
                    write(c.t.buffer, c.index(m, n), Value{DType::F64, acc, 0});
                } else {
                    int64_t acc = g.clearAccum() ? 0 : read(c.t.buffer, c.index(m, n)).i;
                    for (int64_t k = 0; k < K; ++k)
                        acc += read(a.t.buffer, aAt(k)).asInt() * read(b.t.buffer, bAt(k)).asInt();
                    write(c.t.buffer, c.index(m, n), Value::ofInt(DType::I64, acc));
                }
            }
    }

    void reduce(const ops::ReduceOp& r) {
        Tile src = tile(r.src()), dst = tile(r.dst());
        const size_t dim = size_t(r.dim());
        std::vector<int64_t> outer = src.extent;
        outer.erase(outer.begin() + long(dim));
        int64_t outputs = 1, dstCount = 1;
        for (int64_t e : outer) outputs *= e;
        for (int64_t e : dst.extent) dstCount *= e;
        if (outputs != dstCount) throw Unsupported("reduction destination of another size");
        const ops::ReduceKind kind = r.kind();
        const bool floats = isFloat(src.buffer->dtype) || isFloat(dst.buffer->dtype);
        // The destination's elements in row-major order pair with the kept dimensions' positions.
        std::vector<std::vector<int64_t>> dstIndex;
        forEachIndex(dst.extent, [&](const std::vector<int64_t>& p) {
            std::vector<int64_t> idx = dst.start;
            for (size_t d = 0; d < p.size(); ++d) idx[d] += p[d];
            dstIndex.push_back(idx);
        });
        size_t o = 0;
        forEachIndex(outer, [&](const std::vector<int64_t>& p) {
            std::vector<double> values;
            std::vector<int64_t> idx = src.start;
            for (size_t d = 0, q = 0; d < idx.size(); ++d)
                if (d != dim) idx[d] += p[q++];
            for (int64_t k = 0; k < src.extent[dim]; ++k) {
                std::vector<int64_t> e = idx;
                e[dim] += k;
                values.push_back(read(src.buffer, e).asDouble());
            }
            std::optional<double> acc;
            if (!r.clear()) acc = read(dst.buffer, dstIndex[o]).asDouble();
            for (double v : values) {
                double x = (kind == ops::ReduceKind::AbsSum || kind == ops::ReduceKind::AbsMax) ? std::fabs(v) : v;
                if (!acc) {
                    acc = x;
                    continue;
                }
                switch (kind) {
                case ops::ReduceKind::Sum:
                case ops::ReduceKind::AbsSum: *acc += x; break;
                case ops::ReduceKind::Max:
                case ops::ReduceKind::AbsMax: *acc = *acc < x ? x : *acc; break;
                case ops::ReduceKind::Min: *acc = x < *acc ? x : *acc; break;
                }
            }
            // Integers are summed exactly in double while the sums stay below 2^53.
            Value out = floats ? Value{DType::F64, acc.value_or(0), 0} : Value::ofInt(DType::I64, int64_t(acc.value_or(0)));
            write(dst.buffer, dstIndex[o++], out);
        });
    }

    void cumsum(const ops::CumsumOp& c) {
        Tile src = tile(c.src()), dst = tile(c.dst());
        if (src.extent != dst.extent) throw Unsupported("cumsum between tiles of different extents");
        const size_t dim = size_t(c.dim());
        std::vector<int64_t> outer = src.extent;
        outer[dim] = 1;
        const bool floats = isFloat(dst.buffer->dtype);
        forEachIndex(outer, [&](const std::vector<int64_t>& p) {
            double sum = 0;
            int64_t isum = 0;
            const int64_t n = src.extent[dim];
            for (int64_t s = 0; s < n; ++s) {
                int64_t k = c.reverse() ? n - 1 - s : s;
                std::vector<int64_t> si = src.start, di = dst.start;
                for (size_t d = 0; d < p.size(); ++d) {
                    si[d] += d == dim ? k : p[d];
                    di[d] += d == dim ? k : p[d];
                }
                Value v = read(src.buffer, si);
                if (floats) sum += v.asDouble();
                else isum += v.asInt();
                write(dst.buffer, di, floats ? Value{DType::F64, sum, 0} : Value::ofInt(DType::I64, isum));
            }
        });
    }

    void im2col(const ops::Im2ColOp& op) {
        const BufferNode* img = op.img().buffer.get();
        const Bound& image = bind(img);
        if (image.shape.size() != 4) throw Unsupported("im2col of an image that is not [N, H, W, C]");
        Matrix col = matrix(op.col(), "col");
        const ops::Im2ColParams& p = op.params();
        const int64_t N = image.shape[0], H = image.shape[1], W = image.shape[2], C = image.shape[3];
        // Floor division (TileLang's): a window wider than the padded image has no outputs.
        auto extentOut = [&](int64_t in) {
            int64_t span = in + 2 * p.pad - p.dilation * (p.kernel - 1) - 1;
            int64_t q = span / p.stride - (span % p.stride != 0 && span < 0);
            return std::max<int64_t>(q + 1, 0);
        };
        const int64_t OH = extentOut(H), OW = extentOut(W);
        const int64_t nhw = eval(op.nhwStep()).asInt(), cs = eval(op.cStep()).asInt();
        for (int64_t i = 0; i < col.rows(); ++i)
            for (int64_t j = 0; j < col.cols(); ++j) {
                const int64_t m = nhw * col.rows() + i, k = cs * col.cols() + j;
                Value v = Value::of(img->dtype, 0);
                if (m < N * OH * OW && k < p.kernel * p.kernel * C) {
                    const int64_t n = m / (OH * OW), oh = m / OW % OH, ow = m % OW;
                    const int64_t kh = k / (p.kernel * C), kw = k / C % p.kernel, c = k % C;
                    const int64_t h = oh * p.stride + kh * p.dilation - p.pad, w = ow * p.stride + kw * p.dilation - p.pad;
                    if (h >= 0 && h < H && w >= 0 && w < W) v = read(img, {n, h, w, c});
                }
                write(col.t.buffer, col.index(i, j), v);
            }
    }
};

} // namespace

void runKernel(const std::vector<Kernel>& parts, Problem& problem) {
    Machine machine(problem);
    for (const Kernel& k : parts) machine.runPart(k);
    machine.flush();
}

} // namespace tlc::eval
