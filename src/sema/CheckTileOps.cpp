// The tile operations: shapes of operands (regions take their extents from the other
// operand, rank mismatches resolve by dropping unit dimensions), memory scopes, gemm's
// dimensions and dtypes, reduction dimensions, and what the target can do.
#include "layout/SharedLayoutName.h"
#include "sema/Checker.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::sema {

using namespace ast;

namespace {

Shape withoutUnitDims(const Shape& s) {
    Shape out;
    for (const Extent& e : s)
        if (!(e.isConstant() && *e.value == 1)) out.push_back(e);
    return out;
}

bool sameUpToUnitDims(const Shape& a, const Shape& b) { return withoutUnitDims(a) == withoutUnitDims(b); }

bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }

// Whether a target has matrix instructions for fp8 operands (the CPU emulates them).
bool hasFp8Mma(const Target& t) {
    switch (t.backend) {
    case Backend::Cuda: return t.has(Feature::MmaFp8) || t.has(Feature::Wgmma);
    case Backend::Hip: return t.has(Feature::MfmaFp8);
    default: return true;
    }
}

bool gemmSupported(DType a, DType b, DType c) {
    if (isFp8(a) && isFp8(b)) return c == DType::F32;
    if (a != b) return false;
    switch (a) {
    case DType::F16: return c == DType::F32 || c == DType::F16;
    case DType::BF16: return c == DType::F32;
    case DType::I8: return c == DType::I32;
    case DType::F32: return c == DType::F32;  // the SIMT fallback
    default: return false;
    }
}

// A gemm operand as a matrix: 2-D after dropping unit dimensions if it has more.
std::optional<Shape> asMatrix(const Shape& s) {
    if (s.size() == 2) return s;
    Shape squeezed = withoutUnitDims(s);
    if (squeezed.size() == 2) return squeezed;
    return std::nullopt;
}

} // namespace

void KernelChecker::checkTileOp(Call& c, Builtin id) {
    if (!resolveAutoShapes(c, id)) return;
    switch (id) {
    case Builtin::Copy:
        checkCopyLike(c, const_cast<Expr&>(*c.boundArgs[0]), const_cast<Expr&>(*c.boundArgs[1]));
        break;
    case Builtin::Gemm: checkGemm(c); break;
    case Builtin::Clear:
    case Builtin::Fill: checkFillClear(c); break;
    case Builtin::ReduceMax:
    case Builtin::ReduceMin:
    case Builtin::ReduceSum:
    case Builtin::ReduceAbsSum:
    case Builtin::ReduceAbsMax: checkReduce(c, id); break;
    case Builtin::Cumsum: checkCumsum(c); break;
    case Builtin::AtomicAdd: checkAtomicAdd(c); break;
    case Builtin::AtomicMax:
    case Builtin::AtomicMin: checkAtomicMinMax(c); break;
    case Builtin::AnnotateLayout: checkAnnotateLayout(c); break;
    case Builtin::Im2col: checkIm2col(c); break;
    default: break;  // use_swizzle: its arguments say everything
    }
}

std::optional<Shape> KernelChecker::knownShape(Expr& operand, std::string_view opName) {
    const Type& t = operand.type;
    if (t.kind == Type::Kind::Tensor || !t.extentsFromOtherOperand || !t.shape.empty()) return t.shape;
    diags_.report(DiagId::err_region_extent_unknown, operand.range, brief(operand),
                  fmt::format("'{}' has no other operand to take it from; give the extents with slices "
                              "such as 'X[i : i + 64, j : +32]'",
                              opName));
    return std::nullopt;
}

// TileLang's rule for `A[i, j]` as an operand: the region has the other operand's extents.
// When the ranks differ, unit dimensions make up the difference: a region of higher rank
// gets leading extents of 1; an operand of higher rank must have enough unit dimensions.
void KernelChecker::resolveRegionFrom(Expr& region, const Shape& other, Call& c, const Expr& otherExpr) {
    size_t rank = region.as<Index>()->subscripts.size();
    Shape out;
    if (other.size() <= rank) {
        out.assign(rank - other.size(), Extent::constant(1));
        out.insert(out.end(), other.begin(), other.end());
    } else {
        out = other;
        auto isUnit = [](const Extent& e) { return e.isConstant() && *e.value == 1; };
        while (out.size() > rank && isUnit(out.front())) out.erase(out.begin());
        for (auto it = out.begin(); out.size() > rank && it != out.end();) it = isUnit(*it) ? out.erase(it) : it + 1;
        if (out.size() > rank) {
            diags_.report(DiagId::err_tile_shape_mismatch, c.calleeRange, c.callee,
                          fmt::format("a rank-{} region of '{}'", rank, brief(*region.as<Index>()->base)),
                          fmt::format("{} ({})", shapeString(other), describe(otherExpr)));
            return;
        }
    }
    region.type.shape = std::move(out);
}

void KernelChecker::checkCopyLike(Call& c, Expr& src, Expr& dst) {
    const Type& s = src.type;
    const Type& d = dst.type;
    bool srcPoints = s.kind == Type::Kind::Region && s.extentsFromOtherOperand;
    bool dstPoints = d.kind == Type::Kind::Region && d.extentsFromOtherOperand;
    if (srcPoints && dstPoints) {
        diags_.report(DiagId::err_region_extent_unknown, src.range, brief(src),
                      fmt::format("both operands of '{}' are single points; give one of them slices", c.callee));
        return;
    }
    if (srcPoints) return resolveRegionFrom(src, d.shape, c, dst);
    if (dstPoints) return resolveRegionFrom(dst, s.shape, c, src);
    if (sameUpToUnitDims(s.shape, d.shape)) return;
    if (autoShapeConflict(c, src, dst)) return;
    if (c.builtin == int(Builtin::Copy) && overlapCopy(c, src, dst)) return;
    diags_.report(DiagId::err_tile_shape_mismatch, c.calleeRange, c.callee,
                  fmt::format("{} ({})", shapeString(s.shape), describe(src)),
                  fmt::format("{} ({})", shapeString(d.shape), describe(dst)));
    noteDeclared(src);
    noteDeclared(dst);
}

// TileLang copies the overlap of a region and a larger buffer: the region's extents (explicit,
// from slices) each at most the buffer's, dimension by dimension (when the ranks differ, the
// dimensions other than 1 in order); the copy moves the region to or from the buffer's leading
// corner and leaves the rest of the buffer untouched. The buffer is a whole shared buffer or
// fragment (not both sides fragments: their layouts must then be one).
bool KernelChecker::overlapCopy(Call& c, Expr& src, Expr& dst) {
    bool srcWhole = src.type.kind == Type::Kind::Tensor, dstWhole = dst.type.kind == Type::Kind::Tensor;
    if (srcWhole == dstWhole) return false;
    Expr& whole = srcWhole ? src : dst;
    Expr& part = srcWhole ? dst : src;
    if (part.type.extentsFromOtherOperand) return false;
    if (whole.type.scope != MemScope::Shared && whole.type.scope != MemScope::Fragment) return false;
    if (whole.type.scope == MemScope::Fragment && part.type.scope == MemScope::Fragment) return false;
    Shape b = whole.type.shape, r = part.type.shape;
    if (b.size() != r.size()) {
        b = withoutUnitDims(b);
        r = withoutUnitDims(r);
        if (b.size() != r.size()) return false;
    }
    for (size_t d = 0; d < r.size(); ++d) {
        if (r[d] == b[d]) continue;
        if (!r[d].isConstant() || !b[d].isConstant()) return false;  // symbolic: the mismatch error
        if (*r[d].value > *b[d].value) {
            diags_.report(DiagId::err_copy_region_larger, part.range, brief(part),
                          fmt::format("{} {}", describe(whole), shapeString(whole.type.shape)), d, *r[d].value,
                          *b[d].value);
            noteDeclared(whole);
            return true;
        }
    }
    return true;
}

bool KernelChecker::requireScope(Expr& operand, std::string_view role, std::string_view opName,
                                 std::initializer_list<MemScope> allowed, std::string_view expected) {
    if (std::find(allowed.begin(), allowed.end(), operand.type.scope) != allowed.end()) return true;
    diags_.report(DiagId::err_operand_scope, operand.range, role, opName, expected, describe(operand));
    noteDeclared(operand);
    return false;
}

void KernelChecker::checkGemm(Call& c) {
    Expr& a = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& b = const_cast<Expr&>(*c.boundArgs[1]);
    Expr& acc = const_cast<Expr&>(*c.boundArgs[2]);
    auto sa = knownShape(a, "gemm");
    auto sb = knownShape(b, "gemm");
    auto sc = knownShape(acc, "gemm");
    if (!sa || !sb || !sc) return;
    bool ok = requireScope(a, "operand A", "gemm", {MemScope::Shared, MemScope::Fragment},
                           "in shared memory or a fragment");
    ok = requireScope(b, "operand B", "gemm", {MemScope::Shared, MemScope::Fragment},
                      "in shared memory or a fragment") && ok;
    if (acc.type.scope != MemScope::Fragment) {
        diags_.report(DiagId::err_gemm_accumulator_not_fragment, acc.range, describe(acc));
        noteDeclared(acc);
        ok = false;
    }
    struct Operand { const char* name; Expr* expr; const Shape* shape; };
    std::optional<Shape> matrices[3];
    Operand operands[3] = {{"A", &a, &*sa}, {"B", &b, &*sb}, {"C", &acc, &*sc}};
    for (int i = 0; i < 3; ++i) {
        matrices[i] = asMatrix(*operands[i].shape);
        if (!matrices[i]) {
            diags_.report(DiagId::err_gemm_rank, operands[i].expr->range, operands[i].name,
                          fmt::format("{} ({})", shapeString(*operands[i].shape), describe(*operands[i].expr)));
            ok = false;
        }
    }
    if (!ok) return;
    bool transA = constBoolArg(c, "transpose_A").value_or(false);
    bool transB = constBoolArg(c, "transpose_B").value_or(false);
    const Shape& ma = *matrices[0];
    const Shape& mb = *matrices[1];
    Extent m = transA ? ma[1] : ma[0], ka = transA ? ma[0] : ma[1];
    Extent kb = transB ? mb[1] : mb[0], n = transB ? mb[0] : mb[1];
    if (!(ka == kb)) {
        diags_.report(DiagId::err_gemm_inner_dim_mismatch, c.calleeRange, ka.str(), kb.str());
        noteDeclared(a);
        noteDeclared(b);
        return;
    }
    Shape product = {m, n};
    if (!(*matrices[2] == product)) {
        diags_.report(DiagId::err_gemm_shape_mismatch, acc.range, shapeString(*matrices[2]), shapeString(product));
        noteDeclared(acc);
        return;
    }
    DType da = a.type.dtype, db = b.type.dtype, dc = acc.type.dtype;
    if (!gemmSupported(da, db, dc)) {
        diags_.report(DiagId::err_gemm_dtype_unsupported, c.calleeRange, dtypeName(da), dtypeName(db), dtypeName(dc));
        return;
    }
    const Target* target = options_.target;
    if (target && isFp8(da) && !hasFp8Mma(*target)) {
        // The way out: the targets of the same backend that have the instructions.
        std::string others;
        for (const Target& t : allTargets())
            if (t.backend == target->backend && hasFp8Mma(t)) others += (others.empty() ? "" : " or ") + t.name;
        diags_.report(DiagId::err_gemm_fp8_target, c.calleeRange, target->name, others.empty() ? "another target" : others);
    }
}

// The source and destination of a reduction or scan: both on chip, both of known shape.
bool KernelChecker::onChipSourceAndDestination(Call& c, Expr& src, Expr& dst, std::optional<Shape>& ss,
                                               std::optional<Shape>& ds) {
    ss = knownShape(src, c.callee);
    ds = knownShape(dst, c.callee);
    if (!ss || !ds) return false;
    const std::initializer_list<MemScope> onChip = {MemScope::Fragment, MemScope::Shared};
    bool ok = requireScope(src, "the source", c.callee, onChip, "a fragment or shared buffer");
    return requireScope(dst, "the destination", c.callee, onChip, "a fragment or shared buffer") && ok;
}

void KernelChecker::checkReduce(Call& c, Builtin id) {
    Expr& src = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& dst = const_cast<Expr&>(*c.boundArgs[1]);
    std::optional<Shape> ss, ds;
    if (!onChipSourceAndDestination(c, src, dst, ss, ds)) return;
    auto dim = constIntArg(c, "dim");
    if (!dim) return;  // deferred to an `auto` parameter
    int64_t rank = int64_t(ss->size());
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    if (d < 0 || d >= rank) {
        const Expr* dimArg = boundArg(c, "dim");
        diags_.report(DiagId::err_reduce_dim_out_of_range, dimArg ? dimArg->range : c.range, *dim,
                      brief(src), rank);
        return;
    }
    Shape expected = *ss;
    expected.erase(expected.begin() + d);
    if (expected.empty()) expected.push_back(Extent::constant(1));
    if (!sameUpToUnitDims(expected, *ds)) {
        diags_.report(DiagId::err_reduce_shape_mismatch, dst.range, c.callee, shapeString(*ds), shapeString(expected), d);
        noteDeclared(dst);
    }
    (void)id;
}

void KernelChecker::checkCumsum(Call& c) {
    Expr& src = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& dst = const_cast<Expr&>(*c.boundArgs[1]);
    std::optional<Shape> ss, ds;
    if (!onChipSourceAndDestination(c, src, dst, ss, ds)) return;
    if (auto dim = constIntArg(c, "dim")) {
        int64_t rank = int64_t(ss->size());
        if (*dim < -rank || *dim >= rank) {
            const Expr* dimArg = boundArg(c, "dim");
            diags_.report(DiagId::err_reduce_dim_out_of_range, dimArg ? dimArg->range : c.range, *dim,
                          brief(src), rank);
            return;
        }
    }
    if (!sameUpToUnitDims(*ss, *ds))
        diags_.report(DiagId::err_tile_shape_mismatch, c.calleeRange, c.callee,
                      fmt::format("{} ({})", shapeString(*ss), describe(src)),
                      fmt::format("{} ({})", shapeString(*ds), describe(dst)));
}

void KernelChecker::checkAtomicAdd(Call& c) {
    Expr& dst = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& src = const_cast<Expr&>(*c.boundArgs[1]);
    if (!requireScope(dst, "the destination", c.callee, {MemScope::Global, MemScope::Shared},
                      "a global tensor or a shared buffer"))
        return;
    if (dst.type.dtype == DType::I4 || dst.type.dtype == DType::U4) {
        diags_.report(DiagId::err_atomic_add_dtype, dst.range, describe(dst), dtypeName(dst.type.dtype));
        noteDeclared(dst);
        return;
    }
    if (src.type.isScalar()) {
        // A scalar adds into one element: a point region has extent 1 everywhere.
        if (dst.type.kind == Type::Kind::Region && dst.type.extentsFromOtherOperand)
            dst.type.shape.assign(dst.as<Index>()->subscripts.size(), Extent::constant(1));
        return;
    }
    if (!parallel_.empty()) {
        diags_.report(DiagId::err_tile_op_in_parallel, c.calleeRange, "'atomic_add' of a tile (not a scalar)");
        return;
    }
    checkCopyLike(c, src, dst);
}

// atomic_max/atomic_min(T[i, j], value): one element of a global tensor or shared buffer of
// 32- or 64-bit integers or floats. Each thread that reaches it updates the element (doing it
// once or in every thread is the same for a maximum).
void KernelChecker::checkAtomicMinMax(Call& c) {
    Expr& dst = const_cast<Expr&>(*c.boundArgs[0]);
    if (!requireScope(dst, "the destination", c.callee, {MemScope::Global, MemScope::Shared},
                      "a global tensor or a shared buffer"))
        return;
    const auto* point = dst.as<Index>();
    bool isPoint = point != nullptr;
    for (size_t i = 0; point && i < point->subscripts.size(); ++i)
        isPoint = isPoint && point->subscripts[i].form == Subscript::Form::Point;
    DType t = dst.type.dtype;
    bool wide = t == DType::I32 || t == DType::U32 || t == DType::I64 || t == DType::U64 || t == DType::F32 ||
                t == DType::F64;
    if (!isPoint || !wide) {
        diags_.report(DiagId::err_atomic_minmax, dst.range, c.callee, describe(dst));
        noteDeclared(dst);
        return;
    }
    if (dst.type.kind == Type::Kind::Region && dst.type.extentsFromOtherOperand)
        dst.type.shape.assign(point->subscripts.size(), Extent::constant(1));
}

void KernelChecker::checkFillClear(Call& c) {
    Expr& buffer = const_cast<Expr&>(*c.boundArgs[0]);
    knownShape(buffer, c.callee);
}

// annotate_layout(buf, name): shared buffers only, and the layout must fit the rows.
void KernelChecker::checkAnnotateLayout(Call& c) {
    const Expr& buffer = *c.boundArgs[0];
    const auto* name = c.boundArgs[1]->as<Name>();
    if (buffer.type.kind != Type::Kind::Tensor || !name) return;
    if (buffer.type.scope != MemScope::Shared) {
        diags_.report(DiagId::err_layout_annotation_scope, buffer.range, describe(buffer));
        return;
    }
    auto layout = layout::parseSharedLayout(name->name);
    const Shape& shape = buffer.type.shape;
    if (!layout || shape.empty() || !shape.back().isConstant()) return;
    int64_t elemBytes = dtypeBytes(buffer.type.dtype);
    if (auto misfit = layout::sharedLayoutMisfit(*layout, *shape.back().value, elemBytes))
        diags_.report(DiagId::err_layout_annotation_misfit, c.boundArgs[1]->range, name->name, describe(buffer), *misfit);
}

// im2col(img, col, ...): img a whole NHWC global tensor, col a 2-D shared tile.
void KernelChecker::checkIm2col(Call& c) {
    Expr& img = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& col = const_cast<Expr&>(*c.boundArgs[1]);
    if (img.type.kind != Type::Kind::Tensor || img.type.scope != MemScope::Global || img.type.rank() != 4) {
        diags_.report(DiagId::err_arg_kind, img.range, "img", c.callee, "a whole global tensor [N, H, W, C]",
                      img.type.kind == Type::Kind::Tensor ? fmt::format("{} of rank {}", describe(img), img.type.rank())
                                                          : describe(img));
        noteDeclared(img);
        return;
    }
    auto shape = knownShape(col, c.callee);
    if (!shape || !requireScope(col, "the destination", c.callee, {MemScope::Shared}, "a shared buffer")) return;
    if (!asMatrix(*shape)) {  // as gemm's operands: [1, block_K] is a tile of one row
        diags_.report(DiagId::err_arg_kind, col.range, "col", c.callee, "a 2-D tile [block_M, block_K]",
                      fmt::format("{} ({})", shapeString(*shape), describe(col)));
        noteDeclared(col);
    }
}

} // namespace tlc::sema
