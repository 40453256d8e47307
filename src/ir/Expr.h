// IR expressions: small immutable nodes shared through Expr handles (Halide's style). Nodes are
// made only through the make functions below, which check their invariants; passes build new
// trees and share every unchanged subtree.
#pragma once

#include "ast/DType.h"
#include "ast/Type.h"
#include "support/SourceFile.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ir {

enum class NodeKind {
#define EXPR_NODE(N) N,
#define STMT_NODE(N) N,
#include "ir/IRNodes.def"
};

struct ExprNode {
    const NodeKind kind;
    const DType dtype;
    const int lanes;  // > 1: a vector of `lanes` consecutive elements (loads, stores, broadcasts)
    virtual ~ExprNode() = default;

protected:
    ExprNode(NodeKind k, DType t, int l = 1) : kind(k), dtype(t), lanes(l) {}
};

// A shared handle to an immutable expression node.
class Expr {
public:
    Expr() = default;
    Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

    const ExprNode* get() const { return node_.get(); }
    const ExprNode* operator->() const { return node_.get(); }
    explicit operator bool() const { return node_ != nullptr; }
    bool same(const Expr& other) const { return node_ == other.node_; }
    DType dtype() const { return node_->dtype; }

    template <typename T> const T* as() const {
        return node_ && node_->kind == T::Kind ? static_cast<const T*>(node_.get()) : nullptr;
    }
    template <typename T> bool is() const { return as<T>() != nullptr; }

private:
    std::shared_ptr<const ExprNode> node_;
};

// ---- buffers -------------------------------------------------------------------------------

// What the software pipeline (passes/pipeline) made a shared buffer for. The pipeline sets it
// on the buffers it creates; the passes after it read it here (insert-barriers, plan-shared-memory,
// the emitter), and a pass that rebuilds a buffer keeps it.
struct PipelineBuffer {
    enum class Kind : uint8_t { Versions, Barriers };  // a tile's versions; an mbarrier array
    Kind kind = Kind::Versions;
    // Ordered by the TMA protocol's mbarriers, not by block barriers: the barrier arrays and the
    // tiles TMA fills (insert-barriers leaves them alone).
    bool mbarrierOrdered = false;
    int versions = 1;   // iterations in flight
    int stages = 1;     // the loop's
    SourceLoc loop;     // the pipelined loop
    // The loop's number among those whose stages the pipeline inferred (StageInference); -1
    // where the author fixed `stages`.
    int inferredLoop = -1;
};

// A named array: a global tensor parameter, a shared/fragment/local allocation, or after
// lowering the per-thread part of a fragment. Identity is the pointer.
struct BufferNode {
    std::string name;
    DType dtype;
    MemScope scope;
    std::vector<Expr> shape;    // rank 0: a scalar variable (`var x`)
    std::vector<Expr> strides;  // element strides, one per dimension
    // Shared buffers: the alignment their start needs beyond 16 bytes (a swizzled wgmma
    // operand's pattern repeats every 8 x its span: 1024 bytes for 128B); 0 for the default.
    int64_t alignBytes = 0;
    // A reshaped view of a contiguous global tensor (`view(A, [...])`): the tensor parameter whose
    // storage it reads and writes, with this buffer's shape and row-major strides; null otherwise.
    std::shared_ptr<const BufferNode> viewOf;
    std::optional<PipelineBuffer> pipeline;  // shared buffers the software pipeline made

    bool isMbarrierArray() const { return pipeline && pipeline->kind == PipelineBuffer::Kind::Barriers; }
    bool mbarrierOrdered() const { return pipeline && pipeline->mbarrierOrdered; }
};
using Buffer = std::shared_ptr<const BufferNode>;

// Row-major strides for a shape.
std::vector<Expr> rowMajorStrides(const std::vector<Expr>& shape);
Buffer makeBuffer(std::string name, DType dtype, MemScope scope, std::vector<Expr> shape,
                  std::vector<Expr> strides = {});
// The buffer's extents as constants; fails (returns false) for symbolic shapes.
bool constantShape(const Buffer& b, std::vector<int64_t>& out);

// ---- nodes ---------------------------------------------------------------------------------

struct IntImm : ExprNode {
    static constexpr NodeKind Kind = NodeKind::IntImm;
    int64_t value;
    IntImm(DType t, int64_t v, int lanes = 1) : ExprNode(Kind, t, lanes), value(v) {}
};

struct FloatImm : ExprNode {
    static constexpr NodeKind Kind = NodeKind::FloatImm;
    double value;
    std::string spelling;  // as written in the source when it came from there ("1.44269504")
    FloatImm(DType t, double v, std::string s, int lanes = 1) : ExprNode(Kind, t, lanes), value(v), spelling(std::move(s)) {}
};

// What a variable stands for; emitters map the roles to threadIdx.x, blockIdx.y, ...
enum class VarRole { Plain, ThreadIndex, BlockIndexX, BlockIndexY, BlockIndexZ };

struct Var : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Var;
    std::string name;
    VarRole role;
    Var(DType t, std::string n, VarRole r) : ExprNode(Kind, t), name(std::move(n)), role(r) {}
};
using VarPtr = std::shared_ptr<const Var>;

struct Cast : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Cast;
    Expr value;
    Cast(DType t, Expr v) : ExprNode(Kind, t, v->lanes), value(std::move(v)) {}
};

enum class UnaryOp { Neg, Not, BitNot };
struct Unary : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Unary;
    UnaryOp op;
    Expr operand;
    Unary(DType t, UnaryOp o, Expr e) : ExprNode(Kind, t), op(o), operand(std::move(e)) {}
};

enum class BinaryOp {
    Add, Sub, Mul, Div, Mod, Min, Max,
    Lt, Le, Gt, Ge, Eq, Ne,
    And, Or, BitAnd, BitOr, BitXor, Shl, Shr,
};
bool isComparison(BinaryOp op);
const char* spelling(BinaryOp op);  // C spelling; Min/Max print as calls

struct Binary : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Binary;
    BinaryOp op;
    Expr a, b;
    Binary(DType t, BinaryOp o, Expr x, Expr y) : ExprNode(Kind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

struct Select : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Select;
    Expr cond, thenValue, elseValue;
    Select(DType t, Expr c, Expr x, Expr y)
        : ExprNode(Kind, t), cond(std::move(c)), thenValue(std::move(x)), elseValue(std::move(y)) {}
};

// Calls to math functions and target intrinsics. `name` is target-neutral ("exp2",
// "ceildiv", "shfl_xor"); emitters spell it for their target.
struct Call : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Call;
    std::string name;
    std::vector<Expr> args;
    Call(DType t, std::string n, std::vector<Expr> a) : ExprNode(Kind, t), name(std::move(n)), args(std::move(a)) {}
};

// buffer[indices...]; with lanes > 1, `lanes` consecutive elements along the last dimension.
struct Load : ExprNode {
    static constexpr NodeKind Kind = NodeKind::Load;
    Buffer buffer;
    std::vector<Expr> indices;
    Load(Buffer b, std::vector<Expr> i, int lanes)
        : ExprNode(Kind, b->dtype, lanes), buffer(std::move(b)), indices(std::move(i)) {}
};

// ---- constructors (they check invariants and fold nothing; see Simplify.h) ----------------

Expr intImm(int64_t v, DType t = DType::I32);
Expr floatImm(double v, DType t = DType::F32, std::string spelling = "");
Expr boolImm(bool v);
Expr zero(DType t, int lanes = 1);  // 0 of any dtype, broadcast to `lanes`
VarPtr makeVar(std::string name, DType t = DType::I32, VarRole role = VarRole::Plain);
Expr cast(DType t, Expr v);  // no-op when already of type t
Expr unary(UnaryOp op, Expr e);
Expr binary(BinaryOp op, Expr a, Expr b);  // promotes operand types as C would
Expr select(Expr c, Expr a, Expr b);
Expr call(std::string name, DType t, std::vector<Expr> args);
Expr load(Buffer b, std::vector<Expr> indices, int lanes = 1);

inline Expr operator+(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr operator%(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
inline Expr operator<(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return binary(BinaryOp::Ge, std::move(a), std::move(b)); }
inline Expr logicalAnd(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
inline Expr operator+(const Expr& a, int64_t b) { return a + intImm(b, a.dtype()); }
inline Expr operator-(const Expr& a, int64_t b) { return a - intImm(b, a.dtype()); }
inline Expr operator*(const Expr& a, int64_t b) { return a * intImm(b, a.dtype()); }
inline Expr operator/(const Expr& a, int64_t b) { return a / intImm(b, a.dtype()); }
inline Expr operator%(const Expr& a, int64_t b) { return a % intImm(b, a.dtype()); }
inline Expr operator<(const Expr& a, int64_t b) { return a < intImm(b, a.dtype()); }
Expr minExpr(Expr a, Expr b);
Expr maxExpr(Expr a, Expr b);
inline Expr varExpr(const VarPtr& v) { return Expr(v); }

// Constant value of an integer immediate, if it is one.
const int64_t* asConstInt(const Expr& e);
// Whether e is the integer immediate v.
bool isConstInt(const Expr& e, int64_t v);

} // namespace tlc::ir
