#include "sema/Sema.h"

#include "sema/Checker.h"

namespace tlc {

bool checkFile(ast::File& file, DiagnosticEngine& diags, const SemaOptions& options) {
    // -D errors have no place in the file; they are reported at its first character.
    const SourceRange fileStart{SourceLoc{1, 1}};
    sema::DefineTable defines;
    for (const auto& [name, text] : options.defines) {
        auto value = sema::parseDefineValue(text);
        if (!value) diags.report(DiagId::err_define_invalid_value, fileStart, name, text);
        // An unparsable value is reported once, not again as naming nothing.
        defines.entries[name] = {text, value, !value.has_value()};
    }
    for (auto& kernel : file.kernels) sema::KernelChecker(*kernel, diags, options, defines).run();
    for (const auto& [name, entry] : defines.entries)
        if (!entry.used) diags.report(DiagId::err_define_unknown, fileStart, name);
    return !diags.hasErrors();
}

} // namespace tlc
