// The checker of one kernel. Its member functions are spread over several files by topic:
//   CheckKernel.cpp   compile-time parameters, -D, tensor parameters and sizes, kernel-wide rules
//   CheckStmt.cpp     statements, scopes, loops, the grid, assignments
//   CheckExpr.cpp     names, operators, element access and regions, folding
//   Symbolic.cpp      symbolic extents (polynomial forms, canonical text), message text, dependencies
//   CheckCall.cpp     builtin calls: argument binding, argument kinds, casts, math
//   CheckTileOps.cpp  copy, gemm, reductions and the other tile operations
// Internal to src/sema; the interface is checkFile() in Sema.h.
#pragma once

#include "sema/Polynomial.h"
#include "sema/Builtins.h"
#include "sema/ConstFold.h"
#include "sema/Scope.h"
#include "sema/Sema.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tlc::sema {

// -D NAME=VALUE across the kernels of a file: which were parsed and which named something.
struct DefineTable {
    struct Entry {
        std::string text;
        std::optional<ConstValue> value;  // nullopt: the value did not parse (already reported)
        bool used = false;
    };
    std::map<std::string, Entry> entries;
    Entry* find(const std::string& name) {
        auto it = entries.find(name);
        return it == entries.end() ? nullptr : &it->second;
    }
};

// A compile-time integer that is required: known, deferred (depends on an `auto` parameter,
// filled in by tile inference later), or missing (an error has been reported).
struct ConstInt {
    enum class Status { Known, Deferred, Missing } status = Status::Missing;
    int64_t value = 0;
    bool known() const { return status == Status::Known; }
    bool ok() const { return status != Status::Missing; }
};

// Where a call appears; decides which builtins are allowed there.
enum class CallSite { Statement, Value, LetInit, LoopIter, Launch };

class KernelChecker {
public:
    KernelChecker(ast::Kernel& kernel, DiagnosticEngine& diags, const SemaOptions& options, DefineTable& defines)
        : kernel_(kernel), diags_(diags), options_(options), defines_(defines) {}
    void run();

    // ---- kernel level (CheckKernel.cpp) ----
    void declareTemplateParams();
    void applyDefine(ast::TemplateParam& tp, ast::Decl& decl);
    void declareParams();
    void checkTensorDim(ast::Expr& dim, const std::set<std::string>& paramNames);
    void finishKernel();
    // Adds a declaration to the current scope; reports redefinitions and reserved names.
    ast::Decl* declare(ast::Decl d);
    void reportUnused(const std::vector<ast::Decl*>& frame);
    // A dtype written as a name in a type position (`X: f16[...]`, `var x: dt`).
    std::optional<DType> resolveDTypeName(const std::string& name, SourceRange range);

    // ---- statements (CheckStmt.cpp) ----
    void checkBlock(ast::Block& block);
    void checkStmt(ast::Stmt& stmt);
    void checkLet(ast::LetStmt& s);
    void checkVar(ast::VarStmt& s);
    void checkAssign(ast::AssignStmt& s);
    void checkExprStmt(ast::ExprStmt& s);
    void checkFor(ast::ForStmt& s);
    void checkIf(ast::IfStmt& s);
    void checkWhile(ast::WhileStmt& s);
    void checkRequire(ast::RequireStmt& s);
    void checkGrid(ast::GridStmt& s);
    void checkGlobalStore(const ast::Index& target, const ast::Decl* tensor);

    // ---- expressions (CheckExpr.cpp) ----
    Type checkValue(ast::Expr& e);    // a value: `A[i, j]` with points is an element
    Type checkOperand(ast::Expr& e);  // a tile operand: `A[i, j]` is a region
    Type checkExpr(ast::Expr& e, bool operand);
    Type checkName(ast::Name& n);
    Type checkUnary(ast::Unary& u);
    Type checkBinary(ast::Binary& b);
    Type checkTernary(ast::Ternary& t);
    Type checkIndex(ast::Index& ix, bool operand);
    Type checkList(ast::List& l);
    // Checks that `e` (already checked) is a value of the wanted sort; reports otherwise.
    bool expectInteger(ast::Expr& e, std::string_view what);
    bool expectScalar(ast::Expr& e, std::string_view what);
    bool expectBoolConvertible(ast::Expr& e);
    ConstInt requireConstInt(ast::Expr& e, std::string_view what, bool positive);
    void reportFoldError(const FoldResult& r, const ast::Expr& e);
    void explainNotConstant(const ast::Expr& e);
    bool isCompileTime(const ast::Expr& e) const;
    Extent extentOf(const ast::Expr& e) const;
    std::optional<Polynomial> polynomialOf(const ast::Expr& e) const;
    std::string operandText(const ast::Expr& x, const Polynomial& p) const;
    std::string canonical(const ast::Expr& e) const;
    std::string structuralText(const ast::Expr& e) const;
    std::string brief(const ast::Expr& e) const;  // structuralText clipped for messages
    void collectDeps(const ast::Expr& e, std::set<const ast::Decl*>& out) const;
    // "global tensor 'A'", "region of shared buffer 'A_s'", "i32" for messages.
    std::string describe(const ast::Expr& e) const;
    const ast::Decl* rootDecl(const ast::Expr& e) const;  // the tensor a name or region refers to
    void noteDeclared(const ast::Expr& e);

    // ---- values that differ between the threads of a block (Uniformity.cpp) ----
    // A `while` condition must be uniform: it may not read a fragment or local element, nor a
    // `var` assigned inside a `parallel` loop (each thread keeps its own), nor anything
    // computed from those. Assignments can follow the loop in the text (its body), so the
    // conditions are checked when the kernel is done.
    struct Varying {
        SourceRange where;
        std::string why;  // "is assigned inside a 'parallel' loop", ...
        // Computed from the thread's position or a collective (the expert level's rules look
        // only at these: a fragment element read outside parallel loops is the same value in
        // every thread once lowered, and tile code has always branched on such values).
        bool threadLevel = false;
    };
    std::map<const ast::Decl*, Varying> varyingSeeds_;
    struct VarAssign {
        const ast::Decl* var;
        std::set<const ast::Decl*> deps;
        SourceRange range;
    };
    std::vector<VarAssign> varAssigns_;
    std::vector<const ast::WhileStmt*> whiles_;
    // The first part of `e` that differs between threads by itself, if any: an element of a
    // fragment or local buffer, or a thread-level builtin (thread_id(), a shuffle, ...).
    const ast::Expr* threadVaryingPart(const ast::Expr& e, bool threadLevelOnly = false) const;
    std::string describeVarying(const ast::Expr& part) const;
    // Every let and var whose value may differ between threads, with why (a fixed point over
    // the seeds, the lets' dependencies and the vars' assignments).
    std::map<const ast::Decl*, Varying> varyingDecls(bool threadLevelOnly = false) const;
    void noteScalarWrite(const ast::Decl* target, const ast::Expr& value, SourceRange range);
    void checkWhileConditions();

    // ---- the expert level (ThreadLevel.cpp) ----
    // The statements enclosing the one being checked whose conditions (or loop bounds) decide
    // which threads run it.
    struct Control {
        std::vector<const ast::Expr*> exprs;
        SourceRange range;
        std::string what;  // "an 'if'", "a 'for' loop", "a 'while' loop"
        bool whileLoop = false;  // checkWhileConditions holds every while's condition to the rule
    };
    std::vector<Control> controls_;
    // Statements every thread of the block must reach (tile ops, allocations, collectives,
    // synchronisation) and element stores to global tensors outside `parallel` loops; checked
    // when the kernel is done, when every var's assignments are known.
    struct SyncPoint {
        SourceRange range;
        std::string what;
        std::vector<Control> controls;
    };
    std::vector<SyncPoint> syncPoints_;
    struct ThreadStore {
        SourceRange range;
        std::string tensor;
        std::vector<const ast::Expr*> index;
        std::vector<Control> controls;
    };
    std::vector<ThreadStore> threadStores_;
    // atomic_add calls outside `parallel` loops: per thread when something about them varies.
    struct ThreadAtomic {
        ast::Call* call;
        std::vector<Control> controls;
    };
    std::vector<ThreadAtomic> threadAtomics_;
    std::vector<int64_t> gridThreads_;  // the current grid's threads per dimension; empty: left out or pending
    bool gridThreadsPending_ = false;   // given, over `auto` parameters not bound yet: no count to check against
    bool threadsMissingReported_ = false;
    Type threadBuiltinResult(ast::Call& c, const BuiltinInfo& info);
    Type dp4aResult(ast::Call& c);
    Type checkCallExtern(ast::Call& c);
    void checkAtomicMinMax(ast::Call& c);
    void checkThreadsArg(ast::Call& c, ast::Expr& arg);
    void noteSyncPoint(SourceRange range, std::string what);
    // The reason one of `exprs` differs between threads ("'lane_id()'", "'x', which ..."), or "".
    std::string varyingReason(const std::vector<const ast::Expr*>& exprs,
                              const std::map<const ast::Decl*, Varying>& varying) const;
    void checkThreadLevel();

    // ---- statements that stand for others (Sugar.cpp) ----
    // `G_f = silu(G_f) * U_f;` on on-chip tiles of one shape: the `parallel` loop over the tile
    // that does it element by element, or null when `s` is no such assignment. A tile operand of
    // another shape is reported, and the statement becomes an empty block.
    ast::StmtPtr wholeTileLoop(ast::AssignStmt& s);
    bool indexWholeTiles(ast::ExprPtr& e, const ast::Decl& target, const std::vector<std::string>& vars);
    // `argmax(src, dst, dim)` / `argmin`: the block of statements it stands for, an empty block
    // when its arguments are wrong (reported), or null when `s` is no such call.
    ast::StmtPtr argReduceBlock(ast::ExprStmt& s);
    std::vector<std::string> freshLoopNames(size_t count) const;

    // ---- calls (CheckCall.cpp) ----
    Type checkCall(ast::Call& c, CallSite site);
    bool bindArgs(ast::Call& c, const BuiltinInfo& info);
    void checkArg(ast::Call& c, const BuiltinInfo& info, const BuiltinParam& p, ast::Expr& arg);
    Type checkCast(ast::Call& c, DType to);
    Type builtinResult(ast::Call& c, const BuiltinInfo& info, CallSite site);
    Type clampResult(ast::Call& c);
    Type reinterpretResult(ast::Call& c);
    bool checkSite(ast::Call& c, const BuiltinInfo& info, CallSite site);
    const ast::Expr* boundArg(const ast::Call& c, std::string_view param) const;
    std::optional<bool> constBoolArg(const ast::Call& c, std::string_view param) const;
    std::optional<int64_t> constIntArg(const ast::Call& c, std::string_view param) const;

    // ---- view(tensor, [extents]) (CheckView.cpp) ----
    Type checkView(ast::Call& c);
    // The first name `e` depends on that the launcher cannot compute (a loop or grid variable, a
    // `var`, a tensor, a let of a tensor), with why in `why`; null when it can (sizes, scalar
    // and compile-time parameters, lets over those): view extents and preconditions.
    const ast::Decl* notKnownAtLaunch(const ast::Expr& e, const char*& why) const;

    // ---- tile operations (CheckTileOps.cpp) ----
    void checkTileOp(ast::Call& c, Builtin id);
    void checkCopyLike(ast::Call& c, ast::Expr& src, ast::Expr& dst);
    // copy(region, buffer) / copy(buffer, region) with a region that fits in the buffer: the
    // overlap is copied. True when the rule applies (reported when the region is larger).
    bool overlapCopy(ast::Call& c, ast::Expr& src, ast::Expr& dst);
    void checkGemm(ast::Call& c);
    void checkReduce(ast::Call& c, Builtin id);
    void checkCumsum(ast::Call& c);
    bool onChipSourceAndDestination(ast::Call& c, ast::Expr& src, ast::Expr& dst, std::optional<Shape>& ss,
                                    std::optional<Shape>& ds);
    void checkAtomicAdd(ast::Call& c);
    void checkFillClear(ast::Call& c);
    void checkAnnotateLayout(ast::Call& c);
    void checkIm2col(ast::Call& c);
    // The extents of an operand, or nullopt (reported) for an all-point region with nothing
    // to take its extents from.
    std::optional<Shape> knownShape(ast::Expr& operand, std::string_view opName);
    void resolveRegionFrom(ast::Expr& region, const Shape& other, ast::Call& c, const ast::Expr& otherExpr);

    // ---- alloc_shared(auto, dtype) / alloc_fragment(auto, dtype) (AutoShape.cpp) ----
    // The buffer's shape waits for the first copy into or out of it from a region of known,
    // constant extents; any other use before that, a copy that cannot say, two copies that
    // disagree, and a buffer no copy ever fills are errors.
    struct AutoShape {
        ast::Decl* decl;
        const ast::LetStmt* let;
        const ast::Call* filledBy = nullptr;  // the copy that determined it
    };
    std::map<const ast::Decl*, AutoShape> autoShapes_;
    static bool isAutoShapeArg(const ast::Expr& e);
    void declareAutoShape(ast::Decl* decl, const ast::LetStmt& let);
    AutoShape* pendingAutoShape(const ast::Expr& e);  // the buffer `e` names, while undetermined
    // Before a tile op's own checks: fills or rejects auto shapes among its operands; false when
    // it reported an error (the op's checks would only repeat it).
    bool resolveAutoShapes(ast::Call& c, Builtin id);
    // A copy that disagrees with the one that determined an auto shape: true when reported.
    bool autoShapeConflict(ast::Call& c, ast::Expr& src, ast::Expr& dst);
    void finishAutoShapes();
    bool requireScope(ast::Expr& operand, std::string_view role, std::string_view opName,
                      std::initializer_list<MemScope> allowed, std::string_view expected);

    ast::Kernel& kernel_;
    DiagnosticEngine& diags_;
    const SemaOptions& options_;
    DefineTable& defines_;
    Scope scope_;

    // Context of the statement being checked.
    bool inGrid_ = false;
    std::vector<std::string> nesting_;                    // "a 'for' loop", ...: where the grid may not be
    std::vector<std::vector<const ast::Decl*>> parallel_; // variables of the enclosing parallel loops
    std::vector<std::set<const ast::Decl*>> guards_;       // what enclosing `if` conditions read
    int gridCount_ = 0;
    static constexpr int kMaxGrids = 64;  // grids per kernel
    const ast::GridStmt* firstGrid_ = nullptr;

    // Facts about declarations that the AST does not hold.
    std::map<const ast::Decl*, std::set<const ast::Decl*>> deps_;  // let/var -> the names its value used
    std::set<const ast::Decl*> compileTimeDecls_;                   // lets over `auto` parameters
    std::set<const ast::Decl*> buffers_;                             // lets bound to alloc_*
    struct SharedAlloc { const ast::LetStmt* let; std::optional<int64_t> bytes; int grid = 0; };  // grid: 1, 2, ...
    std::vector<SharedAlloc> sharedAllocs_;
    // While checking tensor dimensions: parameter names, which may not be used as sizes.
    const std::set<std::string>* dimParamNames_ = nullptr;
};

// Calls `f` for every name in `e` that is used as a value (not callees, not keywords).
// The result dtype of `a op b` on scalars, or nullopt when the operator does not apply
// (shifts and bit operations on floats).
std::optional<DType> binaryResultType(ast::BinaryOp op, DType a, DType b);

void visitNames(const ast::Expr& e, const std::function<void(const ast::Name&)>& f);

} // namespace tlc::sema
