// Measured sweeps (recommend/Measured.h): bench/data's embedded files load, a sweep is matched
// by target, kernel source and -D values, and its configurations are ranked by time.
#include "compile/Program.h"
#include "recommend/Measured.h"
#include "support/Diagnostics.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using namespace tlc;

namespace {

const char* kKernel = R"(kernel k<block_M = auto, threads = 128>(X: f32[M, N], Y: f32[M, N]) {
    grid(ceildiv(M, block_M), threads = threads) as (bx) {
        let x = alloc_fragment([block_M, N], f32);
        copy(X[bx * block_M, 0], x);
        copy(x, Y[bx * block_M, 0]);
    }
}
)";

std::unique_ptr<Program> parse(const std::string& text, std::unique_ptr<SourceFile>& file) {
    file = std::make_unique<SourceFile>("k.tl", text);
    DiagnosticEngine diags(*file);
    auto program = Program::parse(*file, diags, {});
    REQUIRE(program);
    REQUIRE(!diags.hasErrors());
    return program;
}

std::string sweepJson(const std::string& fingerprint, const std::string& defines = "{}") {
    return R"({"machine": "m", "date": "2026-11-29", "tlc": "abc", "target": "cpu", "sweeps": [
        {"kernel": "k", "fingerprint": ")" + fingerprint + R"(", "defines": )" + defines + R"(, "shape": {"M": 100},
         "configs": [{"values": {"block_M": 4}, "us": 30.0}, {"values": {"block_M": 8}, "us": 10.0},
                     {"values": {"block_M": 16}, "failed": "wrong"}, {"values": {"block_M": 2}, "us": 20.0}]}]})";
}

} // namespace

TEST_CASE("measured: bench/data's embedded sweeps load") {
    const MeasuredSet& set = MeasuredSet::embedded();
    for (const auto& e : set.loadErrors()) FAIL_CHECK(e);
    for (const auto& s : set.sweeps()) {
        CAPTURE(s.kernel);
        CHECK(!s.machine.empty());
        CHECK(s.fingerprint.size() == 16);
        for (size_t i = 1; i < s.configs.size(); ++i) CHECK(s.configs[i - 1].us <= s.configs[i].us);
    }
}

TEST_CASE("measured: a sweep is found by target, kernel source and -D values, ranked by time") {
    std::unique_ptr<SourceFile> file;
    auto program = parse(kKernel, file);
    const ast::Kernel& kernel = *program->syntax().kernels.front();
    std::string fingerprint = kernelFingerprint(kernel);
    CHECK(fingerprint.size() == 16);

    MeasuredSet set;
    std::string error;
    REQUIRE(set.addText(sweepJson(fingerprint), "s.json", error));
    const MeasuredSweep* s = set.find("cpu", kernel, {});
    REQUIRE(s);
    REQUIRE(s->configs.size() == 3);  // the failed configuration has no time
    CHECK(s->configs[0].us == 10.0);
    CHECK(s->configs[0].rank == 1);
    const MeasuredConfig* four = measuredConfig(*s, {{"block_M", 4}});
    REQUIRE(four);
    CHECK(four->rank == 3);
    CHECK(measuredText(*s, {{"block_M", 4}}).find("3rd of 3") != std::string::npos);
    CHECK(measuredText(*s, {{"block_M", 64}}).empty());

    CHECK(!set.find("cpu-avx2", kernel, {}));
    CHECK(!set.find("cpu", kernel, {{"threads", "256"}}));
    CHECK(set.find("cpu", kernel, {{"UNRELATED", "1"}}));  // a -D of nothing in the kernel does not count

    MeasuredSet other;
    REQUIRE(other.addText(sweepJson("0123456789abcdef"), "s.json", error));
    CHECK(!other.find("cpu", kernel, {}));

    // Comments and spacing do not change the fingerprint; a changed statement does.
    std::unique_ptr<SourceFile> f2, f3;
    auto spaced = parse(std::string("// a comment\n") + kKernel, f2);
    CHECK(kernelFingerprint(*spaced->syntax().kernels.front()) == fingerprint);
    std::string edited = kKernel;
    edited.replace(edited.find("copy(x, Y"), 4, "copy");  // same text: a control
    auto same = parse(edited, f3);
    CHECK(kernelFingerprint(*same->syntax().kernels.front()) == fingerprint);
    std::unique_ptr<SourceFile> f4;
    std::string changed = kKernel;
    changed.replace(changed.find("threads = 128"), 13, "threads = 256");
    auto diff = parse(changed, f4);
    CHECK(kernelFingerprint(*diff->syntax().kernels.front()) != fingerprint);
}

TEST_CASE("measured: files that are not sweeps are refused with the reason") {
    MeasuredSet set;
    std::string error;
    CHECK(!set.addText("[1, 2]", "a.json", error));
    CHECK(error.find("a.json: not a JSON object") != std::string::npos);
    CHECK(!set.addText(R"({"target": "cpu"})", "b.json", error));
    CHECK(error.find("'sweeps'") != std::string::npos);
    CHECK(!set.addText(R"({"target": "cpu", "sweeps": [{"kernel": "k"}]})", "c.json", error));
    CHECK(error.find("'fingerprint'") != std::string::npos);
    CHECK(set.empty());
    CHECK(!set.addFile("/nonexistent/sweep.json", error));
    CHECK(error.find("cannot read") != std::string::npos);
}
