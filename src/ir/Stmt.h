// IR statements. Tile IR and thread IR share one node set: the tile level uses TileOpStmt and
// For loops of kind Parallel/Pipelined; lowering replaces those with thread-level code.
#pragma once

#include "ir/Expr.h"
#include "support/SourceFile.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ir {

class TileOp;

struct StmtNode {
    const NodeKind kind;
    SourceLoc loc;  // the .tl line this code comes from (invalid for compiler-made code)
    virtual ~StmtNode() = default;

protected:
    StmtNode(NodeKind k, SourceLoc l) : kind(k), loc(l) {}
};

class Stmt {
public:
    Stmt() = default;
    Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
    const StmtNode* get() const { return node_.get(); }
    const StmtNode* operator->() const { return node_.get(); }
    explicit operator bool() const { return node_ != nullptr; }
    bool same(const Stmt& other) const { return node_ == other.node_; }
    template <typename T> const T* as() const {
        return node_ && node_->kind == T::Kind ? static_cast<const T*>(node_.get()) : nullptr;
    }

private:
    std::shared_ptr<const StmtNode> node_;
};

struct Seq : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Seq;
    std::vector<Stmt> stmts;
    Seq(SourceLoc l, std::vector<Stmt> s) : StmtNode(Kind, l), stmts(std::move(s)) {}
};

// `const T var = value;` visible in body.
struct LetStmt : StmtNode {
    static constexpr NodeKind Kind = NodeKind::LetStmt;
    VarPtr var;
    Expr value;
    Stmt body;
    LetStmt(SourceLoc l, VarPtr v, Expr e, Stmt b) : StmtNode(Kind, l), var(std::move(v)), value(std::move(e)), body(std::move(b)) {}
};

struct Evaluate : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Evaluate;
    Expr value;
    // The author's message of a print(...) or assert(...), which the output prints (--debug).
    std::string message;
    Evaluate(SourceLoc l, Expr e, std::string m = {}) : StmtNode(Kind, l), value(std::move(e)), message(std::move(m)) {}
};

// Atomic read-modify-writes of one element (relaxed: memory orders are fences around them).
enum class StoreKind { Plain, AtomicAdd, AtomicMax, AtomicMin };

// buffer[indices] = value (lanes of value consecutive elements), or an atomic add.
struct Store : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Store;
    Buffer buffer;
    std::vector<Expr> indices;
    Expr value;
    StoreKind storeKind;
    Store(SourceLoc l, Buffer b, std::vector<Expr> i, Expr v, StoreKind k)
        : StmtNode(Kind, l), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)), storeKind(k) {}
};

enum class ForKind {
    Serial,     // an ordinary loop
    Unroll,     // fully unrolled (`#pragma unroll`)
    Vectorized, // the expert level's `vectorized(n)`: unrolled on GPUs, `#pragma omp simd` on the CPU
    Rolled,     // kept a loop even where the compiler would unroll it (`#pragma unroll 1`)
    Parallel,   // tile level: iterations spread over the block's threads (lowered away)
    Pipelined,  // tile level: software pipelined over `stages`
};
const char* forKindName(ForKind k);

struct PipelineInfo {
    int stages = 0;           // 0: let the compiler choose
    std::vector<int> order;   // TileLang's order/stage lists, empty when not given
    std::vector<int> stage;
    int warpSpecialize = -1;  // warp_specialize = false / true: 0 / 1; -1: the compiler chooses
    int deepen = -1;          // deepen = false / true: 0 / 1; -1: left out (the compiler may deepen)
    int unroll = 0;           // k-tiles per wgmma group: 1 never unrolls, 0 (left out): the compiler's choice
    int overlap = -1;         // overlap = false / true: 0 / 1; -1: left out (no overlap: experimental)
};

struct For : StmtNode {
    static constexpr NodeKind Kind = NodeKind::For;
    VarPtr var;
    Expr min, extent;
    Expr step;  // 1 for every loop but `range(a, b, step)`
    // The loop runs var = min, min + step, ... while var < min + extent.
    ForKind forKind;
    Stmt body;
    PipelineInfo pipeline;
    For(SourceLoc l, VarPtr v, Expr mn, Expr ext, Expr st, ForKind k, Stmt b, PipelineInfo p = {})
        : StmtNode(Kind, l), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), step(std::move(st)),
          forKind(k), body(std::move(b)), pipeline(std::move(p)) {}
};

struct IfThenElse : StmtNode {
    static constexpr NodeKind Kind = NodeKind::IfThenElse;
    Expr cond;
    Stmt thenCase, elseCase;  // elseCase may be empty
    IfThenElse(SourceLoc l, Expr c, Stmt t, Stmt e)
        : StmtNode(Kind, l), cond(std::move(c)), thenCase(std::move(t)), elseCase(std::move(e)) {}
};

// `while (cond) body`: cond is re-evaluated before every iteration. Sema guarantees that it has
// the same value in every thread of the block, so body may hold barriers and tile ops.
struct While : StmtNode {
    static constexpr NodeKind Kind = NodeKind::While;
    Expr cond;
    Stmt body;
    While(SourceLoc l, Expr c, Stmt b) : StmtNode(Kind, l), cond(std::move(c)), body(std::move(b)) {}
};

// Declares `buffer` (shared, fragment, local) for the extent of body.
struct Allocate : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Allocate;
    Buffer buffer;
    Expr init;  // optional initial value of a rank-0 buffer (a scalar variable)
    Stmt body;
    Allocate(SourceLoc l, Buffer b, Expr i, Stmt bd) : StmtNode(Kind, l), buffer(std::move(b)), init(std::move(i)), body(std::move(bd)) {}
};

// A block-wide barrier (__syncthreads); the barrier pass inserts these.
struct Barrier : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Barrier;
    explicit Barrier(SourceLoc l) : StmtNode(Kind, l) {}
};

// A comment in the emitted code, e.g. the tile op a block of code was lowered from.
struct Comment : StmtNode {
    static constexpr NodeKind Kind = NodeKind::Comment;
    std::string text;
    Comment(SourceLoc l, std::string t) : StmtNode(Kind, l), text(std::move(t)) {}
};

// A tile operation (copy, gemm, reduce, ...): see ir/TileOp.h and src/ops/.
struct TileOpStmt : StmtNode {
    static constexpr NodeKind Kind = NodeKind::TileOpStmt;
    std::shared_ptr<const TileOp> op;
    TileOpStmt(SourceLoc l, std::shared_ptr<const TileOp> o) : StmtNode(Kind, l), op(std::move(o)) {}
};

// ---- constructors --------------------------------------------------------------------------

Stmt seq(std::vector<Stmt> stmts, SourceLoc loc = {});  // flattens nested Seqs, drops empties
Stmt letStmt(VarPtr var, Expr value, Stmt body, SourceLoc loc = {});
Stmt evaluate(Expr e, SourceLoc loc = {}, std::string message = {});
Stmt store(Buffer b, std::vector<Expr> indices, Expr value, SourceLoc loc = {}, StoreKind k = StoreKind::Plain);
Stmt forLoop(VarPtr var, Expr min, Expr extent, ForKind kind, Stmt body, SourceLoc loc = {}, PipelineInfo p = {},
             Expr step = {});
Stmt ifThenElse(Expr cond, Stmt thenCase, Stmt elseCase = {}, SourceLoc loc = {});
Stmt whileLoop(Expr cond, Stmt body, SourceLoc loc = {});  // an empty body becomes an empty Seq
Stmt allocate(Buffer b, Stmt body, SourceLoc loc = {}, Expr init = {});
Stmt barrier(SourceLoc loc = {});
Stmt comment(std::string text, SourceLoc loc = {});
Stmt tileOp(std::shared_ptr<const TileOp> op, SourceLoc loc);

} // namespace tlc::ir
