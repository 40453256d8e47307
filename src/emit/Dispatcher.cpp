// --emit-variants: the dispatcher of a variant set. The variants are ordinary kernels with their
// own launchers (gemm__bm128_bn128); the dispatcher adds, under the source kernel's name:
//   NAME_variant_count        how many there are, best-ranked first
//   NAME_variant_name(v)      the name of variant v
//   NAME_pick(sizes)          which one NAME launches for these sizes
//   NAME_variant(v, args)     launches variant v (to pick by measuring)
//   NAME(args)                launches NAME_pick's choice
// The pick: each variant's grid in blocks, its waves (blocks over the blocks one wave of the
// device holds), times the recommender's time per wave; the fewest microseconds wins, ties go
// to the better ranked (docs/recommend.md).
#include "emit/CEmitter.h"

#include <fmt/format.h>

#include <cctype>

namespace tlc::codegen {

using namespace ir;

std::vector<std::string> CEmitter::dispatcherParams(const VariantSet& set, const std::vector<Kernel>& kernels,
                                                    bool withDefaults) {
    std::vector<std::string> params;
    for (const auto& p : signature(kernels[set.kernels.front()]).params) params.push_back(p.type + " " + p.name);
    if (!streamType().empty()) params.push_back(streamType() + (withDefaults ? " stream = nullptr" : " stream"));
    return params;
}

void CEmitter::emitDispatcherDeclaration(const VariantSet& set, const std::vector<Kernel>& kernels, CodeWriter& out) {
    const DispatcherNames& d = dispatcherNames_.at(set.name);
    const Kernel& first = kernels[set.kernels.front()];
    beginKernel(first);
    std::vector<std::string> sizes, sizeParams, variants;
    for (const auto& p : signature(first).params)
        if (p.param->kind == KernelParam::Kind::Size) {
            sizes.push_back(p.name);
            sizeParams.push_back(p.type + " " + p.name);
        }
    for (size_t i = 0; i < set.kernels.size(); ++i)
        variants.push_back(fmt::format("{} {}", i, signature(kernels[set.kernels[i]]).name));
    std::string doc = fmt::format(
        "{} ({}): {} variants of its 'auto' parameters (tlc --emit-variants), best first as the recommender ranks "
        "them{}: {}. {}({}) launches variant {}({}): the one whose grid takes the fewest waves of blocks times "
        "the model's time per wave; {}(v, ...) launches variant v, to pick by measuring.",
        set.name, first.loc.valid() ? where(first.loc) : sourceName(), set.kernels.size(),
        set.shape.empty() ? "" : " at " + set.shape, join(variants, ", "), d.launch, "...", d.pick,
        join(sizes, ", "), d.variant);
    for (const auto& l : wrapComment("// ", "//   ", doc)) out.line(commentText(l));
    out.line(fmt::format("constexpr int {} = {};", d.count, set.kernels.size()));
    out.line(fmt::format("const char* {}(int variant);", d.names));
    for (const auto& l : wrapCall("int " + d.pick + "(", sizeParams, ");", 0)) out.line(l);
    std::vector<std::string> params = dispatcherParams(set, kernels, true);
    std::vector<std::string> indexed = params;
    indexed.insert(indexed.begin(), "int variant");
    for (const auto& l : wrapCall(errorType() + " " + d.variant + "(", indexed, ");", 0, true)) out.line(l);
    for (const auto& l : wrapCall(errorType() + " " + d.launch + "(", params, ");", 0, true)) out.line(l);
    out.blank();
}

void CEmitter::emitDispatcher(const VariantSet& set, const std::vector<Kernel>& kernels, CodeWriter& out) {
    out_ = &out;
    const DispatcherNames& d = dispatcherNames_.at(set.name);
    const size_t n = set.kernels.size();
    const Kernel& first = kernels[set.kernels.front()];
    beginKernel(first);
    const LauncherSignature& sig = signature(first);
    std::string title = fmt::format("// ---- {}: dispatcher of {} variants ", set.name, n);
    if (title.size() < size_t(kLineWidth)) title += std::string(kLineWidth - title.size(), '-');
    line(title);

    // Names.
    std::vector<std::string> quoted;
    for (size_t i : set.kernels) quoted.push_back("\"" + signature(kernels[i]).name + "\"");
    line(fmt::format("const char* {}(int variant)", d.names));
    line("{");
    out.indent();
    for (const auto& l : wrapCall(fmt::format("static const char* const names[{}] = {{", n), quoted, "};", 4)) line(l);
    line(fmt::format("return variant >= 0 && variant < {} ? names[variant] : nullptr;", n));
    out.dedent();
    line("}");
    out.blank();

    // The pick: each variant's grid over its own size parameters, which share the names.
    startFunction();
    std::vector<std::string> sizeParams;
    for (const auto& p : sig.params)
        if (p.param->kind == KernelParam::Kind::Size) sizeParams.push_back(names_.declare(nullptr, p.name));
    std::vector<std::string> blocks, slots, perWave;
    for (size_t i : set.kernels) {
        const Kernel& k = kernels[i];
        names_.push();
        const LauncherSignature& ks = signature(k);
        for (const auto& p : ks.params) names_.declareExact(paramOwner(*p.param), p.name);
        std::vector<std::string> extents;
        for (const auto& g : k.gridExtents) extents.push_back("(long long)(" + expr(g) + ")");
        blocks.push_back(join(extents, " * "));
        names_.pop();
    }
    // A size no grid uses (K of a gemm) stays unnamed: -Wunused-parameter.
    std::string grids = join(blocks, " ");
    auto used = [&](const std::string& name) {
        for (size_t at = grids.find(name); at != std::string::npos; at = grids.find(name, at + 1)) {
            auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
            bool before = at > 0 && word(grids[at - 1]);
            bool after = at + name.size() < grids.size() && word(grids[at + name.size()]);
            if (!before && !after) return true;
        }
        return false;
    };
    std::vector<std::string> typed;
    size_t next = 0;
    for (const auto& p : sig.params)
        if (p.param->kind == KernelParam::Kind::Size) {
            const std::string& name = sizeParams[next++];
            typed.push_back(p.type + (used(name) ? " " + name : " /*" + name + "*/"));
        }
    for (const auto& l : wrapCall("int " + d.pick + "(", typed, ")", 0)) line(l);
    line("{");
    out.indent();
    for (size_t v = 0; v < n; ++v) {
        slots.push_back(std::to_string(set.slots[v]));
        perWave.push_back(fmt::format("{:.3f}", set.usPerWave[v]));
    }
    line("// Blocks of each variant's grid, blocks per wave of the device, the model's microseconds per wave.");
    for (const auto& l : wrapCall(fmt::format("const long long blocks[{}] = {{", n), blocks, "};", 4, true)) line(l);
    for (const auto& l : wrapCall(fmt::format("const long long slots[{}] = {{", n), slots, "};", 4)) line(l);
    for (const auto& l : wrapCall(fmt::format("const double us_per_wave[{}] = {{", n), perWave, "};", 4)) line(l);
    line("int best = 0;");
    line("double best_us = 0.0;");
    line(fmt::format("for (int v = 0; v < {}; ++v) {{", n));
    out.indent();
    line("const double us = double((blocks[v] + slots[v] - 1) / slots[v]) * us_per_wave[v];");
    line("if (v == 0 || us < best_us) {");
    out.indent();
    line("best = v;");
    line("best_us = us;");
    out.dedent();
    line("}");
    out.dedent();
    line("}");
    line("return best;");
    out.dedent();
    line("}");
    out.blank();

    // Launch by index, and the default launcher.
    std::vector<std::string> args, sizeArgs;
    for (const auto& p : sig.params) {
        args.push_back(p.name);
        if (p.param->kind == KernelParam::Kind::Size) sizeArgs.push_back(p.name);
    }
    if (!streamType().empty()) args.push_back("stream");
    std::vector<std::string> params = dispatcherParams(set, kernels, false);
    std::vector<std::string> indexed = params;
    indexed.insert(indexed.begin(), "int variant");
    for (const auto& l : wrapCall(errorType() + " " + d.variant + "(", indexed, ")", 0, true)) line(l);
    line("{");
    out.indent();
    line("switch (variant) {");
    for (size_t v = 0; v < n; ++v)
        for (const auto& l : wrapCall(fmt::format("case {}: return {}(", v, signature(kernels[set.kernels[v]]).name), args,
                                      ");", 4))
            line(l);
    line("default: return " + invalidValue() + ";  // no such variant");
    line("}");
    out.dedent();
    line("}");
    out.blank();
    for (const auto& l : wrapCall(errorType() + " " + d.launch + "(", params, ")", 0, true)) line(l);
    line("{");
    out.indent();
    std::vector<std::string> all = args;
    all.insert(all.begin(), d.pick + "(" + join(sizeArgs, ", ") + ")");
    for (const auto& l : wrapCall("return " + d.variant + "(", all, ");", 4)) line(l);
    out.dedent();
    line("}");
    out.blank();
    out_ = nullptr;
}

void CEmitter::emitDispatcherCTwinDeclaration(const VariantSet& set, const std::vector<Kernel>& kernels,
                                              CodeWriter& out) {
    emitCTwinDeclaration(kernels[set.kernels.front()], dispatcherNames_.at(set.name).cLaunch, out);
}

void CEmitter::emitDispatcherCTwinDefinition(const VariantSet& set, const std::vector<Kernel>& kernels,
                                             CodeWriter& out) {
    const DispatcherNames& d = dispatcherNames_.at(set.name);
    emitCTwinDefinition(kernels[set.kernels.front()], d.cLaunch, d.launch, out);
}

} // namespace tlc::codegen
