#include "ops/annotate_layout/AnnotateLayout.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

TileOpPtr AnnotateLayoutOp::mapExprs(const std::function<Expr(const Expr&)>&) const {
    return std::make_shared<AnnotateLayoutOp>(buffer_, layout_);
}

std::string AnnotateLayoutOp::str() const {
    return fmt::format("annotate_layout({}, {})", buffer_.buffer->name, spelling(layout_));
}

Stmt AnnotateLayoutOp::lower(LowerContext&, SourceLoc loc) const { return comment(str(), loc); }

} // namespace tlc::ops
