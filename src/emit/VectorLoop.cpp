#include "emit/VectorLoop.h"

#include "ir/Addends.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <set>

namespace tlc::codegen {

using namespace ir;

namespace {

class VectorForm {
public:
    explicit VectorForm(const VarPtr& lane) : lane_(lane) {}

    bool collect(const Stmt& s, std::vector<VectorStmt>& out) {
        if (!s) return true;
        switch (s->kind) {
        case NodeKind::Seq:
            for (const auto& c : s.as<Seq>()->stmts)
                if (!collect(c, out)) return false;
            return true;
        case NodeKind::LetStmt: {
            const LetStmt* l = s.as<LetStmt>();
            bool varying = false;
            Expr value = rewrite(l->value, varying);
            if (!value || (varying && l->var->dtype != DType::F32)) return false;
            if (varying) varyingLets_.insert(l->var.get());
            out.push_back({VectorStmt::Kind::Let, l->var, varying, nullptr, {}, value});
            return collect(l->body, out);
        }
        case NodeKind::Store: {
            const Store* st = s.as<Store>();
            if (st->storeKind != StoreKind::Plain || st->buffer->dtype != DType::F32 ||
                st->value.dtype() != DType::F32 || st->value->lanes != 1)
                return false;
            std::optional<std::vector<Expr>> first = consecutive(st->buffer, st->indices);
            bool varying = false;
            Expr value = rewrite(st->value, varying);
            if (!first || !value) return false;  // a store to one element from every lane has no vector form
            out.push_back({VectorStmt::Kind::Store, nullptr, varying, st->buffer, *first, value});
            return true;
        }
        default: return false;
        }
    }

    bool callsExp() const { return callsExp_; }

    // Every lane reads what it writes and nothing another lane writes: each load of a buffer the
    // loop stores into is of the element the same lane stores (so that statement-by-statement
    // execution for all lanes at once is the loop's own order, whatever the author's loop is).
    bool lanesIndependent(const Stmt& body, const std::vector<VectorStmt>& form) const {
        struct Loads : IRVisitor {
            std::vector<const Load*> loads;
            void visitLoad(const Load* n) override {
                loads.push_back(n);
                IRVisitor::visitLoad(n);
            }
        } loads;
        loads.visit(body);
        for (const VectorStmt& st : form) {
            if (st.kind != VectorStmt::Kind::Store) continue;
            for (const VectorStmt& other : form)
                if (other.kind == VectorStmt::Kind::Store && other.buffer == st.buffer &&
                    !sameIndices(other.indices, st.indices))
                    return false;
            for (const Load* l : loads.loads) {
                if (l->buffer != st.buffer) continue;
                std::optional<std::vector<Expr>> first = consecutive(l->buffer, l->indices);
                if (!first || !sameIndices(*first, st.indices)) return false;
            }
        }
        return true;
    }

private:
    static bool sameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t d = 0; d < a.size(); ++d)
            if (!equal(simplify(a[d]), simplify(b[d]))) return false;
        return true;
    }

    bool differsByLane(const Expr& e) const {
        if (uses(e, lane_.get())) return true;
        for (const Var* v : varyingLets_)
            if (uses(e, v)) return true;
        return false;
    }

    // Lane 0's indices when lane v's element is v elements after it (the loop variable only in
    // the last index, with coefficient 1, and that dimension contiguous); nullopt otherwise.
    std::optional<std::vector<Expr>> consecutive(const Buffer& b, const std::vector<Expr>& indices) const {
        if (indices.empty() || b->strides.size() != indices.size()) return std::nullopt;
        for (size_t d = 0; d < indices.size(); ++d) {
            for (const Var* v : varyingLets_)
                if (uses(indices[d], v)) return std::nullopt;
            if (d + 1 < indices.size() && uses(indices[d], lane_.get())) return std::nullopt;
        }
        const int64_t* stride = asConstInt(b->strides.back());
        if (!stride || *stride != 1) return std::nullopt;
        // The lane index must be one term of the last index's sum, alone.
        std::vector<Expr> terms;
        addends(indices.back(), terms);
        int laneTerms = 0;
        for (const Expr& t : terms)
            if (uses(t, lane_.get())) laneTerms += t.as<Var>() == lane_.get() ? 1 : 2;
        if (laneTerms != 1) return std::nullopt;
        std::vector<Expr> first = indices;
        first.back() = simplify(substitute(indices.back(), {{lane_, intImm(0, lane_->dtype)}}));
        return first;
    }

    // The value for all lanes, or nullptr where it has no vector form; `varying`: it differs
    // between lanes (a tl::f32x16), else it is the same scalar for all of them.
    Expr rewrite(const Expr& e, bool& varying) {
        varying = differsByLane(e);
        if (!varying) return e;
        if (e.dtype() != DType::F32 || e->lanes != 1) return Expr();
        bool childVarying = false;  // what rewrite reports of an operand (not needed here)
        switch (e->kind) {
        case NodeKind::Var: return varyingLets_.count(e.as<Var>()) ? e : Expr();  // the lane index itself: no
        case NodeKind::Load: {
            const Load* l = e.as<Load>();
            std::optional<std::vector<Expr>> first = consecutive(l->buffer, l->indices);
            if (!first) return Expr();
            return call("load_f32x16", DType::F32, {call("address_of", DType::I64, {load(l->buffer, *first)})});
        }
        case NodeKind::Unary: {
            const Unary* u = e.as<Unary>();
            Expr operand = u->op == UnaryOp::Neg ? rewrite(u->operand, childVarying) : Expr();
            return operand ? unary(UnaryOp::Neg, operand) : Expr();
        }
        case NodeKind::Binary: {
            const Binary* b = e.as<Binary>();
            static const std::set<BinaryOp> arithmetic = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                                          BinaryOp::Div, BinaryOp::Min, BinaryOp::Max};
            if (!arithmetic.count(b->op)) return Expr();
            Expr lhs = rewrite(b->a, childVarying), rhs = rewrite(b->b, childVarying);
            return lhs && rhs ? binary(b->op, lhs, rhs) : Expr();
        }
        case NodeKind::Call: {
            const Call* c = e.as<Call>();
            static const std::set<std::string> functions = {"exp", "exp2", "fast_exp", "fast_exp2"};
            if (!functions.count(c->name) || c->args.size() != 1) return Expr();
            Expr arg = rewrite(c->args[0], childVarying);
            if (!arg) return Expr();
            callsExp_ = true;
            return call(c->name, DType::F32, {arg});
        }
        default: return Expr();
        }
    }

    VarPtr lane_;
    std::set<const Var*> varyingLets_;
    bool callsExp_ = false;
};

} // namespace

std::optional<std::vector<VectorStmt>> vectorLoopForm(const For* loop) {
    const int64_t* min = asConstInt(loop->min);
    const int64_t* extent = asConstInt(loop->extent);
    const int64_t* step = asConstInt(loop->step);
    if (loop->forKind != ForKind::Vectorized || !min || *min != 0 || !extent || *extent != kVectorLanes || !step ||
        *step != 1)
        return std::nullopt;
    VectorForm form(loop->var);
    std::vector<VectorStmt> out;
    if (!form.collect(loop->body, out) || !form.callsExp() || !form.lanesIndependent(loop->body, out))
        return std::nullopt;
    return out;
}

} // namespace tlc::codegen
