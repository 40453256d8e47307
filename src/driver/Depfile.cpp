#include "driver/Depfile.h"

namespace tlc {

namespace {

std::string escapeForMake(const std::string& path) {
    std::string out;
    for (char c : path) {
        if (c == ' ' || c == '#') out += '\\';
        if (c == '$') out += '$';
        out += c;
    }
    return out;
}

} // namespace

std::string makeDepfile(const std::string& target, const std::vector<std::string>& deps, bool phonyDeps) {
    std::string out = escapeForMake(target) + ":";
    for (const auto& d : deps) out += " \\\n  " + escapeForMake(d);
    out += "\n";
    if (phonyDeps)
        for (const auto& d : deps) out += "\n" + escapeForMake(d) + ":\n";
    return out;
}

} // namespace tlc
