// Writes the emitter's hand-built sample kernels (test_emit_kernels.h) for every target into
// $TLC_EMIT_SAMPLES_DIR/<target>/, for tests/emit/compile_check.py. Without the variable the
// test does nothing, so the ordinary unit run stays free of files.
#include "emit/Emit.h"
#include "test_emit_kernels.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace tlc;

namespace {

void writeFile(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    REQUIRE(out.good());
}

} // namespace

TEST_CASE("emit samples: write the sample kernels for the compile checks") {
    const char* dir = std::getenv("TLC_EMIT_SAMPLES_DIR");
    if (!dir || !*dir) return;
    for (const Target& target : allTargets()) {
        std::filesystem::path out = std::filesystem::path(dir) / std::string(target.name);
        std::filesystem::create_directories(out);
        std::vector<ir::Kernel> kernels = emit_test::allKernels(target);
        std::string ext(target.sourceExtension());
        // One file per kernel, and all of them in one file (several kernels per file).
        for (const auto& k : kernels) {
            EmitOptions options;
            options.sourceName = k.sourceName;
            options.headerName = k.name + ".h";
            options.outputName = k.name + ext;
            EmitResult r = emit({k}, target, options);
            writeFile(out / (k.name + ext), r.source);
            writeFile(out / (k.name + ".h"), r.header);
        }
        EmitOptions options;
        options.sourceName = "samples.tl";
        options.headerName = "all_kernels.h";
        options.outputName = "all_kernels" + ext;
        options.nameSpace = "samples::emit";
        EmitResult r = emit(kernels, target, options);
        writeFile(out / ("all_kernels" + ext), r.source);
        writeFile(out / "all_kernels.h", r.header);
        // --debug and #line directives, no header.
        options.headerName.clear();
        options.outputName = "debug_lines" + ext;
        options.nameSpace = "tl_kernels";
        options.debug = true;
        options.lineDirectives = true;
        writeFile(out / ("debug_lines" + ext), emit(kernels, target, options).source);
    }
}
