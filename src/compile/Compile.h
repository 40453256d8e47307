// The one compile path: select -> bind `auto` -> sema -> irgen -> lower. The driver, each
// variant of --emit-variants and each candidate of the recommender compile through compile();
// they differ only in the kernels they ask for, the values they bind and where they stop.
#pragma once

#include "compile/Defines.h"
#include "compile/Program.h"
#include "ir/Kernel.h"
#include "passes/Passes.h"
#include "support/DecisionLog.h"
#include "support/Diagnostics.h"
#include "target/Target.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tlc {

// One kernel of the program and the values it is compiled with.
struct KernelConfig {
    explicit KernelConfig(const ast::Kernel* k, std::vector<std::pair<std::string, int64_t>> values = {})
        : kernel(k), autoValues(std::move(values)) {}

    const ast::Kernel* kernel;  // in the program's syntax (names may repeat in bad input)
    // Values for its `auto` parameters (or others, for the recommender), bound as if the author
    // had written them; each `auto` one is logged with `reason` (--explain) unless it is empty.
    std::vector<std::pair<std::string, int64_t>> autoValues;
    std::string reason;
    std::string rename;  // the compiled kernel's name, when not its own (a variant's)
};

// How far a compile goes.
enum class CompileStage {
    Checked,  // sema only: the checked tree
    TileIR,   // the Tile IR of every launch, `threads` inferred
    Lowered,  // thread IR, ready to emit
};

struct CompileOptions {
    const Target* target = nullptr;  // null: sema only (then `stop` is Checked)
    Defines defines;
    CompileStage stop = CompileStage::Lowered;
    // The variant dispatcher's kernels are one launch: a kernel with several grids or global
    // scratch is reported (err_auto_multi_grid) instead of built. (The recommender ranks such a
    // kernel by the sum of its launches.)
    bool oneLaunch = false;
    PassOptions passes;
    std::ostream* dumps = nullptr;  // --print-after, --time-passes; null: discarded
    // Shape variants (docs/lowering.md): a kernel whose fast path needs something of its
    // arguments (row lengths, alignment: ir::fastPathConditions) is lowered a second time as its
    // general variant, NAME_general, which takes any shape; the fast launcher calls it when the
    // conditions fail. The driver asks for them unless --assume-aligned; the recommender, which
    // ranks the fast path, does not.
    bool generalVariants = false;
    bool assumeAligned = false;  // --assume-aligned: only logged (--explain says the launcher refuses)
    // Each lowered kernel keeps the Tile IR it came from (ir::Kernel::tileLevel): --report.
    bool keepTileIR = false;
};

struct Compiled {
    std::unique_ptr<ast::File> file;  // the configured kernels, checked (for --emit=ast)
    bool checked = false;             // sema passed
    // One per launch of each kernel that got as far as `stop`. A kernel of several launches
    // whose parts did not all lower has none (it would have no launcher). A kernel's general
    // variant (generalVariants) follows its fast one: its parts after the fast one's.
    std::vector<ir::Kernel> kernels;
    std::vector<ExplainedKernel> explained;  // the decision log of every kernel lowering ran on
};

// Compiles `configs` (kernels of `program`, in this order) as one file: checked together (a -D
// that names nothing in any of them is an error), each then built and lowered on its own.
// Reports to `diags`.
Compiled compile(const Program& program, const std::vector<KernelConfig>& configs, const CompileOptions& options,
                 DiagnosticEngine& diags);

// The first error `diags` holds, or "" (a candidate's rejection, in words).
std::string firstError(const DiagnosticEngine& diags);

// The -D values that concern `kernel` (a file's other kernels may take others): its
// compile-time parameters and the names among its tensor dimensions.
Defines definesFor(const ast::Kernel& kernel, const Defines& defines);

} // namespace tlc
