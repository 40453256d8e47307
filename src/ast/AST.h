// The abstract syntax tree of a .tl file. Built once by parser/ASTBuilder, owned through
// unique_ptr, every node carries its source range. Sema annotates expressions in place
// (their `type`, folded `constant`, the `decl` a name refers to, the builtin a call binds to);
// after sema the tree is treated as read-only.
#pragma once

#include "ast/Type.h"
#include "support/SourceFile.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ast {

struct Decl;
struct Stmt;

// ---- expressions ---------------------------------------------------------------------------

enum class ExprKind { IntLit, FloatLit, BoolLit, StringLit, Name, List, Call, Index, Unary, Binary, Ternary };

enum class UnaryOp { Neg, Not, BitNot };
enum class BinaryOp {
    Mul, Div, Mod, Add, Sub, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or,
    MatMul,  // `A @ B`: whole tensors, in whole-tensor kernels only (lowered before sema)
};
const char* spelling(UnaryOp op);
const char* spelling(BinaryOp op);

struct Expr {
    const ExprKind kind;
    SourceRange range;

    // Filled by sema.
    Type type;
    std::optional<ConstValue> constant;  // set when the expression folds to a compile-time value

    template <typename T> T* as() { return kind == T::Kind ? static_cast<T*>(this) : nullptr; }
    template <typename T> const T* as() const {
        return kind == T::Kind ? static_cast<const T*>(this) : nullptr;
    }
    virtual ~Expr() = default;

protected:
    Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
    static constexpr ExprKind Kind = ExprKind::IntLit;
    int64_t value;
    IntLit(SourceRange r, int64_t v) : Expr(Kind, r), value(v) {}
};

struct FloatLit : Expr {
    static constexpr ExprKind Kind = ExprKind::FloatLit;
    double value;
    std::string spelling;  // as written, so that emitted code can keep it
    FloatLit(SourceRange r, double v, std::string s) : Expr(Kind, r), value(v), spelling(std::move(s)) {}
};

struct BoolLit : Expr {
    static constexpr ExprKind Kind = ExprKind::BoolLit;
    bool value;
    BoolLit(SourceRange r, bool v) : Expr(Kind, r), value(v) {}
};

struct StringLit : Expr {
    static constexpr ExprKind Kind = ExprKind::StringLit;
    std::string value;  // unescaped
    StringLit(SourceRange r, std::string v) : Expr(Kind, r), value(std::move(v)) {}
};

struct Name : Expr {
    static constexpr ExprKind Kind = ExprKind::Name;
    std::string name;
    const Decl* decl = nullptr;  // sema: what the name refers to (null for dtypes and builtins)
    Name(SourceRange r, std::string n) : Expr(Kind, r), name(std::move(n)) {}
};

// `[a, b, c]`: a shape or a list of integers.
struct List : Expr {
    static constexpr ExprKind Kind = ExprKind::List;
    std::vector<ExprPtr> elements;
    bool parenthesized = false;  // written `(a, b)`, as `threads = (32, 4)`; shapes take `[...]`
    List(SourceRange r, std::vector<ExprPtr> e) : Expr(Kind, r), elements(std::move(e)) {}
};

struct Arg {
    std::string keyword;  // empty for a positional argument
    SourceRange keywordRange;
    ExprPtr value;
};

// Which builtin a call resolved to (sema fills this; see sema/Builtins.h).
enum class BuiltinId : int { None = -1 };

struct Call : Expr {
    static constexpr ExprKind Kind = ExprKind::Call;
    std::string callee;
    SourceRange calleeRange;
    std::vector<Arg> args;

    // Filled by sema: the builtin, and its arguments in parameter order with keywords resolved.
    // An entry is null where the argument was omitted and the parameter's default applies.
    // A call with builtin == -1 that checked cleanly is a cast: its callee names a dtype (or a
    // dtype compile-time parameter) and its type is the scalar it converts to.
    // For `parallel`, boundArgs holds the extents in order.
    int builtin = -1;
    std::vector<const Expr*> boundArgs;
    // Filled by sema: an element atomic_add outside `parallel` loops whose operands or enclosing
    // conditions differ between threads, so that each thread adds (the expert level); without
    // it such a statement is the block's, done once.
    bool perThread = false;

    Call(SourceRange r, std::string c, SourceRange cr, std::vector<Arg> a)
        : Expr(Kind, r), callee(std::move(c)), calleeRange(cr), args(std::move(a)) {}
};

// One subscript of an Index expression: a point `i`, a slice `lo:hi`, `lo:+len` or `:`.
struct Subscript {
    enum class Form { Point, Range, Length };
    Form form = Form::Point;
    ExprPtr point;  // Point
    ExprPtr lo;     // Range/Length; null means 0
    ExprPtr hi;     // Range; null means the dimension's extent
    ExprPtr length; // Length
    SourceRange range;
};

// `base[i, j]`: an element (all points) or a region (tile operand, or any slice).
struct Index : Expr {
    static constexpr ExprKind Kind = ExprKind::Index;
    ExprPtr base;
    std::vector<Subscript> subscripts;
    Index(SourceRange r, ExprPtr b, std::vector<Subscript> s)
        : Expr(Kind, r), base(std::move(b)), subscripts(std::move(s)) {}
};

struct Unary : Expr {
    static constexpr ExprKind Kind = ExprKind::Unary;
    UnaryOp op;
    ExprPtr operand;
    Unary(SourceRange r, UnaryOp o, ExprPtr e) : Expr(Kind, r), op(o), operand(std::move(e)) {}
};

struct Binary : Expr {
    static constexpr ExprKind Kind = ExprKind::Binary;
    BinaryOp op;
    ExprPtr lhs, rhs;
    SourceRange opRange;
    Binary(SourceRange r, BinaryOp o, SourceRange orr, ExprPtr l, ExprPtr rr)
        : Expr(Kind, r), op(o), lhs(std::move(l)), rhs(std::move(rr)), opRange(orr) {}
};

struct Ternary : Expr {
    static constexpr ExprKind Kind = ExprKind::Ternary;
    ExprPtr cond, thenExpr, elseExpr;
    Ternary(SourceRange r, ExprPtr c, ExprPtr t, ExprPtr e)
        : Expr(Kind, r), cond(std::move(c)), thenExpr(std::move(t)), elseExpr(std::move(e)) {}
};

// ---- declarations --------------------------------------------------------------------------

// Everything a name can refer to. Created by sema (one per binding) and owned by the Kernel.
struct Decl {
    enum class Kind { TemplateParam, TensorParam, ScalarParam, SymbolicSize, Let, Var, LoopVar, GridVar };
    Kind kind;
    std::string name;
    SourceRange range;
    Type type;
    std::optional<ConstValue> constant;  // template params, folded lets, -D specialised sizes
    const Stmt* stmt = nullptr;          // the declaring statement, when there is one
    bool used = false;
};

// ---- statements ----------------------------------------------------------------------------

enum class StmtKind { Let, Var, Assign, ExprStmt, For, If, While, Grid, Block, Require };

struct Stmt {
    const StmtKind kind;
    SourceRange range;
    template <typename T> T* as() { return kind == T::Kind ? static_cast<T*>(this) : nullptr; }
    template <typename T> const T* as() const {
        return kind == T::Kind ? static_cast<const T*>(this) : nullptr;
    }
    virtual ~Stmt() = default;

protected:
    Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
    static constexpr StmtKind Kind = StmtKind::Block;
    std::vector<StmtPtr> stmts;
    Block(SourceRange r, std::vector<StmtPtr> s) : Stmt(Kind, r), stmts(std::move(s)) {}
};

struct LetStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::Let;
    std::string name;
    SourceRange nameRange;
    ExprPtr value;
    const Decl* decl = nullptr;  // sema
    LetStmt(SourceRange r, std::string n, SourceRange nr, ExprPtr v)
        : Stmt(Kind, r), name(std::move(n)), nameRange(nr), value(std::move(v)) {}
};

struct VarStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::Var;
    std::string name;
    SourceRange nameRange;
    std::string typeName;  // empty when inferred from the initialiser
    SourceRange typeRange;
    ExprPtr init;          // may be null
    const Decl* decl = nullptr;  // sema
    VarStmt(SourceRange r, std::string n, SourceRange nr, std::string t, SourceRange tr, ExprPtr i)
        : Stmt(Kind, r), name(std::move(n)), nameRange(nr), typeName(std::move(t)), typeRange(tr),
          init(std::move(i)) {}
};

// `target op= value`; op is nullopt for plain `=`.
struct AssignStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::Assign;
    ExprPtr target;
    std::optional<BinaryOp> op;
    ExprPtr value;
    AssignStmt(SourceRange r, ExprPtr t, std::optional<BinaryOp> o, ExprPtr v)
        : Stmt(Kind, r), target(std::move(t)), op(o), value(std::move(v)) {}
};

struct ExprStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::ExprStmt;
    ExprPtr expr;
    ExprStmt(SourceRange r, ExprPtr e) : Stmt(Kind, r), expr(std::move(e)) {}
};

struct LoopVar {
    std::string name;
    SourceRange range;
    const Decl* decl = nullptr;  // sema
};

// `for vars in iter(args) { body }` with iter one of range/serial/unroll/parallel/pipelined.
struct ForStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::For;
    std::vector<LoopVar> vars;
    std::unique_ptr<Call> iter;
    std::unique_ptr<Block> body;
    ForStmt(SourceRange r, std::vector<LoopVar> v, std::unique_ptr<Call> i, std::unique_ptr<Block> b)
        : Stmt(Kind, r), vars(std::move(v)), iter(std::move(i)), body(std::move(b)) {}
};

struct IfStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::If;
    ExprPtr cond;
    std::unique_ptr<Block> thenBlock;
    StmtPtr elseStmt;  // a Block or another IfStmt (else if), or null
    IfStmt(SourceRange r, ExprPtr c, std::unique_ptr<Block> t, StmtPtr e)
        : Stmt(Kind, r), cond(std::move(c)), thenBlock(std::move(t)), elseStmt(std::move(e)) {}
};

// `while (cond) { body }`: TileLang's T.While. Inside the grid, the condition must be the same in
// every thread of the block (sema checks it), so the body may hold tile ops and barriers.
struct WhileStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::While;
    ExprPtr cond;
    std::unique_ptr<Block> body;
    WhileStmt(SourceRange r, ExprPtr c, std::unique_ptr<Block> b) : Stmt(Kind, r), cond(std::move(c)), body(std::move(b)) {}
};

// `grid(gx, gy, threads = T) as (bx, by) { body }`; `launch` is a Call named "grid".
struct GridStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::Grid;
    std::unique_ptr<Call> launch;
    std::vector<LoopVar> vars;
    std::unique_ptr<Block> body;
    // Set by sema: the block's threads per dimension as `threads =` gives them ((32, 4) is
    // {32, 4}; 128 is {128}); empty when left out.
    std::vector<int64_t> threadDims;
    GridStmt(SourceRange r, std::unique_ptr<Call> l, std::vector<LoopVar> v, std::unique_ptr<Block> b)
        : Stmt(Kind, r), launch(std::move(l)), vars(std::move(v)), body(std::move(b)) {}
};

// `require cond;` at the kernel's top: a precondition of every launch, over what the launcher
// knows (sizes, scalar parameters, compile-time values); the launcher refuses arguments that
// break it (docs/language.md, "Preconditions").
struct RequireStmt : Stmt {
    static constexpr StmtKind Kind = StmtKind::Require;
    ExprPtr cond;
    RequireStmt(SourceRange r, ExprPtr c) : Stmt(Kind, r), cond(std::move(c)) {}
};

// ---- kernels -------------------------------------------------------------------------------

struct TemplateParam {
    std::string name;
    SourceRange range;
    std::string typeName;   // optional annotation (`n: i32 = 4`)
    SourceRange typeRange;
    bool isAuto = false;    // `= auto`: filled by tile inference / recommendation
    ExprPtr defaultValue;   // null when isAuto
    const Decl* decl = nullptr;  // sema
};

struct TensorType {
    std::string dtype;
    SourceRange dtypeRange;
    std::vector<ExprPtr> dims;     // empty for a scalar parameter
    std::vector<ExprPtr> strides;  // empty: row-major contiguous
    bool isTensor() const { return !dims.empty(); }
};

struct Param {
    std::string name;
    SourceRange range;
    TensorType type;
    const Decl* decl = nullptr;  // sema
};

struct Kernel {
    std::string name;
    SourceRange nameRange;
    std::vector<std::string> imports;  // the file's `import` paths (set by sema)
    SourceRange range;
    std::vector<TemplateParam> templateParams;
    std::vector<Param> params;
    std::unique_ptr<Block> body;
    // Comment lines `--emit=tile-source` prints above the kernel: what the beginner level's
    // lowering chose and why (not part of the kernel's fingerprint).
    std::vector<std::string> notes;

    // Filled by sema. The symbolic sizes (names used as tensor dimensions that are not
    // compile-time parameters) in order of first appearance in the parameter list; these
    // become launcher arguments. A size specialised with -D is a constant, not listed here.
    std::vector<const Decl*> sizeParams;
    const GridStmt* grid = nullptr;        // the kernel's first launch
    std::vector<const GridStmt*> grids;  // every launch, in order (they run in this order)

    // Owned by the kernel so that Decl pointers stay valid as long as the AST does.
    std::vector<std::unique_ptr<Decl>> decls;
    Decl* newDecl(Decl d) {
        decls.push_back(std::make_unique<Decl>(std::move(d)));
        return decls.back().get();
    }
};

// `import "path";`: a header the output includes for call_extern's functions.
struct Import {
    std::string path;
    SourceRange range;
};

struct File {
    std::vector<Import> imports;
    std::vector<std::unique_ptr<Kernel>> kernels;
};

// Readable dump used by `--emit=ast` and the builder's tests.
std::string dump(const File& file);
// The file as .tl source that parses to the same tree (Print.cpp; `--emit=tile-source`).
std::string printSource(const File& file);
// One kernel so (the recommender's fingerprint of a kernel: comments and spacing do not count).
std::string printKernelSource(const Kernel& kernel);
std::string printExpr(const Expr& e);
// `base[v0, v1, ...]`: an element at loop variables by name, every node placed at `r`.
ExprPtr elementAt(ExprPtr base, const std::vector<std::string>& vars, SourceRange r);
// A string literal as a .tl file writes it: the inverse of the lexer's escapes.
std::string quoted(const std::string& value);

// Calls f with every name an expression mentions (operands, arguments, subscripts), in order;
// for code that reads the tree as parsed (the recommender's roles of `auto` parameters).
void forEachName(const Expr* e, const std::function<void(const Name&)>& f);

} // namespace tlc::ast
