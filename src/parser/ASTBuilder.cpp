#include "parser/ASTBuilder.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace tlc::parser {

using namespace tlc::ast;

SourceLoc tokenBegin(const antlr4::Token* token) {
    return {static_cast<uint32_t>(token->getLine()), static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
}

SourceLoc tokenEnd(const antlr4::Token* token) {
    SourceLoc begin = tokenBegin(token);
    size_t length = token->getType() == antlr4::Token::EOF ? 1 : token->getStopIndex() - token->getStartIndex() + 1;
    return {begin.line, begin.col + static_cast<uint32_t>(length > 0 ? length - 1 : 0)};
}

namespace {

SourceRange rangeOf(const antlr4::Token* t) { return {tokenBegin(t), tokenEnd(t)}; }
SourceRange rangeOf(antlr4::tree::TerminalNode* n) { return rangeOf(n->getSymbol()); }
SourceRange rangeOf(antlr4::ParserRuleContext* ctx) {
    const antlr4::Token* stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
    return {tokenBegin(ctx->getStart()), tokenEnd(stop)};
}

class Builder {
public:
    explicit Builder(DiagnosticEngine& diags) : diags_(diags) {}
    unsigned recoverableErrors() const { return recoverableErrors_; }

    std::unique_ptr<File> file(TLParser::FileContext* ctx) {
        auto f = std::make_unique<File>();
        for (auto* i : ctx->importDecl())
            f->imports.push_back({unescape(i->path->getText()), rangeOf(i)});
        for (auto* k : ctx->kernel()) f->kernels.push_back(kernel(k));
        return f;
    }

private:
    DiagnosticEngine& diags_;
    // Errors after which the AST is still exactly what the author meant (a habit from Python
    // spelt differently): checking goes on, so that the rest of the file is reported too.
    unsigned recoverableErrors_ = 0;

    std::unique_ptr<Kernel> kernel(TLParser::KernelContext* ctx) {
        auto k = std::make_unique<Kernel>();
        k->name = ctx->name->getText();
        k->nameRange = rangeOf(ctx->name);
        k->range = rangeOf(ctx);
        if (auto* tps = ctx->templateParams())
            for (auto* tp : tps->templateParam()) k->templateParams.push_back(templateParam(tp));
        for (auto* p : ctx->param()) k->params.push_back(param(p));
        k->body = block(ctx->block());
        return k;
    }

    TemplateParam templateParam(TLParser::TemplateParamContext* ctx) {
        TemplateParam tp;
        tp.name = ctx->name->getText();
        tp.range = rangeOf(ctx->name);
        if (ctx->ty) {
            tp.typeName = ctx->ty->getText();
            tp.typeRange = rangeOf(ctx->ty);
        }
        auto* def = ctx->templateDefault();
        if (dynamic_cast<TLParser::AutoDefaultContext*>(def)) {
            tp.isAuto = true;
        } else {
            auto* value = static_cast<TLParser::ValueDefaultContext*>(def);
            ExprPtr e = primary(value->primary());
            if (value->children.size() > 1)  // leading '-'
                e = std::make_unique<Unary>(rangeOf(value), UnaryOp::Neg, std::move(e));
            tp.defaultValue = std::move(e);
        }
        return tp;
    }

    Param param(TLParser::ParamContext* ctx) {
        Param p;
        p.name = ctx->name->getText();
        p.range = rangeOf(ctx->name);
        auto* ty = ctx->typeExpr();
        p.type.dtype = ty->dtype->getText();
        p.type.dtypeRange = rangeOf(ty->dtype);
        auto lists = ty->exprList();
        if (!lists.empty()) p.type.dims = exprList(lists[0]);
        if (lists.size() > 1) p.type.strides = exprList(lists[1]);
        return p;
    }

    std::unique_ptr<Block> block(TLParser::BlockContext* ctx) {
        std::vector<StmtPtr> stmts;
        for (auto* s : ctx->stmt())
            if (StmtPtr st = stmt(s)) stmts.push_back(std::move(st));
        return std::make_unique<Block>(rangeOf(ctx), std::move(stmts));
    }

    // `for i, j in ...` (Python's habit) parses so that the rest of the file is still checked;
    // it is an error that shows the form to write.
    void checkParenthesized(antlr4::ParserRuleContext* list, const std::vector<antlr4::tree::TerminalNode*>& ids,
                            std::string_view what, std::string_view open, std::string_view close) {
        if (ids.size() < 2 || list->getStart()->getText() == "(") return;
        std::string names;
        for (auto* id : ids) names += (names.empty() ? "" : ", ") + id->getText();
        diags_.report(DiagId::err_vars_unparenthesized, rangeOf(list), what,
                      fmt::format("{}{}{}", open, names, close));
        ++recoverableErrors_;
    }

    static std::vector<LoopVar> vars(const std::vector<antlr4::tree::TerminalNode*>& ids) {
        std::vector<LoopVar> out;
        for (auto* id : ids) out.push_back({id->getText(), rangeOf(id), nullptr});
        return out;
    }

    // `iter(args)` of a for loop and `grid(args)` are kept as calls, so that sema checks their
    // arguments with the same machinery as every other builtin.
    std::unique_ptr<Call> callOf(antlr4::Token* name, TLParser::ArgListContext* args, SourceRange range) {
        return std::make_unique<Call>(range, name->getText(), rangeOf(name), argList(args));
    }

    StmtPtr stmt(TLParser::StmtContext* ctx) {
        SourceRange r = rangeOf(ctx);
        if (auto* s = dynamic_cast<TLParser::LetStmtContext*>(ctx))
            return std::make_unique<LetStmt>(r, s->name->getText(), rangeOf(s->name), expr(s->expr()));
        if (auto* s = dynamic_cast<TLParser::VarStmtContext*>(ctx)) {
            std::string ty = s->ty ? s->ty->getText() : "";
            SourceRange tyRange = s->ty ? rangeOf(s->ty) : SourceRange{};
            return std::make_unique<VarStmt>(r, s->name->getText(), rangeOf(s->name), ty, tyRange,
                                             s->expr() ? expr(s->expr()) : nullptr);
        }
        if (auto* s = dynamic_cast<TLParser::AssignStmtContext*>(ctx))
            return std::make_unique<AssignStmt>(r, expr(s->target), compoundOp(s->op->getText()), expr(s->value));
        if (auto* s = dynamic_cast<TLParser::ForStmtContext*>(ctx)) {
            auto call = callOf(s->iter, s->argList(), {tokenBegin(s->iter), lastCloseParen(s)});
            checkParenthesized(s->loopVars(), s->loopVars()->ID(), "loop", "for (", ") in");
            return std::make_unique<ForStmt>(r, vars(s->loopVars()->ID()), std::move(call), block(s->block()));
        }
        if (auto* s = dynamic_cast<TLParser::IfStatementContext*>(ctx)) return ifStmt(s->ifStmt());
        if (auto* s = dynamic_cast<TLParser::WhileStmtContext*>(ctx))
            return std::make_unique<WhileStmt>(r, expr(s->cond), block(s->block()));
        if (auto* s = dynamic_cast<TLParser::GridStmtContext*>(ctx)) {
            antlr4::Token* gridTok = s->GRID()->getSymbol();
            auto call = callOf(gridTok, s->argList(), {tokenBegin(gridTok), lastCloseParen(s, s->AS())});
            checkParenthesized(s->gridVars(), s->gridVars()->ID(), "grid", "as (", ")");
            return std::make_unique<GridStmt>(r, std::move(call), vars(s->gridVars()->ID()), block(s->block()));
        }
        if (auto* s = dynamic_cast<TLParser::RequireStmtContext*>(ctx))
            return std::make_unique<RequireStmt>(r, expr(s->cond));
        if (auto* s = dynamic_cast<TLParser::BlockStmtContext*>(ctx)) return block(s->block());
        if (auto* s = dynamic_cast<TLParser::ExprStmtContext*>(ctx))
            return std::make_unique<ExprStmt>(r, expr(s->expr()));
        return nullptr;  // EmptyStmt
    }

    // The end of the call in `for x in iter(args) {` / `grid(args) as`: the last ')' child
    // before `stop` (or before the body).
    static SourceLoc lastCloseParen(antlr4::ParserRuleContext* ctx, antlr4::tree::ParseTree* stop = nullptr) {
        SourceLoc at = tokenBegin(ctx->getStart());
        for (auto* child : ctx->children) {
            if (child == stop) break;
            if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(child); t && t->getText() == ")")
                at = tokenBegin(t->getSymbol());
        }
        return at;
    }

    StmtPtr ifStmt(TLParser::IfStmtContext* ctx) {
        StmtPtr elseStmt;
        if (ctx->elseIf) elseStmt = ifStmt(ctx->elseIf);
        else if (ctx->elseBlock) elseStmt = block(ctx->elseBlock);
        return std::make_unique<IfStmt>(rangeOf(ctx), expr(ctx->cond), block(ctx->thenBlock), std::move(elseStmt));
    }

    static std::optional<BinaryOp> compoundOp(const std::string& op) {
        if (op == "=") return std::nullopt;
        return binaryOp(op.substr(0, op.size() - 1));
    }

    static BinaryOp binaryOp(const std::string& op) {
        static const std::pair<const char*, BinaryOp> table[] = {
            {"*", BinaryOp::Mul},  {"/", BinaryOp::Div},  {"%", BinaryOp::Mod},    {"@", BinaryOp::MatMul},    {"+", BinaryOp::Add},
            {"-", BinaryOp::Sub},  {"<<", BinaryOp::Shl}, {">>", BinaryOp::Shr},   {"<", BinaryOp::Lt},
            {"<=", BinaryOp::Le},  {">", BinaryOp::Gt},   {">=", BinaryOp::Ge},    {"==", BinaryOp::Eq},
            {"!=", BinaryOp::Ne},  {"&", BinaryOp::BitAnd}, {"^", BinaryOp::BitXor}, {"|", BinaryOp::BitOr},
            {"&&", BinaryOp::And}, {"||", BinaryOp::Or},
        };
        for (const auto& [text, op2] : table)
            if (op == text) return op2;
        throw std::logic_error("unknown operator " + op);
    }

    std::vector<ExprPtr> exprList(TLParser::ExprListContext* ctx) {
        std::vector<ExprPtr> out;
        if (ctx)
            for (auto* e : ctx->expr()) out.push_back(expr(e));
        return out;
    }

    std::vector<Arg> argList(TLParser::ArgListContext* ctx) {
        std::vector<Arg> out;
        if (!ctx) return out;
        for (auto* a : ctx->arg()) {
            Arg arg;
            if (a->key) {
                arg.keyword = a->key->getText();
                arg.keywordRange = rangeOf(a->key);
            }
            arg.value = expr(a->expr());
            out.push_back(std::move(arg));
        }
        return out;
    }

    ExprPtr expr(TLParser::ExprContext* ctx) {
        SourceRange r = rangeOf(ctx);
        if (auto* e = dynamic_cast<TLParser::PrimaryExprContext*>(ctx)) return primary(e->primary());
        if (auto* e = dynamic_cast<TLParser::IndexExprContext*>(ctx)) {
            std::vector<Subscript> subs;
            for (auto* ix : e->indexList()->index()) subs.push_back(subscript(ix));
            return std::make_unique<Index>(r, expr(e->base), std::move(subs));
        }
        if (auto* e = dynamic_cast<TLParser::UnaryExprContext*>(ctx)) {
            std::string op = e->op->getText();
            UnaryOp u = op == "-" ? UnaryOp::Neg : op == "!" ? UnaryOp::Not : UnaryOp::BitNot;
            return std::make_unique<Unary>(r, u, expr(e->expr()));
        }
        if (auto* e = dynamic_cast<TLParser::TernaryExprContext*>(ctx))
            return std::make_unique<Ternary>(r, expr(e->expr(0)), expr(e->expr(1)), expr(e->expr(2)));
        // Every remaining alternative is `expr OP expr`.
        auto* opNode = dynamic_cast<antlr4::tree::TerminalNode*>(ctx->children.at(1));
        auto* lhs = dynamic_cast<TLParser::ExprContext*>(ctx->children.at(0));
        auto* rhs = dynamic_cast<TLParser::ExprContext*>(ctx->children.at(2));
        if (!opNode || !lhs || !rhs) throw std::logic_error("unexpected expression shape");
        return std::make_unique<Binary>(r, binaryOp(opNode->getText()), rangeOf(opNode), expr(lhs), expr(rhs));
    }

    Subscript subscript(TLParser::IndexContext* ctx) {
        Subscript s;
        s.range = rangeOf(ctx);
        if (auto* p = dynamic_cast<TLParser::PointIndexContext*>(ctx)) {
            s.form = Subscript::Form::Point;
            s.point = expr(p->expr());
        } else if (auto* l = dynamic_cast<TLParser::LengthSliceContext*>(ctx)) {
            s.form = Subscript::Form::Length;
            if (l->lo) s.lo = expr(l->lo);
            s.length = expr(l->len);
        } else {
            auto* rs = static_cast<TLParser::RangeSliceContext*>(ctx);
            s.form = Subscript::Form::Range;
            if (rs->lo) s.lo = expr(rs->lo);
            if (rs->hi) s.hi = expr(rs->hi);
        }
        return s;
    }

    ExprPtr primary(TLParser::PrimaryContext* ctx) {
        SourceRange r = rangeOf(ctx);
        // Most frequent first. Token text, not RuleContext::getText(), which goes through a
        // stringstream.
        if (auto* p = dynamic_cast<TLParser::NameRefContext*>(ctx))
            return std::make_unique<Name>(r, p->ID()->getSymbol()->getText());
        if (auto* p = dynamic_cast<TLParser::IntLitContext*>(ctx))
            return intLit(r, p->INT()->getSymbol()->getText());
        if (auto* c = dynamic_cast<TLParser::PrimaryCallContext*>(ctx))
            return std::make_unique<Call>(r, c->callee->getText(), rangeOf(c->callee), argList(c->argList()));
        // `auto` as a value: sema allows it only as alloc_shared's / alloc_fragment's shape.
        if (dynamic_cast<TLParser::AutoExprContext*>(ctx)) return std::make_unique<Name>(r, "auto");
        if (auto* p = dynamic_cast<TLParser::FloatLitContext*>(ctx))
            return floatLit(r, p->FLOAT()->getSymbol()->getText());
        if (auto* p = dynamic_cast<TLParser::ParenExprContext*>(ctx)) {
            ExprPtr inner = expr(p->expr());
            inner->range = r;  // diagnostics underline the parentheses too
            return inner;
        }
        if (auto* p = dynamic_cast<TLParser::ListExprContext*>(ctx))
            return std::make_unique<List>(r, exprList(p->exprList()));
        // `(32, 4)`, as TileLang writes `threads = (32, 4)`: a list (sema says where one fits).
        if (auto* p = dynamic_cast<TLParser::TupleExprContext*>(ctx)) {
            std::vector<ExprPtr> elements;
            elements.push_back(expr(p->expr()));
            for (auto& e : exprList(p->exprList())) elements.push_back(std::move(e));
            auto list = std::make_unique<List>(r, std::move(elements));
            list->parenthesized = true;
            return list;
        }
        if (auto* p = dynamic_cast<TLParser::BoolLitContext*>(ctx))
            return std::make_unique<BoolLit>(r, p->TRUE() != nullptr);
        auto* p = static_cast<TLParser::StringLitContext*>(ctx);
        return std::make_unique<StringLit>(r, unescape(p->STRING()->getSymbol()->getText()));
    }

    static std::string withoutSeparators(const std::string& text) {
        std::string out;
        for (char c : text)
            if (c != '_') out += c;
        return out;
    }

    ExprPtr intLit(SourceRange r, const std::string& text) {
        std::string digits = withoutSeparators(text);
        bool hex = digits.size() > 2 && (digits[1] == 'x' || digits[1] == 'X');
        errno = 0;
        char* end = nullptr;
        unsigned long long v = std::strtoull(hex ? digits.c_str() + 2 : digits.c_str(), &end, hex ? 16 : 10);
        if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
            diags_.report(DiagId::err_integer_literal_too_large, r,
                          text.size() > 40 ? text.substr(0, 40) + "..." : text);
            v = 0;
        }
        return std::make_unique<IntLit>(r, static_cast<int64_t>(v));
    }

    ExprPtr floatLit(SourceRange r, const std::string& text) {
        std::string digits = withoutSeparators(text);
        errno = 0;
        double v = std::strtod(digits.c_str(), nullptr);
        if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL)) {
            diags_.report(DiagId::err_invalid_float_literal, r,
                          text.size() > 40 ? text.substr(0, 40) + "..." : text);
            v = 0;
        }
        return std::make_unique<FloatLit>(r, v, digits);
    }

    static std::string unescape(const std::string& quoted) {
        std::string out;
        for (size_t i = 1; i + 1 < quoted.size(); ++i) {
            char c = quoted[i];
            if (c == '\\' && i + 2 < quoted.size()) {
                char n = quoted[++i];
                out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
            } else {
                out += c;
            }
        }
        return out;
    }
};

} // namespace

std::unique_ptr<File> buildAST(TLParser::FileContext* tree, DiagnosticEngine& diags) {
    unsigned errorsBefore = diags.errorCount();
    Builder builder(diags);
    std::unique_ptr<File> file = builder.file(tree);
    // Any other error (a literal that does not fit) left a stand-in value in the tree.
    if (diags.errorCount() - errorsBefore > builder.recoverableErrors()) return nullptr;
    return file;
}

} // namespace tlc::parser
