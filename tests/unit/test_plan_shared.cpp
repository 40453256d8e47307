// plan-shared-memory on hand-built thread IR: live ranges, reuse of bytes between buffers
// whose ranges do not overlap, the barrier between the old and the new user, alignment.
#include "passes/Passes.h"
#include "passes/SharedLiveness.h"

#include <doctest/doctest.h>

#include <functional>

using namespace tlc;
using namespace tlc::ir;

namespace {

struct Planned {
    Kernel kernel;
    int barriers = 0;
};

int countBarriers(const Stmt& s) {
    if (!s) return 0;
    switch (s->kind) {
    case NodeKind::Barrier: return 1;
    case NodeKind::Seq: {
        int n = 0;
        for (const auto& c : s.as<Seq>()->stmts) n += countBarriers(c);
        return n;
    }
    case NodeKind::Allocate: return countBarriers(s.as<Allocate>()->body);
    case NodeKind::LetStmt: return countBarriers(s.as<LetStmt>()->body);
    case NodeKind::For: return countBarriers(s.as<For>()->body);
    case NodeKind::IfThenElse: return countBarriers(s.as<IfThenElse>()->thenCase) + countBarriers(s.as<IfThenElse>()->elseCase);
    default: return 0;
    }
}

Planned plan(Stmt body, const char* target = "sm80",
             std::function<void(LowerContext&)> setup = nullptr) {
    SourceFile file("plan.tl", "");
    DiagnosticEngine diags(file);
    LowerContext ctx(*findTarget(target), 128, diags);
    if (setup) setup(ctx);
    Kernel k;
    k.name = "plan";
    k.threads = 128;
    k.body = body;
    StageInference stages;
    k.body = planSharedMemory(k, k.body, ctx, stages);
    return {k, countBarriers(k.body)};
}

const SharedSlot& slot(const Kernel& k, const std::string& name) {
    for (const auto& s : k.sharedPlan)
        if (s.buffer->name == name) return s;
    FAIL("no slot for " << name);
    return k.sharedPlan.front();
}

Buffer shared(const std::string& name, int64_t rows, int64_t cols, DType t = DType::F32) {
    return makeBuffer(name, t, MemScope::Shared, {intImm(rows), intImm(cols)});
}

Stmt write(const Buffer& b) { return store(b, {intImm(0), intImm(1)}, cast(b->dtype, floatImm(1.0))); }
Stmt readInto(const Buffer& out, const Buffer& b) { return store(out, {intImm(0)}, cast(out->dtype, load(b, {intImm(0), intImm(1)}))); }

} // namespace

TEST_CASE("plan-shared-memory: buffers used one after the other share bytes, a barrier between") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer X = shared("X", 64, 64), Y = shared("Y", 32, 64);
    Planned p = plan(allocate(X, allocate(Y, seq({write(X), readInto(G, X), write(Y), readInto(G, Y)}))));
    CHECK(slot(p.kernel, "X").offset == 0);
    CHECK(slot(p.kernel, "Y").offset == 0);
    CHECK(p.kernel.sharedBytes == 64 * 64 * 4);
    CHECK(slot(p.kernel, "X").last < slot(p.kernel, "Y").first);
    CHECK(p.barriers == 1);  // other threads may still read X when Y is first written
    std::string plan = describeSharedPlan(p.kernel);
    CHECK(plan.find("Y: f32[32][64], offset 0, 8192 bytes, align 16") != std::string::npos);
    CHECK(plan.find("shares bytes with X") != std::string::npos);
}

TEST_CASE("plan-shared-memory: a barrier already between the users is enough") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer X = shared("X", 64, 64), Y = shared("Y", 64, 64);
    Planned p = plan(allocate(X, allocate(Y, seq({write(X), readInto(G, X), barrier(), write(Y), readInto(G, Y)}))));
    CHECK(p.kernel.sharedBytes == 64 * 64 * 4);
    CHECK(p.barriers == 1);
    // A barrier some threads may skip does not count.
    VarPtr c = makeVar("c");
    Planned q = plan(allocate(X, allocate(Y, seq({write(X), readInto(G, X), ifThenElse(Expr(c) < 3, barrier()),
                                                  write(Y), readInto(G, Y)}))));
    CHECK(q.barriers == 2);
}

TEST_CASE("plan-shared-memory: overlapping live ranges and loops keep bytes apart") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer X = shared("X", 16, 64), Y = shared("Y", 16, 64);
    // Y is written while X is still to be read.
    Planned p = plan(allocate(X, allocate(Y, seq({write(X), write(Y), readInto(G, X), readInto(G, Y)}))));
    CHECK(slot(p.kernel, "X").offset != slot(p.kernel, "Y").offset);
    CHECK(p.kernel.sharedBytes == 2 * 16 * 64 * 4);
    CHECK(p.barriers == 0);
    // In a loop, X's last read comes before Y's write in the body, but the next iteration
    // writes X again while Y is still read: both live for the whole loop.
    VarPtr k = makeVar("k");
    Stmt loop = forLoop(k, intImm(0), intImm(4), ForKind::Serial, seq({write(X), readInto(G, X), write(Y), readInto(G, Y)}));
    Planned q = plan(allocate(X, allocate(Y, loop)));
    CHECK(q.kernel.sharedBytes == 2 * 16 * 64 * 4);
    // The CPU gives every buffer its own array.
    Planned cpu = plan(allocate(X, allocate(Y, seq({write(X), readInto(G, X), write(Y), readInto(G, Y)}))), "cpu");
    CHECK(cpu.kernel.sharedBytes == 2 * 16 * 64 * 4);
    CHECK(cpu.barriers == 0);
}

TEST_CASE("plan-shared-memory: swizzled buffers start on their pattern's period") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer small = shared("small", 1, 4), S = shared("S", 64, 64, DType::F16);
    layout::Swizzle sw(8, 8, 1);  // 128-byte pattern
    CHECK(sw.baseAlignment() == 1024);
    Planned p = plan(allocate(small, allocate(S, seq({write(small), write(S), readInto(G, small), readInto(G, S)}))), "sm80",
                     [&](LowerContext& ctx) { ctx.sharedLayouts[S.get()].swizzle = sw; });
    CHECK(slot(p.kernel, "S").align == 1024);
    CHECK(slot(p.kernel, "S").offset % 1024 == 0);
    CHECK(slot(p.kernel, "small").align == 16);
    CHECK(p.kernel.sharedBytes == 64 * 64 * 2 + 16);  // the larger buffer first: at 0
    // Unused buffers take no bytes.
    Planned q = plan(allocate(small, allocate(S, seq({write(small), readInto(G, small)}))));
    CHECK(q.kernel.sharedPlan.size() == 1);
    CHECK(q.kernel.sharedBytes == 16);
}

TEST_CASE("shared liveness: statements are numbered in preorder") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer X = shared("X", 64, 64);
    SharedLiveness live = sharedLiveness(allocate(X, seq({write(X), readInto(G, X), store(G, {intImm(1)}, floatImm(2.0))})));
    REQUIRE(live.buffers.size() == 1);
    CHECK(live.buffers[0].first == 2);  // allocate 0, seq 1, the write 2
    CHECK(live.buffers[0].last == 3);
    CHECK(live.size == 5);
}

TEST_CASE("plan-shared-memory: the peak is where the buffers live together take the most") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    Buffer X = shared("X", 64, 64), Y = shared("Y", 32, 64), Z = shared("Z", 16, 64);
    // X alone, then Y and Z together (12 KB, less than X's 16 KB): the peak is X's.
    Stmt body = allocate(X, allocate(Y, allocate(Z, seq({write(X), readInto(G, X), write(Y), write(Z), readInto(G, Y),
                                                         readInto(G, Z)}))));
    SharedLiveness live = sharedLiveness(body);
    std::vector<int64_t> bytes;
    for (const auto& l : live.buffers) bytes.push_back(sharedBufferBytes(l.buffer));
    SharedPeak peak = sharedPeak(live, bytes);
    CHECK(peak.bytes == 64 * 64 * 4);
    REQUIRE(peak.buffers.size() == 1);
    CHECK(live.buffers[peak.buffers[0]].buffer->name == "X");
    // The same pool planned before lowering; versions multiply a buffer (Y in 3: 24 KB with Z).
    CHECK(plannedSharedBytes(body, {}, true) == 64 * 64 * 4);
    CHECK(plannedSharedBytes(body, {{Y.get(), 3}}, true) == 3 * 32 * 64 * 4 + 16 * 64 * 4);
    CHECK(plannedSharedBytes(body, {}, false) == (64 + 32 + 16) * 64 * 4);
}

TEST_CASE("plan-shared-memory: a pool over the limit with inferred stages at the peak asks for fewer") {
    Buffer G = makeBuffer("G", DType::F32, MemScope::Global, {intImm(4)});
    // 3 versions of 80 KB on gfx942's 64 KB: even one is too much.
    auto versions = std::make_shared<BufferNode>(
        *makeBuffer("V", DType::F32, MemScope::Shared, {intImm(3), intImm(128), intImm(160)}));
    Buffer V = versions;
    Stmt body = allocate(V, seq({store(V, {intImm(0), intImm(0), intImm(1)}, floatImm(1.0)),
                                 store(G, {intImm(0)}, load(V, {intImm(0), intImm(0), intImm(1)}))}),
                         SourceLoc{3, 5});
    for (int inferred : {0, -1}) {
        SourceFile file("plan.tl", "");
        DiagnosticEngine diags(file);
        LowerContext ctx(*findTarget("gfx942"), 128, diags);
        versions->pipeline = PipelineBuffer{PipelineBuffer::Kind::Versions, false, 3, 3, SourceLoc{7, 9}, inferred};
        Kernel k;
        k.name = "plan";
        StageInference stages;
        k.body = planSharedMemory(k, body, ctx, stages);
        if (inferred == 0) {
            // Nothing reported: lowerKernel lowers again with at most 2 stages for loop 0.
            CHECK(diags.errorCount() == 0);
            CHECK(stages.fewer == std::vector<int>{0});
            CHECK(stages.refusedBytes.at(0) == 3 * 81920);
        } else {
            // The author's stages: the error is at the loop, and even one version does not fit.
            REQUIRE(diags.errorCount() == 1);
            const Diagnostic& d = diags.diagnostics()[0];
            CHECK(d.range.begin.line == 7);
            CHECK(d.message.find("stages = 3 does not fit the shared memory of target 'gfx942'") == 0);
            CHECK_MESSAGE(d.message.find("even without pipelining the loop's buffers need 81920 bytes") != std::string::npos,
                          d.message);
            REQUIRE(d.notes.size() == 1);
            CHECK(d.notes[0].message == "'V', live at the peak, takes 245760 bytes (3 versions of 81920 for the pipelined loop at line 7)");
        }
    }
}
