#include "target/Target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

namespace tlc {

namespace {

using Json = nlohmann::json;

constexpr std::pair<Feature, std::string_view> kFeatureNames[] = {
    {Feature::CpAsync, "cp_async"}, {Feature::Ldmatrix, "ldmatrix"}, {Feature::MmaSm80, "mma_sm80"},
    {Feature::MmaFp8, "mma_fp8"},   {Feature::Wgmma, "wgmma"},       {Feature::Tma, "tma"},
    {Feature::Mbarrier, "mbarrier"}, {Feature::Clusters, "clusters"}, {Feature::Mfma, "mfma"},
    {Feature::MfmaFp8, "mfma_fp8"}, {Feature::Avx512, "avx512"},     {Feature::Avx512Bf16, "avx512_bf16"},
    {Feature::Amx, "amx"},          {Feature::Avx2, "avx2"},         {Feature::Setmaxnreg, "setmaxnreg"},
    {Feature::VectorAtomicAdd, "vector_atomic_add"},
};

// The embedded profiles: {file name, JSON text}.
struct EmbeddedProfile {
    const char* file;
    const char* text;
};
constexpr EmbeddedProfile kProfiles[] = {
#include "Profiles.inc"
};

// The fields of a profile, in the order they are documented (docs/recommend.md).
const std::set<std::string> kKnownFields = {
    "name", "base", "device", "description", "backend", "arch", "warp_size", "thread_warp_size", "max_threads_per_block",
    "max_threads_per_sm", "max_blocks_per_sm", "max_cluster_size", "shared_mem_per_block", "shared_mem_per_sm",
    "shared_mem_banks", "shared_mem_bank_bytes", "memory_sector_bytes", "registers_per_sm",
    "max_registers_per_thread", "sm_count", "memory_bandwidth_gbps", "l2_bandwidth_gbps", "special_function_cost",
    "warp_mma_fraction", "load_latency_ns", "k_step_min_ns", "peak_tflops", "mma_shapes",
    "features", "cpu_isa"};

// Fields a complete profile may leave out.
const std::set<std::string> kOptionalFields = {"thread_warp_size", "cpu_isa", "shared_mem_banks",
                                                "shared_mem_bank_bytes", "memory_sector_bytes", "load_latency_ns",
                                                "k_step_min_ns", "max_cluster_size", "l2_bandwidth_gbps",
                                                "special_function_cost", "warp_mma_fraction"};

struct SchemaError {
    std::string message;
};

std::string jsonTypeName(const Json& j) {
    switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a bool";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::number_float: return "a number";
    default: return "an integer";
    }
}

std::string requireString(const Json& j, const std::string& field) {
    if (!j.is_string()) throw SchemaError{fmt::format("field '{}' must be a string, not {}", field, jsonTypeName(j))};
    return j.get<std::string>();
}

int requireInt(const Json& j, const std::string& field, int64_t min) {
    if (!j.is_number_integer())
        throw SchemaError{fmt::format("field '{}' must be an integer, not {}", field, jsonTypeName(j))};
    int64_t v = j.is_number_unsigned() ? int64_t(std::min<uint64_t>(j.get<uint64_t>(), uint64_t(INT64_MAX)))
                                       : j.get<int64_t>();
    if (v < min || v > (int64_t(1) << 30))
        throw SchemaError{fmt::format("field '{}' is {}; it must be between {} and {}", field, v, min, int64_t(1) << 30)};
    return int(v);
}

std::vector<std::string> requireStrings(const Json& j, const std::string& field) {
    if (!j.is_array())
        throw SchemaError{fmt::format("field '{}' must be an array of strings, not {}", field, jsonTypeName(j))};
    std::vector<std::string> out;
    for (const auto& item : j) out.push_back(requireString(item, field + "[]"));
    return out;
}

double requireNumber(const Json& j, const std::string& field, bool positive) {
    if (!j.is_number()) throw SchemaError{fmt::format("field '{}' must be a number, not {}", field, jsonTypeName(j))};
    double v = j.get<double>();
    if (v < 0 || (positive && v == 0) || !(v < 1e9))
        throw SchemaError{fmt::format("field '{}' is {}; it must be {}", field, v, positive ? "positive" : "zero or positive")};
    return v;
}

// Applies the fields of `j` to `t`. `seen` collects the field names given.
void applyProfile(const Json& j, Target& t, std::set<std::string>& seen) {
    if (!j.is_object()) throw SchemaError{fmt::format("a profile must be a JSON object, not {}", jsonTypeName(j))};
    for (const auto& [key, value] : j.items()) {
        if (!kKnownFields.count(key)) throw SchemaError{fmt::format("unknown field '{}'", key)};
        seen.insert(key);
        if (key == "name") {
            t.name = requireString(value, key);
            bool ok = !t.name.empty() && t.name.size() <= 64;
            for (char c : t.name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
            if (!ok) throw SchemaError{fmt::format("field 'name' is '{}'; it must be 1 to 64 letters, digits, '_' or '-'", t.name)};
        } else if (key == "device") t.device = requireString(value, key);
        else if (key == "description") t.description = requireString(value, key);
        else if (key == "arch") t.arch = requireString(value, key);
        else if (key == "backend") {
            std::string b = requireString(value, key);
            if (b == "cuda") t.backend = Backend::Cuda;
            else if (b == "hip") t.backend = Backend::Hip;
            else if (b == "cpu") t.backend = Backend::Cpu;
            else throw SchemaError{fmt::format("field 'backend' is '{}'; it must be cuda, hip or cpu", b)};
        } else if (key == "warp_size") t.warpSize = requireInt(value, key, 1);
        else if (key == "thread_warp_size") t.threadWarpSize = requireInt(value, key, 1);
        else if (key == "max_threads_per_block") t.maxThreadsPerBlock = requireInt(value, key, 1);
        else if (key == "max_threads_per_sm") t.maxThreadsPerSM = requireInt(value, key, 1);
        else if (key == "max_blocks_per_sm") t.maxBlocksPerSM = requireInt(value, key, 1);
        else if (key == "max_cluster_size") t.maxClusterSize = requireInt(value, key, 1);
        else if (key == "shared_mem_per_block") t.sharedMemPerBlock = requireInt(value, key, 0);
        else if (key == "shared_mem_per_sm") t.sharedMemPerSM = requireInt(value, key, 0);
        else if (key == "shared_mem_banks") t.sharedBanks = requireInt(value, key, 1);
        else if (key == "shared_mem_bank_bytes") t.sharedBankBytes = requireInt(value, key, 1);
        else if (key == "memory_sector_bytes") t.memorySectorBytes = requireInt(value, key, 0);
        else if (key == "registers_per_sm") t.registersPerSM = requireInt(value, key, 0);
        else if (key == "max_registers_per_thread") t.maxRegistersPerThread = requireInt(value, key, 0);
        else if (key == "sm_count") t.smCount = requireInt(value, key, 1);
        else if (key == "memory_bandwidth_gbps") t.memoryBandwidthGBs = requireNumber(value, key, true);
        else if (key == "l2_bandwidth_gbps") t.l2BandwidthGBs = requireNumber(value, key, false);
        else if (key == "special_function_cost") t.specialFunctionCost = requireNumber(value, key, true);
        else if (key == "warp_mma_fraction") {
            t.warpMmaFraction = requireNumber(value, key, true);
            if (t.warpMmaFraction > 1) throw SchemaError{fmt::format("field 'warp_mma_fraction' is {}; it must be at most 1", t.warpMmaFraction)};
        }
        else if (key == "load_latency_ns") t.loadLatencyNs = requireNumber(value, key, false);
        else if (key == "k_step_min_ns") t.kStepMinNs = requireNumber(value, key, false);
        else if (key == "peak_tflops") {
            if (!value.is_object())
                throw SchemaError{fmt::format("field 'peak_tflops' must be an object, not {}", jsonTypeName(value))};
            for (const auto& [type, rate] : value.items()) {
                std::string field = "peak_tflops." + type;
                double r = requireNumber(rate, field, false);
                if (type == "f16") t.peak.f16 = r;
                else if (type == "bf16") t.peak.bf16 = r;
                else if (type == "fp8") t.peak.fp8 = r;
                else if (type == "i8") t.peak.i8 = r;
                else if (type == "f32") t.peak.f32 = r;
                else throw SchemaError{fmt::format("unknown field '{}' (the types are f16, bf16, fp8, i8, f32)", field)};
            }
        } else if (key == "mma_shapes") {
            t.mmaShapes = requireStrings(value, key);
        } else if (key == "cpu_isa") {
            if (!value.is_object())
                throw SchemaError{fmt::format("field 'cpu_isa' must be an object, not {}", jsonTypeName(value))};
            // Macro and cpuid names are pasted into the emitted source: identifiers only.
            auto strings = [](const Json& list, const std::string& field) {
                std::vector<std::string> out = requireStrings(list, field);
                for (const auto& name : out) {
                    bool ok = !name.empty();
                    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
                    if (!ok) throw SchemaError{fmt::format("field '{}[]' is '{}'; it must be a name", field, name)};
                }
                return out;
            };
            for (const auto& [part, v] : value.items()) {
                if (part == "compile_flags") {
                    // Written into a comment and an #error string of the emitted source.
                    t.cpuIsa.compileFlags = requireString(v, "cpu_isa.compile_flags");
                    for (char c : t.cpuIsa.compileFlags)
                        if (c == '"' || c == '\\' || std::iscntrl(static_cast<unsigned char>(c)))
                            throw SchemaError{"field 'cpu_isa.compile_flags' may not contain quotes, backslashes or control characters"};
                }
                else if (part == "macros") t.cpuIsa.macros = strings(v, "cpu_isa.macros");
                else if (part == "cpuid") t.cpuIsa.cpuid = strings(v, "cpu_isa.cpuid");
                else if (part == "os_permissions") {
                    t.cpuIsa.osPermissions = requireStrings(v, "cpu_isa.os_permissions");
                    for (const auto& name : t.cpuIsa.osPermissions)
                        if (name != "xtiledata")
                            throw SchemaError{fmt::format("field 'cpu_isa.os_permissions[]' is '{}' (known: xtiledata)", name)};
                }
                else if (part == "vector_bits") {
                    t.cpuIsa.vectorBits = requireInt(v, "cpu_isa.vector_bits", 128);
                    if (t.cpuIsa.vectorBits != 128 && t.cpuIsa.vectorBits != 256 && t.cpuIsa.vectorBits != 512)
                        throw SchemaError{fmt::format("field 'cpu_isa.vector_bits' is {}; it must be 128, 256 or 512",
                                                      t.cpuIsa.vectorBits)};
                }
                else throw SchemaError{fmt::format("unknown field 'cpu_isa.{}' (the fields are compile_flags, macros, cpuid, os_permissions, vector_bits)", part)};
            }
        } else if (key == "features") {
            t.features = 0;
            for (const std::string& name : requireStrings(value, key)) {
                bool found = false;
                for (const auto& [feature, fname] : kFeatureNames)
                    if (fname == name) t.features |= unsigned(feature), found = true;
                if (!found) {
                    std::string all;
                    for (const auto& [feature, fname] : kFeatureNames) all += (all.empty() ? "" : ", ") + std::string(fname);
                    throw SchemaError{fmt::format("field 'features': unknown feature '{}' (known: {})", name, all)};
                }
            }
        }
    }
}

void checkConsistent(Target& t) {
    if (t.threadWarpSize == 0) t.threadWarpSize = t.warpSize;
    if (t.backend != Backend::Cpu && !t.cpuIsa.empty())
        throw SchemaError{"field 'cpu_isa' is for cpu targets (backend \"cpu\")"};
    if (t.sharedMemPerBlock > t.sharedMemPerSM)
        throw SchemaError{fmt::format("field 'shared_mem_per_block' ({}) is larger than 'shared_mem_per_sm' ({})",
                                      t.sharedMemPerBlock, t.sharedMemPerSM)};
    for (auto [field, v] : {std::pair{"shared_mem_banks", t.sharedBanks}, std::pair{"shared_mem_bank_bytes", t.sharedBankBytes},
                            std::pair{"memory_sector_bytes", t.memorySectorBytes}})
        if ((v & (v - 1)) != 0) throw SchemaError{fmt::format("field '{}' ({}) is not a power of two", field, v)};
    if (t.maxThreadsPerBlock % t.warpSize != 0)
        throw SchemaError{fmt::format("field 'max_threads_per_block' ({}) is not a multiple of 'warp_size' ({})",
                                      t.maxThreadsPerBlock, t.warpSize)};
    // The vector reduction is PTX (red.global.add.v2/.v4.f32): the CUDA runtime has the helper.
    if (t.has(Feature::VectorAtomicAdd) && t.backend != Backend::Cuda)
        throw SchemaError{"feature 'vector_atomic_add' is for cuda targets (PTX red.global.add.v2/.v4.f32)"};
    if (t.maxClusterSize > 1 && !t.has(Feature::Clusters))
        throw SchemaError{"field 'max_cluster_size' needs the feature 'clusters'"};
    // Left out beside the feature: CUDA's portable limit.
    if (t.has(Feature::Clusters) && t.maxClusterSize < 2) t.maxClusterSize = 8;
    if (t.maxThreadsPerSM < t.maxThreadsPerBlock)
        throw SchemaError{fmt::format("field 'max_threads_per_sm' ({}) is smaller than 'max_threads_per_block' ({})",
                                      t.maxThreadsPerSM, t.maxThreadsPerBlock)};
}

// "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..." ->
// "3:5: invalid JSON: syntax error ...". Line and column are computed from the byte offset.
std::string describeParseError(std::string_view text, const Json::parse_error& e) {
    size_t line = 1, column = 0;
    size_t end = std::min<size_t>(e.byte, text.size());
    for (size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') ++line, column = 0;
        else ++column;
    }
    if (column == 0) column = 1;
    std::string what = e.what();
    if (size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    return fmt::format("{}:{}: invalid JSON: {}", line, column, what);
}

std::vector<Target>& builtinTargets() {
    static std::vector<Target> targets = [] {
        std::vector<Target> out;
        for (const auto& p : kProfiles) {
            std::string error;
            std::optional<Target> t = parseTargetProfile(p.text, error, true);
            if (!t) {
                std::fprintf(stderr, "tlc: internal error: built-in profile %s: %s\n", p.file, error.c_str());
                std::abort();
            }
            out.push_back(std::move(*t));
        }
        // The documented order: NVIDIA by architecture, AMD, CPU.
        auto rank = [](const Target& t) {
            static const char* order[] = {"sm80", "sm86", "sm89", "sm90", "gfx90a", "gfx942", "cpu", "cpu-avx2", "cpu-avx512", "cpu-amx"};
            for (size_t i = 0; i < std::size(order); ++i)
                if (t.name == order[i]) return int(i);
            return int(std::size(order));
        };
        std::stable_sort(out.begin(), out.end(), [&](const Target& a, const Target& b) { return rank(a) < rank(b); });
        return out;
    }();
    return targets;
}

} // namespace

std::optional<Target> parseTargetProfile(std::string_view text, std::string& error, bool builtin) {
    Json j;
    try {
        j = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        error = describeParseError(text, e);
        return std::nullopt;
    }
    Target t{};
    t.backend = Backend::Cpu;
    t.features = 0;
    std::set<std::string> seen;
    try {
        if (j.is_object() && j.contains("base")) {
            if (builtin) throw SchemaError{"field 'base': a built-in profile cannot name a base"};
            std::string base = requireString(j["base"], "base");
            const Target* b = findTarget(base);
            if (!b) {
                std::string names;
                for (const auto& bt : allTargets()) names += (names.empty() ? "" : ", ") + bt.name;
                throw SchemaError{fmt::format("field 'base': unknown target '{}' (the built-in targets are {})", base, names)};
            }
            t = *b;
            // The copy describes another device unless the profile says which.
            t.device = "";
        }
        applyProfile(j, t, seen);
        if (!seen.count("name")) throw SchemaError{"missing field 'name'"};
        if (!seen.count("base")) {
            std::vector<std::string> missing;
            for (const std::string& field : kKnownFields)
                if (field != "base" && !kOptionalFields.count(field) && !seen.count(field))
                    missing.push_back("'" + field + "'");
            if (missing.size() == 1) throw SchemaError{fmt::format("missing field {}", missing[0])};
            if (!missing.empty())
                throw SchemaError{fmt::format("missing fields {} (or name a built-in target as \"base\")",
                                              fmt::join(missing, ", "))};
        }
        checkConsistent(t);
    } catch (const SchemaError& e) {
        error = e.message;
        return std::nullopt;
    } catch (const Json::exception& e) {
        error = e.what();
        return std::nullopt;
    }
    if (t.description.empty()) t.description = t.device.empty() ? "user profile " + t.name : t.device;
    if (t.device.empty()) t.device = t.description;
    return t;
}

const Target* loadTargetProfile(const std::string& path, std::string& error) {
    static std::mutex mutex;
    static std::deque<Target> loaded;  // never shrinks: pointers stay valid
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = fmt::format("{}: error: cannot read the profile: {}", path, errno ? std::strerror(errno) : "cannot open");
        return nullptr;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > (1u << 20)) {
        error = fmt::format("{}: error: the profile is larger than 1 MiB", path);
        return nullptr;
    }
    std::string problem;
    std::optional<Target> t = parseTargetProfile(text, problem);
    if (!t) {
        bool located = !problem.empty() && std::isdigit(static_cast<unsigned char>(problem[0]));
        if (located) {
            size_t second = problem.find(": ");
            error = fmt::format("{}:{}: error: {}", path, problem.substr(0, second), problem.substr(second + 2));
        } else {
            error = fmt::format("{}: error: {}", path, problem);
        }
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex);
    loaded.push_back(std::move(*t));
    return &loaded.back();
}

std::span<const Target> allTargets() { return builtinTargets(); }

const Target* findTarget(std::string_view name) {
    for (const auto& t : allTargets())
        if (t.name == name) return &t;
    return nullptr;
}

std::vector<std::string_view> featureNames() {
    std::vector<std::string_view> out;
    for (const auto& [f, name] : kFeatureNames) out.push_back(name);
    return out;
}

std::string_view backendName(Backend b) {
    switch (b) {
    case Backend::Cuda: return "cuda";
    case Backend::Hip: return "hip";
    case Backend::Cpu: return "cpu";
    }
    return "cpu";
}

double Target::peakFor(std::optional<DType> type) const {
    double rate = peak.f32;
    if (type) {
        switch (*type) {
        case DType::F16: rate = peak.f16; break;
        case DType::BF16: rate = peak.bf16; break;
        case DType::F8E4M3:
        case DType::F8E5M2: rate = peak.fp8; break;
        case DType::I8:
        case DType::U8: rate = peak.i8; break;
        default: break;
        }
    }
    if (rate <= 0) rate = peak.f32 > 0 ? peak.f32 : 1.0;
    return rate;
}

std::string_view Target::sourceExtension() const {
    switch (backend) {
    case Backend::Cuda: return ".cu";
    case Backend::Hip: return ".hip";
    case Backend::Cpu: return ".cpp";
    }
    return ".cpp";
}

std::string featureList(const Target& t) {
    std::string out;
    for (const auto& [f, name] : kFeatureNames)
        if (t.has(f)) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

} // namespace tlc
