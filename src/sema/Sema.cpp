#include "sema/Sema.h"

namespace tlc {

bool checkFile(ast::File& file, DiagnosticEngine& diags, const SemaOptions& options) {
    return !diags.hasErrors();
}

} // namespace tlc
