#include "recommend/ModelShape.h"

#include "ast/AST.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <vector>

namespace tlc {

namespace {

// The identifiers of a symbolic extent's canonical text ("heads / 2" -> heads).
std::set<std::string> namesIn(const std::string& text) {
    std::set<std::string> out;
    for (size_t i = 0; i < text.size();) {
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        if (!word(text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && word(text[j])) ++j;
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) out.insert(text.substr(i, j - i));
        i = j;
    }
    return out;
}

// One tensor parameter as the budget sees it: the product of its constant dimensions and, per
// symbolic dimension, the sizes it names.
struct TensorSizes {
    double constantElements = 1;
    std::vector<std::vector<std::string>> dims;
};

} // namespace

std::map<std::string, int64_t> modelShape(const ast::Kernel& checked, const std::map<std::string, int64_t>& given) {
    std::map<std::string, int64_t> shape;
    std::vector<std::string> order;  // the sizes, in the kernel's order (ties halve the first)
    for (const ast::Decl* d : checked.sizeParams) {
        auto it = given.find(d->name);
        shape[d->name] = it == given.end() ? kDefaultShapeExtent : it->second;
        order.push_back(d->name);
    }
    std::vector<TensorSizes> tensors;
    for (const ast::Param& p : checked.params) {
        if (!p.decl || p.decl->type.kind != Type::Kind::Tensor) continue;
        TensorSizes t;
        for (const Extent& e : p.decl->type.shape) {
            if (e.isConstant()) {
                t.constantElements *= double(std::max<int64_t>(*e.value, 1));
                continue;
            }
            std::vector<std::string> sizes;
            for (const std::string& n : namesIn(e.symbol))
                if (shape.count(n)) sizes.push_back(n);
            t.dims.push_back(std::move(sizes));
        }
        tensors.push_back(std::move(t));
    }
    auto elements = [&](const TensorSizes& t) {
        double n = t.constantElements;
        for (const auto& dim : t.dims)
            for (const auto& s : dim) n *= double(shape[s]);
        return n;
    };
    // Halve the largest free size of a tensor over the budget until none is; sizes --shape
    // gave are kept (a tensor over the budget at the user's shape is the user's choice).
    for (const TensorSizes& t : tensors) {
        while (elements(t) > double(kShapeElementBudget)) {
            const std::string* largest = nullptr;
            for (const std::string& s : order) {
                bool inTensor = false;
                for (const auto& dim : t.dims)
                    for (const auto& n : dim) inTensor = inTensor || n == s;
                if (!inTensor || given.count(s) || shape[s] <= 1) continue;
                if (!largest || shape[s] > shape[*largest]) largest = &s;
            }
            if (!largest) break;
            shape[*largest] /= 2;
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
