// Kernel-level checks: compile-time parameters and their -D overrides, tensor and scalar
// parameters, symbolic sizes, and the rules that need the whole kernel (one grid, shared
// memory within the target's limit).
#include "sema/Checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tlc::sema {

using namespace ast;

namespace {

// Converts a compile-time value to a parameter's annotated type, as -D and defaults need.
// Only conversions that lose nothing are implicit: int -> wider int or float, float -> float.
std::optional<ConstValue> convertParamValue(const ConstValue& v, DType to) {
    if (to == DType::Bool) {
        if (std::holds_alternative<bool>(v)) return v;
        return std::nullopt;
    }
    if (isFloat(to)) {
        if (auto* i = std::get_if<int64_t>(&v)) return ConstValue(double(*i));
        if (std::holds_alternative<double>(v)) return v;
        return std::nullopt;
    }
    if (auto* i = std::get_if<int64_t>(&v); i && fitsIn(*i, to)) return v;
    return std::nullopt;
}

std::string expectedValueText(const Type& t) {
    if (t.kind == Type::Kind::DTypeValue) return "a dtype name";
    if (t.dtype == DType::Bool) return "true or false";
    if (isFloat(t.dtype)) return "a number";
    return fmt::format("an integer that fits in {}", dtypeName(t.dtype));
}

} // namespace

void KernelChecker::run() {
    scope_.push();
    declareTemplateParams();
    declareParams();
    checkBlock(*kernel_.body);
    finishKernel();
    scope_.pop();  // parameters are never reported as unused: they are the kernel's interface
}

Decl* KernelChecker::declare(Decl d) {
    Decl* decl = kernel_.newDecl(std::move(d));
    if (parseDType(decl->name)) {
        diags_.report(DiagId::err_reserved_name, decl->range, decl->name, "a dtype");
        return decl;
    }
    if (decl->name == "inf") {
        diags_.report(DiagId::err_reserved_name, decl->range, decl->name, "a constant");
        return decl;
    }
    if (const Decl* previous = scope_.lookup(decl->name)) {
        diags_.report(DiagId::err_redefinition, decl->range, decl->name);
        diags_.note(previous->range, fmt::format("previous definition of '{}' is here", previous->name));
        return decl;
    }
    scope_.add(decl);
    return decl;
}

void KernelChecker::reportUnused(const std::vector<Decl*>& frame) {
    for (const Decl* d : frame) {
        if (d->used || d->name.empty() || d->name[0] == '_') continue;
        if (d->kind != Decl::Kind::Let && d->kind != Decl::Kind::Var) continue;
        if (d->type.isError()) continue;
        diags_.report(DiagId::warn_unused_variable, d->range, buffers_.count(d) ? "buffer" : "variable", d->name);
    }
}

std::optional<DType> KernelChecker::resolveDTypeName(const std::string& name, SourceRange range) {
    if (auto t = parseDType(name)) return t;
    if (Decl* d = scope_.lookup(name)) {
        d->used = true;
        if (d->type.kind == Type::Kind::DTypeValue && d->constant) return std::get<DType>(*d->constant);
        if (!d->type.isError()) {
            diags_.report(DiagId::err_expected_dtype, range, fmt::format("'{}' of type {}", name, d->type.str()));
            diags_.note(d->range, fmt::format("'{}' declared here", name));
        }
        return std::nullopt;
    }
    diags_.report(DiagId::err_unknown_dtype, range, name);
    std::vector<std::string> names;
    for (int i = 0; i <= int(DType::F8E5M2); ++i) names.emplace_back(dtypeName(DType(i)));
    if (auto best = closestMatch(name, names); !best.empty())
        diags_.note(range, fmt::format("did you mean '{}'?", best));
    return std::nullopt;
}

void KernelChecker::declareTemplateParams() {
    for (auto& tp : kernel_.templateParams) {
        Decl d{Decl::Kind::TemplateParam, tp.name, tp.range, Type::error(), std::nullopt, nullptr, false};
        std::optional<DType> annotated;
        bool annotatedDType = false;
        bool annotationOk = true;
        if (!tp.typeName.empty()) {
            if (tp.typeName == "dtype") annotatedDType = true;
            else if ((annotated = resolveDTypeName(tp.typeName, tp.typeRange)); !annotated) annotationOk = false;
        }
        if (tp.isAuto) {
            if (annotatedDType || (annotated && !isInteger(*annotated))) {
                diags_.report(DiagId::err_invalid_auto, tp.range, tp.name,
                              annotatedDType ? std::string("a dtype parameter")
                                             : fmt::format("of type {}", dtypeName(*annotated)));
            } else if (annotationOk) {
                d.type = Type::scalar(annotated.value_or(DType::I32));
            }
        } else {
            Type t = checkValue(*tp.defaultValue);
            const auto& value = tp.defaultValue->constant;
            std::string what = fmt::format("the default value of '{}'", tp.name);
            if (t.isError() || !annotationOk) {
                // reported
            } else if (t.kind == Type::Kind::DTypeValue) {
                if (annotated)
                    diags_.report(DiagId::err_invalid_conversion, tp.defaultValue->range, "a dtype",
                                  dtypeName(*annotated));
                else d.type = t, d.constant = value;
            } else if (t.isScalar()) {
                if (!value) {
                    diags_.report(DiagId::err_not_constant, tp.defaultValue->range, what);
                    explainNotConstant(*tp.defaultValue);
                } else if (annotatedDType) {
                    diags_.report(DiagId::err_expected_dtype, tp.defaultValue->range, t.str());
                } else if (annotated) {
                    if (auto converted = convertParamValue(*value, *annotated)) {
                        d.type = Type::scalar(*annotated);
                        d.constant = converted;
                    } else {
                        diags_.report(DiagId::err_invalid_conversion, tp.defaultValue->range,
                                      fmt::format("{} {}", dtypeName(t.dtype), toString(*value)),
                                      dtypeName(*annotated));
                    }
                } else {
                    d.type = t;
                    d.constant = value;
                }
            } else {
                diags_.report(DiagId::err_type_mismatch, tp.defaultValue->range,
                              "an integer, a number, a bool or a dtype", t.str());
            }
        }
        Decl* decl = declare(std::move(d));
        tp.decl = decl;
        applyDefine(tp, *decl);
        if (tp.isAuto && !decl->constant && !decl->type.isError()) compileTimeDecls_.insert(decl);
    }
}

void KernelChecker::applyDefine(TemplateParam& tp, Decl& decl) {
    DefineTable::Entry* entry = defines_.find(tp.name);
    if (!entry) return;
    entry->used = true;
    if (!entry->value || decl.type.isError()) return;
    const ConstValue& v = *entry->value;
    std::optional<ConstValue> converted;
    if (decl.type.kind == Type::Kind::DTypeValue) {
        if (std::holds_alternative<DType>(v)) converted = v;
    } else if (!std::holds_alternative<DType>(v)) {
        converted = convertParamValue(v, decl.type.dtype);
    }
    if (!converted) {
        diags_.report(DiagId::err_define_type_mismatch, tp.range, tp.name, entry->text, expectedValueText(decl.type));
        return;
    }
    decl.constant = converted;
}

void KernelChecker::declareParams() {
    std::set<std::string> paramNames;
    for (const auto& p : kernel_.params) paramNames.insert(p.name);
    for (auto& p : kernel_.params) {
        std::optional<DType> dtype = resolveDTypeName(p.type.dtype, p.type.dtypeRange);
        Decl d{Decl::Kind::ScalarParam, p.name, p.range, Type::error(), std::nullopt, nullptr, false};
        if (p.type.isTensor()) {
            d.kind = Decl::Kind::TensorParam;
            Shape shape;
            bool ok = dtype.has_value();
            for (auto& dim : p.type.dims) {
                checkTensorDim(*dim, paramNames);
                if (dim->type.isError()) {
                    ok = false;
                    continue;
                }
                if (!expectInteger(*dim, "a size")) {
                    ok = false;
                    continue;
                }
                if (dim->constant && *asInt(*dim->constant) <= 0) {
                    diags_.report(DiagId::err_nonpositive_extent, dim->range, "a tensor dimension",
                                  toString(*dim->constant));
                    ok = false;
                    continue;
                }
                shape.push_back(extentOf(*dim));
            }
            for (auto& stride : p.type.strides) {
                checkTensorDim(*stride, paramNames);
                if (!stride->type.isError() && !expectInteger(*stride, "a stride")) ok = false;
            }
            if (!p.type.strides.empty() && p.type.strides.size() != p.type.dims.size()) {
                diags_.report(DiagId::err_stride_count, p.range, p.name, p.type.dims.size(),
                              p.type.dims.size() == 1 ? "" : "s", p.type.strides.size(),
                              p.type.strides.size() == 1 ? "" : "s");
                ok = false;
            }
            if (ok) d.type = Type::tensor(MemScope::Global, *dtype, std::move(shape));
        } else if (dtype) {
            d.type = Type::scalar(*dtype);
        }
        p.decl = declare(std::move(d));
    }
}

// A tensor dimension or stride: names that are neither compile-time parameters nor sizes
// seen before become new symbolic sizes (i32 launcher arguments), unless -D fixes them.
void KernelChecker::checkTensorDim(Expr& dim, const std::set<std::string>& paramNames) {
    visitNames(dim, [&](const Name& n) {
        if (scope_.lookup(n.name) || parseDType(n.name) || n.name == "inf" || paramNames.count(n.name)) return;
        Decl d{Decl::Kind::SymbolicSize, n.name, n.range, Type::scalar(DType::I32), std::nullopt, nullptr, false};
        if (DefineTable::Entry* entry = defines_.find(n.name)) {
            entry->used = true;
            if (entry->value) {
                const int64_t* v = std::get_if<int64_t>(&*entry->value);
                if (v && *v > 0 && fitsIn(*v, DType::I32)) d.constant = *v;
                else diags_.report(DiagId::err_define_type_mismatch, n.range, n.name, entry->text, "a positive integer");
            }
        }
        Decl* decl = kernel_.newDecl(std::move(d));
        scope_.add(decl);
        if (!decl->constant) kernel_.sizeParams.push_back(decl);
    });
    dimParamNames_ = &paramNames;
    checkValue(dim);
    dimParamNames_ = nullptr;
}

void KernelChecker::finishKernel() {
    kernel_.grid = firstGrid_;
    finishAutoShapes();
    checkWhileConditions();
    checkThreadLevel();
    if (gridCount_ == 0) diags_.report(DiagId::err_no_grid, kernel_.nameRange, kernel_.name);

    // Shared memory is planned after lowering (plan-shared-memory): buffers never live at once
    // share bytes, pipelined loops add versions, the compiler adds scratch buffers, and that
    // plan is the one check of the total. What sema can tell early without ever refusing a
    // kernel the plan would fit: a buffer that alone exceeds the target's limit (every buffer
    // in use gets bytes of its own for its whole life).
    const Target* target = options_.target;
    if (!target) return;
    for (const auto& a : sharedAllocs_) {
        if (!a.bytes || !a.let->decl || !a.let->decl->used || *a.bytes <= target->sharedMemPerBlock) continue;
        diags_.report(DiagId::err_shared_memory_exceeded, a.let->nameRange, a.let->name, *a.bytes, target->name,
                      target->sharedMemPerBlock);
    }
}

} // namespace tlc::sema
