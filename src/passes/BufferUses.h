// How often each buffer is named in a statement: for passes that may remove a buffer only
// when they hold all its uses.
#pragma once

#include "ir/Stmt.h"

#include <map>
#include <set>

namespace tlc {

// Whether an annotate_layout counts as a use of the buffer it names: it does for passes that
// remove buffers (the annotation would name one that is gone); the software pipeline, which
// points annotations at the buffers it versions, asks where else a buffer is accessed.
enum class LayoutAnnotations { AreUses, AreNotUses };

// Loads and stores count once each, a tile op once per buffer among its regions (and layout
// annotations, unless told otherwise).
std::map<const ir::BufferNode*, int> countBufferUses(const ir::Stmt& s,
                                                     LayoutAnnotations annotations = LayoutAnnotations::AreUses);

// The global buffers the kernel writes (stores and tile ops).
std::set<const ir::BufferNode*> writtenTensors(const ir::Stmt& body);

} // namespace tlc
