#include "recommend/ModelShape.h"

#include "ast/AST.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <cstdint>
#include <set>
#include <vector>

namespace tlc {

namespace {

// A dimension's value at `shape`, when it is arithmetic the model can follow (sizes, constants,
// + - * / %, ceildiv, min, max): `heads / groups`, `ceildiv(seqlen, chunk_size)`, a
// convolution's `(H + 2 * P - D * (K - 1) - 1) / S + 1`. In doubles: no overflow on the way.
std::optional<double> valueAt(const ast::Expr& e, const std::map<std::string, int64_t>& shape, int depth = 0) {
    if (depth > 64) return std::nullopt;
    if (e.constant) {
        if (const auto* v = std::get_if<int64_t>(&*e.constant)) return double(*v);
        return std::nullopt;
    }
    auto sub = [&](const ast::Expr* x) { return x ? valueAt(*x, shape, depth + 1) : std::nullopt; };
    if (const auto* n = e.as<ast::Name>()) {
        if (auto it = shape.find(n->name); it != shape.end()) return double(it->second);
        return std::nullopt;
    }
    if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnaryOp::Neg) {
        auto v = sub(u->operand.get());
        return v ? std::optional<double>(-*v) : std::nullopt;
    }
    if (const auto* b = e.as<ast::Binary>()) {
        auto l = sub(b->lhs.get()), r = sub(b->rhs.get());
        if (!l || !r) return std::nullopt;
        switch (b->op) {
        // Comparisons and logic as 1 or 0: a precondition's value (`require N <= block_N`).
        case ast::BinaryOp::Lt: return double(*l < *r);
        case ast::BinaryOp::Le: return double(*l <= *r);
        case ast::BinaryOp::Gt: return double(*l > *r);
        case ast::BinaryOp::Ge: return double(*l >= *r);
        case ast::BinaryOp::Eq: return double(*l == *r);
        case ast::BinaryOp::Ne: return double(*l != *r);
        case ast::BinaryOp::And: return double(*l != 0 && *r != 0);
        case ast::BinaryOp::Or: return double(*l != 0 || *r != 0);
        case ast::BinaryOp::Add: return *l + *r;
        case ast::BinaryOp::Sub: return *l - *r;
        case ast::BinaryOp::Mul: return *l * *r;
        case ast::BinaryOp::Div: return *r > 0 ? std::optional<double>(std::floor(*l / *r)) : std::nullopt;
        case ast::BinaryOp::Mod: return *r > 0 ? std::optional<double>(std::fmod(*l, *r)) : std::nullopt;
        default: return std::nullopt;
        }
    }
    if (const auto* c = e.as<ast::Call>(); c && c->args.size() == 2) {
        auto l = sub(c->args[0].value.get()), r = sub(c->args[1].value.get());
        if (!l || !r) return std::nullopt;
        if (c->callee == "ceildiv" && *r > 0) return std::ceil(*l / *r);
        if (c->callee == "min") return std::min(*l, *r);
        if (c->callee == "max") return std::max(*l, *r);
    }
    return std::nullopt;
}

} // namespace

std::map<std::string, int64_t> modelShape(const ast::Kernel& checked, const std::map<std::string, int64_t>& given) {
    std::map<std::string, int64_t> shape;
    std::vector<std::string> order;  // the sizes, in the kernel's order (ties halve the first)
    // Sizes of vectors only (no tensor of two or more dimensions names them) start at the
    // elements of a matrix at the default: an elementwise kernel over f32[N] is modelled at 2^24
    // elements, not at 4096, where every tile is launch latency alone.
    std::set<std::string> inMatrices;
    for (const ast::Param& p : checked.params)
        if (p.type.dims.size() >= 2)
            for (const auto& dim : p.type.dims)
                ast::forEachName(dim.get(), [&](const ast::Name& x) { inMatrices.insert(x.name); });
    for (const ast::Decl* d : checked.sizeParams) {
        auto it = given.find(d->name);
        const int64_t fallback = inMatrices.count(d->name) ? kDefaultShapeExtent : kDefaultShapeExtent * kDefaultShapeExtent;
        shape[d->name] = it == given.end() ? fallback : it->second;
        order.push_back(d->name);
    }
    // A tensor's elements at the current shape. A dimension the model cannot evaluate counts as
    // the product of the sizes it names (`f(N)` as N: usually an overestimate).
    auto elements = [&](const ast::Param& p, std::set<std::string>& named) {
        double n = 1;
        for (const auto& dim : p.type.dims) {
            std::set<std::string> names;
            ast::forEachName(dim.get(), [&](const ast::Name& x) {
                if (shape.count(x.name)) names.insert(x.name);
            });
            named.insert(names.begin(), names.end());
            if (auto v = valueAt(*dim, shape)) {
                n *= std::max(*v, 1.0);
                continue;
            }
            for (const auto& s : names) n *= double(shape[s]);
        }
        return n;
    };
    // Halves the largest of `named` that --shape did not give (a size the user gave is the
    // user's choice); false when none is left to halve.
    auto halveLargest = [&](const std::set<std::string>& named) {
        const std::string* largest = nullptr;
        for (const std::string& s : order) {
            if (!named.count(s) || given.count(s) || shape[s] <= 1) continue;
            if (!largest || shape[s] > shape[*largest]) largest = &s;
        }
        if (largest) shape[*largest] /= 2;
        return largest != nullptr;
    };
    // No tensor over the budget.
    for (const ast::Param& p : checked.params) {
        if (p.type.dims.empty()) continue;  // a scalar
        for (;;) {
            std::set<std::string> named;
            if (elements(p, named) <= double(kShapeElementBudget) || !halveLargest(named)) break;
        }
    }
    // The kernel's preconditions (`require`) hold at the shape where the model can evaluate
    // them: the sizes one names are halved, largest first, until it does (`require N <= block_N`
    // with block_N = 1024 models N = 1024, not a launch the kernel refuses).
    if (checked.body) {
        for (const auto& s : checked.body->stmts) {
            const auto* req = s->as<ast::RequireStmt>();
            if (!req) continue;
            std::set<std::string> named;
            ast::forEachName(req->cond.get(), [&](const ast::Name& x) { named.insert(x.name); });
            for (;;) {
                std::optional<double> holds = valueAt(*req->cond, shape);
                if (!holds || *holds != 0 || !halveLargest(named)) break;
            }
        }
    }
    return shape;
}

bool parseShapeOption(std::string_view text, std::map<std::string, int64_t>& out, std::string& error) {
    while (!text.empty()) {
        size_t comma = text.find(',');
        std::string item(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        size_t eq = item.find('=');
        std::string name = eq == std::string::npos ? item : item.substr(0, eq);
        std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
        bool ok = !name.empty() && !value.empty() && value.size() <= 10 &&
                  std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        int64_t v = ok ? std::stoll(value) : 0;
        if (!ok || v < 1 || v > INT32_MAX) {
            error = "--shape expects NAME=N,... with N a positive 32-bit integer, got '" + item + "'";
            return false;
        }
        out[name] = v;
    }
    return true;
}

} // namespace tlc
