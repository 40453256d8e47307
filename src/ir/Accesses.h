// What code touches: the one definition of a buffer access that passes share. An access is a
// load, a store, a region of a tile op, or an element whose address a call takes (the
// instruction helpers read and write through it: ldmatrix, mma, cp.async, store_line, ...).
// AccessVisitor reports each as an Access, in program order; Footprint sums them up for a
// statement. Passes that need more (a slot, a row, a position) read it off the Access.
#pragma once

#include "ir/Stmt.h"
#include "ir/Visitor.h"

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace tlc::ir {

class TileOp;

struct Access {
    enum class Via : uint8_t { Load, Store, Region, Address };
    Via via;
    const Buffer& buffer;
    const std::vector<Expr>& indices;        // an element's indices, or a region's starts
    const std::vector<int64_t>* extents;     // a region's extents; null for one element
    bool write = false;                      // a store, or a region the op writes
    StoreKind storeKind = StoreKind::Plain;  // a store's (plain or atomic)
    const TileOp* op = nullptr;              // a region's op
    // An address's taker, when the address is its argument number `argument` (what the call
    // does there is the call's: a helper may read, write or only prefetch it). Null when the
    // address stands elsewhere (a let's value).
    const Call* call = nullptr;
    size_t argument = 0;

    bool element() const { return extents == nullptr; }
};

// An IRVisitor that also sees every access, in program order: onAccess is called for a node
// before its children are visited (an address's indices are visited, not its load). Subclasses
// override onAccess and whatever else they track (loops, lets, allocations); one that overrides
// visitLoad, visitStore, visitTileOpStmt or visitCall calls this class's version to keep the
// accesses coming.
class AccessVisitor : public IRVisitor {
protected:
    virtual void onAccess(const Access& access) { (void)access; }

    void visitLoad(const Load* n) override;
    void visitStore(const Store* n) override;
    void visitTileOpStmt(const TileOpStmt* n) override;
    void visitCall(const Call* n) override;

private:
    // When `c` is address_of(x[i]), argument `k` of `taker` (or of nothing): one Address access.
    bool visitAddress(const Call* c, const Call* taker, size_t k);
};

// What a statement touches: buffers read (loads, addresses, regions read) and written (stores,
// regions written), how many places access each, and the tile ops it holds.
struct Footprint {
    std::set<const BufferNode*> reads, writes;
    std::map<const BufferNode*, int> accesses;
    std::vector<const TileOp*> ops;

    bool touches(const BufferNode* b) const { return reads.count(b) || writes.count(b); }
    static Footprint of(const Stmt& s);
    static Footprint of(const Expr& e);
};

} // namespace tlc::ir
