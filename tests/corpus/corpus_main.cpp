// Runs the corpus tests registered by tests/corpus/*_test.cpp: all of them, or those whose
// names are given as arguments. Prints "N passed, N failed" (tests/run/harness.h).
#include "corpus.h"

#include <algorithm>
#include <cstdio>

int main(int argc, char** argv) {
    auto tests = corpus::registry();
    std::sort(tests.begin(), tests.end(), [](auto& a, auto& b) { return a.name < b.name; });
    int ran = 0;
    for (auto& test : tests) {
        if (argc > 1 && std::none_of(argv + 1, argv + argc, [&](const char* a) { return test.name == a; })) continue;
        std::printf("== %s\n", test.name.c_str());
        std::fflush(stdout);
        test.run();
        ++ran;
    }
    if (ran == 0) {
        std::printf("no corpus test matched\n");
        return 1;
    }
    return harness::summary();
}
