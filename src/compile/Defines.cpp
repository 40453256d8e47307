#include "compile/Defines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tlc {

std::string checkDefine(const std::string& d) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == d.size())
        return fmt::format("-D expects NAME=VALUE, got '{}'", d);
    std::string name = d.substr(0, eq);
    bool identifier = (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                      });
    if (!identifier) return fmt::format("-D {}: '{}' is not a name (letters, digits and '_')", d, name);
    return "";
}

bool parseDefines(const std::vector<std::string>& arguments, Defines& defines, std::string& error) {
    for (const auto& d : arguments) {
        error = checkDefine(d);
        if (!error.empty()) return false;
        size_t eq = d.find('=');
        defines[d.substr(0, eq)] = d.substr(eq + 1);
    }
    return true;
}

std::set<std::string> takeAutoDefines(Defines& defines) {
    std::set<std::string> names;
    for (auto it = defines.begin(); it != defines.end();) {
        if (it->second == "auto") {
            names.insert(it->first);
            it = defines.erase(it);
        } else {
            ++it;
        }
    }
    return names;
}

} // namespace tlc
