#include "DataFile.h"

#include <cstdint>
#include <cstdio>
#include <fstream>

namespace tlc::eval {

namespace {

constexpr char kMagic[8] = {'T', 'L', 'C', 'D', 'A', 'T', 'A', '1'};

template <typename T> bool get(std::istream& in, T& v) {
    return bool(in.read(reinterpret_cast<char*>(&v), sizeof v));
}
template <typename T> void put(std::ostream& out, const T& v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); }

} // namespace

bool readDataFile(const std::string& path, std::vector<DataEntry>& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open '" + path + "'";
        return false;
    }
    char magic[8];
    uint32_t count = 0;
    if (!in.read(magic, 8) || std::string(magic, 8) != std::string(kMagic, 8) || !get(in, count)) {
        error = "'" + path + "' is not a data file (no TLCDATA1 header)";
        return false;
    }
    in.seekg(0, std::ios::end);
    const uint64_t fileBytes = uint64_t(in.tellg());
    in.seekg(12);
    for (uint32_t e = 0; e < count; ++e) {
        uint32_t nameLength = 0;
        uint64_t n = 0;
        DataEntry entry;
        if (!get(in, nameLength) || nameLength > 4096) break;
        entry.name.resize(nameLength);
        if (!in.read(entry.name.data(), nameLength) || !get(in, n)) break;
        if (n > (fileBytes - uint64_t(in.tellg())) / 8) break;  // more values than bytes left
        entry.values.resize(n);
        if (!in.read(reinterpret_cast<char*>(entry.values.data()), std::streamsize(n * 8))) break;
        out.push_back(std::move(entry));
    }
    if (out.size() != count) {
        error = "'" + path + "' ends inside entry " + std::to_string(out.size() + 1) + " of " + std::to_string(count);
        return false;
    }
    return true;
}

bool writeDataFile(const std::string& path, const std::vector<DataEntry>& entries, std::string& error) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(kMagic, 8);
        put(out, uint32_t(entries.size()));
        for (const DataEntry& e : entries) {
            put(out, uint32_t(e.name.size()));
            out.write(e.name.data(), std::streamsize(e.name.size()));
            put(out, uint64_t(e.values.size()));
            out.write(reinterpret_cast<const char*>(e.values.data()), std::streamsize(e.values.size() * 8));
        }
        if (!out) {
            error = "cannot write '" + tmp + "'";
            std::remove(tmp.c_str());
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot rename '" + tmp + "' to '" + path + "'";
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace tlc::eval
