// Names the beginner level's lowerings share: a kernel's tensor parameters by name, and fresh
// names for the code they generate (base, base2, base3, ...: none an author's name).
#pragma once

#include "ast/AST.h"

#include <fmt/format.h>

#include <set>
#include <string>

namespace tlc::beginner {

inline const ast::Param* tensorNamed(const ast::Kernel& k, const std::string& name) {
    for (const auto& p : k.params)
        if (p.name == name && p.type.isTensor()) return &p;
    return nullptr;
}

// `base`, or `base` with the first number that makes it new; added to `used`.
inline std::string freshName(std::set<std::string>& used, const std::string& base) {
    std::string name = base;
    for (int n = 2; used.count(name); ++n) name = fmt::format("{}{}", base, n);
    used.insert(name);
    return name;
}

} // namespace tlc::beginner
