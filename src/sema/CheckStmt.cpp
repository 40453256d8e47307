// Statements: scopes, bindings, assignments, loops, `if` and the grid.
#include "sema/Checker.h"

#include <fmt/format.h>

namespace tlc::sema {

using namespace ast;

namespace {

// How an immutable name is described in "cannot assign to ...".
const char* immutableKind(const Decl& d) {
    switch (d.kind) {
    case Decl::Kind::TemplateParam: return "compile-time parameter";
    case Decl::Kind::SymbolicSize: return "size";
    case Decl::Kind::TensorParam: return "tensor";
    case Decl::Kind::ScalarParam: return "parameter";
    case Decl::Kind::Let: return "'let' binding";
    case Decl::Kind::LoopVar: return "loop variable";
    case Decl::Kind::GridVar: return "grid variable";
    case Decl::Kind::Var: return "variable";
    }
    return "name";
}

// Bytes of a buffer of constant shape; nullopt while an extent is not known.
std::optional<int64_t> bufferBytes(const Type& t) {
    __int128 elements = 1;
    for (const Extent& e : t.shape) {
        if (!e.isConstant()) return std::nullopt;
        elements *= *e.value;
        if (elements > (__int128(1) << 60)) return int64_t(1) << 60;  // absurd, and surely too big
    }
    return int64_t((elements * dtypeBits(t.dtype) + 7) / 8);
}

} // namespace

void KernelChecker::checkBlock(Block& block) {
    ScopeFrame frame(scope_, [this](const std::vector<Decl*>& decls) { reportUnused(decls); });
    for (auto& s : block.stmts) {
        if (auto* assign = s->as<AssignStmt>())
            if (StmtPtr loop = wholeTileLoop(*assign)) s = std::move(loop);
        if (auto* call = s->as<ExprStmt>())
            if (StmtPtr block = argReduceBlock(*call)) s = std::move(block);
        checkStmt(*s);
    }
}

void KernelChecker::checkStmt(Stmt& stmt) {
    switch (stmt.kind) {
    case StmtKind::Block:
        nesting_.push_back("a block");
        checkBlock(*stmt.as<Block>());
        nesting_.pop_back();
        break;
    case StmtKind::Let: checkLet(*stmt.as<LetStmt>()); break;
    case StmtKind::Var: checkVar(*stmt.as<VarStmt>()); break;
    case StmtKind::Assign: checkAssign(*stmt.as<AssignStmt>()); break;
    case StmtKind::ExprStmt: checkExprStmt(*stmt.as<ExprStmt>()); break;
    case StmtKind::For: checkFor(*stmt.as<ForStmt>()); break;
    case StmtKind::If: checkIf(*stmt.as<IfStmt>()); break;
    case StmtKind::While: checkWhile(*stmt.as<WhileStmt>()); break;
    case StmtKind::Grid: checkGrid(*stmt.as<GridStmt>()); break;
    case StmtKind::Require: checkRequire(*stmt.as<RequireStmt>()); break;
    }
}

void KernelChecker::checkLet(LetStmt& s) {
    const BuiltinInfo* alloc = nullptr;
    if (auto* call = s.value->as<Call>())
        if (const BuiltinInfo* info = findBuiltin(call->callee); info && info->kind == BuiltinKind::Alloc) alloc = info;
    Type t = alloc ? checkCall(*s.value->as<Call>(), CallSite::LetInit) : checkValue(*s.value);

    Decl d{Decl::Kind::Let, s.name, s.nameRange, t, std::nullopt, &s, false};
    if (alloc && alloc->id == Builtin::AllocVar) {
        d.kind = Decl::Kind::Var;  // a mutable per-thread scalar, like `var`
    } else if (t.isScalar() || t.kind == Type::Kind::DTypeValue) {
        d.constant = s.value->constant;
    } else if (!t.isError() && !(alloc && t.kind == Type::Kind::Tensor)) {
        diags_.report(DiagId::err_invalid_let_value, s.value->range, t.str());
        d.type = Type::error();
    }
    std::set<const Decl*> deps;
    collectDeps(*s.value, deps);
    Decl* decl = declare(std::move(d));
    s.decl = decl;
    deps_[decl] = std::move(deps);
    if (t.isScalar()) noteScalarWrite(decl, *s.value, s.range);
    if (decl->kind == Decl::Kind::Let && !decl->constant && !decl->type.isError() && isCompileTime(*s.value))
        compileTimeDecls_.insert(decl);
    if (alloc && alloc->id != Builtin::View && decl->type.kind == Type::Kind::Tensor) {
        buffers_.insert(decl);
        if (alloc->id == Builtin::AllocShared) sharedAllocs_.push_back({&s, bufferBytes(decl->type), gridCount_});
        const auto* call = s.value->as<Call>();
        if (!call->boundArgs.empty() && call->boundArgs[0] && isAutoShapeArg(*call->boundArgs[0])) {
            declareAutoShape(decl, s);
            if (alloc->id == Builtin::AllocShared) sharedAllocs_.back().bytes = std::nullopt;
        }
    }
}

void KernelChecker::checkVar(VarStmt& s) {
    std::optional<DType> declared;
    bool typeOk = true;
    if (!s.typeName.empty()) {
        declared = resolveDTypeName(s.typeName, s.typeRange);
        typeOk = declared.has_value();
    }
    Type init = Type::error();
    bool initOk = true;
    if (s.init) {
        init = checkValue(*s.init);
        initOk = expectScalar(*s.init, "a scalar initial value");
    }
    Decl d{Decl::Kind::Var, s.name, s.nameRange, Type::error(), std::nullopt, &s, false};
    if (!s.init && s.typeName.empty()) diags_.report(DiagId::err_var_needs_type, s.range, s.name);
    else if (declared) d.type = Type::scalar(*declared);
    else if (typeOk && initOk) d.type = Type::scalar(init.dtype);
    std::set<const Decl*> deps;
    if (s.init) collectDeps(*s.init, deps);
    Decl* decl = declare(std::move(d));
    s.decl = decl;
    deps_[decl] = std::move(deps);
    if (s.init) noteScalarWrite(decl, *s.init, s.range);
}

void KernelChecker::checkAssign(AssignStmt& s) {
    Type value = checkValue(*s.value);
    Expr& target = *s.target;
    Type t = Type::error();

    if (auto* name = target.as<Name>()) {
        // A plain store does not read the variable: it stays "unused" unless read elsewhere.
        Decl* d = scope_.lookup(name->name);
        bool wasUsed = d && d->used;
        t = checkValue(target);
        if (d && !s.op) d->used = wasUsed;
        if (t.isError() || !d) return;
        if (t.isTile()) {
            diags_.report(DiagId::err_assign_to_tile, target.range, describe(target));
            noteDeclared(target);
            return;
        }
        if (d->kind != Decl::Kind::Var) {
            diags_.report(DiagId::err_assign_to_immutable, target.range, immutableKind(*d), d->name);
            diags_.note(d->range, fmt::format("'{}' declared here", d->name));
            return;
        }
        noteScalarWrite(d, *s.value, s.range);
    } else if (auto* ix = target.as<Index>()) {
        t = checkValue(target);
        if (t.isError()) return;
        if (t.kind == Type::Kind::Region) {
            diags_.report(DiagId::err_assign_to_tile, target.range, describe(target));
            return;
        }
        const Decl* tensor = rootDecl(*ix);
        if (tensor && tensor->type.kind == Type::Kind::Tensor && tensor->type.scope == MemScope::Global)
            checkGlobalStore(*ix, tensor);
    } else {
        t = checkValue(target);
        if (t.isError()) return;
        diags_.report(DiagId::err_assign_to_immutable, target.range, "expression", brief(target));
        return;
    }

    if (!expectScalar(*s.value, "a scalar value") || !s.op) return;
    // `x op= v` must be valid as `x op v`.
    if (!binaryResultType(*s.op, t.dtype, value.dtype))
        diags_.report(DiagId::err_invalid_operands, s.range, std::string(spelling(*s.op)) + "=", t.str(), value.str());
}

// A store to a global tensor element runs once per thread: outside a `parallel` loop every
// thread stores to the same element, and inside one the index (or an enclosing `if`) must
// tell the threads apart.
void KernelChecker::checkGlobalStore(const Index& target, const Decl* tensor) {
    if (parallel_.empty()) {
        // Thread-level code may tell the threads apart (out[thread_id()] = ...): decided when
        // the kernel is done and every var's assignments are known (ThreadLevel.cpp).
        ThreadStore store{target.range, tensor->name, {}, controls_};
        for (const auto& sub : target.subscripts)
            for (const Expr* part : {sub.point.get(), sub.lo.get(), sub.hi.get(), sub.length.get()})
                if (part) store.index.push_back(part);
        threadStores_.push_back(std::move(store));
        return;
    }
    std::set<const Decl*> deps;
    for (const auto& sub : target.subscripts)
        if (sub.point) collectDeps(*sub.point, deps);
    for (const auto& guard : guards_) deps.insert(guard.begin(), guard.end());
    for (const auto& loop : parallel_) {
        for (const Decl* var : loop) {
            if (deps.count(var)) continue;
            diags_.report(DiagId::err_global_store_race, target.range, tensor->name,
                          fmt::format("the index does not depend on the 'parallel' loop variable '{}'", var->name));
            diags_.note(var->range, fmt::format("'{}' declared here", var->name));
            return;
        }
    }
}

void KernelChecker::checkExprStmt(ExprStmt& s) {
    if (auto* call = s.expr->as<Call>()) {
        Type t = checkCall(*call, CallSite::Statement);
        const BuiltinInfo* info = call->builtin >= 0 ? &builtinInfo(Builtin(call->builtin)) : nullptr;
        bool hasEffect = info && (info->kind == BuiltinKind::TileOp || info->kind == BuiltinKind::Debug ||
                                  info->kind == BuiltinKind::Sync || info->id == Builtin::CallExtern ||
                                  info->kind == BuiltinKind::Alloc);
        if (!hasEffect && !t.isError()) diags_.report(DiagId::warn_unused_result, s.expr->range);
        return;
    }
    if (!checkValue(*s.expr).isError()) diags_.report(DiagId::warn_unused_result, s.expr->range);
}

void KernelChecker::checkFor(ForStmt& s) {
    Call& iter = *s.iter;
    const BuiltinInfo* info = findBuiltin(iter.callee);
    bool isParallel = false;
    if (!info || info->kind != BuiltinKind::LoopIter) {
        diags_.report(DiagId::err_not_loop_iterator, iter.calleeRange, iter.callee);
        iter.type = Type::error();
    } else {
        checkCall(iter, CallSite::LoopIter);
        isParallel = info->id == Builtin::Parallel;
        // A warp-specialised loop has the producer / consumer schedule, not the author's; a
        // deepened one more stages than the lists give.
        using Excludes = std::pair<const char*, DiagId>;
        for (auto [flag, diag] : {Excludes{"warp_specialize", DiagId::err_warp_specialize_lists},
                                  Excludes{"deepen", DiagId::err_deepen_lists}})
            if (info->id == Builtin::Pipelined && !iter.type.isError() && constBoolArg(iter, flag).value_or(false))
                for (const char* list : {"order", "stage"})
                    for (const auto& a : iter.args)
                        if (a.keyword == list) diags_.report(diag, a.value->range, list);
        if (!iter.type.isError()) {
            size_t want = isParallel ? iter.boundArgs.size() : 1;
            if (s.vars.size() != want) {
                std::string message =
                    isParallel ? fmt::format("'parallel' has {} extent{} but the loop binds {} variable{}", want,
                                             want == 1 ? "" : "s", s.vars.size(), s.vars.size() == 1 ? "" : "s")
                               : fmt::format("a '{}' loop binds exactly one variable, found {}", iter.callee,
                                             s.vars.size());
                diags_.report(DiagId::err_loop_var_count, s.vars.front().range, message);
            }
        }
    }

    nesting_.push_back("a 'for' loop");
    ScopeFrame frame(scope_, [this](const std::vector<Decl*>& decls) { reportUnused(decls); });
    std::vector<const Decl*> vars;
    for (auto& v : s.vars) {
        Decl* d = declare({Decl::Kind::LoopVar, v.name, v.range, Type::scalar(DType::I32), std::nullopt, &s, false});
        v.decl = d;
        vars.push_back(d);
    }
    if (isParallel) parallel_.push_back(vars);
    // The loop's bounds decide how often each thread runs the body.
    if (!isParallel) {
        Control control{{}, iter.range, "a 'for' loop"};
        for (const auto& a : iter.args) control.exprs.push_back(a.value.get());
        controls_.push_back(std::move(control));
    }
    checkBlock(*s.body);
    if (!isParallel) controls_.pop_back();
    if (isParallel) parallel_.pop_back();
    nesting_.pop_back();
}

void KernelChecker::checkIf(IfStmt& s) {
    checkValue(*s.cond);
    expectBoolConvertible(*s.cond);
    nesting_.push_back("an 'if' statement");
    // `if (j == 0) { out[i] = ...; }` in a parallel loop over (i, j) is one store per i: the
    // condition tells the threads apart as much as an index would.
    std::set<const Decl*> deps;
    collectDeps(*s.cond, deps);
    guards_.push_back(std::move(deps));
    controls_.push_back({{s.cond.get()}, s.cond->range, "an 'if'"});
    checkBlock(*s.thenBlock);
    if (s.elseStmt) checkStmt(*s.elseStmt);
    controls_.pop_back();
    guards_.pop_back();
    nesting_.pop_back();
}

// `while (c) { }`: a loop of the whole block, like `serial`, so only inside the grid and not in a
// `parallel` loop; the condition's uniformity is checked with the kernel (Uniformity.cpp).
void KernelChecker::checkWhile(WhileStmt& s) {
    SourceRange keyword{s.range.begin, {s.range.begin.line, s.range.begin.col + 4}};
    checkValue(*s.cond);
    expectBoolConvertible(*s.cond);
    if (!inGrid_) diags_.report(DiagId::err_outside_grid, keyword, "a 'while' loop");
    else if (!parallel_.empty()) diags_.report(DiagId::err_tile_op_in_parallel, keyword, "'while'");
    else if (!s.cond->type.isError()) whiles_.push_back(&s);
    nesting_.push_back("a 'while' loop");
    controls_.push_back({{s.cond.get()}, s.cond->range, "a 'while' loop", true});
    checkBlock(*s.body);
    controls_.pop_back();
    nesting_.pop_back();
}

// A precondition of every launch: at the kernel's top, over what the launcher knows. One that
// folds to false could never launch; one that folds to true checks nothing (and is dropped).
void KernelChecker::checkRequire(RequireStmt& s) {
    SourceRange keyword{s.range.begin, {s.range.begin.line, s.range.begin.col + 6}};
    checkValue(*s.cond);
    if (!expectBoolConvertible(*s.cond)) return;
    if (inGrid_ || !nesting_.empty() || gridCount_ > 0) {
        diags_.report(DiagId::err_require_placement, keyword,
                      inGrid_ ? std::string("inside a grid") : gridCount_ > 0 && nesting_.empty() ? std::string("after a grid")
                                                                                                 : "in " + nesting_.back());
        return;
    }
    const char* why = nullptr;
    if (const Decl* d = notKnownAtLaunch(*s.cond, why)) {
        diags_.report(DiagId::err_require_not_at_launch, s.cond->range, d->name, why);
        diags_.note(d->range, fmt::format("'{}' declared here", d->name));
        return;
    }
    if (s.cond->constant)
        if (auto v = asDouble(*s.cond->constant); v && *v == 0) diags_.report(DiagId::err_require_never, s.cond->range);
}

void KernelChecker::checkGrid(GridStmt& g) {
    Call& launch = *g.launch;
    if (!nesting_.empty()) diags_.report(DiagId::err_grid_not_top_level, launch.calleeRange, nesting_.back());
    // Several grids run one after another (each a launch on the same stream), sharing the
    // kernel's parameters, host lets and global scratch.
    // Each grid becomes a kernel function and a launch of its own (and IR building walks the
    // host statements before each): a bound keeps hostile inputs from growing that quadratically.
    if (++gridCount_ == 1) firstGrid_ = &g;
    if (gridCount_ == kMaxGrids + 1) diags_.report(DiagId::err_too_many_grids, launch.calleeRange, kernel_.name, kMaxGrids);
    kernel_.grids.push_back(&g);
    gridThreads_.clear();
    gridThreadsPending_ = false;
    threadsMissingReported_ = false;
    checkCall(launch, CallSite::Launch);
    if (const Expr* threads = boundArg(launch, "threads"); threads && !threads->type.isError()) {
        // Given but not known yet: a count over `auto` parameters (the recommender binds them).
        gridThreadsPending_ = !threads->constant;
        if (const auto* list = threads->as<List>()) {
            for (const auto& el : list->elements)
                if (el->constant && asInt(*el->constant)) gridThreads_.push_back(*asInt(*el->constant));
            if (gridThreads_.size() != list->elements.size()) gridThreads_.clear();
        } else if (threads->constant && asInt(*threads->constant)) {
            gridThreads_.push_back(*asInt(*threads->constant));
        }
    }
    g.threadDims = gridThreads_;
    size_t dims = 0;
    for (const auto& a : launch.args) dims += a.keyword.empty() ? 1 : 0;
    dims = std::min<size_t>(dims, 3);
    if (!launch.type.isError() && g.vars.size() > dims)
        diags_.report(DiagId::err_grid_var_count, g.vars[dims].range, dims, dims == 1 ? "" : "s", g.vars.size());

    bool wasInGrid = inGrid_;
    inGrid_ = true;
    nesting_.push_back("the grid");
    {
        ScopeFrame frame(scope_, [this](const std::vector<Decl*>& decls) { reportUnused(decls); });
        for (auto& v : g.vars)
            v.decl = declare({Decl::Kind::GridVar, v.name, v.range, Type::scalar(DType::I32), std::nullopt, &g, false});
        checkBlock(*g.body);
    }
    nesting_.pop_back();
    inGrid_ = wasInGrid;
}

} // namespace tlc::sema
