#include "emit/Analysis.h"

#include "emit/Emit.h"
#include "emit/Runtime.h"
#include "ir/Accesses.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

using namespace ir;

bool isDebugCall(const Expr& e) {
    const Call* c = e.as<Call>();
    return c && (c->name == "print" || c->name == "assert");
}

int64_t bufferSpan(const Buffer& b) {
    int64_t last = 0;
    for (size_t i = 0; i < b->shape.size(); ++i) {
        const int64_t* extent = asConstInt(b->shape[i]);
        const int64_t* stride = asConstInt(b->strides[i]);
        if (!extent || !stride)
            throw EmitError(fmt::format("buffer '{}' ({}) needs a constant shape and strides", b->name,
                                        scopeName(b->scope)));
        if (*extent == 0) return 0;
        last += (*extent - 1) * (*stride < 0 ? -*stride : *stride);
    }
    return last + 1;
}

namespace {

// One pass over the body, skipping the values of lets already known to be dead.
class UseCollector : public IRVisitor {
public:
    UseCollector(KernelInfo& info, bool debug) : info_(info), debug_(debug) {}
    std::set<const BufferNode*> tmaStoreMaps;  // the maps of the TMA stores seen

protected:
    void visitVar(const Var* v) override {
        info_.usedVars.insert(v);
        if (VarRole role = info_.roleOf(v); role != VarRole::Plain) {
            size_t r = size_t(role);
            info_.roleUsed[r] = true;
            if (info_.roleName[r].empty()) info_.roleName[r] = v->name;
        }
    }
    void visitCast(const Cast* c) override {
        info_.dtypes.insert(c->dtype);
        IRVisitor::visitCast(c);
    }
    void visitLoad(const Load* l) override {
        touch(l->buffer).loaded = true;
        IRVisitor::visitLoad(l);
    }
    void visitCall(const Call* c) override {
        // Instruction helpers read and write registers through the address of an element:
        // whole 32-bit words (the packing of mma / ldmatrix fragments), up to 16 bytes.
        const InstructionHelper* helper = findInstructionHelper(c->name);
        bool registerView = helper && helper->addressesRegisters;
        for (const Expr& arg : c->args) {
            const Call* addr = arg.as<Call>();
            const Load* l = addr && addr->name == "address_of" && registerView ? addr->args[0].as<Load>() : nullptr;
            if (l && l->buffer->scope == MemScope::Local) {
                BufferUse& u = touch(l->buffer);
                u.vectorBytes = std::max(u.vectorBytes, 16);
                u.stored = true;
            }
        }
        // The cpu's row stores (tl_cpu.h, streaming_stores) write the tensor their first argument
        // addresses; a copy whose tile always fits has no element store beside them.
        // Split-K's arrival (tl::split_k_arrive) adds to the counter it addresses; a parallel
        // loop's vector stores (tl::store_vec, tl::atomic_add_v2/_v4) write where theirs points.
        if ((c->name == "store_row" || c->name == "store_line" || c->name == "split_k_arrive" ||
             c->name == "store_vec" || c->name == "atomic_add_vec") &&
            !c->args.empty())
            if (const Call* addr = c->args[0].as<Call>(); addr && addr->name == "address_of")
                if (const Load* l = addr->args[0].as<Load>()) touch(l->buffer).stored = true;
        // A TMA store writes the tensor its map describes (marked by analyzeKernel).
        if (helper && helper->storesThroughMap && !c->args.empty())
            if (const Call* addr = c->args[0].as<Call>(); addr && addr->name == "address_of")
                if (const Load* map = addr->args[0].as<Load>()) tmaStoreMaps.insert(map->buffer.get());
        IRVisitor::visitCall(c);
    }
    void visitStore(const Store* s) override {
        BufferUse& u = touch(s->buffer);
        u.stored = true;
        if (s->value->lanes > 1) {
            int bytes = s->value->lanes * dtypeBits(s->buffer->dtype) / 8;
            u.vectorBytes = std::max(u.vectorBytes, bytes);
            if (const Load* src = s->value.as<Load>()) {
                BufferUse& v = touch(src->buffer);
                v.vectorBytes = std::max(v.vectorBytes, bytes);
            }
        }
        IRVisitor::visitStore(s);
    }
    void visitEvaluate(const Evaluate* e) override {
        if (!debug_ && isDebugCall(e->value)) return;
        IRVisitor::visitEvaluate(e);
    }
    void visitLetStmt(const LetStmt* l) override {
        if (!info_.deadLets.count(l)) visit(l->value);
        visit(l->body);
    }
    void visitAllocate(const Allocate* a) override {
        info_.dtypes.insert(a->buffer->dtype);
        // The initial value is only printed when the buffer is used; visiting it anyway can only
        // keep a let alive that would otherwise be dropped, which is harmless.
        if (a->init) visit(a->init);
        visit(a->body);
    }

private:
    BufferUse& touch(const Buffer& b) {
        info_.dtypes.insert(b->dtype);
        for (const auto& s : b->strides) visit(s);  // the flattened index reads the strides' sizes
        return info_.buffers[info_.canonical(b.get())];
    }
    KernelInfo& info_;
    bool debug_;
};

// Every allocation, and every buffer that loads, stores and addresses name.
class BufferFinder : public AccessVisitor {
public:
    std::vector<const BufferNode*> allocated;
    std::vector<const BufferNode*> used;

protected:
    void visitAllocate(const Allocate* a) override {
        allocated.push_back(a->buffer.get());
        AccessVisitor::visitAllocate(a);
    }
    void onAccess(const Access& a) override { used.push_back(a.buffer.get()); }
};

// The lets of a body.
class LetFinder : public IRVisitor {
public:
    std::vector<const LetStmt*> lets;

protected:
    void visitLetStmt(const LetStmt* l) override {
        lets.push_back(l);
        IRVisitor::visitLetStmt(l);
    }
};

} // namespace

KernelInfo analyzeKernel(const Kernel& kernel, bool debug) {
    LetFinder finder;
    finder.visit(kernel.body);

    // Dropping a dead let can make the lets it read dead too: iterate until nothing changes.
    const VarRole blockRoles[3] = {VarRole::BlockIndexX, VarRole::BlockIndexY, VarRole::BlockIndexZ};
    std::map<const Var*, VarRole> implicitRoles;
    for (size_t i = 0; i < kernel.blockVars.size() && i < 3; ++i)
        if (kernel.blockVars[i]) implicitRoles[kernel.blockVars[i].get()] = blockRoles[i];
    if (kernel.threadIndex) implicitRoles[kernel.threadIndex.get()] = VarRole::ThreadIndex;

    // Views of allocations: a buffer that is used but neither allocated nor a parameter, with the
    // name and scope of an allocated one.
    std::map<const BufferNode*, const BufferNode*> aliases;
    {
        BufferFinder buffers;
        buffers.visit(kernel.body);
        std::set<const BufferNode*> known(buffers.allocated.begin(), buffers.allocated.end());
        for (const auto& p : kernel.params)
            if (p.buffer) known.insert(p.buffer.get());
        for (const BufferNode* b : buffers.used) {
            if (known.count(b) || aliases.count(b)) continue;
            if (b->viewOf) {  // view(A, [...]): A's storage
                aliases[b] = b->viewOf.get();
                continue;
            }
            for (const BufferNode* a : buffers.allocated)
                if (a->name == b->name && a->scope == b->scope && a->dtype == b->dtype) {
                    aliases[b] = a;
                    break;
                }
        }
    }

    std::set<const LetStmt*> dead;
    KernelInfo info;
    for (;;) {
        info = KernelInfo{};
        info.aliases = aliases;
        info.implicitRoles = implicitRoles;
        info.deadLets = dead;
        UseCollector collector(info, debug);
        collector.visit(kernel.body);
        for (const auto& m : kernel.tensorMaps)
            if (collector.tmaStoreMaps.count(m.map.get()))
                for (const auto& p : kernel.params)
                    if (p.buffer && p.name == m.tensor) info.buffers[p.buffer.get()].stored = true;
        std::set<const LetStmt*> now;
        for (const LetStmt* l : finder.lets)
            if (!info.used(l->var.get())) now.insert(l);
        if (now == dead) break;
        dead = std::move(now);
    }

    // The source's names for the indices, where the kernel has them.
    auto preferName = [&](VarRole role, const VarPtr& v) {
        if (v) info.roleName[size_t(role)] = v->name;
    };
    for (size_t i = 0; i < kernel.blockVars.size() && i < 3; ++i) preferName(blockRoles[i], kernel.blockVars[i]);
    preferName(VarRole::ThreadIndex, kernel.threadIndex);
    const char* defaults[5] = {"", "tx", "bx", "by", "bz"};
    for (size_t r = 1; r < 5; ++r)
        if (info.roleName[r].empty()) info.roleName[r] = defaults[r];

    for (const auto& p : kernel.params) info.dtypes.insert(p.dtype);
    return info;
}

} // namespace tlc::codegen

namespace tlc::codegen {

using namespace ir;

namespace {
class AllocationFinder : public IRVisitor {
public:
    explicit AllocationFinder(const KernelInfo& info) : info_(info) {}
    std::vector<const Allocate*> found;

protected:
    void visitAllocate(const Allocate* a) override {
        if (info_.live(a->buffer.get())) found.push_back(a);
        IRVisitor::visitAllocate(a);
    }

private:
    const KernelInfo& info_;
};
} // namespace

std::vector<const Allocate*> liveAllocations(const Kernel& kernel, const KernelInfo& info) {
    AllocationFinder finder(info);
    finder.visit(kernel.body);
    return finder.found;
}

} // namespace tlc::codegen
