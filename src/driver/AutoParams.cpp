#include "driver/AutoParams.h"

#include "ast/AST.h"
#include "recommend/AutoRoles.h"
#include "recommend/Recommend.h"

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

std::optional<Recommendation> recommendFor(const Program& program, const ast::Kernel& kernel, int top,
                                           const Target& target, const Defines& defines, AutoSearch& search,
                                           std::string& error, bool& inputErrors,
                                           std::vector<std::string> searchWritten = {}) {
    RecommendOptions ro;
    ro.target = &target;
    ro.defines = defines;
    ro.shape = search.given;
    ro.shapeMayNameOtherKernels = true;  // --shape is for the whole file
    ro.top = top;
    ro.kernel = kernel.name;
    ro.measured = search.measured;
    ro.searchWritten = std::move(searchWritten);
    std::set<std::string> sizes = symbolicSizeNames(kernel);
    sizes.merge(integerScalarNames(kernel));
    for (const auto& [name, value] : search.given)
        if (sizes.count(name)) search.used.insert(name);
    return recommend(program, ro, error, &inputErrors);
}

} // namespace

KernelConfig autoConfig(const Program& program, const ast::Kernel& kernel, const Target& target,
                        const Defines& defines, AutoSearch& autoSearch, DiagnosticEngine& diags,
                        std::optional<Recommendation>* ranking, int top) {
    KernelConfig config{&kernel};
    if (!hasOpenAutoParams(kernel, defines)) return config;
    std::string error;
    bool inputErrors = false;
    std::optional<Recommendation> r =
        recommendFor(program, kernel, std::max(top, 1), target, defines, autoSearch, error, inputErrors);
    if (ranking) *ranking = r;
    if (!r) {
        // Errors in the kernel itself are the checker's to report, where they are.
        if (!inputErrors) diags.report(DiagId::note_auto_not_searched, kernel.nameRange, kernel.name, error);
        return config;
    }
    if (r->ranked.empty()) {
        diags.report(DiagId::note_auto_no_candidate, kernel.nameRange, kernel.name, r->tried, target.name,
                     r->firstRejection);
        return config;
    }
    std::string shape = sizesText(r->shape);
    const CandidateEstimate& best = r->ranked.front();
    config.autoValues = best.values;
    config.reason = fmt::format(
        "the recommender's best of {} configurations ({} lowered) for target '{}'{}: estimate {:.1f} us "
        "(compute {:.1f} us{}, memory {:.1f} us), {} bytes of shared memory, {} thread{}, {} block{} per SM, "
        "{} wave{} (see 'tlc recommend')",
        r->tried, r->compiled, target.name, shape.empty() ? std::string() : " at " + shape, best.timeUs,
        best.computeUs, best.elementUs > 0 ? fmt::format(" of which {:.1f} us element work", best.elementUs) : "",
        best.memoryUs, best.loweredSharedBytes, best.threads, best.threads == 1 ? "" : "s",
        best.blocksPerSM, best.blocksPerSM == 1 ? "" : "s", best.waves, best.waves == 1 ? "" : "s");
    if (r->measured)
        if (std::string measured = measuredText(*r->measured, best.values); !measured.empty())
            config.reason += "; " + measured;
    return config;
}

void noteWrittenSlower(const Program& program, const ast::Kernel& kernel, const Target& target, const Defines& defines,
                       AutoSearch& search, DiagnosticEngine& diags) {
    std::vector<std::string> tunable = tunableParams(kernel);
    std::erase_if(tunable, [&](const std::string& name) { return defines.count(name) > 0; });
    if (tunable.empty() || hasOpenAutoParams(kernel, defines)) return;
    std::string error;
    bool inputErrors = false;
    std::optional<Recommendation> r = recommendFor(program, kernel, 1, target, defines, search, error, inputErrors, tunable);
    if (!r || r->ranked.empty() || !r->written) return;
    const CandidateEstimate& best = r->ranked.front();
    const double ratio = r->written->timeUs / std::max(best.timeUs, 1e-9);
    if (ratio < kWrittenSlowerRatio) return;
    std::string names;
    for (const auto& [name, value] : r->written->values) names += (names.empty() ? "" : ", ") + name;
    diags.report(DiagId::note_written_slower, kernel.nameRange, kernel.name, names, fmt::format("{:.1f}", ratio),
                 configurationText(best.values), sizesText(r->shape), target.name,
                 fmt::format("{:.0f}", r->written->timeUs), fmt::format("{:.0f}", best.timeUs));
}

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

bool compileVariants(const Program& program, const ast::Kernel& kernel, int top, const CompileOptions& options,
                     AutoSearch& autoSearch, DiagnosticEngine& diags, std::vector<ir::Kernel>& kernels,
                     std::vector<ExplainedKernel>& explained, VariantSet& set, std::optional<Recommendation>* ranking) {
    std::string error;
    bool inputErrors = false;
    std::optional<Recommendation> r =
        recommendFor(program, kernel, top, *options.target, options.defines, autoSearch, error, inputErrors);
    if (ranking) *ranking = r;
    if (!r || r->ranked.empty()) return false;
    set.name = kernel.name;
    set.shape = sizesText(r->shape);
    CompileOptions variantOptions = options;
    variantOptions.defines = definesFor(kernel, options.defines);  // the file's other kernels are not compiled here
    variantOptions.oneLaunch = true;
    for (size_t rank = 0; rank < r->ranked.size(); ++rank) {
        const CandidateEstimate& c = r->ranked[rank];
        KernelConfig config{&kernel, c.values};
        config.rename = variantName(kernel.name, c.values);
        config.reason = fmt::format("variant {} of {} (--emit-variants): the recommender's rank {} for target "
                                    "'{}'{}: estimate {:.1f} us",
                                    rank, r->ranked.size(), rank + 1, options.target->name,
                                    set.shape.empty() ? "" : " at " + set.shape, c.timeUs);
        if (r->measured)
            if (std::string measured = measuredText(*r->measured, c.values); !measured.empty())
                config.reason += "; " + measured;
        // The first variant reports to the file's diagnostics (its warnings once); the others
        // compiled already in the recommender, and anything they report is a bug to surface.
        DiagnosticEngine scratch(program.source());
        DiagnosticEngine& d = rank == 0 ? diags : scratch;
        Compiled compiled = compile(program, {config}, variantOptions, d);
        explained.insert(explained.end(), compiled.explained.begin(), compiled.explained.end());
        if (&d == &scratch)
            for (const auto& x : scratch.diagnostics())
                if (x.severity == Severity::Error)
                    diags.report(DiagId::err_not_lowerable, x.range, "variant '" + config.rename + "'", x.message);
        if (compiled.kernels.empty()) continue;
        set.kernels.push_back(kernels.size());
        set.usPerWave.push_back(c.timeUs / double(std::max<int64_t>(c.waves, 1)));
        set.slots.push_back(int64_t(options.target->smCount) * std::max(c.blocksPerSM, 1));
        // The variant, then its general variant (shape variants) when it has one.
        for (ir::Kernel& k : compiled.kernels) kernels.push_back(std::move(k));
    }
    return !set.kernels.empty();
}

} // namespace tlc
