// -D NAME=VALUE: the command line's compile-time values, checked once, where the command line is
// read (cli/main.cpp); every compile of the run takes the resulting map.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tlc {

using Defines = std::map<std::string, std::string>;  // name -> value as written

// What is wrong with one -D argument (NAME=VALUE, NAME an identifier, VALUE not empty), or ""
// when it is well-formed (whether NAME and VALUE make sense for the input is sema's business).
std::string checkDefine(const std::string& define);

// The -D arguments as a map (the last of a name wins); false with the first problem in `error`.
bool parseDefines(const std::vector<std::string>& arguments, Defines& defines, std::string& error);

// -D NAME=auto leaves compile-time parameter NAME to the recommender, as `NAME = auto` in the
// source would (TileLang's autotuning from the command line): those entries, taken out of
// `defines` (which then holds only values), by name.
std::set<std::string> takeAutoDefines(Defines& defines);

} // namespace tlc
