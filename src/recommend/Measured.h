// Measured figures for the recommender's candidates: the sweeps bench/ runs on real machines
// (bench/cpu/sweep.py, the GPU kit's sweep phase) time a grid of configurations of an `auto`
// kernel and keep them as JSON (bench/data/*.json, embedded into tlc at build time; a user adds
// their own with --measured=FILE). A sweep applies to a recommendation when it measured the same
// kernel (its name and the fingerprint of its source), on the same target, with the same -D
// values; `tlc recommend`, --explain and the kernel report then show the measured time beside
// the model's estimate. The model's ranking itself does not read them.
#pragma once

#include "compile/Defines.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlc {

namespace ast {
struct Kernel;
}
struct Recommendation;

// One configuration a sweep timed.
struct MeasuredConfig {
    std::vector<std::pair<std::string, int64_t>> values;  // the auto parameters
    double us = 0;                                        // median time of one launch
    int rank = 0;                                         // 1 = fastest of the sweep
};

struct MeasuredSweep {
    std::string source;       // where it came from: "bench/data/cpu-avx512.json (embedded)", a file
    std::string machine;      // the machine it ran on, in words
    std::string date, commit;
    std::string target, kernel, fingerprint, file;
    std::map<std::string, std::string> defines;  // -D values of the kernel's fixed parameters
    std::map<std::string, int64_t> shape;         // the sizes it ran at
    std::vector<MeasuredConfig> configs;          // fastest first
};

// The sweeps tlc knows: the embedded ones and any read from files.
class MeasuredSet {
public:
    // `withEmbedded`: find() also consults the sweeps embedded from bench/data, parsed on the
    // first lookup (a compile that asks the recommender nothing never reads them).
    explicit MeasuredSet(bool withEmbedded = false) : withEmbedded_(withEmbedded) {}
    // The sweeps embedded from bench/data at build time.
    static const MeasuredSet& embedded();
    // Adds the sweeps of a JSON file (the format bench/cpu/sweep.py writes); false with `error`
    // set when the file cannot be read or is not such a file.
    bool addFile(const std::string& path, std::string& error);
    // Adds the sweeps of JSON text; `source` names it in messages.
    bool addText(const std::string& text, const std::string& source, std::string& error);

    // The sweep of `kernel` on `target` with these -D values (the kernel's parameters only), if
    // any; the newest when several match (the embedded ones too, with `withEmbedded`).
    const MeasuredSweep* find(const std::string& target, const ast::Kernel& kernel, const Defines& defines) const;

    bool empty() const { return sweeps_.empty(); }
    const std::vector<MeasuredSweep>& sweeps() const { return sweeps_; }
    // Why an embedded file was left out (none, unless bench/data holds a bad file: a unit test).
    const std::vector<std::string>& loadErrors() const { return loadErrors_; }

private:
    std::vector<MeasuredSweep> sweeps_;
    std::vector<std::string> loadErrors_;
    bool withEmbedded_ = false;
};

// The fingerprint of a kernel's source: 16 hex digits of a hash of the kernel printed back as
// .tl (ast::printKernelSource), so that comments and spacing do not change it.
std::string kernelFingerprint(const ast::Kernel& kernel);

// The measured time of the configuration `values` in `sweep`, if it was measured.
const MeasuredConfig* measuredConfig(const MeasuredSweep& sweep,
                                     const std::vector<std::pair<std::string, int64_t>>& values);

// "M=4096,N=1024": sizes as the recommender's messages write them.
std::string sizesText(const std::map<std::string, int64_t>& sizes);

// "measured on M at N=..: 812 us, 2nd of 36 (fastest: block_M=8, threads=64, 640 us)": for
// --explain and the report. Empty when `values` was not measured.
std::string measuredText(const MeasuredSweep& sweep, const std::vector<std::pair<std::string, int64_t>>& values);

} // namespace tlc
