// The emitter on hand-built thread IR: what the CUDA, HIP and C++ output must contain.
#include "emit/Emit.h"
#include "emit/Runtime.h"
#include "test_emit_kernels.h"

#include <doctest/doctest.h>

using namespace tlc;
using namespace tlc::emit_test;

TEST_CASE("emit: placeholder") {
    const Target* t = findTarget("sm90");
    EmitOptions o;
    o.headerName = "vadd.h";
    EmitResult r = emit({vectorAdd(*t)}, *t, o);
    CHECK(!r.source.empty());
}
