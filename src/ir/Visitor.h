// Read-only traversal and rebuilding traversal of the IR, one method per node kind (generated
// from IRNodes.def). The defaults walk every child; override what a pass cares about.
#pragma once

#include "ir/Expr.h"
#include "ir/Stmt.h"

#include <functional>

namespace tlc::ir {

class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    void visit(const Expr& e);
    void visit(const Stmt& s);

protected:
#define EXPR_NODE(N) virtual void visit##N(const N* node);
#define STMT_NODE(N) virtual void visit##N(const N* node);
#include "ir/IRNodes.def"
};

class IRMutator {
public:
    virtual ~IRMutator() = default;
    Expr mutate(const Expr& e);
    Stmt mutate(const Stmt& s);

protected:
    // Buffers are not nodes; passes that replace one buffer with another override this.
    virtual Buffer mutateBuffer(const Buffer& b) { return b; }
#define EXPR_NODE(N) virtual Expr mutate##N(const N* node, const Expr& self);
#define STMT_NODE(N) virtual Stmt mutate##N(const N* node, const Stmt& self);
#include "ir/IRNodes.def"

    std::vector<Expr> mutateAll(const std::vector<Expr>& es, bool& changed);
};

// Replaces variables by expressions (by identity).
Expr substitute(const Expr& e, const std::vector<std::pair<VarPtr, Expr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<VarPtr, Expr>>& map);

// Every load of buffer b (of one element) replaced by fn(that load), in e or in s.
Expr replaceLoads(const Expr& e, const BufferNode* b, const std::function<Expr(const Load*)>& fn);
Stmt replaceLoads(const Stmt& s, const BufferNode* b, const std::function<Expr(const Load*)>& fn);

// True if e (or s) mentions v.
bool uses(const Expr& e, const Var* v);
bool uses(const Stmt& s, const Var* v);

// True if s holds a loop of that kind (s itself included).
bool containsLoop(const Stmt& s, ForKind kind);

// True if e loads from a buffer.
bool readsMemory(const Expr& e);

} // namespace tlc::ir
