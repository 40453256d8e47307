// printSource: a tree back to .tl text, for the developer-level source tlc writes for a
// whole-tensor kernel (`--emit=tile-source`): an author takes it over from there, so it reads
// as hand-written code does: operators with the parentheses precedence needs and no more, one
// statement a line, four-space indents.
#include "ast/AST.h"

#include <fmt/format.h>

namespace tlc::ast {

namespace {

// Binding strength of a binary operator, as grammar/TL.g4 orders them (higher binds tighter).
int precedence(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: case BinaryOp::MatMul: return 10;
    case BinaryOp::Add: case BinaryOp::Sub: return 9;
    case BinaryOp::Shl: case BinaryOp::Shr: return 8;
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return 7;
    case BinaryOp::Eq: case BinaryOp::Ne: return 6;
    case BinaryOp::BitAnd: return 5;
    case BinaryOp::BitXor: return 4;
    case BinaryOp::BitOr: return 3;
    case BinaryOp::And: return 2;
    case BinaryOp::Or: return 1;
    }
    return 0;
}
constexpr int kTernary = 0, kUnary = 11, kPrimary = 12;

class Printer {
public:
    std::string out;

    // `e` as text that parses back to it where an operand binding at least `context` goes.
    std::string expr(const Expr& e, int context = kTernary) {
        auto wrap = [&](std::string s, int own) { return own < context ? "(" + s + ")" : s; };
        switch (e.kind) {
        case ExprKind::IntLit: return std::to_string(e.as<IntLit>()->value);
        case ExprKind::FloatLit: return e.as<FloatLit>()->spelling;
        case ExprKind::BoolLit: return e.as<BoolLit>()->value ? "true" : "false";
        case ExprKind::StringLit: return quoted(e.as<StringLit>()->value);
        case ExprKind::Name: return e.as<Name>()->name;
        case ExprKind::List: {
            const auto& l = *e.as<List>();
            std::string s;
            for (const auto& el : l.elements) s += (s.empty() ? "" : ", ") + expr(*el);
            if (l.parenthesized) return l.elements.size() == 1 ? "(" + s + ",)" : "(" + s + ")";
            return "[" + s + "]";
        }
        case ExprKind::Call: {
            const auto& c = *e.as<Call>();
            std::string s;
            for (const auto& a : c.args) s += (s.empty() ? "" : ", ") + (a.keyword.empty() ? "" : a.keyword + " = ") + expr(*a.value);
            return c.callee + "(" + s + ")";
        }
        case ExprKind::Index: {
            const auto& ix = *e.as<Index>();
            std::string s;
            for (const auto& sub : ix.subscripts) {
                s += s.empty() ? "" : ", ";
                switch (sub.form) {
                case Subscript::Form::Point: s += expr(*sub.point); break;
                // `:` alone for a whole dimension, `: hi` and `lo :` for open ends.
                case Subscript::Form::Range:
                    s += sub.lo && sub.hi ? expr(*sub.lo) + " : " + expr(*sub.hi)
                         : sub.lo         ? expr(*sub.lo) + " :"
                         : sub.hi         ? ": " + expr(*sub.hi)
                                          : ":";
                    break;
                case Subscript::Form::Length: s += (sub.lo ? expr(*sub.lo) + " " : "") + ": +" + expr(*sub.length); break;
                }
            }
            return expr(*ix.base, kPrimary) + "[" + s + "]";
        }
        case ExprKind::Unary: {
            const auto& u = *e.as<Unary>();
            return wrap(std::string(spelling(u.op)) + expr(*u.operand, kUnary), kUnary);
        }
        case ExprKind::Binary: {
            const auto& b = *e.as<Binary>();
            int own = precedence(b.op);  // left-associative: the right operand binds tighter
            return wrap(fmt::format("{} {} {}", expr(*b.lhs, own), spelling(b.op), expr(*b.rhs, own + 1)), own);
        }
        case ExprKind::Ternary: {
            const auto& t = *e.as<Ternary>();
            return wrap(fmt::format("{} ? {} : {}", expr(*t.cond, 1), expr(*t.thenExpr), expr(*t.elseExpr)), kTernary);
        }
        }
        return "?";
    }

    void line(int depth, const std::string& text) { out += std::string(depth * 4, ' ') + text + "\n"; }

    static std::string vars(const std::vector<LoopVar>& vs) {
        std::string s;
        for (const auto& v : vs) s += (s.empty() ? "" : ", ") + v.name;
        return vs.size() == 1 ? s : "(" + s + ")";
    }

    void block(const Block& b, int depth) {
        for (const auto& s : b.stmts) stmt(*s, depth);
    }

    void stmt(const Stmt& s, int depth) {
        switch (s.kind) {
        case StmtKind::Block:
            line(depth, "{");
            block(*s.as<Block>(), depth + 1);
            line(depth, "}");
            return;
        case StmtKind::Let: {
            const auto& l = *s.as<LetStmt>();
            line(depth, fmt::format("let {} = {};", l.name, expr(*l.value)));
            return;
        }
        case StmtKind::Var: {
            const auto& v = *s.as<VarStmt>();
            line(depth, fmt::format("var {}{}{};", v.name, v.typeName.empty() ? "" : ": " + v.typeName,
                                    v.init ? " = " + expr(*v.init) : ""));
            return;
        }
        case StmtKind::Assign: {
            const auto& a = *s.as<AssignStmt>();
            line(depth, fmt::format("{} {}= {};", expr(*a.target), a.op ? spelling(*a.op) : "", expr(*a.value)));
            return;
        }
        case StmtKind::ExprStmt: line(depth, expr(*s.as<ExprStmt>()->expr) + ";"); return;
        case StmtKind::For: {
            const auto& f = *s.as<ForStmt>();
            line(depth, fmt::format("for {} in {} {{", vars(f.vars), expr(*f.iter)));
            block(*f.body, depth + 1);
            line(depth, "}");
            return;
        }
        case StmtKind::If: {
            const auto* i = s.as<IfStmt>();
            std::string head = "if (" + expr(*i->cond) + ") {";
            for (;;) {
                line(depth, head);
                block(*i->thenBlock, depth + 1);
                if (!i->elseStmt) break;
                if (const auto* next = i->elseStmt->as<IfStmt>()) {
                    head = "} else if (" + expr(*next->cond) + ") {";
                    i = next;
                    continue;
                }
                line(depth, "} else {");
                block(*i->elseStmt->as<Block>(), depth + 1);
                break;
            }
            line(depth, "}");
            return;
        }
        case StmtKind::While: {
            const auto& w = *s.as<WhileStmt>();
            line(depth, "while (" + expr(*w.cond) + ") {");
            block(*w.body, depth + 1);
            line(depth, "}");
            return;
        }
        case StmtKind::Grid: {
            const auto& g = *s.as<GridStmt>();
            line(depth, fmt::format("{} as {} {{", expr(*g.launch), vars(g.vars)));
            block(*g.body, depth + 1);
            line(depth, "}");
            return;
        }
        case StmtKind::Require: line(depth, "require " + expr(*s.as<RequireStmt>()->cond) + ";"); return;
        }
    }

    void kernel(const Kernel& k) {
        std::string params, templ;
        for (const auto& tp : k.templateParams)
            templ += (templ.empty() ? "" : ", ") + tp.name + (tp.typeName.empty() ? "" : ": " + tp.typeName) + " = " +
                     (tp.isAuto ? "auto" : expr(*tp.defaultValue, kPrimary));
        for (const auto& p : k.params) {
            std::string type = p.type.dtype;
            if (p.type.isTensor()) {
                std::string dims, strides;
                for (const auto& d : p.type.dims) dims += (dims.empty() ? "" : ", ") + expr(*d);
                for (const auto& d : p.type.strides) strides += (strides.empty() ? "" : ", ") + expr(*d);
                type += "[" + dims + "]" + (strides.empty() ? "" : " strides [" + strides + "]");
            }
            params += (params.empty() ? "" : ", ") + p.name + ": " + type;
        }
        line(0, fmt::format("kernel {}{}({}) {{", k.name, templ.empty() ? "" : "<" + templ + ">", params));
        block(*k.body, 1);
        line(0, "}");
    }
};

} // namespace

std::string printExpr(const Expr& e) { return Printer().expr(e); }

std::string printSource(const File& file) {
    Printer p;
    for (const auto& i : file.imports) p.line(0, "import " + quoted(i.path) + ";");
    for (const auto& k : file.kernels) {
        if (!p.out.empty()) p.out += "\n";
        for (const auto& n : k->notes) p.line(0, "// " + n);
        p.kernel(*k);
    }
    return p.out;
}

std::string printKernelSource(const Kernel& kernel) {
    Printer p;
    p.kernel(kernel);
    return p.out;
}

} // namespace tlc::ast
