// The one translation unit that holds doctest's main(); every other tests/unit/*.cpp only
// includes <doctest/doctest.h> and defines TEST_CASEs.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
