// Runs a function on a thread with a large stack. The front end recurses over the tree; input
// depth is bounded (ParseLimits), and this gives those bounds generous headroom.
#pragma once

#include <functional>

namespace tlc {

void runWithLargeStack(const std::function<void()>& fn, size_t stackBytes = size_t(512) << 20);

} // namespace tlc
