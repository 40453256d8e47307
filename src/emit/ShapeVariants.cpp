// Shape variants (docs/lowering.md, "Shape variants"): a kernel whose fast path needs something of
// its arguments (whole vectors in every row, aligned pointers, TMA's rules) comes with a general
// variant that needs nothing (compile/Compile.cpp). The general variant's launcher is static and
// emitted first; the fast launcher tests the fast path's conditions after the checks both share
// (sizes, 32-bit offsets, preconditions) and calls the general one when they fail:
//
//   if (K % 8 != 0 || !tl::is_aligned(A, 16)) return gemm_general(A, B, C, M, K, N, stream);
//
// A group (several grids, global scratch) falls back as a whole: its launcher runs the general
// group when a grid's check-only call refuses (Group.cpp).
#include "emit/CEmitter.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

using namespace ir;

namespace {

BinaryOp negated(BinaryOp op) {
    switch (op) {
    case BinaryOp::Lt: return BinaryOp::Ge;
    case BinaryOp::Le: return BinaryOp::Gt;
    case BinaryOp::Gt: return BinaryOp::Le;
    case BinaryOp::Ge: return BinaryOp::Lt;
    case BinaryOp::Eq: return BinaryOp::Ne;
    case BinaryOp::Ne: return BinaryOp::Eq;
    default: return op;
    }
}

bool isConst(const LauncherParam& p) { return p.type.rfind("const ", 0) == 0; }

// Both launchers take what either writes as non-const (the fast one passes its pointers on).
void unionWrites(LauncherParam& a, LauncherParam& b) {
    if (a.param->kind != KernelParam::Kind::Tensor || isConst(a) == isConst(b)) return;
    LauncherParam& readOnly = isConst(a) ? a : b;
    const LauncherParam& written = isConst(a) ? b : a;
    readOnly.type = written.type;
    readOnly.cType = written.cType;
}

} // namespace

void CEmitter::prepareShapeVariants(const std::vector<Kernel>& kernels) {
    for (const Kernel& k : kernels) {
        if (k.generalVariant.empty() || (!k.group.empty() && k.part != 0)) continue;
        std::vector<const Kernel*> general;
        for (const Kernel& g : kernels)
            if (isGeneralVariantOf(g, k)) general.push_back(&g);
        if (general.empty()) throw EmitError("emit: the general variant '" + k.generalVariant + "' is missing");
        generalOf_[&k] = general;
        if (k.group.empty()) {
            std::vector<LauncherParam>& a = signatures_.at(&k).params;
            std::vector<LauncherParam>& b = signatures_.at(general.front()).params;
            if (a.size() != b.size()) throw EmitError("emit: '" + k.name + "' and its general variant differ in parameters");
            for (size_t i = 0; i < a.size(); ++i) unionWrites(a[i], b[i]);
        } else {
            for (auto& a : groupNames_.at(k.group).params)
                for (auto& b : groupNames_.at(k.generalVariant).params)
                    if (a.name == b.name) unionWrites(a, b);
        }
    }
}

std::vector<const Kernel*> CEmitter::generalParts(const Kernel& k) const {
    auto it = generalOf_.find(&k);
    return it == generalOf_.end() ? std::vector<const Kernel*>() : it->second;
}

std::string CEmitter::failingTest(const Expr& condition) {
    // "if (K % 8 != 0)" rather than "if (!(K % 8 == 0))" for integer comparisons.
    const Binary* b = condition.as<Binary>();
    if (b && negated(b->op) != b->op && isInteger(b->a.dtype()) && isInteger(b->b.dtype()))
        return expr(binary(negated(b->op), b->a, b->b));
    return "!" + print(condition, kPrecUnary + 1);
}

void CEmitter::emitFastPathChecks(const Kernel& k) {
    std::string fail = "return " + invalidValue() + ";";
    auto tensorName = [&](const LaunchCheck& c) {
        for (const auto& p : k.params)
            if (p.kind == KernelParam::Kind::Tensor && p.name == c.tensor && c.alignBytes > 0)
                return bufferName(p.buffer.get());
        throw EmitError("emit: an alignment check on an unknown tensor '" + c.tensor + "'");
    };
    std::vector<const Kernel*> general = k.group.empty() ? generalParts(k) : std::vector<const Kernel*>();
    if (general.empty()) {
        // The fast variant alone (--assume-aligned, or a group's grid): each condition refuses.
        // TMA's rules are the tensor maps' (the launcher returns their error).
        for (const auto& c : k.launchChecks) {
            std::string why = c.message.empty() ? "" : "  // " + commentText(c.message);
            if (c.condition) {
                line(fmt::format("if ({}) {}{}", failingTest(c.condition), fail, why));
                continue;
            }
            need("tl_common.h", "launch_checks");
            line(fmt::format("if (!tl::is_aligned({}, {})) {}{}", tensorName(c), c.alignBytes, fail,
                             why.empty() ? fmt::format("  // {} must be {}-byte aligned", c.tensor, c.alignBytes) : why));
        }
        return;
    }
    std::vector<std::string> tests;
    for (const auto& c : fastPathConditions(k)) {
        if (c.condition) {
            tests.push_back(print(c.condition, kPrecAnd + 1));
            continue;
        }
        need("tl_common.h", "launch_checks");
        tests.push_back(fmt::format("tl::is_aligned({}, {})", tensorName(c), c.alignBytes));
    }
    std::vector<std::string> args = argumentList(k);
    if (!streamType().empty()) args.push_back("stream");
    const LauncherSignature& g = signature(*general.front());
    std::string fast = names_.declare(nullptr, "fast_path");
    line(fmt::format("// What the fast path needs (the header says why); other rows and pointers run {}.", g.name));
    line(fmt::format("const bool {} = {};", fast, join(tests, " && ")));
    line(fmt::format("if (!{}) return {}({});", fast, g.name, join(args, ", ")));
}

std::string CEmitter::variantsDescription(const std::vector<const Kernel*>& fast) const {
    if (fast.empty()) return "";
    std::vector<const Kernel*> general = generalParts(*fast.front());
    std::vector<std::string> conditions;
    for (const Kernel* k : fast)
        for (const auto& c : fastPathConditions(*k))
            if (std::string d = describe(c); std::find(conditions.begin(), conditions.end(), d) == conditions.end())
                conditions.push_back(d);
    if (general.empty()) return "";
    std::vector<std::string> fastNames, generalNames;
    for (const Kernel* k : fast) fastNames.push_back(signature(*k).kernelName);
    for (const Kernel* k : general) generalNames.push_back(signature(*k).kernelName);
    std::string otherwise = general.size() == 1
                                ? fmt::format("{} ({})", generalNames.front(), launchDescription(*general.front()))
                                : fmt::format("the general variant's grids ({})", join(generalNames, ", "));
    return fmt::format("Shape variants: runs {} when {}; otherwise {}, the general variant, which assumes nothing of "
                       "the tensors' row lengths or alignment beyond their elements' (tlc --assume-aligned: the fast "
                       "variant alone, refusing the rest).",
                       join(fastNames, ", "), join(conditions, "; "), otherwise);
}

void CEmitter::emitGeneralTitle(const Kernel& k) {
    if (!k.generalShapes) return;
    std::string of;
    for (const auto& [fast, general] : generalOf_)
        if (std::find(general.begin(), general.end(), &k) != general.end())
            of = fast->group.empty() ? signature(*fast).name : fast->group;
    for (const auto& l : wrapComment("// ", "// ",
                                     fmt::format("The general variant of {}: its launcher runs this kernel for shapes "
                                                 "and pointers the fast path cannot take (global memory moved an "
                                                 "element at a time, no TMA).",
                                                 of)))
        line(commentText(l));
}

} // namespace tlc::codegen
