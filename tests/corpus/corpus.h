// The corpus driver's registry: each tests/corpus/NAME_test.cpp defines CORPUS_TEST(NAME) { ... },
// which runs the port NAME.tl's launcher on random inputs against a double-precision reference
// (tests/run/harness.h). corpus_main.cpp runs every registered test, or those named on the
// command line.
#pragma once

#include "harness.h"

#include <functional>
#include <string>
#include <vector>

namespace corpus {

struct Test {
    std::string name;
    std::function<void()> run;
};

inline std::vector<Test>& registry() {
    static std::vector<Test> tests;
    return tests;
}

struct Register {
    Register(const char* name, void (*fn)()) { registry().push_back({name, fn}); }
};

// "M=72 N=100" for a message.
inline std::string dims(std::initializer_list<std::pair<const char*, long>> values) {
    std::string out;
    for (auto& [name, value] : values) out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
    return out;
}

} // namespace corpus

#define CORPUS_TEST(name)                                                   \
    static void corpus_test_##name();                                       \
    static corpus::Register corpus_register_##name(#name, corpus_test_##name); \
    static void corpus_test_##name()
