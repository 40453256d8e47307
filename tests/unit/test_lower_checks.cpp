// Lowering's last check: a tile op or tile-level loop that no pass lowered is reported at its
// statement (an error with a location), never left for the emitter to fail on without one.
#include "ir/Kernel.h"
#include "ops/atomic_add/AtomicAdd.h"
#include "passes/Passes.h"
#include "target/Target.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace tlc;
using namespace tlc::ir;

TEST_CASE("lower: a tile op no pass lowered is an error at its statement") {
    // atomic_add(C[l], 1.0) as a tile op inside a parallel loop (what IR building made of the
    // element form before it became an atomic store): the parallel loop's lowering keeps it.
    VarPtr N = makeVar("N");
    Buffer C = makeBuffer("C", DType::F32, MemScope::Global, {Expr(N)});
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX);
    VarPtr l = makeVar("l");
    Region dst{C, {Expr(l)}, {1}};
    Stmt op = tileOp(std::make_shared<ops::AtomicAddOp>(dst, std::nullopt, floatImm(1.0, DType::F32)), SourceLoc{6, 13});
    for (const char* name : {"cpu", "sm80"}) {
        Kernel k;
        k.name = "k";
        k.sourceName = "k.tl";
        k.loc = SourceLoc{1, 1};
        k.params = {KernelParam{KernelParam::Kind::Tensor, "C", DType::F32, C, nullptr},
                    KernelParam{KernelParam::Kind::Size, "N", DType::I32, nullptr, N}};
        k.gridExtents = {Expr(N)};
        k.blockVars = {bx};
        k.threads = 128;
        k.body = forLoop(l, intImm(0), intImm(128), ForKind::Parallel, op, SourceLoc{5, 9});
        SourceFile file("k.tl", "");
        DiagnosticEngine diags(file);
        std::ostringstream dumps;
        CHECK_FALSE(lowerKernel(k, *findTarget(name), diags, {}, dumps));
        REQUIRE(diags.errorCount() == 1);
        const auto& d = diags.diagnostics()[0];
        INFO(d.message);
        CHECK(d.message.find("'atomic_add(C[l") != std::string::npos);
        CHECK(d.message.find("no lowering took it over") != std::string::npos);
        CHECK(d.range.begin.line == 6);
        CHECK(d.range.begin.col == 13);
    }
}
