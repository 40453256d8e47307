// Writing outputs so that a failure leaves nothing half-written: each file is written to a
// temporary beside it and renamed over the target only when complete.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tlc {

// Writes every (path, content) pair; on failure no target is created or changed (except when
// the failure is in the final renames, which the file system makes atomic one by one) and
// `error` says why.
bool writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files, std::string& error);

} // namespace tlc
