// --report-ptxas: the registers the report shows come from ptxas itself when nvcc is at hand.
// The emitted source (and its header) go to a temporary directory, nvcc compiles them to a cubin
// for the target's architecture with -Xptxas -v, and each entry function's "Used N registers"
// and spill lines are read back. Nothing here decides anything; without nvcc the report says so
// and shows the model's estimate.
#include "report/Report.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>

namespace tlc::report {

namespace {

std::string findNvcc() {
    if (const char* path = std::getenv("PATH")) {
        std::string p = path;
        size_t start = 0;
        while (start <= p.size()) {
            size_t end = p.find(':', start);
            std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!dir.empty() && ::access((dir + "/nvcc").c_str(), X_OK) == 0) return dir + "/nvcc";
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
    return "";
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

} // namespace

PtxasResult runPtxas(const std::string& source, const std::string& headerName, const std::string& header,
                     const Target& target) {
    PtxasResult r;
    if (target.backend != Backend::Cuda) {
        r.note = "ptxas reads CUDA; target '" + target.name + "' is not a CUDA target";
        return r;
    }
    std::string nvcc = findNvcc();
    if (nvcc.empty()) {
        r.note = "nvcc was not found on PATH or in /usr/local/cuda/bin";
        return r;
    }
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "tlc-report-XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (!::mkdtemp(name.data())) {
        r.note = "cannot make a temporary directory for nvcc";
        return r;
    }
    std::filesystem::path dir = name.data();
    {
        std::ofstream(dir / "kernel.cu") << source;
        if (!headerName.empty()) std::ofstream(dir / headerName) << header;
    }
    std::string cmd = fmt::format("{} -std=c++17 -arch={} -cubin -Xptxas -v -o {} {} 2>&1", quote(nvcc), target.arch,
                                  quote((dir / "kernel.cubin").string()), quote((dir / "kernel.cu").string()));
    std::string output;
    int status = -1;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        std::array<char, 4096> buf;
        size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) output.append(buf.data(), n);
        status = ::pclose(p);
    }
    std::filesystem::remove_all(dir, ec);
    r.note = fmt::format("nvcc -arch={} -cubin -Xptxas -v", target.arch);
    if (status != 0) {
        r.note += fmt::format(" failed (status {}): {}", status, output.substr(0, 400));
        return r;
    }
    r.ran = true;
    std::regex entry(R"(Compiling entry function '([^']+)')");
    std::regex used(R"(Used (\d+) registers)");
    std::regex spill(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    std::string current;
    size_t start = 0;
    while (start < output.size()) {
        size_t end = output.find('\n', start);
        std::string line = output.substr(start, end == std::string::npos ? std::string::npos : end - start);
        start = end == std::string::npos ? output.size() : end + 1;
        std::smatch m;
        if (std::regex_search(line, m, entry)) current = m[1];
        else if (!current.empty() && std::regex_search(line, m, spill)) {
            r.kernels[current].stackBytes = std::stoll(m[1]);
            r.kernels[current].spillStores = std::stoll(m[2]);
            r.kernels[current].spillLoads = std::stoll(m[3]);
        } else if (!current.empty() && std::regex_search(line, m, used))
            r.kernels[current].registers = std::stoi(m[1]);
    }
    return r;
}

} // namespace tlc::report
