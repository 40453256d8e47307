#include "recommend/Measured.h"

#include "ast/AST.h"
#include "compile/Program.h"
#include "recommend/Recommend.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace tlc {

namespace {

struct EmbeddedMeasurements {
    const char* file;
    const char* text;
};
// bench/data/*.json, embedded by cmake/EmbedFiles.cmake; the last entry is empty.
constexpr EmbeddedMeasurements kEmbedded[] = {
#include "Measurements.inc"
    {nullptr, nullptr},
};

// The -D values that concern `kernel`: its template parameters and its sizes.
std::map<std::string, std::string> definesOf(const ast::Kernel& kernel, const Defines& defines) {
    std::set<std::string> names = symbolicSizeNames(kernel);
    for (const auto& tp : kernel.templateParams) names.insert(tp.name);
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : defines)
        if (names.count(name)) out[name] = value;
    return out;
}

std::string ordinal(int n) {
    const char* suffix = "th";
    if (n % 100 < 11 || n % 100 > 13) {
        if (n % 10 == 1) suffix = "st";
        else if (n % 10 == 2) suffix = "nd";
        else if (n % 10 == 3) suffix = "rd";
    }
    return fmt::format("{}{}", n, suffix);
}

} // namespace

std::string kernelFingerprint(const ast::Kernel& kernel) {
    // FNV-1a, 64 bits: stable across builds and machines (std::hash is neither).
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : ast::printKernelSource(kernel)) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return fmt::format("{:016x}", h);
}

const MeasuredSet& MeasuredSet::embedded() {
    static const MeasuredSet set = [] {
        MeasuredSet s;
        for (const auto& e : kEmbedded) {
            if (!e.file) break;
            std::string error;
            // A file that does not parse is a build-time mistake; tests/unit checks every one.
            if (!s.addText(e.text, fmt::format("bench/data/{} (embedded)", e.file), error))
                s.loadErrors_.push_back(error);
        }
        return s;
    }();
    return set;
}

bool MeasuredSet::addFile(const std::string& path, std::string& error) {
    std::ifstream in(path);
    if (!in) {
        error = fmt::format("cannot read '{}'", path);
        return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    return addText(text.str(), path, error);
}

bool MeasuredSet::addText(const std::string& text, const std::string& source, std::string& error) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        error = fmt::format("{}: not a JSON object", source);
        return false;
    }
    auto str = [](const nlohmann::json& o, const char* key) {
        return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
    };
    if (!j.contains("sweeps") || !j["sweeps"].is_array() || str(j, "target").empty()) {
        error = fmt::format("{}: expected a 'target' and a 'sweeps' array (the format of bench/cpu/sweep.py)", source);
        return false;
    }
    std::vector<MeasuredSweep> added;
    for (const auto& s : j["sweeps"]) {
        MeasuredSweep m;
        m.source = source;
        m.machine = str(j, "machine");
        m.date = str(j, "date");
        m.commit = str(j, "tlc");
        m.target = str(j, "target");
        m.kernel = str(s, "kernel");
        m.fingerprint = str(s, "fingerprint");
        m.file = str(s, "file");
        if (m.kernel.empty() || m.fingerprint.empty() || !s.contains("configs") || !s["configs"].is_array()) {
            error = fmt::format("{}: a sweep needs 'kernel', 'fingerprint' and 'configs'", source);
            return false;
        }
        if (s.contains("defines") && s["defines"].is_object())
            for (const auto& [k, v] : s["defines"].items()) m.defines[k] = v.is_string() ? v.get<std::string>() : v.dump();
        if (s.contains("shape") && s["shape"].is_object())
            for (const auto& [k, v] : s["shape"].items())
                if (v.is_number_integer()) m.shape[k] = v.get<int64_t>();
        for (const auto& c : s["configs"]) {
            // A configuration whose result was wrong or that failed to build has no time.
            if (!c.contains("us") || !c["us"].is_number() || !c.contains("values") || !c["values"].is_object()) continue;
            MeasuredConfig mc;
            mc.us = c["us"].get<double>();
            for (const auto& [k, v] : c["values"].items())
                if (v.is_number_integer()) mc.values.emplace_back(k, v.get<int64_t>());
            std::sort(mc.values.begin(), mc.values.end());
            m.configs.push_back(std::move(mc));
        }
        std::stable_sort(m.configs.begin(), m.configs.end(),
                         [](const MeasuredConfig& a, const MeasuredConfig& b) { return a.us < b.us; });
        for (size_t i = 0; i < m.configs.size(); ++i) m.configs[i].rank = int(i) + 1;
        added.push_back(std::move(m));
    }
    sweeps_.insert(sweeps_.end(), added.begin(), added.end());
    return true;
}

const MeasuredSweep* MeasuredSet::find(const std::string& target, const ast::Kernel& kernel,
                                       const Defines& defines) const {
    std::string fingerprint = kernelFingerprint(kernel);
    std::map<std::string, std::string> fixed = definesOf(kernel, defines);
    const MeasuredSweep* found = nullptr;
    auto consider = [&](const std::vector<MeasuredSweep>& sweeps) {
        for (const auto& s : sweeps)
            if (s.target == target && s.kernel == kernel.name && s.fingerprint == fingerprint && s.defines == fixed &&
                !s.configs.empty() && (!found || s.date >= found->date))
                found = &s;
    };
    consider(sweeps_);
    if (withEmbedded_) consider(embedded().sweeps_);
    return found;
}

const MeasuredConfig* measuredConfig(const MeasuredSweep& sweep,
                                     const std::vector<std::pair<std::string, int64_t>>& values) {
    auto sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& c : sweep.configs)
        if (c.values == sorted) return &c;
    return nullptr;
}

std::string sizesText(const std::map<std::string, int64_t>& sizes) {
    std::string out;
    for (const auto& [n, v] : sizes) out += fmt::format("{}{}={}", out.empty() ? "" : ",", n, v);
    return out;
}

std::string measuredText(const MeasuredSweep& sweep, const std::vector<std::pair<std::string, int64_t>>& values) {
    const MeasuredConfig* c = measuredConfig(sweep, values);
    if (!c) return "";
    std::string shape = sizesText(sweep.shape);
    const MeasuredConfig& best = sweep.configs.front();
    std::string text = fmt::format("measured on {}{}: {:.1f} us, {} of {}", sweep.machine,
                                   shape.empty() ? "" : " at " + shape, c->us, ordinal(c->rank), sweep.configs.size());
    if (c->rank > 1)
        text += fmt::format(" (the fastest, {}, took {:.1f} us: this one runs at {:.2f}x its speed)", configurationText(best.values),
                            best.us, best.us / c->us);
    return text + " [" + sweep.source + "]";
}

} // namespace tlc
