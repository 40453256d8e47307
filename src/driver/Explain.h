// `tlc FILE --target=T --explain`: the decision log of every kernel (support/DecisionLog.h) as
// text, one line per decision, or as JSON with --diagnostics-format=json.
#pragma once

#include "support/DecisionLog.h"

#include <string>
#include <vector>

namespace tlc {

std::string explainText(const std::vector<ExplainedKernel>& kernels, const std::string& file, const std::string& target);
std::string explainJson(const std::vector<ExplainedKernel>& kernels, const std::string& file, const std::string& target);

} // namespace tlc
