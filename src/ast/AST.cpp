#include "ast/AST.h"

#include <fmt/format.h>

namespace tlc::ast {

const char* spelling(UnaryOp op) {
    switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Not: return "!";
    case UnaryOp::BitNot: return "~";
    }
    return "?";
}

const char* spelling(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul: return "*";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    }
    return "?";
}

// A string literal as it could be written in a .tl file: the inverse of the lexer's escapes.
std::string quoted(const std::string& value) {
    std::string out = "\"";
    for (char c : value) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default: out += c;
        }
    }
    return out + "\"";
}

// `base[i, j]` at the loop variables named `vars` (trees that sema and src/beginner write).
ExprPtr elementAt(ExprPtr base, const std::vector<std::string>& vars, SourceRange r) {
    std::vector<Subscript> subs;
    for (const auto& v : vars) {
        Subscript sub;
        sub.point = std::make_unique<Name>(r, v);
        sub.range = r;
        subs.push_back(std::move(sub));
    }
    return std::make_unique<Index>(r, std::move(base), std::move(subs));
}

namespace {

// Expressions print as fully parenthesised source; statements as an indented tree.
class Dumper {
public:
    std::string out;

    std::string expr(const Expr& e) {
        switch (e.kind) {
        case ExprKind::IntLit: return std::to_string(e.as<IntLit>()->value);
        case ExprKind::FloatLit: return e.as<FloatLit>()->spelling;
        case ExprKind::BoolLit: return e.as<BoolLit>()->value ? "true" : "false";
        case ExprKind::StringLit: return quoted(e.as<StringLit>()->value);
        case ExprKind::Name: return e.as<Name>()->name;
        case ExprKind::List: {
            std::string s = "[";
            const auto& el = e.as<List>()->elements;
            for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + expr(*el[i]);
            return s + "]";
        }
        case ExprKind::Call: return call(*e.as<Call>());
        case ExprKind::Index: {
            const auto& ix = *e.as<Index>();
            std::string s = expr(*ix.base) + "[";
            for (size_t i = 0; i < ix.subscripts.size(); ++i) {
                const auto& sub = ix.subscripts[i];
                s += i ? ", " : "";
                switch (sub.form) {
                case Subscript::Form::Point: s += expr(*sub.point); break;
                case Subscript::Form::Range:
                    s += (sub.lo ? expr(*sub.lo) : "") + ":" + (sub.hi ? expr(*sub.hi) : "");
                    break;
                case Subscript::Form::Length:
                    s += (sub.lo ? expr(*sub.lo) : "") + ":+" + expr(*sub.length);
                    break;
                }
            }
            return s + "]";
        }
        case ExprKind::Unary: {
            const auto& u = *e.as<Unary>();
            return fmt::format("({}{})", spelling(u.op), expr(*u.operand));
        }
        case ExprKind::Binary: {
            const auto& b = *e.as<Binary>();
            return fmt::format("({} {} {})", expr(*b.lhs), spelling(b.op), expr(*b.rhs));
        }
        case ExprKind::Ternary: {
            const auto& t = *e.as<Ternary>();
            return fmt::format("({} ? {} : {})", expr(*t.cond), expr(*t.thenExpr), expr(*t.elseExpr));
        }
        }
        return "?";
    }

    std::string call(const Call& c) {
        std::string s = c.callee + "(";
        for (size_t i = 0; i < c.args.size(); ++i) {
            s += i ? ", " : "";
            if (!c.args[i].keyword.empty()) s += c.args[i].keyword + " = ";
            s += expr(*c.args[i].value);
        }
        return s + ")";
    }

    static std::string vars(const std::vector<LoopVar>& vs) {
        if (vs.size() == 1) return vs[0].name;
        std::string s = "(";
        for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + vs[i].name;
        return s + ")";
    }

    void line(int depth, const std::string& text) {
        out += std::string(depth * 2, ' ') + text + "\n";
    }

    void stmt(const Stmt& s, int depth) {
        std::string at = fmt::format("  @{}:{}", s.range.begin.line, s.range.begin.col);
        switch (s.kind) {
        case StmtKind::Block:
            line(depth, "Block" + at);
            for (const auto& c : s.as<Block>()->stmts) stmt(*c, depth + 1);
            break;
        case StmtKind::Let: {
            const auto& l = *s.as<LetStmt>();
            line(depth, fmt::format("Let {} = {}{}", l.name, expr(*l.value), at));
            break;
        }
        case StmtKind::Var: {
            const auto& v = *s.as<VarStmt>();
            line(depth, fmt::format("Var {}{}{}{}", v.name, v.typeName.empty() ? "" : ": " + v.typeName,
                                    v.init ? " = " + expr(*v.init) : "", at));
            break;
        }
        case StmtKind::Assign: {
            const auto& a = *s.as<AssignStmt>();
            line(depth, fmt::format("Assign {} {}= {}{}", expr(*a.target), a.op ? spelling(*a.op) : "",
                                    expr(*a.value), at));
            break;
        }
        case StmtKind::ExprStmt: line(depth, "Expr " + expr(*s.as<ExprStmt>()->expr) + at); break;
        case StmtKind::For: {
            const auto& f = *s.as<ForStmt>();
            line(depth, fmt::format("For {} in {}{}", vars(f.vars), call(*f.iter), at));
            stmt(*f.body, depth + 1);
            break;
        }
        case StmtKind::If: {
            const auto& i = *s.as<IfStmt>();
            line(depth, fmt::format("If {}{}", expr(*i.cond), at));
            stmt(*i.thenBlock, depth + 1);
            if (i.elseStmt) {
                line(depth, "Else");
                stmt(*i.elseStmt, depth + 1);
            }
            break;
        }
        case StmtKind::While: {
            const auto& w = *s.as<WhileStmt>();
            line(depth, fmt::format("While {}{}", expr(*w.cond), at));
            stmt(*w.body, depth + 1);
            break;
        }
        case StmtKind::Grid: {
            const auto& g = *s.as<GridStmt>();
            line(depth, fmt::format("Grid {} as {}{}", call(*g.launch), vars(g.vars), at));
            stmt(*g.body, depth + 1);
            break;
        }
        case StmtKind::Require: line(depth, fmt::format("Require {}{}", expr(*s.as<RequireStmt>()->cond), at)); break;
        }
    }

    void kernel(const Kernel& k) {
        line(0, fmt::format("Kernel {}  @{}:{}", k.name, k.range.begin.line, k.range.begin.col));
        for (const auto& t : k.templateParams)
            line(1, fmt::format("TemplateParam {}{} = {}", t.name, t.typeName.empty() ? "" : ": " + t.typeName,
                                t.isAuto ? "auto" : expr(*t.defaultValue)));
        for (const auto& p : k.params) {
            std::string ty = p.type.dtype;
            if (p.type.isTensor()) {
                ty += "[";
                for (size_t i = 0; i < p.type.dims.size(); ++i) ty += (i ? ", " : "") + expr(*p.type.dims[i]);
                ty += "]";
                if (!p.type.strides.empty()) {
                    ty += " strides [";
                    for (size_t i = 0; i < p.type.strides.size(); ++i)
                        ty += (i ? ", " : "") + expr(*p.type.strides[i]);
                    ty += "]";
                }
            }
            line(1, fmt::format("Param {}: {}", p.name, ty));
        }
        stmt(*k.body, 1);
    }
};

} // namespace

std::string dump(const File& file) {
    Dumper d;
    for (const auto& k : file.kernels) d.kernel(*k);
    return d.out;
}

void forEachName(const Expr* e, const std::function<void(const Name&)>& f) {
    if (!e) return;
    switch (e->kind) {
    case ExprKind::Name: f(*e->as<Name>()); break;
    case ExprKind::List:
        for (const auto& el : e->as<List>()->elements) forEachName(el.get(), f);
        break;
    case ExprKind::Call:
        for (const auto& a : e->as<Call>()->args) forEachName(a.value.get(), f);
        break;
    case ExprKind::Index: {
        const auto* ix = e->as<Index>();
        forEachName(ix->base.get(), f);
        for (const auto& s : ix->subscripts) {
            forEachName(s.point.get(), f);
            forEachName(s.lo.get(), f);
            forEachName(s.hi.get(), f);
            forEachName(s.length.get(), f);
        }
        break;
    }
    case ExprKind::Unary: forEachName(e->as<Unary>()->operand.get(), f); break;
    case ExprKind::Binary:
        forEachName(e->as<Binary>()->lhs.get(), f);
        forEachName(e->as<Binary>()->rhs.get(), f);
        break;
    case ExprKind::Ternary: {
        const auto* t = e->as<Ternary>();
        forEachName(t->cond.get(), f);
        forEachName(t->thenExpr.get(), f);
        forEachName(t->elseExpr.get(), f);
        break;
    }
    default: break;
    }
}

} // namespace tlc::ast
