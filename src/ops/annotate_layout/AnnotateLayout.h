// annotate_layout(buf, layout): fixes how a shared buffer is stored instead of letting layout
// inference choose. `row_major` stores it plainly (no swizzle), `swizzle_32B` / `_64B` /
// `_128B` xor-swizzle its 16-byte chunks with that pattern (layout/Swizzle.h), `padded` adds
// one 16-byte chunk to every row. The op lowers to nothing: layout inference reads it and the
// apply-shared-layouts pass carries it out. (Fragments follow the ops that use them; their
// annotations are refused by sema, as is `col_major`, which would break row vector moves.)
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"
#include "layout/SharedLayoutName.h"

#include <optional>
#include <string_view>

namespace tlc::ops {

class AnnotateLayoutOp : public Op {
public:
    AnnotateLayoutOp(ir::Region buffer, layout::SharedLayoutName layout) : buffer_(std::move(buffer)), layout_(layout) {}
    const ir::Buffer& buffer() const { return buffer_.buffer; }
    layout::SharedLayoutName layout() const { return layout_; }

    std::string name() const override { return "annotate_layout"; }
    std::vector<const ir::Region*> reads() const override { return {}; }
    std::vector<const ir::Region*> writes() const override { return {}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region buffer_;
    layout::SharedLayoutName layout_;
};

} // namespace tlc::ops
