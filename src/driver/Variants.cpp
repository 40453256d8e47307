#include "driver/Variants.h"

#include "ast/AST.h"
#include "irgen/IRGen.h"
#include "parser/Parser.h"
#include "recommend/Recommend.h"
#include "sema/Sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace tlc {

namespace {

std::string abbreviation(const std::string& name) {
    std::string out;
    bool start = true;
    for (char c : name) {
        if (c == '_') {
            start = true;
            continue;
        }
        if (start) out += char(std::tolower(static_cast<unsigned char>(c)));
        start = false;
    }
    return out.empty() ? name : out;
}

} // namespace

std::string variantName(const std::string& kernel, const std::vector<std::pair<std::string, int64_t>>& values) {
    std::set<std::string> seen;
    bool unique = true;
    for (const auto& [name, value] : values) unique = seen.insert(abbreviation(name)).second && unique;
    std::string out = kernel + "_";
    for (const auto& [name, value] : values) {
        std::string word = unique ? abbreviation(name) : name;
        std::transform(word.begin(), word.end(), word.begin(), [](char c) { return char(std::tolower(c)); });
        out += fmt::format("_{}{}", word, value);
    }
    return out;
}

bool compileVariants(const SourceFile& source, const std::string& kernel, int top, const Target& target,
                     const std::map<std::string, std::string>& defines, DiagnosticEngine& diags,
                     const PassOptions& passOptions, std::ostream& dumps, std::vector<ir::Kernel>& kernels,
                     std::vector<ExplainedKernel>& explained, VariantSet& set) {
    RecommendOptions ro;
    ro.target = &target;
    ro.defines = defines;
    ro.top = top;
    ro.kernel = kernel;
    std::string error;
    std::optional<Recommendation> r = recommend(source, ro, error);
    if (!r) return false;
    if (r->ranked.empty()) return false;
    set.name = kernel;
    for (const auto& [n, v] : r->shape) set.shape += fmt::format("{}{}={}", set.shape.empty() ? "" : ",", n, v);
    for (size_t rank = 0; rank < r->ranked.size(); ++rank) {
        const CandidateEstimate& c = r->ranked[rank];
        std::string name = variantName(kernel, c.values);
        // The first variant reports to the file's diagnostics (its warnings once); the others
        // compiled already in the recommender, and anything they report is a bug to surface.
        DiagnosticEngine scratch(source);
        DiagnosticEngine& d = rank == 0 ? diags : scratch;
        std::unique_ptr<ast::File> file = parseFile(source, d);
        if (!file) continue;
        auto& ks = file->kernels;
        auto it = std::find_if(ks.begin(), ks.end(), [&](const auto& k) { return k->name == kernel; });
        if (it == ks.end()) continue;
        auto keep = std::move(*it);
        ks.clear();
        ks.push_back(std::move(keep));
        ast::Kernel& k = *ks.front();
        DecisionLog log;
        std::string reason = fmt::format("variant {} of {} (--emit-variants): the recommender's rank {} for target "
                                         "'{}'{}: estimate {:.1f} us",
                                         rank, r->ranked.size(), rank + 1, target.name,
                                         set.shape.empty() ? "" : " at " + set.shape, c.timeUs);
        for (auto& tp : k.templateParams)
            for (const auto& [pname, value] : c.values)
                if (tp.name == pname && tp.isAuto) {
                    tp.isAuto = false;
                    tp.defaultValue = std::make_unique<ast::IntLit>(tp.range, value);
                    log.add({pname, std::to_string(value), "auto", reason, tp.range.begin});
                }
        k.name = name;
        SemaOptions sema;
        sema.target = &target;
        sema.defines = definesFor(k, defines);  // the file's other kernels are not compiled here
        std::optional<ir::Kernel> ir;
        if (checkFile(*file, d, sema)) ir = buildKernelIR(k, source, d);
        bool ok = ir.has_value();
        if (ok) {
            ir->decisions = log;
            inferThreads(*ir, target);
            ok = lowerKernel(*ir, target, d, passOptions, dumps);
            explained.push_back({ir->name, ir->decisions});
        }
        if (&d == &scratch)
            for (const auto& x : scratch.diagnostics())
                if (x.severity == Severity::Error)
                    diags.report(DiagId::err_not_lowerable, x.range, "variant '" + name + "'", x.message);
        if (!ok) continue;
        set.kernels.push_back(kernels.size());
        set.usPerWave.push_back(c.timeUs / double(std::max<int64_t>(c.waves, 1)));
        set.slots.push_back(int64_t(target.smCount) * std::max(c.blocksPerSM, 1));
        kernels.push_back(std::move(*ir));
    }
    return !set.kernels.empty();
}

} // namespace tlc
