// `tlc dispatch MANIFEST.json... -o FILE.cpp`: reads the manifests, writes the dispatching
// launchers (emit/DeviceDispatch.h) and their header beside FILE.cpp, atomically.
#include "driver/Driver.h"

#include "emit/DeviceDispatch.h"
#include "support/AtomicFile.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

namespace tlc {

namespace fs = std::filesystem;

int runDispatch(const DispatchDriverOptions& options, std::ostream& err) {
    if (options.manifests.empty() || options.output.empty()) {
        err << "tlc: error: dispatch: give the manifests (tlc --emit-manifest) of each target's output and -o "
               "FILE.cpp (see 'tlc dispatch --help')\n";
        return kExitUsage;
    }
    const fs::path output = fs::absolute(options.output).lexically_normal();
    const fs::path header = options.header.empty() ? fs::path(output).replace_extension(".h")
                                                   : fs::absolute(options.header).lexically_normal();
    std::vector<DispatchInput> inputs;
    for (const auto& path : options.manifests) {
        std::ifstream in(path, std::ios::binary);
        std::string text(std::istreambuf_iterator<char>(in), {});
        if (!in.is_open() || in.bad() || fs::is_directory(path)) {
            err << "tlc: error: cannot read '" << path << "'\n";
            return kExitUsage;
        }
        // The header a manifest names lies beside it: the dispatcher's header includes it by a
        // path relative to its own folder.
        fs::path folder = fs::absolute(path).lexically_normal().parent_path().lexically_relative(header.parent_path());
        std::string prefix = folder == "." ? "" : folder.string() + "/";
        inputs.push_back({path, text, prefix});
    }
    DispatchOptions dispatch;
    dispatch.nameSpace = options.nameSpace;
    dispatch.cPrefix = options.cPrefix;
    dispatch.headerName = header.lexically_relative(output.parent_path()).string();
    dispatch.outputName = output.filename().string();
    DispatchResult result;
    try {
        result = emitDeviceDispatch(inputs, dispatch);
    } catch (const DispatchError& e) {
        err << "tlc: error: dispatch: " << e.what() << '\n';
        return kExitInputErrors;
    }
    std::string error;
    if (!writeFilesAtomically({{options.output, result.source}, {header.string(), result.header}}, error)) {
        err << "tlc: error: " << error << '\n';
        return kExitUsage;
    }
    return kExitOk;
}

} // namespace tlc
