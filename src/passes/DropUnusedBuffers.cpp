// Thread-level buffers that nothing reads or writes any more (a tile fuse-reductions computes
// inside its reduction) are not declared: on the cpu each would be storage the launcher
// allocates and clears for every thread.
#include "passes/BufferUses.h"
#include "passes/Passes.h"

#include "ir/Visitor.h"

namespace tlc {

using namespace ir;

Stmt dropUnusedBuffers(const Stmt& body) {
    class Drop : public IRMutator {
    public:
        explicit Drop(std::map<const BufferNode*, int> uses) : uses_(std::move(uses)) {}

    protected:
        Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
            Stmt inner = mutate(n->body);
            bool thread = n->buffer->scope == MemScope::Local || n->buffer->scope == MemScope::Fragment;
            if (thread && !n->init && !uses_.count(n->buffer.get())) return inner;
            return inner.same(n->body) ? self : allocate(n->buffer, inner, n->loc, n->init);
        }

    private:
        std::map<const BufferNode*, int> uses_;
    };
    return Drop(countBufferUses(body)).mutate(body);
}

} // namespace tlc
