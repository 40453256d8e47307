#include "layout/Fragment.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

namespace tlc::layout {

using namespace tlc::ir;

namespace {

Expr counter(const Expr& base, int64_t stride, int64_t extent, int64_t total) {
    Expr e = stride == 1 ? base : base / stride;
    // The modulo is redundant for the outermost counter.
    if (stride * extent < total) e = e % extent;
    return e;
}

// The canonical form of a dimension's terms: no unit digits, sorted by scale, and two
// neighbouring digits of the same counter that continue each other merged into one
// (l%4 + 4*(l/4%2) is l%8), so that equal placements compare equal.
std::vector<Term> normalized(std::vector<Term> terms) {
    terms.erase(std::remove_if(terms.begin(), terms.end(), [](const Term& t) { return t.extent == 1; }), terms.end());
    std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.scale < b.scale; });
    std::vector<Term> out;
    for (const Term& t : terms) {
        if (!out.empty()) {
            Term& prev = out.back();
            if (prev.onThread == t.onThread && t.scale == prev.scale * prev.extent && t.stride == prev.stride * prev.extent) {
                prev.extent *= t.extent;
                continue;
            }
        }
        out.push_back(t);
    }
    return out;
}

} // namespace

Fragment::Fragment(std::vector<int64_t> shape, int64_t threads, int64_t locals, std::vector<std::vector<Term>> dims)
    : shape_(std::move(shape)), threads_(threads), locals_(locals) {
    if (dims.size() != shape_.size()) throw std::logic_error("fragment: one term list per dimension expected");
    for (size_t d = 0; d < dims.size(); ++d) {
        dims_.push_back(normalized(std::move(dims[d])));
        // Each dimension's terms must be the digits of a mixed-radix number covering its extent.
        int64_t expect = 1;
        for (const Term& t : dims_.back()) {
            if (t.scale != expect) throw std::logic_error("fragment: terms of a dimension are not mixed-radix digits");
            expect *= t.extent;
        }
        if (expect != shape_[d]) throw std::logic_error("fragment: terms do not cover the dimension");
    }
}

std::vector<Expr> Fragment::indicesAt(const Expr& tx, const Expr& local) const {
    std::vector<Expr> out;
    for (const auto& terms : dims_) {
        Expr idx;
        for (const Term& t : terms) {
            Expr c = t.onThread ? counter(tx, t.stride, t.extent, threads_) : counter(local, t.stride, t.extent, locals_);
            Expr term = t.scale == 1 ? c : c * t.scale;
            idx = idx ? idx + term : term;
        }
        out.push_back(idx ? idx : intImm(0));
    }
    return out;
}

std::vector<int64_t> Fragment::elementAt(int64_t tx, int64_t local) const {
    std::vector<int64_t> out;
    for (const auto& terms : dims_) {
        int64_t idx = 0;
        for (const Term& t : terms) idx += ((t.onThread ? tx : local) / t.stride) % t.extent * t.scale;
        out.push_back(idx);
    }
    return out;
}

std::pair<int64_t, int64_t> Fragment::holderOf(const std::vector<int64_t>& indices) const {
    int64_t thread = 0, local = 0;
    for (size_t d = 0; d < dims_.size(); ++d)
        for (const Term& t : dims_[d]) (t.onThread ? thread : local) += (indices[d] / t.scale) % t.extent * t.stride;
    return {thread, local};
}

Expr Fragment::localOf(const std::vector<Expr>& indices) const {
    Expr local;
    for (size_t d = 0; d < dims_.size(); ++d) {
        for (const Term& t : dims_[d]) {
            if (t.onThread) continue;
            Expr c = counter(indices[d], t.scale, t.extent, shape_[d]);
            Expr term = t.stride == 1 ? c : c * t.stride;
            local = local ? local + term : term;
        }
    }
    return local ? local : intImm(0);
}

Expr Fragment::ownedBy(const std::vector<Expr>& indices, const Expr& tx) const {
    Expr cond = boolImm(true);
    for (size_t d = 0; d < dims_.size(); ++d)
        for (const Term& t : dims_[d])
            if (t.onThread)
                cond = logicalAnd(cond, binary(BinaryOp::Eq, counter(indices[d], t.scale, t.extent, shape_[d]),
                                               counter(tx, t.stride, t.extent, threads_)));
    return cond;
}

namespace {
// The thread digits (stride, extent) that no dimension uses.
std::vector<std::pair<int64_t, int64_t>> replicaDigits(const std::vector<std::vector<Term>>& dims, int64_t threads) {
    std::vector<std::pair<int64_t, int64_t>> used;
    for (const auto& terms : dims)
        for (const Term& t : terms)
            if (t.onThread) used.push_back({t.stride, t.extent});
    std::sort(used.begin(), used.end());
    std::vector<std::pair<int64_t, int64_t>> gaps;
    int64_t s = 1;
    for (const auto& [stride, extent] : used) {
        if (stride > s) gaps.push_back({s, stride / s});
        s = std::max(s, stride * extent);
    }
    if (s < threads) gaps.push_back({s, threads / s});
    return gaps;
}
} // namespace

int64_t Fragment::replicas() const {
    int64_t r = 1;
    for (const auto& [stride, extent] : replicaDigits(dims_, threads_)) r *= extent;
    return r;
}

Expr Fragment::replicaOf(const Expr& tx) const {
    Expr replica;
    int64_t weight = 1;
    for (const auto& [stride, extent] : replicaDigits(dims_, threads_)) {
        Expr c = counter(tx, stride, extent, threads_);
        Expr term = weight == 1 ? c : c * weight;
        replica = replica ? replica + term : term;
        weight *= extent;
    }
    return replica ? replica : intImm(0);
}

namespace {
// Renumbers the local counters of `dims` compactly, keeping their order; returns the slots a
// thread then holds.
int64_t compactLocals(std::vector<std::vector<Term>>& dims) {
    std::vector<int64_t> localStrides;
    for (const auto& terms : dims)
        for (const Term& t : terms)
            if (!t.onThread) localStrides.push_back(t.stride);
    std::sort(localStrides.begin(), localStrides.end());
    std::map<int64_t, int64_t> newStride;
    int64_t running = 1;
    for (int64_t old : localStrides) {
        newStride[old] = running;
        for (const auto& terms : dims)
            for (const Term& t : terms)
                if (!t.onThread && t.stride == old) running *= t.extent;
    }
    for (auto& terms : dims)
        for (Term& t : terms)
            if (!t.onThread) t.stride = newStride[t.stride];
    return running;
}
} // namespace

Fragment Fragment::project(const std::vector<size_t>& keep) const {
    std::vector<int64_t> shape;
    std::vector<std::vector<Term>> dims;
    for (size_t d : keep) {
        shape.push_back(shape_.at(d));
        dims.push_back(dims_.at(d));
    }
    int64_t locals = compactLocals(dims);
    return Fragment(std::move(shape), threads_, locals, std::move(dims));
}

std::optional<Fragment> Fragment::withUnitDims(const std::vector<int64_t>& shape) const {
    std::vector<size_t> mine;
    for (size_t d = 0; d < shape_.size(); ++d)
        if (shape_[d] != 1) mine.push_back(d);
    std::vector<std::vector<Term>> dims;
    size_t next = 0;
    for (int64_t e : shape) {
        if (e == 1) {
            dims.push_back({});  // no terms: the index is always 0
            continue;
        }
        if (next >= mine.size() || shape_[mine[next]] != e) return std::nullopt;
        dims.push_back(dims_[mine[next++]]);
    }
    if (next != mine.size()) return std::nullopt;
    return Fragment(shape, threads_, locals_, std::move(dims));
}

Fragment Fragment::widen(const std::vector<int64_t>& shape, const std::vector<std::optional<size_t>>& from) const {
    std::vector<std::vector<Term>> dims;
    int64_t locals = locals_;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (from.at(d)) {
            dims.push_back(dims_.at(*from[d]));
            continue;
        }
        dims.push_back({{false, locals, shape[d], 1}});
        locals *= shape[d];
    }
    // Slots of dimensions this fragment has but `shape` does not are dropped.
    std::vector<std::vector<Term>> compacted = dims;
    int64_t held = compactLocals(compacted);
    return Fragment(shape, threads_, held, std::move(compacted));
}

std::optional<Fragment> Fragment::divided(size_t dim, int64_t c) const {
    std::vector<std::vector<Term>> dims = dims_;
    std::vector<Term>& terms = dims.at(dim);
    if (c <= 0 || shape_[dim] % c != 0) return std::nullopt;
    if (c == 1) return *this;
    if (terms.empty() || terms.front().extent % c != 0) return std::nullopt;
    Term low = terms.front();
    std::vector<Term> out;
    // The digit's values below c all give the same element: its counter starts c further up.
    if (low.extent > c) out.push_back({low.onThread, low.stride * c, low.extent / c, 1});
    for (size_t i = 1; i < terms.size(); ++i) {
        Term t = terms[i];
        t.scale /= c;
        out.push_back(t);
    }
    terms = out;
    std::vector<int64_t> shape = shape_;
    shape[dim] /= c;
    int64_t locals = compactLocals(dims);
    return Fragment(std::move(shape), threads_, locals, std::move(dims));
}

Fragment Fragment::repeat(size_t dim, int64_t times, bool onThreads) const {
    std::vector<int64_t> shape = shape_;
    std::vector<std::vector<Term>> dims = dims_;
    int64_t threads = threads_, locals = locals_;
    if (onThreads) {
        dims.at(dim).push_back({true, threads_, times, shape_.at(dim)});
        threads *= times;
    } else {
        dims.at(dim).push_back({false, locals_, times, shape_.at(dim)});
        locals *= times;
    }
    shape.at(dim) *= times;
    return Fragment(std::move(shape), threads, locals, std::move(dims));
}

Fragment Fragment::onBlockOf(int64_t threads) const {
    if (threads % threads_ != 0) throw std::logic_error("fragment: a block must hold whole copies of its threads");
    return Fragment(shape_, threads, locals_, dims_);
}

int64_t Fragment::vectorWidth() const {
    if (dims_.empty() || dims_.back().empty()) return 1;
    const Term& inner = dims_.back().front();
    return !inner.onThread && inner.stride == 1 ? inner.extent : 1;
}

bool Fragment::sameAs(const Fragment& other) const {
    return shape_ == other.shape_ && threads_ == other.threads_ && locals_ == other.locals_ && dims_ == other.dims_;
}

bool Fragment::samePlacement(const Fragment& other) const {
    auto squeeze = [](const Fragment& f) {
        std::vector<int64_t> shape;
        std::vector<std::vector<Term>> dims;
        for (size_t d = 0; d < f.rank(); ++d)
            if (f.shape_[d] != 1) {
                shape.push_back(f.shape_[d]);
                dims.push_back(f.dims_[d]);
            }
        return std::make_pair(shape, dims);
    };
    return threads_ == other.threads_ && locals_ == other.locals_ && squeeze(*this) == squeeze(other);
}

bool Fragment::isReplicated() const {
    for (const auto& terms : dims_)
        for (const Term& t : terms)
            if (t.onThread) return false;
    return true;
}

bool Fragment::isBijective() const {
    int64_t elements = std::accumulate(shape_.begin(), shape_.end(), int64_t(1), std::multiplies<>());
    if (elements * replicas() != threads_ * locals_) return false;
    std::vector<int64_t> hits(static_cast<size_t>(elements), 0);
    auto digit = [](int64_t v, int64_t stride, int64_t extent) { return (v / stride) % extent; };
    for (int64_t tx = 0; tx < threads_; ++tx) {
        for (int64_t l = 0; l < locals_; ++l) {
            int64_t flat = 0;
            for (size_t d = 0; d < dims_.size(); ++d) {
                int64_t idx = 0;
                for (const Term& t : dims_[d]) idx += digit(t.onThread ? tx : l, t.stride, t.extent) * t.scale;
                if (idx >= shape_[d]) return false;
                flat = flat * shape_[d] + idx;
            }
            ++hits[static_cast<size_t>(flat)];
        }
    }
    return std::all_of(hits.begin(), hits.end(), [&](int64_t h) { return h == replicas(); });
}

std::string Fragment::str() const {
    std::string out = "[";
    for (size_t d = 0; d < shape_.size(); ++d) out += (d ? ", " : "") + std::to_string(shape_[d]);
    out += fmt::format("] over {} thread{}, {} per thread", threads_, threads_ == 1 ? "" : "s", locals_);
    if (replicas() > 1) out += fmt::format(", {} replicas", replicas());
    out += ":";
    for (size_t d = 0; d < dims_.size(); ++d) {
        std::string expr;
        for (const Term& t : dims_[d]) {
            std::string c = fmt::format("{}{}{}", t.onThread ? "tx" : "l", t.stride == 1 ? "" : fmt::format("/{}", t.stride),
                                        fmt::format("%{}", t.extent));
            expr += (expr.empty() ? "" : " + ") + (t.scale == 1 ? c : fmt::format("{}*({})", t.scale, c));
        }
        out += fmt::format(" i{} = {};", d, expr.empty() ? "0" : expr);
    }
    return out;
}

Fragment defaultFragment(const std::vector<int64_t>& shape, int64_t threads, int64_t maxVector) {
    size_t rank = shape.size();
    std::vector<std::vector<Term>> dims(rank);
    if (rank == 0) return Fragment({}, threads, 1, {});
    size_t rowDim = rank >= 2 ? rank - 2 : 0;
    int64_t rows = shape[rowDim];
    // Threads form a tr x tc grid, tc consecutive lanes per row group (so that a row reduces
    // with shuffles), at least 8 of them when rows allow, so that a thread holds a 2-D piece
    // of a tile (fewer shared-memory reads per multiply-add in the SIMT gemm). Both numbers
    // depend on the row count and the threads only: fragments with the same rows agree.
    if (rank == 1) {
        // A vector that no tile relates it to (those get their tile's rows by inference):
        // consecutive threads hold consecutive vectors of elements.
        int64_t vec = maxVector;
        while (vec > 1 && rows % vec != 0) vec /= 2;
        int64_t used = std::gcd(rows / vec, threads);
        dims[0] = {{false, 1, vec, 1}, {true, 1, used, vec}, {false, vec, rows / (vec * used), vec * used}};
        return Fragment(shape, threads, rows / used, std::move(dims));
    }
    int64_t tr = std::gcd(rows, threads);
    while (threads / tr < std::min<int64_t>(8, threads) && tr % 2 == 0) tr /= 2;
    int64_t tc = threads / tr;
    int64_t cols = shape[rank - 1];
    int64_t colThreads = std::gcd(cols, tc);  // fewer when the columns cannot use them all: replicas
    int64_t vec = maxVector;
    while (vec > 1 && (cols / colThreads) % vec != 0) vec /= 2;
    int64_t colRepeats = cols / (vec * colThreads);
    dims[rank - 1] = {{false, 1, vec, 1}, {true, 1, colThreads, vec}, {false, vec, colRepeats, vec * colThreads}};
    int64_t localStride = vec * colRepeats;
    dims[rowDim] = {{true, tc, tr, 1}, {false, localStride, rows / tr, tr}};
    localStride *= rows / tr;
    for (size_t d = rowDim; d-- > 0;) {
        dims[d] = {{false, localStride, shape[d], 1}};
        localStride *= shape[d];
    }
    return Fragment(shape, threads, localStride, std::move(dims));
}

std::optional<Fragment> rowMajorCopyFragment(const std::vector<int64_t>& shape, int64_t threads, int64_t vec) {
    if (shape.size() != 2 || vec < 1 || shape[1] % vec != 0) return std::nullopt;
    int64_t rows = shape[0], chunks = shape[1] / vec;  // vectors per row
    std::vector<std::vector<Term>> dims(2);
    if (threads % chunks == 0) {
        // Whole rows per group of `chunks` threads; the groups take rows in turn.
        int64_t rowsAtOnce = threads / chunks;
        if (rows % rowsAtOnce != 0) return std::nullopt;
        dims[1] = {{false, 1, vec, 1}, {true, 1, chunks, vec}};
        dims[0] = {{true, chunks, rowsAtOnce, 1}, {false, vec, rows / rowsAtOnce, rowsAtOnce}};
        return Fragment(shape, threads, vec * (rows / rowsAtOnce), std::move(dims));
    }
    if (chunks % threads != 0) return std::nullopt;
    // A row takes the threads several times over.
    int64_t turns = chunks / threads;
    dims[1] = {{false, 1, vec, 1}, {true, 1, threads, vec}, {false, vec, turns, vec * threads}};
    dims[0] = {{false, vec * turns, rows, 1}};
    return Fragment(shape, threads, vec * turns * rows, std::move(dims));
}

Fragment replicatedFragment(const std::vector<int64_t>& shape, int64_t threads) {
    std::vector<std::vector<Term>> dims(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        dims[d] = {{false, stride, shape[d], 1}};
        stride *= shape[d];
    }
    return Fragment(shape, threads, stride, std::move(dims));
}

} // namespace tlc::layout
