// Shared memory: the ops' scratch buffers are declared once at the top of the kernel, and the
// total (the author's buffers plus scratch) must fit the target.
#include "passes/Passes.h"

#include "ir/Visitor.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {
class SharedCounter : public IRVisitor {
public:
    int64_t bytes = 0;

protected:
    void visitAllocate(const Allocate* n) override {
        if (n->buffer->scope == MemScope::Shared) bytes += bytesOf(n->buffer);
        IRVisitor::visitAllocate(n);
    }

public:
    static int64_t bytesOf(const Buffer& b) {
        int64_t n = 1;
        for (const auto& e : b->shape) n *= asConstInt(e) ? *asConstInt(e) : 0;
        return (n * dtypeBits(b->dtype) + 7) / 8;
    }
};
} // namespace

Stmt planSharedMemory(Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    Stmt out = body;
    for (auto it = ctx.scratchBuffers().rbegin(); it != ctx.scratchBuffers().rend(); ++it) out = allocate(*it, out, kernel.loc);
    SharedCounter counter;
    counter.visit(out);
    kernel.sharedBytes = counter.bytes;
    if (counter.bytes > ctx.target.sharedMemPerBlock)
        ctx.diags.report(DiagId::err_shared_memory_total, SourceRange(kernel.loc), counter.bytes, ctx.target.name,
                         ctx.target.sharedMemPerBlock);
    return out;
}

} // namespace tlc
