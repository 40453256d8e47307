// cloneSyntax: a copy of a parsed tree without what sema wrote into it, so that one parse can be
// checked many times with different compile-time values (the recommender's candidates).
#include "ast/Clone.h"

namespace tlc::ast {

namespace {

ExprPtr clone(const ExprPtr& e);
StmtPtr clone(const StmtPtr& s);

std::vector<ExprPtr> cloneAll(const std::vector<ExprPtr>& list) {
    std::vector<ExprPtr> out;
    out.reserve(list.size());
    for (const auto& e : list) out.push_back(clone(e));
    return out;
}

std::unique_ptr<Call> cloneCall(const Call& c) {
    std::vector<Arg> args;
    args.reserve(c.args.size());
    for (const auto& a : c.args) args.push_back(Arg{a.keyword, a.keywordRange, clone(a.value)});
    return std::make_unique<Call>(c.range, c.callee, c.calleeRange, std::move(args));
}

ExprPtr clone(const ExprPtr& e) {
    if (!e) return nullptr;
    switch (e->kind) {
    case ExprKind::IntLit: return std::make_unique<IntLit>(e->range, e->as<IntLit>()->value);
    case ExprKind::FloatLit: {
        const auto* f = e->as<FloatLit>();
        return std::make_unique<FloatLit>(f->range, f->value, f->spelling);
    }
    case ExprKind::BoolLit: return std::make_unique<BoolLit>(e->range, e->as<BoolLit>()->value);
    case ExprKind::StringLit: return std::make_unique<StringLit>(e->range, e->as<StringLit>()->value);
    case ExprKind::Name: return std::make_unique<Name>(e->range, e->as<Name>()->name);
    case ExprKind::List: {
        auto list = std::make_unique<List>(e->range, cloneAll(e->as<List>()->elements));
        list->parenthesized = e->as<List>()->parenthesized;
        return list;
    }
    case ExprKind::Call: return cloneCall(*e->as<Call>());
    case ExprKind::Index: {
        const auto* i = e->as<Index>();
        std::vector<Subscript> subs;
        subs.reserve(i->subscripts.size());
        for (const auto& s : i->subscripts)
            subs.push_back(Subscript{s.form, clone(s.point), clone(s.lo), clone(s.hi), clone(s.length), s.range});
        return std::make_unique<Index>(i->range, clone(i->base), std::move(subs));
    }
    case ExprKind::Unary: {
        const auto* u = e->as<Unary>();
        return std::make_unique<Unary>(u->range, u->op, clone(u->operand));
    }
    case ExprKind::Binary: {
        const auto* b = e->as<Binary>();
        return std::make_unique<Binary>(b->range, b->op, b->opRange, clone(b->lhs), clone(b->rhs));
    }
    case ExprKind::Ternary: {
        const auto* t = e->as<Ternary>();
        return std::make_unique<Ternary>(t->range, clone(t->cond), clone(t->thenExpr), clone(t->elseExpr));
    }
    }
    return nullptr;
}

std::unique_ptr<Block> cloneBlock(const Block* b) {
    if (!b) return nullptr;
    std::vector<StmtPtr> stmts;
    stmts.reserve(b->stmts.size());
    for (const auto& s : b->stmts) stmts.push_back(clone(s));
    return std::make_unique<Block>(b->range, std::move(stmts));
}

std::vector<LoopVar> cloneVars(const std::vector<LoopVar>& vars) {
    std::vector<LoopVar> out;
    for (const auto& v : vars) out.push_back(LoopVar{v.name, v.range, nullptr});
    return out;
}

StmtPtr clone(const StmtPtr& s) {
    if (!s) return nullptr;
    switch (s->kind) {
    case StmtKind::Block: return cloneBlock(s->as<Block>());
    case StmtKind::Let: {
        const auto* l = s->as<LetStmt>();
        return std::make_unique<LetStmt>(l->range, l->name, l->nameRange, clone(l->value));
    }
    case StmtKind::Var: {
        const auto* v = s->as<VarStmt>();
        return std::make_unique<VarStmt>(v->range, v->name, v->nameRange, v->typeName, v->typeRange, clone(v->init));
    }
    case StmtKind::Assign: {
        const auto* a = s->as<AssignStmt>();
        return std::make_unique<AssignStmt>(a->range, clone(a->target), a->op, clone(a->value));
    }
    case StmtKind::ExprStmt: return std::make_unique<ExprStmt>(s->range, clone(s->as<ExprStmt>()->expr));
    case StmtKind::For: {
        const auto* f = s->as<ForStmt>();
        return std::make_unique<ForStmt>(f->range, cloneVars(f->vars), cloneCall(*f->iter), cloneBlock(f->body.get()));
    }
    case StmtKind::If: {
        const auto* i = s->as<IfStmt>();
        return std::make_unique<IfStmt>(i->range, clone(i->cond), cloneBlock(i->thenBlock.get()), clone(i->elseStmt));
    }
    case StmtKind::While: {
        const auto* w = s->as<WhileStmt>();
        return std::make_unique<WhileStmt>(w->range, clone(w->cond), cloneBlock(w->body.get()));
    }
    case StmtKind::Grid: {
        const auto* g = s->as<GridStmt>();
        return std::make_unique<GridStmt>(g->range, cloneCall(*g->launch), cloneVars(g->vars), cloneBlock(g->body.get()));
    }
    case StmtKind::Require: return std::make_unique<RequireStmt>(s->range, clone(s->as<RequireStmt>()->cond));
    }
    return nullptr;
}

} // namespace

std::unique_ptr<Kernel> cloneSyntax(const Kernel& k) {
    auto out = std::make_unique<Kernel>();
    out->name = k.name;
    out->nameRange = k.nameRange;
    out->range = k.range;
    for (const auto& tp : k.templateParams)
        out->templateParams.push_back(
            TemplateParam{tp.name, tp.range, tp.typeName, tp.typeRange, tp.isAuto, clone(tp.defaultValue), nullptr});
    for (const auto& p : k.params) {
        TensorType t{p.type.dtype, p.type.dtypeRange, cloneAll(p.type.dims), cloneAll(p.type.strides)};
        out->params.push_back(Param{p.name, p.range, std::move(t), nullptr});
    }
    out->body = cloneBlock(k.body.get());
    return out;
}

ExprPtr cloneSyntax(const Expr& e) {
    // clone() takes the owning pointer; a non-owning one around `e` is never released.
    ExprPtr borrowed(const_cast<Expr*>(&e));
    ExprPtr out = clone(borrowed);
    (void)borrowed.release();
    return out;
}

std::unique_ptr<File> cloneSyntax(const File& file) {
    auto out = std::make_unique<File>();
    out->imports = file.imports;
    for (const auto& k : file.kernels) out->kernels.push_back(cloneSyntax(*k));
    return out;
}

} // namespace tlc::ast
