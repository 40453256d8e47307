#include "driver/Explain.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tlc {

std::string explainText(const std::vector<ExplainedKernel>& kernels, const std::string& file, const std::string& target) {
    std::string out;
    for (const auto& k : kernels) {
        out += fmt::format("kernel {} on {}:\n", k.kernel, target);
        if (k.decisions.empty()) out += "  nothing inferred: the author fixed every value\n";
        for (const auto& d : k.decisions.entries()) {
            std::string where = d.loc.valid() ? fmt::format("{}:{}:{}: ", file, d.loc.line, d.loc.col) : "";
            out += fmt::format("  {}{} = {} ({}): {}\n", where, d.subject, d.value, d.origin, d.reason);
        }
    }
    return out;
}

std::string explainJson(const std::vector<ExplainedKernel>& kernels, const std::string& file, const std::string& target) {
    using Json = nlohmann::ordered_json;
    Json all = Json::array();
    for (const auto& k : kernels) {
        Json decisions = Json::array();
        for (const auto& d : k.decisions.entries()) {
            Json j;
            j["subject"] = d.subject;
            j["value"] = d.value;
            j["origin"] = d.origin;
            j["reason"] = d.reason;
            j["file"] = file;
            j["line"] = d.loc.line;
            j["column"] = d.loc.col;
            decisions.push_back(std::move(j));
        }
        Json kj;
        kj["kernel"] = k.kernel;
        kj["target"] = target;
        kj["decisions"] = std::move(decisions);
        all.push_back(std::move(kj));
    }
    Json root;
    root["explain"] = std::move(all);
    return root.dump(2) + "\n";
}

} // namespace tlc
