// Expressions: names, literals, operators, element access and regions; constant folding and
// the canonical text of symbolic extents.
#include "sema/Checker.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tlc::sema {

using namespace ast;

namespace {

bool isComparison(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
           op == BinaryOp::Eq || op == BinaryOp::Ne;
}

} // namespace

std::optional<DType> binaryResultType(BinaryOp op, DType a, DType b) {
    if (isComparison(op) || op == BinaryOp::And || op == BinaryOp::Or) return DType::Bool;
    DType p = promote(a, b);
    switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod:
        return p == DType::Bool ? DType::I32 : p;
    case BinaryOp::Shl: case BinaryOp::Shr:
        if (!isInteger(a) || !isInteger(b)) return std::nullopt;
        return p;
    case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
        if (isFloat(a) || isFloat(b)) return std::nullopt;
        return p;
    default: return std::nullopt;
    }
}

void visitNames(const Expr& e, const std::function<void(const Name&)>& f) {
    switch (e.kind) {
    case ExprKind::Name: f(*e.as<Name>()); break;
    case ExprKind::List:
        for (const auto& el : e.as<List>()->elements) visitNames(*el, f);
        break;
    case ExprKind::Call:
        for (const auto& a : e.as<Call>()->args) visitNames(*a.value, f);
        break;
    case ExprKind::Index: {
        const auto& ix = *e.as<Index>();
        visitNames(*ix.base, f);
        for (const auto& s : ix.subscripts)
            for (const Expr* part : {s.point.get(), s.lo.get(), s.hi.get(), s.length.get()})
                if (part) visitNames(*part, f);
        break;
    }
    case ExprKind::Unary: visitNames(*e.as<Unary>()->operand, f); break;
    case ExprKind::Binary:
        visitNames(*e.as<Binary>()->lhs, f);
        visitNames(*e.as<Binary>()->rhs, f);
        break;
    case ExprKind::Ternary:
        visitNames(*e.as<Ternary>()->cond, f);
        visitNames(*e.as<Ternary>()->thenExpr, f);
        visitNames(*e.as<Ternary>()->elseExpr, f);
        break;
    default: break;
    }
}

Type KernelChecker::checkValue(Expr& e) { return checkExpr(e, false); }
Type KernelChecker::checkOperand(Expr& e) { return checkExpr(e, true); }

Type KernelChecker::checkExpr(Expr& e, bool operand) {
    Type t;
    switch (e.kind) {
    case ExprKind::IntLit: {
        int64_t v = e.as<IntLit>()->value;
        t = Type::scalar(fitsIn(v, DType::I32) ? DType::I32 : DType::I64);
        e.constant = v;
        break;
    }
    case ExprKind::FloatLit:
        t = Type::scalar(DType::F32);
        e.constant = e.as<FloatLit>()->value;
        break;
    case ExprKind::BoolLit:
        t = Type::scalar(DType::Bool);
        e.constant = e.as<BoolLit>()->value;
        break;
    case ExprKind::StringLit: t = Type::string(); break;
    case ExprKind::Name: t = checkName(*e.as<Name>()); break;
    case ExprKind::List: t = checkList(*e.as<List>()); break;
    case ExprKind::Call: return checkCall(*e.as<Call>(), CallSite::Value);
    case ExprKind::Index: t = checkIndex(*e.as<Index>(), operand); break;
    case ExprKind::Unary: t = checkUnary(*e.as<Unary>()); break;
    case ExprKind::Binary: t = checkBinary(*e.as<Binary>()); break;
    case ExprKind::Ternary: t = checkTernary(*e.as<Ternary>()); break;
    }
    e.type = t;
    if (t.isError()) e.constant.reset();
    return t;
}

Type KernelChecker::checkName(Name& n) {
    if (n.name == "auto") {  // the keyword (AutoExpr): allowed only where checkArg takes it
        diags_.report(DiagId::err_auto_misplaced, n.range);
        return Type::error();
    }
    if (Decl* d = scope_.lookup(n.name)) {
        // Tensor dimensions are compile-time parameters or sizes of their own, never another
        // parameter (whose value the launcher would have to trust to match the tensor).
        bool isParam = d->kind == Decl::Kind::ScalarParam || d->kind == Decl::Kind::TensorParam;
        if (dimParamNames_ && isParam) {
            diags_.report(DiagId::err_param_as_size, n.range, n.name,
                          d->kind == Decl::Kind::TensorParam ? "tensor" : "scalar");
            return Type::error();
        }
        n.decl = d;
        d->used = true;
        n.constant = d->constant;
        return d->type;
    }
    if (auto dt = parseDType(n.name)) {
        n.constant = *dt;
        return Type::dtypeValue(*dt);
    }
    if (n.name == "inf") {
        n.constant = std::numeric_limits<double>::infinity();
        return Type::scalar(DType::F32);
    }
    if (dimParamNames_ && dimParamNames_->count(n.name)) {
        bool tensor = false;
        for (const auto& p : kernel_.params)
            if (p.name == n.name) tensor = p.type.isTensor();
        diags_.report(DiagId::err_param_as_size, n.range, n.name, tensor ? "tensor" : "scalar");
        return Type::error();
    }
    diags_.report(DiagId::err_unknown_name, n.range, n.name);
    if (std::string_view advice = spellingElsewhere(n.name); !advice.empty())
        diags_.note(n.range, std::string(advice));
    else if (auto best = closestMatch(n.name, scope_.visibleNames()); !best.empty())
        diags_.note(scope_.lookup(best)->range, fmt::format("did you mean '{}'?", best));
    return Type::error();
}

Type KernelChecker::checkList(List& l) {
    Shape extents;
    for (auto& el : l.elements) {
        Type t = checkValue(*el);
        extents.push_back(t.isScalar() && isInteger(t.dtype) ? extentOf(*el) : Extent::symbolic("?"));
    }
    return Type::shapeType(std::move(extents));
}

bool KernelChecker::expectScalar(Expr& e, std::string_view what) {
    const Type& t = e.type;
    if (t.isError() || t.isScalar()) return t.isScalar();
    if (t.kind == Type::Kind::DTypeValue)
        diags_.report(DiagId::err_dtype_used_as_value, e.range, what, toString(*e.constant));
    else
        diags_.report(DiagId::err_type_mismatch, e.range, what, describe(e));
    return false;
}

bool KernelChecker::expectInteger(Expr& e, std::string_view what) {
    const Type& t = e.type;
    if (t.isError()) return false;
    if (t.isScalar() && isInteger(t.dtype)) return true;
    if (t.kind == Type::Kind::DTypeValue && e.constant)
        diags_.report(DiagId::err_dtype_used_as_value, e.range, what, toString(*e.constant));
    else
        diags_.report(DiagId::err_type_mismatch, e.range, what, describe(e));
    return false;
}

bool KernelChecker::expectBoolConvertible(Expr& e) {
    if (e.type.isError() || e.type.isScalar()) return e.type.isScalar();
    diags_.report(DiagId::err_condition_not_bool, e.range, describe(e));
    return false;
}

ConstInt KernelChecker::requireConstInt(Expr& e, std::string_view what, bool positive) {
    if (!expectInteger(e, "an integer")) return {};
    if (e.constant) {
        int64_t v = *asInt(*e.constant);
        if (positive && v <= 0) {
            diags_.report(DiagId::err_nonpositive_extent, e.range, what, v);
            return {};
        }
        return {ConstInt::Status::Known, v};
    }
    if (isCompileTime(e)) return {ConstInt::Status::Deferred, 0};
    diags_.report(DiagId::err_not_constant, e.range, what);
    explainNotConstant(e);
    return {};
}

void KernelChecker::reportFoldError(const FoldResult& r, const Expr& e) {
    if (!r.error) return;
    if (r.error->kind == FoldErrorKind::DivisionByZero) diags_.report(DiagId::err_division_by_zero, e.range);
    else diags_.report(DiagId::err_constant_overflow, e.range, r.error->what);
}

void KernelChecker::explainNotConstant(const Expr& e) {
    const Name* culprit = nullptr;
    visitNames(e, [&](const Name& n) {
        if (culprit || !n.decl || n.decl->constant || compileTimeDecls_.count(n.decl)) return;
        culprit = &n;
    });
    if (!culprit) return;
    const Decl& d = *culprit->decl;
    const char* why = "is not a compile-time constant";
    switch (d.kind) {
    case Decl::Kind::SymbolicSize: why = "is a size known only at launch time"; break;
    case Decl::Kind::ScalarParam: why = "is a run-time parameter"; break;
    case Decl::Kind::LoopVar: why = "is a loop variable"; break;
    case Decl::Kind::GridVar: why = "is a grid variable"; break;
    case Decl::Kind::Var: why = "is a variable"; break;
    default: break;
    }
    diags_.note(d.range, fmt::format("'{}' {}", d.name, why));
}

bool KernelChecker::isCompileTime(const Expr& e) const {
    if (e.constant) return true;
    switch (e.kind) {
    case ExprKind::Name: {
        const Decl* d = e.as<Name>()->decl;
        return d && (d->constant || compileTimeDecls_.count(d));
    }
    case ExprKind::Unary: return isCompileTime(*e.as<Unary>()->operand);
    case ExprKind::Binary: return isCompileTime(*e.as<Binary>()->lhs) && isCompileTime(*e.as<Binary>()->rhs);
    case ExprKind::Ternary:
        return isCompileTime(*e.as<Ternary>()->cond) && isCompileTime(*e.as<Ternary>()->thenExpr) &&
               isCompileTime(*e.as<Ternary>()->elseExpr);
    case ExprKind::Call: {
        const auto& c = *e.as<Call>();
        bool foldable = c.builtin < 0 || builtinInfo(Builtin(c.builtin)).kind == BuiltinKind::IntHelper;
        if (!foldable || e.type.isError()) return false;
        for (const auto& a : c.args)
            if (!isCompileTime(*a.value)) return false;
        return true;
    }
    default: return false;
    }
}

Type KernelChecker::checkUnary(Unary& u) {
    Type t = checkValue(*u.operand);
    if (t.isError()) return t;
    if (t.isTile()) {
        diags_.report(DiagId::err_tile_arithmetic, u.range, spelling(u.op));
        return Type::error();
    }
    if (!expectScalar(*u.operand, "a value")) return Type::error();
    DType result = t.dtype;
    switch (u.op) {
    case UnaryOp::Neg: result = t.dtype == DType::Bool ? DType::I32 : t.dtype; break;
    case UnaryOp::Not: result = DType::Bool; break;
    case UnaryOp::BitNot:
        if (isFloat(t.dtype)) {
            diags_.report(DiagId::err_invalid_unary_operand, u.range, spelling(u.op), t.str());
            return Type::error();
        }
        break;
    }
    if (u.operand->constant) {
        FoldResult r = foldUnary(u.op, *u.operand->constant, result);
        reportFoldError(r, u);
        if (r.error) return Type::error();
        u.constant = r.value;
    }
    return Type::scalar(result);
}

Type KernelChecker::checkBinary(Binary& b) {
    Type l = checkValue(*b.lhs);
    Type r = checkValue(*b.rhs);
    if (b.op == BinaryOp::MatMul) {
        if (!l.isError() && !r.isError()) diags_.report(DiagId::err_matmul_in_grid, b.opRange);
        return Type::error();
    }
    if (l.isError() || r.isError()) return Type::error();
    if (l.isTile() || r.isTile()) {
        diags_.report(DiagId::err_tile_arithmetic, b.opRange, spelling(b.op));
        return Type::error();
    }
    for (Expr* side : {b.lhs.get(), b.rhs.get()})
        if (side->type.kind == Type::Kind::DTypeValue) {
            diags_.report(DiagId::err_dtype_used_as_value, side->range, "a value", toString(*side->constant));
            return Type::error();
        }
    std::optional<DType> result;
    if (l.isScalar() && r.isScalar()) result = binaryResultType(b.op, l.dtype, r.dtype);
    if (!result) {
        diags_.report(DiagId::err_invalid_operands, b.opRange, spelling(b.op), l.str(), r.str());
        return Type::error();
    }
    const auto& lc = b.lhs->constant;
    const auto& rc = b.rhs->constant;
    // `false && x` and `true || x` fold whatever x is, so that `causal && ...` folds.
    if (lc && (b.op == BinaryOp::And || b.op == BinaryOp::Or)) {
        bool lv = *asDouble(*lc) != 0;
        if (b.op == BinaryOp::And && !lv) b.constant = false;
        if (b.op == BinaryOp::Or && lv) b.constant = true;
    }
    if (lc && rc && !b.constant) {
        FoldResult f = foldBinary(b.op, *lc, l.dtype, *rc, r.dtype, *result);
        reportFoldError(f, b);
        if (f.error) return Type::error();
        b.constant = f.value;
    }
    return Type::scalar(*result);
}

Type KernelChecker::checkTernary(Ternary& t) {
    checkValue(*t.cond);
    bool condOk = expectBoolConvertible(*t.cond);
    Type a = checkValue(*t.thenExpr);
    Type b = checkValue(*t.elseExpr);
    if (!condOk || a.isError() || b.isError()) return Type::error();
    Type result;
    if (a.isScalar() && b.isScalar()) {
        result = Type::scalar(promote(a.dtype, b.dtype));
    } else if (a.kind == Type::Kind::DTypeValue && b.kind == Type::Kind::DTypeValue) {
        // A dtype is a compile-time thing: choosing one needs a condition known at compile time.
        if (!t.cond->constant) {
            diags_.report(DiagId::err_not_constant, t.cond->range, "a condition choosing between dtypes");
            explainNotConstant(*t.cond);
            return Type::error();
        }
        result = Type::dtypeValue(a.dtype);
    } else if (a.isTile() || b.isTile()) {
        diags_.report(DiagId::err_tile_arithmetic, t.range, "?:");
        return Type::error();
    } else {
        diags_.report(DiagId::err_invalid_operands, t.range, "?:", a.str(), b.str());
        return Type::error();
    }
    if (t.cond->constant) {
        const Expr& chosen = *asDouble(*t.cond->constant) != 0 ? *t.thenExpr : *t.elseExpr;
        if (chosen.constant) {
            if (result.isScalar()) {
                FoldResult f = foldCast(*chosen.constant, result.dtype);
                if (f.value) t.constant = f.value;
            } else {
                t.constant = chosen.constant;
                result.dtype = std::get<DType>(*chosen.constant);
            }
        }
    }
    return result;
}

Type KernelChecker::checkIndex(Index& ix, bool operand) {
    Type base = checkValue(*ix.base);
    // Subscripts are checked whatever the base is, so that their names resolve.
    bool subsOk = true;
    for (auto& s : ix.subscripts)
        for (Expr* part : {s.point.get(), s.lo.get(), s.hi.get(), s.length.get()})
            if (part) {
                checkValue(*part);
                subsOk = expectInteger(*part, "an integer index") && subsOk;
            }
    if (base.isError()) return base;
    std::string baseName = brief(*ix.base);
    if (AutoShape* pending = pendingAutoShape(*ix.base)) {
        diags_.report(DiagId::err_auto_shape_undetermined, ix.range, baseName,
                      "nothing before this access determines it: copy a region of known extents into or out of "
                      "the whole buffer first");
        diags_.note(pending->let->nameRange, "declared here with 'auto'");
        return Type::error();
    }
    if (base.kind != Type::Kind::Tensor) {
        diags_.report(DiagId::err_not_indexable, ix.base->range, baseName, describe(*ix.base));
        return Type::error();
    }
    size_t n = ix.subscripts.size();
    if (n != base.rank()) {
        diags_.report(DiagId::err_index_count, ix.range, baseName, base.rank(), n, n == 1 ? "" : "s");
        noteDeclared(*ix.base);
        return Type::error();
    }
    if (!subsOk) return Type::error();
    if (base.scope == MemScope::Global && !inGrid_) {
        diags_.report(DiagId::err_outside_grid, ix.range, fmt::format("access to global tensor '{}'", baseName));
        return Type::error();
    }
    bool onChip = base.scope != MemScope::Global;
    bool allPoints = true;
    for (const auto& s : ix.subscripts) allPoints = allPoints && s.form == Subscript::Form::Point;

    // Constant indices into on-chip buffers of constant shape are checked here; global
    // tensors may be accessed past their end (reads give zero, writes are dropped).
    auto checkBound = [&](const Expr& e, size_t dim, bool inclusiveEnd) {
        const Extent& extent = base.shape[dim];
        if (!onChip || !e.constant || !extent.isConstant()) return true;
        int64_t v = *asInt(*e.constant);
        if (v >= 0 && (inclusiveEnd ? v <= *extent.value : v < *extent.value)) return true;
        diags_.report(DiagId::err_index_out_of_bounds, e.range, v, dim, baseName, *extent.value);
        noteDeclared(*ix.base);
        return false;
    };

    if (allPoints) {
        for (size_t d = 0; d < n; ++d)
            if (!checkBound(*ix.subscripts[d].point, d, false)) return Type::error();
        if (!operand) return Type::scalar(base.dtype);
        return Type::region(base.scope, base.dtype, {}, true);
    }

    Shape extents;
    for (size_t d = 0; d < n; ++d) {
        const Subscript& s = ix.subscripts[d];
        const Extent& dimExtent = base.shape[d];
        switch (s.form) {
        case Subscript::Form::Point:
            if (!checkBound(*s.point, d, false)) return Type::error();
            extents.push_back(Extent::constant(1));
            break;
        case Subscript::Form::Length: {
            if (s.lo && !checkBound(*s.lo, d, false)) return Type::error();
            if (s.length->constant && *asInt(*s.length->constant) <= 0) {
                diags_.report(DiagId::err_nonpositive_extent, s.length->range, "a region extent",
                              toString(*s.length->constant));
                return Type::error();
            }
            extents.push_back(extentOf(*s.length));
            break;
        }
        case Subscript::Form::Range: {
            Polynomial hi = s.hi ? *polynomialOf(*s.hi)
                                 : (dimExtent.isConstant() ? Polynomial::number(*dimExtent.value)
                                                           : Polynomial::atom(dimExtent.symbol,
                                                                              dimExtent.symbol.find(' ') != std::string::npos));
            Polynomial lo = s.lo ? *polynomialOf(*s.lo) : Polynomial::number(0);
            if (s.lo && !checkBound(*s.lo, d, false)) return Type::error();
            if (s.hi && !checkBound(*s.hi, d, true)) return Type::error();
            std::optional<Polynomial> extent = hi.minus(lo);
            if (!extent) {
                diags_.report(DiagId::err_constant_overflow, s.range, "overflow computing the region extent");
                return Type::error();
            }
            if (extent->isConstant()) {
                if (extent->constant <= 0) {
                    diags_.report(DiagId::err_nonpositive_extent, s.range, "a region extent", extent->constant);
                    return Type::error();
                }
                extents.push_back(Extent::constant(extent->constant));
            } else {
                extents.push_back(Extent::symbolic(extent->str()));
            }
            break;
        }
        }
    }
    return Type::region(base.scope, base.dtype, std::move(extents), false);
}

} // namespace tlc::sema
