// The differential tester's data files (tests/difftest/README.md, "Contracts"): named arrays of
// doubles, one per kernel parameter.
#pragma once

#include <string>
#include <vector>

namespace tlc::eval {

struct DataEntry {
    std::string name;
    std::vector<double> values;
};

// Reads a data file; false with `error` set when it cannot be read or is malformed.
bool readDataFile(const std::string& path, std::vector<DataEntry>& out, std::string& error);
// Writes one (to a temporary beside it, renamed into place); false with `error` set on failure.
bool writeDataFile(const std::string& path, const std::vector<DataEntry>& entries, std::string& error);

} // namespace tlc::eval
