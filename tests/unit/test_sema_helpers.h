// Parse-and-check helpers for the sema unit tests: a .tl string in, the checked AST and the
// diagnostics out.
#pragma once

#include "ast/AST.h"
#include "parser/Parser.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/LargeStack.h"
#include "target/Target.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::test {

struct Checked {
    std::unique_ptr<SourceFile> source;
    std::unique_ptr<DiagnosticEngine> diags;
    std::unique_ptr<ast::File> file;
    bool ok = false;

    const ast::Kernel& kernel(size_t i = 0) const { return *file->kernels.at(i); }
    std::vector<std::string> messages() const {
        std::vector<std::string> out;
        for (const auto& d : diags->diagnostics()) out.push_back(d.message);
        return out;
    }
    std::vector<std::string> ids() const {
        std::vector<std::string> out;
        for (const auto& d : diags->diagnostics()) out.push_back(diagInfo(d.id).name);
        return out;
    }
    const ast::Decl* decl(const std::string& name, size_t kernelIndex = 0) const {
        for (const auto& d : kernel(kernelIndex).decls)
            if (d->name == name) return d.get();
        return nullptr;
    }
};

inline Checked check(const std::string& text, std::map<std::string, std::string> defines = {},
                     const char* target = "sm90") {
    Checked c;
    c.source = std::make_unique<SourceFile>("test.tl", text);
    c.diags = std::make_unique<DiagnosticEngine>(*c.source);
    // As in the driver: the parser and sema recurse over the tree, deep trees need the stack.
    runWithLargeStack([&] {
        c.file = parseFile(*c.source, *c.diags);
        if (!c.file) return;
        SemaOptions options;
        options.target = target ? findTarget(target) : nullptr;
        options.defines = std::move(defines);
        c.ok = checkFile(*c.file, *c.diags, options);
    });
    return c;
}

// Every expression of a kernel, depth first, subexpressions before statements that follow.
inline void forEachExpr(const ast::Expr& e, const std::function<void(const ast::Expr&)>& f) {
    using namespace ast;
    f(e);
    switch (e.kind) {
    case ExprKind::List:
        for (const auto& el : e.as<List>()->elements) forEachExpr(*el, f);
        break;
    case ExprKind::Call:
        for (const auto& a : e.as<Call>()->args) forEachExpr(*a.value, f);
        break;
    case ExprKind::Index:
        forEachExpr(*e.as<Index>()->base, f);
        for (const auto& s : e.as<Index>()->subscripts)
            for (const Expr* p : {s.point.get(), s.lo.get(), s.hi.get(), s.length.get()})
                if (p) forEachExpr(*p, f);
        break;
    case ExprKind::Unary: forEachExpr(*e.as<Unary>()->operand, f); break;
    case ExprKind::Binary:
        forEachExpr(*e.as<Binary>()->lhs, f);
        forEachExpr(*e.as<Binary>()->rhs, f);
        break;
    case ExprKind::Ternary:
        forEachExpr(*e.as<Ternary>()->cond, f);
        forEachExpr(*e.as<Ternary>()->thenExpr, f);
        forEachExpr(*e.as<Ternary>()->elseExpr, f);
        break;
    default: break;
    }
}

inline void forEachExpr(const ast::Stmt& s, const std::function<void(const ast::Expr&)>& f) {
    using namespace ast;
    switch (s.kind) {
    case StmtKind::Block:
        for (const auto& c : s.as<Block>()->stmts) forEachExpr(*c, f);
        break;
    case StmtKind::Let: forEachExpr(*s.as<LetStmt>()->value, f); break;
    case StmtKind::Var:
        if (s.as<VarStmt>()->init) forEachExpr(*s.as<VarStmt>()->init, f);
        break;
    case StmtKind::Assign:
        forEachExpr(*s.as<AssignStmt>()->target, f);
        forEachExpr(*s.as<AssignStmt>()->value, f);
        break;
    case StmtKind::ExprStmt: forEachExpr(*s.as<ExprStmt>()->expr, f); break;
    case StmtKind::For:
        forEachExpr(*s.as<ForStmt>()->iter, f);
        forEachExpr(*s.as<ForStmt>()->body, f);
        break;
    case StmtKind::If:
        forEachExpr(*s.as<IfStmt>()->cond, f);
        forEachExpr(*s.as<IfStmt>()->thenBlock, f);
        if (s.as<IfStmt>()->elseStmt) forEachExpr(*s.as<IfStmt>()->elseStmt, f);
        break;
    case StmtKind::While:
        forEachExpr(*s.as<WhileStmt>()->cond, f);
        forEachExpr(*s.as<WhileStmt>()->body, f);
        break;
    case StmtKind::Grid:
        forEachExpr(*s.as<GridStmt>()->launch, f);
        forEachExpr(*s.as<GridStmt>()->body, f);
        break;
    case StmtKind::Require: forEachExpr(*s.as<RequireStmt>()->cond, f); break;
    }
}

inline void forEachExpr(const ast::Kernel& k, const std::function<void(const ast::Expr&)>& f) {
    for (const auto& tp : k.templateParams)
        if (tp.defaultValue) forEachExpr(*tp.defaultValue, f);
    for (const auto& p : k.params) {
        for (const auto& d : p.type.dims) forEachExpr(*d, f);
        for (const auto& d : p.type.strides) forEachExpr(*d, f);
    }
    forEachExpr(*k.body, f);
}

// The first expression whose canonical source text (ast::dump's form) is `text`.
inline const ast::Expr* findExpr(const ast::Kernel& k, const std::function<bool(const ast::Expr&)>& pred) {
    const ast::Expr* found = nullptr;
    forEachExpr(k, [&](const ast::Expr& e) {
        if (!found && pred(e)) found = &e;
    });
    return found;
}

} // namespace tlc::test
