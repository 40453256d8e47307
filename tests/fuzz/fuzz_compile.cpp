// libFuzzer target: the whole pipeline, as `tlc FILE --target=T -o OUT` runs it, on arbitrary
// bytes (the first byte picks the target). Inputs that sema accepts go through IR building,
// lowering and emission. Built by scripts/fuzz.sh; see docs/testing.md.
#include "driver/Driver.h"
#include "target/Target.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    auto targets = tlc::allTargets();
    const tlc::Target& target = targets[data[0] % targets.size()];
    // The driver reads a file: write the input to one (tmpfs-backed /tmp on most machines).
    static const std::string path = "/tmp/tlc-fuzz-compile-" + std::to_string(getpid()) + ".tl";
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data) + 1, static_cast<std::streamsize>(size - 1));
    }
    tlc::DriverOptions options;
    options.input = path;
    options.target = std::string(target.name);
    options.errorLimit = 20;
    std::ostringstream out, err;  // no -o: the source goes to `out`
    int code = tlc::runDriver(options, out, err);
    // Exit code 2 (usage) would mean the driver rejected what this harness set up.
    if (code != 0 && code != 1) __builtin_trap();
    return 0;
}
