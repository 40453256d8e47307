// Make-style dependency files (tlc -MD / -MF / -MT / -MP, as gcc, clang and nvcc write them), so
// that a build system reruns tlc when a file it read changes.
#pragma once

#include <string>
#include <vector>

namespace tlc {

// One rule, `target: deps...` (paths escaped for Make and Ninja: spaces, '#' and '$'), and with
// `phonyDeps` an empty rule per dependency, so that a deleted file does not stop the build.
std::string makeDepfile(const std::string& target, const std::vector<std::string>& deps, bool phonyDeps);

} // namespace tlc
