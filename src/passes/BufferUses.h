// How often each buffer is named in a statement: for passes that may remove a buffer only
// when they hold all its uses.
#pragma once

#include "ir/Stmt.h"

#include <map>
#include <set>

namespace tlc {

// Loads and stores count once each, a tile op once per buffer among its regions (and layout
// annotations).
std::map<const ir::BufferNode*, int> countBufferUses(const ir::Stmt& s);

// The global buffers the kernel writes (stores and tile ops).
std::set<const ir::BufferNode*> writtenTensors(const ir::Stmt& body);

} // namespace tlc
