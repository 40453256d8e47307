#include "ops/Op.h"

#include <stdexcept>

namespace tlc::ops {

const Op& asOp(const ir::TileOp& op) {
    if (const auto* o = dynamic_cast<const Op*>(&op)) return *o;
    throw std::logic_error("tile op '" + op.name() + "' has no lowering (it does not derive from ops::Op)");
}

} // namespace tlc::ops
