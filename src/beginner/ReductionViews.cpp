// The tiles of a reduction kernel's tensors (ReductionLowering.h): NumPy's broadcasting against
// the reductions' shape, each tensor's region of a chunk or row, its elements, and the rewrite
// of the author's expressions onto them.
#include "beginner/ReductionLowering.h"
#include "beginner/Reductions.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::beginner::reduce_impl {

// NumPy's broadcasting against the space (row = false) or against the reduced shape, where a
// tensor of one dimension fewer is the reduced shape without its 1 (as `y: f32[M]`).
std::optional<std::vector<Role>> Lowerer::align(const Param& p, bool row, SourceRange at) {
    const auto& dims = p.type.dims;
    std::vector<Role> roles;
    const bool dropped = row && dims.size() + 1 == rank_;
    if (dims.size() > rank_) {
        diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, "count", dims.size(), rank_,
                      "an operand has at most the dimensions of the reductions' operands");
        ok_ = false;
        return std::nullopt;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
        const size_t r = dropped ? (d < dim_ ? d : d + 1) : rank_ - dims.size() + d;
        if (row && r == dim_) {
            if (isOne(*dims[d])) {
                roles.push_back(Role::One);
                continue;
            }
            error(at, p.name,
                  fmt::format("it is read whole (dimension {} is {}) where the result is reduced over that "
                              "dimension; reduce it (sum(..., dim = {})) or assign a tensor of the whole shape",
                              d, text(*dims[d]), dim_));
            return std::nullopt;
        }
        if (text(*dims[d]) == text(*space_[r])) roles.push_back(roleOf(r));
        else if (isOne(*dims[d])) roles.push_back(Role::One);
        else {
            diags_.report(DiagId::err_whole_tensor_broadcast, at, p.name, d, text(*dims[d]), text(*space_[r]),
                          "broadcasting needs equal sizes or 1");
            ok_ = false;
            return std::nullopt;
        }
    }
    return roles;
}

View& Lowerer::view(const std::string& name, bool row, SourceRange at) {
    auto& views = row ? row_ : full_;
    if (auto it = views.find(name); it != views.end()) return it->second;
    const Param& p = *tensor(name);
    auto roles = align(p, row, at);
    return views[name] = View{&p, fresh(name + (row ? "_row" : "_tile")), roles.value_or(std::vector<Role>{})};
}

std::string Lowerer::region(const View& v) const {
    std::string subs;
    bool tiled = false;
    for (Role r : v.roles) tiled = tiled || r != Role::Batch;
    for (size_t d = 0; d < v.roles.size(); ++d) {
        std::string s;
        switch (v.roles[d]) {
        case Role::Batch: s = !tiled && d + 1 == v.roles.size() ? bb_ + " : +1" : bb_; break;
        case Role::One: s = "0 : +1"; break;
        case Role::Kept: s = fmt::format("{} * {} : +{}", bk_, blocks_[kept_], blocks_[kept_]); break;
        case Role::Red: s = fmt::format("{} * {} : +{}", c_, blocks_[red_], blocks_[red_]); break;
        }
        subs += (subs.empty() ? "" : ", ") + s;
    }
    return fmt::format("{}[{}]", v.param->name, subs);
}

// The tile's extents and the element at the loop variables; a tensor of batch dimensions only
// takes a one-element tile.
std::string Lowerer::extents(const View& v) const {
    std::string out;
    for (Role r : v.roles)
        if (r != Role::Batch) out += (out.empty() ? "" : ", ") + (r == Role::One ? std::string("1") : blocks_[r == Role::Kept ? kept_ : red_]);
    return out.empty() ? "1" : out;
}

std::string Lowerer::element(const View& v) const {
    std::string out;
    for (Role r : v.roles)
        if (r != Role::Batch) out += (out.empty() ? "" : ", ") + (r == Role::One ? std::string("0") : vars_[r == Role::Kept ? kept_ : red_]);
    return fmt::format("{}[{}]", v.tile, out.empty() ? "0" : out);
}

std::string Lowerer::rewrite(const Expr& e, bool row, std::vector<std::string>& reads, SourceRange at) {
    ExprPtr out = cloneSyntax(e);
    replaceIn(out, [&](ExprPtr& x) {
        std::string with;
        if (const auto* n = x->as<Name>(); n && tensor(n->name)) {
            with = element(view(n->name, row, at));
            if (std::find(reads.begin(), reads.end(), n->name) == reads.end()) reads.push_back(n->name);
        } else if (const auto* c = x->as<Call>(); c && isReductionCall(*c)) {
            const std::string key = text(*x);
            for (const auto& r : reds_)
                if (r.key == key) with = fmt::format("{}[{}]", r.frag, vars_[kept_]);
        } else if (const auto* b = x->as<Binary>(); b && b->op == BinaryOp::MatMul) {
            with = fmt::format("{}[{}, {}]", mmAcc_, vars_[0], vars_[1]);  // the chunk's GEMM
        }
        if (with.empty()) return false;
        x = std::make_unique<Name>(x->range, with);  // printed as written: the text is parsed again
        return true;
    });
    return text(*out);
}

std::string Lowerer::copiesIn(const std::vector<std::string>& names, bool row, const std::set<std::string>& skip) {
    std::string out;
    for (const auto& n : names)
        if (!skip.count(n)) {
            const View& v = (row ? row_ : full_).at(n);
            out += fmt::format("copy({}, {});\n", region(v), v.tile);
        }
    return out;
}

} // namespace tlc::beginner::reduce_impl
