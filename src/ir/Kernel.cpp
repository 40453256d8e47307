#include "ir/Kernel.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::ir {

namespace {

// Adds `c` unless an equal condition is there; an alignment raises the tensor's one.
void add(std::vector<LaunchCheck>& out, LaunchCheck c) {
    for (auto& have : out) {
        if (!c.condition && !have.condition && have.tensor == c.tensor) {
            if (c.alignBytes > have.alignBytes) have = std::move(c);
            return;
        }
        if (c.condition && have.condition && equal(have.condition, c.condition)) return;
    }
    out.push_back(std::move(c));
}

} // namespace

std::vector<LaunchCheck> fastPathConditions(const Kernel& k) {
    std::vector<LaunchCheck> out;
    for (const auto& c : k.launchChecks) add(out, c);
    for (const auto& m : k.tensorMaps) {
        // The map's strides are its source's: the parameter's, or a view's over its pointer.
        const Buffer& b = m.source;
        const int64_t bytes = b ? dtypeBits(b->dtype) / 8 : 0;
        if (b && bytes > 0 && 16 % bytes == 0)
            for (size_t d = 0; d + 1 < b->strides.size(); ++d) {
                Expr whole = simplify(binary(BinaryOp::Eq, b->strides[d] % (16 / bytes), intImm(0)));
                if (const int64_t* known = asConstInt(whole); known && *known) continue;
                add(out, {whole, "", 0,
                          fmt::format("TMA: the strides of {} must be multiples of 16 bytes", b->name)});
            }
        add(out, {{}, m.tensor, 16, fmt::format("TMA: {} must be 16-byte aligned", m.tensor)});
    }
    return out;
}

bool isGeneralVariantOf(const Kernel& g, const Kernel& fast) {
    if (!g.generalShapes || fast.generalVariant.empty()) return false;
    return fast.group.empty() ? g.group.empty() && g.name == fast.generalVariant : g.group == fast.generalVariant;
}

std::string describe(const LaunchCheck& c) {
    std::string what = c.condition ? printExpr(c.condition) : fmt::format("{} is {}-byte aligned", c.tensor, c.alignBytes);
    if (!c.message.empty()) what += " (" + c.message + ")";
    return what;
}

} // namespace tlc::ir
