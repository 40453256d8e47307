#include "emit/Names.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tlc::codegen {

namespace {

// C++ keywords and alternative tokens, and the identifiers emitted code uses unqualified:
// CUDA/HIP built-ins, math functions, types and macros of the toolkits and of the runtime
// headers, and the emitter's own names.
constexpr std::array kReserved = {
    // C++20 keywords and alternative tokens
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main",
    // GPU built-ins and qualifiers
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "uint2", "uint4", "float2", "float4",
    "half", "half2", "nv_bfloat16", "hip_bfloat16", "__half", "__syncthreads",
    // math and helpers emitted unqualified
    "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "sqrt", "sqrtf", "rsqrt", "rsqrtf", "abs", "fabs",
    "fabsf", "llabs", "tanh", "tanhf", "erf", "erff", "pow", "powf", "fmin", "fminf", "fmax", "fmaxf", "min", "max",
    "atomicAdd", "atomicCAS", "printf", "assert", "memcpy", "memset",
    // types and macros
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
    "uintptr_t", "INFINITY", "NAN", "NULL", "EOF", "errno", "NDEBUG",
    // namespaces and the emitter's own names
    "std", "tl", "tl_smem", "stream", "workspace", "check_only",
};

bool reservedForm(std::string_view s) {
    // __x and _X are reserved everywhere.
    return s.size() >= 2 && s[0] == '_' && (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1])));
}

} // namespace

bool isReservedName(std::string_view name) {
    return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end() || reservedForm(name);
}

std::string sanitizeIdentifier(std::string_view name) {
    std::string s;
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
    if (reservedForm(s)) s = "v" + s;
    if (isReservedName(s)) s += "_";
    return s;
}

void NameScope::push() { scopes_.emplace_back(); }

void NameScope::pop() {
    for (const Entry& e : scopes_.back()) {
        if (--visibleCount_[e.name] == 0) visibleCount_.erase(e.name);
        if (e.owner) {
            auto& names = ownerNames_[e.owner];
            names.pop_back();
            if (names.empty()) ownerNames_.erase(e.owner);
        }
    }
    scopes_.pop_back();
}

bool NameScope::visible(std::string_view name) const { return visibleCount_.find(name) != visibleCount_.end(); }

std::string NameScope::declare(const void* owner, std::string_view base) {
    std::string clean = sanitizeIdentifier(base);
    std::string name = clean;
    for (int n = 1; visible(name); ++n) name = clean + "_" + std::to_string(n);
    scopes_.back().push_back({owner, name});
    ++visibleCount_[name];
    if (owner) ownerNames_[owner].push_back(name);
    return name;
}

void NameScope::declareExact(const void* owner, const std::string& name) {
    scopes_.back().push_back({owner, name});
    ++visibleCount_[name];
    if (owner) ownerNames_[owner].push_back(name);
}

const std::string* NameScope::lookup(const void* owner) const {
    auto it = ownerNames_.find(owner);
    return it == ownerNames_.end() ? nullptr : &it->second.back();
}

} // namespace tlc::codegen
