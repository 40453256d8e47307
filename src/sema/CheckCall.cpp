// Calls: binding arguments to a builtin's parameters (positional, keyword, defaults), the
// kind each parameter wants, where each builtin may appear, casts, and the result types of
// the scalar helpers.
#include "sema/Checker.h"
#include "support/Utf8.h"

#include <fmt/format.h>

#include <cctype>

namespace tlc::sema {

using namespace ast;

namespace {

std::string joinNames(std::span<const std::string_view> names) {
    std::string out;
    for (auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

// The memory an `alloc_<space>` name asks for, when its suffix names one ("" otherwise).
std::string_view allocSpaceOf(std::string_view name) {
    static constexpr std::string_view spaces[] = {"global", "shared", "fragment", "local", "var"};
    if (!name.starts_with("alloc_")) return {};
    name.remove_prefix(6);
    for (auto s : spaces)
        if (name == s) return s;
    return {};
}

int paramIndex(const BuiltinInfo& info, std::string_view name) {
    for (size_t i = 0; i < info.params.size(); ++i)
        if (info.params[i].name == name) return int(i);
    return -1;
}

} // namespace

Type KernelChecker::checkCall(Call& c, CallSite site) {
    const BuiltinInfo* info = findBuiltin(c.callee);
    if (!info) {
        if (auto dt = parseDType(c.callee)) return c.type = checkCast(c, *dt);
        if (Decl* d = scope_.lookup(c.callee); d && d->type.kind == Type::Kind::DTypeValue && d->constant) {
            d->used = true;
            return c.type = checkCast(c, std::get<DType>(*d->constant));
        }
        diags_.report(DiagId::err_unknown_function, c.calleeRange, c.callee);
        std::vector<std::string> names;
        for (const auto& b : allBuiltins()) names.emplace_back(b.name);
        std::string best = closestMatch(c.callee, names);
        // A misspelt allocation is never "corrected" to memory of another space.
        std::string_view space = allocSpaceOf(c.callee);
        if (!space.empty() && allocSpaceOf(best) != space) best.clear();
        if (std::string_view advice = spellingElsewhere(c.callee); !advice.empty())
            diags_.note(c.calleeRange, std::string(advice));
        else if (!best.empty())
            diags_.note(c.calleeRange, fmt::format("did you mean '{}'?", best));
        for (auto& a : c.args) checkValue(*a.value);
        return c.type = Type::error();
    }
    c.builtin = int(info->id);
    if (info->id == Builtin::CallExtern) return c.type = checkCallExtern(c);
    bool placed = checkSite(c, *info, site);
    bool bound = bindArgs(c, *info);
    bool argsOk = true;
    if (info->id == Builtin::Parallel) {
        for (const Expr* e : c.boundArgs) checkArg(c, *info, info->params[0], const_cast<Expr&>(*e));
    } else {
        for (size_t i = 0; i < c.boundArgs.size(); ++i)
            if (c.boundArgs[i]) checkArg(c, *info, info->params[i], const_cast<Expr&>(*c.boundArgs[i]));
    }
    for (const Expr* e : c.boundArgs) argsOk = argsOk && (!e || !e->type.isError());
    if (!placed || !bound) return c.type = Type::error();
    if (!argsOk) return c.type = Type::error();
    return c.type = builtinResult(c, *info, site);
}

// Where a builtin may appear: allocations only as `let` initialisers, tile operations only
// as statements inside the grid (not in a parallel loop), iterators only after `for ... in`.
bool KernelChecker::checkSite(Call& c, const BuiltinInfo& info, CallSite site) {
    std::string quoted = fmt::format("'{}'", c.callee);
    switch (info.kind) {
    case BuiltinKind::Alloc:
        if (site != CallSite::LetInit) {
            diags_.report(DiagId::err_alloc_not_bound, c.range, c.callee);
            return false;
        }
        break;
    case BuiltinKind::TileOp:
    case BuiltinKind::Debug:
        if (site != CallSite::Statement) {
            diags_.report(DiagId::err_void_value, c.range, c.callee);
            return false;
        }
        break;
    case BuiltinKind::LoopIter:
        if (site != CallSite::LoopIter) {
            diags_.report(DiagId::err_iterator_outside_for, c.calleeRange, c.callee);
            return false;
        }
        break;
    case BuiltinKind::Sync:
        if (site != CallSite::Statement) {
            diags_.report(DiagId::err_void_value, c.range, c.callee);
            return false;
        }
        break;
    case BuiltinKind::Grid:
    case BuiltinKind::IntHelper:
    case BuiltinKind::Math:
    case BuiltinKind::Bits:
    case BuiltinKind::ThreadPos:
    case BuiltinKind::Collective: break;
    }
    // Global scratch belongs to the whole kernel (every grid may use it, the launcher lays it
    // out in the caller's workspace): a statement of the kernel body, outside the grids.
    if (info.id == Builtin::AllocGlobal) {
        if (inGrid_ || !nesting_.empty()) {
            diags_.report(DiagId::err_alloc_global_placement, c.calleeRange,
                          !parallel_.empty() ? std::string("a 'parallel' loop") : nesting_.back());
            return false;
        }
        return true;
    }
    // A view is an alias the launcher knows too: it may be declared before the grid.
    bool threadLevel = info.kind == BuiltinKind::ThreadPos || info.kind == BuiltinKind::Collective ||
                       info.kind == BuiltinKind::Sync;
    bool needsGrid = (info.kind == BuiltinKind::Alloc && info.id != Builtin::View) ||
                     info.kind == BuiltinKind::TileOp || info.id == Builtin::Parallel || threadLevel;
    if (needsGrid && !inGrid_) {
        diags_.report(DiagId::err_outside_grid, c.calleeRange,
                      info.id == Builtin::Parallel ? std::string("a 'parallel' loop") : quoted);
        return false;
    }
    // atomic_add of a scalar is an element operation; checkAtomicAdd rejects a tile source there.
    // The thread's position means nothing in a `parallel` loop, whose iterations the compiler
    // spreads over the threads.
    const bool atomic = info.id == Builtin::AtomicAdd || info.id == Builtin::AtomicMax || info.id == Builtin::AtomicMin;
    bool forbiddenInParallel = info.kind == BuiltinKind::Alloc || (info.kind == BuiltinKind::TileOp && !atomic) ||
                               info.id == Builtin::Pipelined || (threadLevel && info.id != Builtin::WarpSize);
    if (forbiddenInParallel && !parallel_.empty()) {
        diags_.report(DiagId::err_tile_op_in_parallel, c.calleeRange, quoted);
        return false;
    }
    // What every thread of the block must reach (ThreadLevel.cpp checks the conditions around it).
    bool wholeBlock = (info.kind == BuiltinKind::TileOp && !atomic) ||
                      info.id == Builtin::Parallel || info.id == Builtin::Pipelined ||
                      info.kind == BuiltinKind::Collective || info.kind == BuiltinKind::Sync;
    if (wholeBlock && parallel_.empty()) noteSyncPoint(c.calleeRange, quoted);
    if (info.id == Builtin::AtomicAdd && parallel_.empty()) threadAtomics_.push_back({&c, controls_});
    return true;
}

bool KernelChecker::bindArgs(Call& c, const BuiltinInfo& info) {
    const bool isParallel = info.id == Builtin::Parallel;
    const size_t maxPositional = info.maxPositional > 0 ? size_t(info.maxPositional) : info.params.size();
    std::vector<const Expr*> bound(isParallel ? 0 : info.params.size(), nullptr);
    std::vector<SourceRange> boundAt(info.params.size());
    std::vector<bool> byPosition(info.params.size(), false);
    bool ok = true;
    bool seenKeyword = false;
    size_t positional = 0;
    size_t totalPositional = 0;
    for (const auto& a : c.args) totalPositional += a.keyword.empty() ? 1 : 0;

    for (auto& a : c.args) {
        if (a.keyword.empty()) {
            if (seenKeyword) {
                diags_.report(DiagId::err_positional_after_keyword, a.value->range);
                ok = false;
                continue;
            }
            if (positional >= maxPositional) {
                if (positional == maxPositional)
                    diags_.report(DiagId::err_too_many_args, a.value->range, c.callee, maxPositional,
                                  maxPositional == 1 ? "" : "s", totalPositional);
                ++positional;
                ok = false;
                continue;
            }
            if (isParallel) bound.push_back(a.value.get());
            else {
                bound[positional] = a.value.get();
                boundAt[positional] = a.value->range;
                byPosition[positional] = true;
            }
            ++positional;
            continue;
        }
        seenKeyword = true;
        // TileLang spells pipelined's `stages` as `num_stages`.
        std::string_view name = a.keyword;
        if (info.id == Builtin::Pipelined && name == "num_stages") name = "stages";
        // ... and clamp's bounds as `min_val` / `max_val`.
        if (info.id == Builtin::Clamp && name == "min_val") name = "lo";
        if (info.id == Builtin::Clamp && name == "max_val") name = "hi";
        int index = isParallel ? -1 : paramIndex(info, name);
        if (index < 0) {
            std::vector<std::string> names;
            if (!isParallel)
                for (const auto& p : info.params) names.emplace_back(p.name);
            if (info.id == Builtin::Pipelined) names.emplace_back("num_stages");
            std::string best = closestMatch(a.keyword, names);
            diags_.report(DiagId::err_unknown_keyword, a.keywordRange, c.callee, a.keyword,
                          best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best));
            ok = false;
            continue;
        }
        if (bound[index] && byPosition[index]) {
            // Say how the positional argument landed on this parameter: the author may have
            // meant another signature (pipelined(lo, hi, stages = 2)).
            std::string order;
            for (size_t i = 0; i < maxPositional && i < info.params.size(); ++i)
                order += (i ? ", " : "") + std::string(info.params[i].name);
            diags_.report(DiagId::err_duplicate_arg_positional, a.keywordRange, info.params[index].name, c.callee,
                          index + 1, order);
            diags_.note(boundAt[index], fmt::format("positional argument {} is '{}'", index + 1, info.params[index].name));
            ok = false;
            continue;
        }
        if (bound[index]) {
            diags_.report(DiagId::err_duplicate_arg, a.keywordRange, info.params[index].name, c.callee);
            diags_.note(boundAt[index], "the first value is here");
            ok = false;
            continue;
        }
        bound[index] = a.value.get();
        boundAt[index] = a.keywordRange;
    }

    // A missing argument after a misplaced one is a follow-on error: say nothing more.
    if (!ok) {
    } else if (isParallel) {
        if (bound.empty()) {
            diags_.report(DiagId::err_missing_arg, c.range, c.callee, info.params[0].name);
            ok = false;
        }
    } else {
        for (size_t i = 0; i < info.params.size(); ++i) {
            if (bound[i] || info.params[i].hasDefault) continue;
            diags_.report(DiagId::err_missing_arg, c.range, c.callee, info.params[i].name);
            ok = false;
        }
    }
    c.boundArgs = std::move(bound);
    return ok;
}

void KernelChecker::checkArg(Call& c, const BuiltinInfo& info, const BuiltinParam& p, Expr& arg) {
    std::string param = info.id == Builtin::Parallel ? "extent" : std::string(p.name);
    auto wrongKind = [&](std::string_view expected) {
        diags_.report(DiagId::err_arg_kind, arg.range, param, c.callee, expected, describe(arg));
        arg.type = Type::error();
    };
    auto dtypeAsValue = [&](std::string_view expected) {
        diags_.report(DiagId::err_dtype_used_as_value, arg.range, expected, toString(*arg.constant));
        arg.type = Type::error();
    };
    // `(64, 64)` where a shape or list goes (Python's tuple habit): said, then checked as the
    // list it means, so that one slip gives one error.
    if (auto* list = arg.as<List>(); list && list->parenthesized &&
        (p.kind == ParamKind::Shape || p.kind == ParamKind::GlobalShape || p.kind == ParamKind::IntList ||
         p.kind == ParamKind::Dims)) {
        std::string text = diags_.file().text(list->range);
        std::string bracketed = text.size() >= 2 ? "[" + text.substr(1, text.size() - 2) + "]" : text;
        diags_.report(DiagId::err_list_in_parentheses, list->range,
                      p.kind == ParamKind::IntList ? "a list" : "a shape", clipUtf8(bracketed, 48));
    }

    switch (p.kind) {
    case ParamKind::Tile:
    case ParamKind::TileOrScalar: {
        // Inside a parallel loop, `a[i, j]` as atomic_add's source is one element, not a region.
        bool element = p.kind == ParamKind::TileOrScalar && !parallel_.empty();
        Type t = element ? checkValue(arg) : checkOperand(arg);
        if (t.isError() || t.isTile() || (p.kind == ParamKind::TileOrScalar && t.isScalar())) return;
        wrongKind(p.kind == ParamKind::Tile ? "a tile (a tensor, a buffer or a region of one)"
                                            : "a tile or a scalar value");
        return;
    }
    case ParamKind::Buffer: {
        Type t = checkValue(arg);
        if (t.isError()) return;
        if (t.kind == Type::Kind::Tensor && t.scope != MemScope::Global && arg.kind == ExprKind::Name) return;
        wrongKind("an on-chip buffer");
        return;
    }
    case ParamKind::GlobalShape: {
        auto* list = arg.as<List>();
        if (!list) {
            Type t = checkValue(arg);
            if (!t.isError()) wrongKind("a shape such as [batch, heads, 64]");
            return;
        }
        arg.type = checkList(*list);
        bool ok = !list->elements.empty();
        if (!ok) wrongKind("a shape such as [batch, heads, 64]");
        Shape extents;
        for (auto& el : list->elements) {
            if (el->type.isError()) {
                ok = false;
                continue;
            }
            if (!expectInteger(*el, "a size")) {
                ok = false;
                continue;
            }
            // The header's NAME_workspace_size(sizes...) computes the bytes from the sizes
            // alone: an extent may use sizes, compile-time parameters and lets of those.
            std::set<const Decl*> deps;
            collectDeps(*el, deps);
            const Decl* bad = nullptr;
            for (const Decl* d : deps)
                if (d->kind != Decl::Kind::SymbolicSize && d->kind != Decl::Kind::TemplateParam &&
                    d->kind != Decl::Kind::Let && !bad)
                    bad = d;
            if (bad) {
                diags_.report(DiagId::err_alloc_global_extent, el->range, bad->name);
                ok = false;
                continue;
            }
            if (el->constant && *asInt(*el->constant) <= 0) {
                diags_.report(DiagId::err_nonpositive_extent, el->range, "a global scratch extent",
                              toString(*el->constant));
                ok = false;
                continue;
            }
            extents.push_back(extentOf(*el));
        }
        arg.type = ok ? Type::shapeType(std::move(extents)) : Type::error();
        return;
    }
    case ParamKind::Shape:
    case ParamKind::IntList: {
        bool shape = p.kind == ParamKind::Shape;
        if (shape && isAutoShapeArg(arg) && (info.id == Builtin::AllocShared || info.id == Builtin::AllocFragment)) {
            arg.type = Type::shapeType({});  // filled by the first copy (AutoShape.cpp)
            return;
        }
        auto* list = arg.as<List>();
        if (!list) {
            Type t = checkValue(arg);
            if (!t.isError()) wrongKind(shape ? "a shape such as [64, 64]" : "a list of integers such as [0, 1, 2]");
            return;
        }
        arg.type = checkList(*list);
        bool ok = !list->elements.empty() || !shape;
        if (!ok) wrongKind("a shape such as [64, 64]");
        Shape extents;
        for (auto& el : list->elements) {
            if (el->type.isError()) {
                ok = false;
                continue;
            }
            if (!expectInteger(*el, shape ? "a size" : "an integer")) {
                ok = false;
                continue;
            }
            ConstInt v = requireConstInt(*el, shape ? "a tile extent" : "a list element", shape);
            ok = ok && v.ok();
            extents.push_back(extentOf(*el));
        }
        arg.type = ok ? Type::shapeType(std::move(extents)) : Type::error();
        return;
    }
    case ParamKind::Dims: {
        // A view's extents: integer expressions the launcher can compute (checkView says which).
        auto* list = arg.as<List>();
        if (!list || list->elements.empty()) {
            if (!list && checkValue(arg).isError()) return;
            wrongKind("a shape such as [M * K, N]");
            return;
        }
        arg.type = checkList(*list);
        bool ok = true;
        for (auto& el : list->elements) {
            if (el->type.isError() || !expectInteger(*el, "a size")) {
                ok = false;
                continue;
            }
            if (el->constant && *asInt(*el->constant) <= 0) {
                diags_.report(DiagId::err_nonpositive_extent, el->range, "a view extent", toString(*el->constant));
                ok = false;
            }
        }
        if (!ok) arg.type = Type::error();
        return;
    }
    case ParamKind::DType: {
        if (auto* s = arg.as<StringLit>()) {
            auto dt = parseDType(s->value);
            diags_.report(DiagId::err_dtype_as_string, arg.range,
                          dt ? fmt::format("write {}", dtypeName(*dt)) : std::string("write one such as f32 or bf16"));
            arg.type = Type::error();
            return;
        }
        if (auto* n = arg.as<Name>(); n && !scope_.lookup(n->name) && !parseDType(n->name)) {
            resolveDTypeName(n->name, n->range);  // reports "unknown dtype" with a suggestion
            arg.type = Type::error();
            return;
        }
        Type t = checkValue(arg);
        if (t.isError() || t.kind == Type::Kind::DTypeValue) return;
        diags_.report(DiagId::err_expected_dtype, arg.range, describe(arg));
        arg.type = Type::error();
        return;
    }
    case ParamKind::ConstInt: {
        Type t = checkValue(arg);
        if (t.isError()) return;
        if (t.kind == Type::Kind::DTypeValue) return dtypeAsValue("an integer");
        if (!t.isScalar() || !isInteger(t.dtype)) return wrongKind("an integer");
        // Extents, thread counts and panel sizes must be positive; dims may not. A stage count
        // may be 0, TileLang's "no pipelining" (as 1 is); not below.
        // So may `unroll`: 0 is the compiler's choice.
        bool stages = info.id == Builtin::Pipelined && p.name == "stages";
        bool unroll = info.id == Builtin::Pipelined && p.name == "unroll";
        bool positive = p.name != "dim" && p.name != "pad" && !stages && !unroll;
        if ((stages || unroll) && arg.constant && asInt(*arg.constant) && *asInt(*arg.constant) < 0) {
            diags_.report(DiagId::err_arg_kind, arg.range, param, c.callee,
                          stages ? "0 or more (0 and 1 mean no pipelining)"
                                 : "0 or more (0: the compiler's choice, 1: one k-tile per wgmma group)",
                          *asInt(*arg.constant));
            arg.type = Type::error();
            return;
        }
        std::string what = info.id == Builtin::Parallel ? "an extent of 'parallel'"
                                                        : fmt::format("'{}' of '{}'", p.name, c.callee);
        if (!requireConstInt(arg, what, positive).ok()) {
            arg.type = Type::error();
            return;
        }
        // grid's `cluster`: blocks per thread-block cluster, a power of two up to 8 (CUDA's
        // portable limit; targets without clusters run 1, docs/language.md).
        if (info.id == Builtin::Grid && p.name == "cluster" && arg.constant && asInt(*arg.constant)) {
            const int64_t v = *asInt(*arg.constant);
            if (v > 8 || (v & (v - 1)) != 0) {
                diags_.report(DiagId::err_arg_kind, arg.range, param, c.callee, "1, 2, 4 or 8", v);
                arg.type = Type::error();
            }
        }
        return;
    }
    case ParamKind::Threads: checkThreadsArg(c, arg); return;
    case ParamKind::ConstBool: {
        Type t = checkValue(arg);
        if (t.isError()) return;
        // grid's `persistent` also takes 0 or 1, which an `auto` parameter can be (the
        // recommender chooses it, docs/recommend.md).
        const bool flag = info.id == Builtin::Grid && p.name == "persistent";
        if (flag && t.isScalar() && isInteger(t.dtype)) {
            // An `auto` parameter not bound yet: checked again with each candidate's value.
            if (!arg.constant && isCompileTime(arg)) return;
            if (arg.constant && asInt(*arg.constant) && (*asInt(*arg.constant) == 0 || *asInt(*arg.constant) == 1))
                return;
        }
        if (!t.isScalar() || t.dtype != DType::Bool) return wrongKind(flag ? "true or false (or 0 or 1)" : "true or false");
        if (!arg.constant) {
            diags_.report(DiagId::err_not_constant, arg.range, fmt::format("'{}' of '{}'", p.name, c.callee));
            explainNotConstant(arg);
            arg.type = Type::error();
        }
        return;
    }
    case ParamKind::Int: {
        Type t = checkValue(arg);
        if (t.isError()) return;
        if (t.kind == Type::Kind::DTypeValue) return dtypeAsValue("an integer");
        if (!t.isScalar() || !isInteger(t.dtype)) wrongKind("an integer");
        return;
    }
    case ParamKind::Scalar:
    case ParamKind::Bool: {
        Type t = checkValue(arg);
        if (t.isError()) return;
        if (t.kind == Type::Kind::DTypeValue) return dtypeAsValue("a value");
        if (!t.isScalar()) wrongKind(p.kind == ParamKind::Bool ? "a condition" : "a scalar value");
        return;
    }
    case ParamKind::String:
        if (arg.kind == ExprKind::StringLit) {
            arg.type = Type::string();
            return;
        }
        if (!checkValue(arg).isError()) wrongKind("a string");
        return;
    case ParamKind::Name: {
        auto allowed = allowedNames(info.id, p.name);
        auto* name = arg.as<Name>();
        if (!name) {
            if (!checkValue(arg).isError()) wrongKind(fmt::format("one of: {}", joinNames(allowed)));
            return;
        }
        // A word from a fixed vocabulary, not a reference: it has no declaration.
        arg.type = Type::string();
        for (auto word : allowed)
            if (word == name->name) return;
        diags_.report(DiagId::err_invalid_choice, arg.range, name->name, fmt::format("'{}' of '{}'", p.name, c.callee),
                      joinNames(allowed));
        arg.type = Type::error();
        return;
    }
    }
}

Type KernelChecker::checkCast(Call& c, DType to) {
    bool shapeOk = c.args.size() == 1 && c.args[0].keyword.empty();
    if (!shapeOk) {
        diags_.report(DiagId::err_cast_args, c.range, dtypeName(to));
        for (auto& a : c.args) checkValue(*a.value);
        return Type::error();
    }
    Expr& arg = *c.args[0].value;
    checkValue(arg);
    if (!expectScalar(arg, "a value")) return Type::error();
    if (arg.constant) {
        FoldResult r = foldCast(*arg.constant, to);
        reportFoldError(r, c);
        if (r.error) return Type::error();
        c.constant = r.value;
    }
    return Type::scalar(to);
}

const Expr* KernelChecker::boundArg(const Call& c, std::string_view param) const {
    if (c.builtin < 0) return nullptr;
    int i = paramIndex(builtinInfo(Builtin(c.builtin)), param);
    return i >= 0 && size_t(i) < c.boundArgs.size() ? c.boundArgs[i] : nullptr;
}

std::optional<bool> KernelChecker::constBoolArg(const Call& c, std::string_view param) const {
    if (const Expr* e = boundArg(c, param)) {
        if (e->constant)
            if (auto* b = std::get_if<bool>(&*e->constant)) return *b;
        return std::nullopt;
    }
    const auto& info = builtinInfo(Builtin(c.builtin));
    const auto& def = info.params[paramIndex(info, param)].defaultValue;
    if (def)
        if (auto* b = std::get_if<bool>(&*def)) return *b;
    return std::nullopt;
}

std::optional<int64_t> KernelChecker::constIntArg(const Call& c, std::string_view param) const {
    if (const Expr* e = boundArg(c, param)) return e->constant ? asInt(*e->constant) : std::nullopt;
    const auto& info = builtinInfo(Builtin(c.builtin));
    const auto& def = info.params[paramIndex(info, param)].defaultValue;
    return def ? asInt(*def) : std::nullopt;
}

// clamp(x, lo, hi) = min(max(x, lo), hi) (torch's order: hi wins when lo > hi), in the promoted
// type of the three; folds when all three are constant.
Type KernelChecker::clampResult(Call& c) {
    const Expr& x = *c.boundArgs[0];
    const Expr& lo = *c.boundArgs[1];
    const Expr& hi = *c.boundArgs[2];
    DType result = promote(promote(x.type.dtype, lo.type.dtype), hi.type.dtype);
    if (result == DType::Bool) result = DType::I32;
    if (x.constant && lo.constant && hi.constant) {
        FoldResult r = foldIntHelper(Builtin::Max, *x.constant, *lo.constant, result);
        if (!r.error && r.value) r = foldIntHelper(Builtin::Min, *r.value, *hi.constant, result);
        reportFoldError(r, c);
        if (r.error) return Type::error();
        c.constant = r.value;
    }
    return Type::scalar(result);
}

// reinterpret(dtype, value): the value's bits as another dtype of the same width.
Type KernelChecker::reinterpretResult(Call& c) {
    const Expr& dt = *c.boundArgs[0];
    const Expr& v = *c.boundArgs[1];
    DType to = std::get<DType>(*dt.constant), from = v.type.dtype;
    for (auto [t, e] : {std::pair{to, &dt}, std::pair{from, &v}}) {
        if (t == DType::Bool) {
            diags_.report(DiagId::err_reinterpret_dtype, e->range, "bool", "it has no bit layout of its own");
            return Type::error();
        }
        if (dtypeBits(t) < 8) {
            diags_.report(DiagId::err_reinterpret_dtype, e->range, dtypeName(t),
                          "4-bit values live packed two to a byte; reinterpret the byte (u8) that holds them");
            return Type::error();
        }
    }
    if (dtypeBits(to) != dtypeBits(from)) {
        diags_.report(DiagId::err_reinterpret_width, c.range, dtypeName(from), dtypeBits(from), dtypeName(to),
                      dtypeBits(to));
        return Type::error();
    }
    return Type::scalar(to);
}

// call_extern(dtype, "name", args...): a device function of an imported header (the author's
// responsibility), taking scalars and returning a `dtype`. Variadic, so bound here.
Type KernelChecker::checkCallExtern(Call& c) {
    bool ok = true;
    auto fail = [&](SourceRange where, std::string why) {
        diags_.report(DiagId::err_call_extern_form, where, std::move(why));
        ok = false;
    };
    if (!inGrid_) {
        diags_.report(DiagId::err_outside_grid, c.calleeRange, "'call_extern'");
        ok = false;
    }
    c.boundArgs.clear();
    for (auto& a : c.args) {
        if (!a.keyword.empty()) fail(a.keywordRange, "it takes no keyword arguments");
        c.boundArgs.push_back(a.value.get());
    }
    std::optional<DType> result;
    if (c.args.size() < 2) {
        fail(c.range, "found " + std::to_string(c.args.size()) + " argument" + (c.args.size() == 1 ? "" : "s"));
    } else {
        Expr& dt = *c.args[0].value;
        if (const auto* n = dt.as<Name>()) {
            result = parseDType(n->name);
            if (Decl* d = scope_.lookup(n->name); !result && d && d->type.kind == Type::Kind::DTypeValue && d->constant) {
                d->used = true;
                result = std::get<DType>(*d->constant);
            }
        }
        if (result) dt.type = Type::string();  // a word, not a value
        else fail(dt.range, "the first argument is not a dtype");
        const auto* name = c.args[1].value->as<StringLit>();
        bool identifier = name && !name->value.empty() && !std::isdigit(static_cast<unsigned char>(name->value[0]));
        for (char ch : name ? name->value : std::string())
            identifier = identifier && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ':');
        if (!identifier) fail(c.args[1].value->range, "the second argument is not a function name");
        else c.args[1].value->type = Type::string();
    }
    for (size_t i = 2; i < c.args.size(); ++i) {
        Type t = checkValue(*c.args[i].value);
        if (t.isError()) ok = false;
        else if (!t.isScalar()) fail(c.args[i].value->range, fmt::format("argument {} is {}", i + 1, describe(*c.args[i].value)));
    }
    if (!ok || !result) return Type::error();
    return Type::scalar(*result);
}

// dp4a(a, b, c): the four bytes of a times those of b, summed into c; three i32 (signed bytes)
// or three u32 (unsigned bytes), as CUDA's __dp4a.
Type KernelChecker::dp4aResult(Call& c) {
    DType first = c.boundArgs[0]->type.dtype;
    for (const Expr* e : c.boundArgs)
        if ((e->type.dtype != DType::I32 && e->type.dtype != DType::U32) || e->type.dtype != first) {
            diags_.report(DiagId::err_dp4a_operands, e->range, describe(*e));
            return Type::error();
        }
    return Type::scalar(first);
}

Type KernelChecker::builtinResult(Call& c, const BuiltinInfo& info, CallSite site) {
    const auto& args = c.boundArgs;
    switch (info.kind) {
    case BuiltinKind::Alloc: {
        if (info.id == Builtin::View) return checkView(c);
        DType dtype = std::get<DType>(*boundArg(c, "dtype")->constant);
        if (info.id == Builtin::AllocVar) return Type::scalar(dtype);
        MemScope scope = info.id == Builtin::AllocGlobal   ? MemScope::Global
                         : info.id == Builtin::AllocShared   ? MemScope::Shared
                         : info.id == Builtin::AllocFragment ? MemScope::Fragment
                                                             : MemScope::Local;
        return Type::tensor(scope, dtype, boundArg(c, "shape")->type.shape);
    }
    case BuiltinKind::TileOp: checkTileOp(c, info.id); return Type::voidType();
    case BuiltinKind::Debug: return Type::voidType();
    case BuiltinKind::LoopIter:
        if (info.id == Builtin::Range)
            if (const Expr* step = boundArg(c, "step"); step && step->constant && *asInt(*step->constant) == 0)
                diags_.report(DiagId::err_zero_step, step->range);
        return Type::voidType();
    case BuiltinKind::Grid: {
        for (const char* dim : {"x", "y", "z"})
            if (const Expr* e = boundArg(c, dim); e && e->constant && *asInt(*e->constant) <= 0)
                diags_.report(DiagId::err_nonpositive_extent, e->range, "a grid dimension", *asInt(*e->constant));
        const Expr* threads = boundArg(c, "threads");
        const Target* target = options_.target;
        if (threads && threads->constant && target && *asInt(*threads->constant) > target->maxThreadsPerBlock)
            diags_.report(DiagId::err_threads_exceed_target, threads->range, *asInt(*threads->constant),
                          target->maxThreadsPerBlock, target->name);
        return Type::voidType();
    }
    case BuiltinKind::IntHelper: {
        if (info.id == Builtin::Clamp) return clampResult(c);
        const Expr& a = *args[0];
        const Expr& b = *args[1];
        bool minMax = info.id == Builtin::Min || info.id == Builtin::Max;
        if (!minMax && (!isInteger(a.type.dtype) || !isInteger(b.type.dtype))) {
            const Expr& bad = isInteger(a.type.dtype) ? b : a;
            diags_.report(DiagId::err_arg_kind, bad.range, &bad == &a ? "a" : "b", c.callee, "an integer",
                          describe(bad));
            return Type::error();
        }
        DType result = promote(a.type.dtype, b.type.dtype);
        if (result == DType::Bool) result = DType::I32;
        if (a.constant && b.constant) {
            FoldResult r = foldIntHelper(info.id, *a.constant, *b.constant, result);
            reportFoldError(r, c);
            if (r.error) return Type::error();
            c.constant = r.value;
        }
        return Type::scalar(result);
    }
    case BuiltinKind::Bits: return info.id == Builtin::Dp4a ? dp4aResult(c) : reinterpretResult(c);
    case BuiltinKind::ThreadPos:
    case BuiltinKind::Collective:
    case BuiltinKind::Sync: return threadBuiltinResult(c, info);
    case BuiltinKind::Math: {
        DType result = args[0]->type.dtype;
        if (info.id == Builtin::Pow) result = promote(result, args[1]->type.dtype);
        bool keepsIntegers = info.id == Builtin::Abs && isInteger(result);
        if (!isFloat(result) && !keepsIntegers) result = DType::F32;
        return Type::scalar(result);
    }
    }
    (void)site;
    return Type::error();
}

} // namespace tlc::sema
