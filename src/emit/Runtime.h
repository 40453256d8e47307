// The runtime helpers that emitted code may use. They live as real headers in
// src/emit/runtime/ (tl_common.h, tl_types.h, and by backend and concern tl_cuda*.h, tl_hip*.h,
// tl_gpu*.h, tl_cpu*.h; src/emit/README.md has the map), are embedded into tlc at build time,
// and are split into named sections ("// tlc:section NAME needs=A,B" ... "// tlc:end"). An
// emitter records which sections its output uses; render() pastes exactly those, after what
// they need, each inside an include guard so that a header and its source may both carry a
// section. A section's `#include`s come first in it (alone or in `#if` groups); they are listed
// apart, for the output file to place with its own includes before any code. Where CUDA and HIP
// spell a call differently, the call is a row of tl_gpu_spelling.h's table (spell()).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tlc::codegen {

struct RuntimeSection {
    std::string file;                // "tl_cuda.h"
    std::string name;                // "vector_moves"
    std::vector<std::string> needs;  // qualified: "tl_common.h:host_device"
    std::vector<std::string> includes;  // "#include <cstdint>", or an "#if ...\n#include ...\n#endif" group
    std::string text;                   // the other lines between the markers
    std::string id() const { return file + ":" + name; }
};

// Every embedded header, in file-name order, and its sections in file order.
const std::vector<std::pair<std::string, std::string>>& runtimeFiles();
const std::vector<RuntimeSection>& runtimeSections();
const RuntimeSection* findRuntimeSection(std::string_view file, std::string_view name);
// A backend's section by name alone: among the files named PREFIX.h or PREFIX_*.h for one of
// `prefixes` (CUDA: tl_cuda, tl_gpu), where section names are unique; nullptr when none has it.
const RuntimeSection* findBackendSection(const std::vector<std::string>& prefixes, std::string_view name);

// A row of tl_gpu_spelling.h (`#define TL_NAME(parameters) TL_SPELL(cuda, hip)`) in the spelling
// of one column ("cuda", "hip"), with the parameters replaced by `args`.
std::string spell(std::string_view column, std::string_view row, const std::vector<std::string>& args);
// The calls of rows in `text` (`TL_SHFL_XOR(v, offset, Width)`) in the spelling of `column`.
std::string spellCalls(const std::string& text, std::string_view column);

// The GPU instruction helpers of tl_cuda*.h / tl_hip*.h that lowering calls by name (`tl::NAME`),
// matched by name prefix: the section that defines them, whether they take registers through
// the address of a register array's element (whole 32-bit words, up to 16 bytes: the array is
// declared 16-byte aligned), and how many leading arguments are template arguments (immediate
// operands: a count, an instruction width, transpose flags).
struct InstructionHelper {
    const char* prefix;
    const char* section;
    bool addressesRegisters;
    int templateArgs;
    bool storesThroughMap = false;  // its first argument is a tensor map whose tensor it writes
};
const InstructionHelper* findInstructionHelper(std::string_view name);

// A file's include lines: its own, then the runtime sections', one line per header (an `#if` group
// of one include joins the conditions of the others of its header; an unconditional one drops them).
std::string includeLines(const std::vector<std::string>& own, const std::vector<std::string>& runtime);

// The set of sections one output file uses.
class RuntimeNeeds {
public:
    // spelling: the column of tl_gpu_spelling.h that the sections' calls of its rows take
    // ("cuda", "hip"); none for a backend whose sections call none.
    explicit RuntimeNeeds(std::string spelling = {}) : spelling_(std::move(spelling)) {}
    const std::string& spelling() const { return spelling_; }
    void add(std::string_view file, std::string_view section);
    bool empty() const { return ids_.empty(); }
    bool has(std::string_view file, std::string_view section) const;
    // The sections and what they need (depth first, dependencies first, in a fixed order), each
    // wrapped in `#ifndef TLC_RUNTIME_<FILE>_<SECTION>`.
    // Sections that `already` renders (with what they need) are left out: a source skips what
    // its header carries.
    std::string render(const RuntimeNeeds* already = nullptr) const;
    // The includes of the sections that render() pastes, in that order, each once. They go
    // above all code: a `#pragma GCC target` region after them, or a unity build of two
    // outputs, then never declares a system header's function twice with different options.
    std::vector<std::string> includes(const RuntimeNeeds* already = nullptr) const;

private:
    std::vector<const RuntimeSection*> rendered(const RuntimeNeeds* already) const;

    std::string spelling_;
    std::set<std::string> ids_;
};

} // namespace tlc::codegen
