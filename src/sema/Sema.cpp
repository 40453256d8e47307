#include "sema/Sema.h"

#include "sema/Checker.h"
#include "sema/Scope.h"

#include <fmt/format.h>

namespace tlc {

namespace {

// "kernel 'k' has compile-time parameters block, threads and sizes M, N": what a -D may name.
std::string namesOf(const ast::Kernel& k, std::vector<std::string>& all) {
    auto list = [](const std::vector<std::string>& names) {
        std::string out;
        for (size_t i = 0; i < names.size(); ++i)
            out += (i == 0 ? "" : ", ") + names[i];
        return out;
    };
    std::vector<std::string> params, sizes;
    for (const auto& tp : k.templateParams) params.push_back(tp.name);
    for (const ast::Decl* d : k.sizeParams) sizes.push_back(d->name);
    all.insert(all.end(), params.begin(), params.end());
    all.insert(all.end(), sizes.begin(), sizes.end());
    std::string out = "kernel '" + k.name + "' has ";
    if (params.empty() && sizes.empty()) return out + "no compile-time parameters or sizes";
    if (!params.empty()) out += fmt::format("compile-time parameter{} {}", params.size() == 1 ? "" : "s", list(params));
    if (!params.empty() && !sizes.empty()) out += " and ";
    if (!sizes.empty()) out += fmt::format("size{} {}", sizes.size() == 1 ? "" : "s", list(sizes));
    return out;
}

} // namespace

bool checkFile(ast::File& file, DiagnosticEngine& diags, const SemaOptions& options) {
    // -D errors have no place in the file: they are about the command line.
    sema::DefineTable defines;
    for (const auto& [name, text] : options.defines) {
        auto value = sema::parseDefineValue(text);
        if (!value) diags.reportCommandLine(DiagId::err_define_invalid_value, name, text);
        // An unparsable value is reported once, not again as naming nothing.
        defines.entries[name] = {text, value, !value.has_value()};
    }
    // An import's path goes into the output's #include as written.
    for (const auto& i : file.imports) {
        bool ok = !i.path.empty() && i.path.find_first_of("\"<>\n\\") == std::string::npos;
        if (!ok) diags.report(DiagId::err_import_path, i.range, i.path);
    }
    for (auto& kernel : file.kernels) {
        for (const auto& i : file.imports) kernel->imports.push_back(i.path);
        sema::KernelChecker(*kernel, diags, options, defines).run();
    }
    for (const auto& [name, entry] : defines.entries) {
        if (entry.used) continue;
        std::vector<std::string> known;
        std::vector<std::string> notes;
        for (const auto& kernel : file.kernels) notes.push_back(namesOf(*kernel, known));
        std::string best = sema::closestMatch(name, known);
        diags.reportCommandLine(DiagId::err_define_unknown, name,
                                best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best));
        for (auto& n : notes) diags.note({}, std::move(n));
    }
    return !diags.hasErrors();
}

} // namespace tlc
