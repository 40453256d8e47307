#include "target/Target.h"

#include <doctest/doctest.h>

TEST_CASE("targets: the table is not empty and every name is found") {
    REQUIRE(!tlc::allTargets().empty());
    for (const auto& t : tlc::allTargets()) CHECK(tlc::findTarget(std::string(t.name)) == &t);
}
