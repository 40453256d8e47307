// What the emitter needs to know about a kernel before printing it: which variables and
// buffers are used (so that nothing unused is declared: -Wall stays quiet), which tensors are
// written (the others become `const`), how wide the vector moves on each buffer are (for
// alignment), and the names of the block and thread indices.
#pragma once

#include "ir/Kernel.h"

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tlc::codegen {

struct BufferUse {
    bool loaded = false;
    bool stored = false;
    int vectorBytes = 0;  // widest vector move that touches the buffer
};

struct KernelInfo {
    std::set<const ir::Var*> usedVars;
    std::set<const ir::LetStmt*> deadLets;          // lets whose variable nothing reads
    std::map<const ir::BufferNode*, BufferUse> buffers;  // every buffer that live code touches
    std::array<bool, 5> roleUsed{};                 // by VarRole
    std::array<std::string, 5> roleName;            // tx, bx, by, bz as named in the source
    std::set<DType> dtypes;                         // every element/value type in the kernel
    // Loads and stores through another BufferNode with the name and scope of an allocation (a
    // reshaped view of it) use the allocation's storage: view -> allocated buffer.
    std::map<const ir::BufferNode*, const ir::BufferNode*> aliases;
    const ir::BufferNode* canonical(const ir::BufferNode* b) const {
        auto it = aliases.find(b);
        return it == aliases.end() ? b : it->second;
    }
    // The kernel's blockVars and threadIndex stand for the indices even without a role.
    std::map<const ir::Var*, ir::VarRole> implicitRoles;

    ir::VarRole roleOf(const ir::Var* v) const {
        if (v->role != ir::VarRole::Plain) return v->role;
        auto it = implicitRoles.find(v);
        return it == implicitRoles.end() ? ir::VarRole::Plain : it->second;
    }

    bool used(const ir::Var* v) const { return usedVars.count(v) != 0; }
    bool live(const ir::BufferNode* b) const { return buffers.count(canonical(b)) != 0; }
    const BufferUse* use(const ir::BufferNode* b) const {
        auto it = buffers.find(canonical(b));
        return it == buffers.end() ? nullptr : &it->second;
    }
    bool written(const ir::BufferNode* b) const {
        const BufferUse* u = use(b);
        return u && u->stored;
    }
};

// debug: print/assert calls count as uses (otherwise they are compiled out).
KernelInfo analyzeKernel(const ir::Kernel& kernel, bool debug);

// True for the Evaluate calls that only exist with --debug.
bool isDebugCall(const ir::Expr& e);

// Number of elements a buffer with constant shape and strides spans (max offset + 1); throws
// EmitError for symbolic shapes.
int64_t bufferSpan(const ir::Buffer& b);

} // namespace tlc::codegen

namespace tlc::codegen {

// Live allocations of any scope, in body order.
std::vector<const ir::Allocate*> liveAllocations(const ir::Kernel& kernel, const KernelInfo& info);

} // namespace tlc::codegen
