#include "ops/LowerContext.h"

#include "ir/Simplify.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tlc {

using namespace ir;

LowerContext::LowerContext(const Target& t, int64_t threadCount, DiagnosticEngine& d)
    : target(t), threads(threadCount), warpSize(std::min<int64_t>(t.warpSize, threadCount)), diags(d) {
    threadIndex = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    names_.insert("tx");
}

const layout::Fragment& LowerContext::layoutOf(const Buffer& fragment) const {
    auto it = layouts.find(fragment.get());
    if (it == layouts.end()) throw std::logic_error("no layout inferred for fragment " + fragment->name);
    return it->second;
}

void LowerContext::swizzleForTensorCores(const Buffer& shared, std::string reason) {
    const int64_t* cols = shared->shape.size() >= 2 ? asConstInt(shared->shape.back()) : nullptr;
    if (!cols) return;
    layout::Swizzle sw = layout::bankConflictFreeSwizzle(*cols, dtypeBytes(shared->dtype));
    if (sw.isIdentity()) return;
    if (sharedLayouts.emplace(shared.get(), SharedLayout{.swizzle = sw, .reason = reason}).second)
        decide(fmt::format("layout of {}", shared->name), sw.str(), "inferred",
               fmt::format("{}: ldmatrix reads 8 rows at once, and the swizzle puts them in 8 different bank groups",
                           reason));
}

std::string LowerContext::SharedLayout::str() const {
    std::string out = swizzle.str();
    if (boxCols) out = fmt::format("boxes of {} columns, each {}", boxCols, out);
    if (padElems) out += fmt::format(", rows padded by {}", padElems);
    if (alignBytes) out += fmt::format(", {}-byte aligned", alignBytes);
    return out;
}

void LowerContext::decide(std::string subject, std::string value, std::string origin, std::string reason,
                          SourceLoc loc) {
    if (decisionLog)
        decisionLog->add({std::move(subject), std::move(value), std::move(origin), std::move(reason), loc});
}

Buffer LowerContext::localBuffer(const Buffer& fragment) {
    auto it = locals_.find(fragment.get());
    if (it != locals_.end()) return it->second;
    Buffer local = makeBuffer(fragment->name, fragment->dtype, MemScope::Local, {intImm(layoutOf(fragment).locals())});
    locals_[fragment.get()] = local;
    return local;
}

Buffer LowerContext::scratch(const std::string& name, DType dtype, const std::vector<int64_t>& shape, bool transient) {
    // Scratch buffers live in one scope (the kernel's top): their names must differ.
    std::vector<Expr> dims;
    for (int64_t e : shape) dims.push_back(intImm(e));
    Buffer b = makeBuffer(freshName(name), dtype, MemScope::Shared, dims);
    reserveName(b->name);
    scratch_.push_back(b);
    if (transient) transient_.insert(b->name);
    return b;
}

Buffer LowerContext::exchangeBuffer(const Buffer& fragment) {
    auto it = exchange_.find(fragment.get());
    if (it != exchange_.end()) return it->second;
    std::vector<int64_t> shape;
    constantShape(fragment, shape);
    int64_t elements = 1;
    for (int64_t e : shape) elements *= e;
    return exchange_[fragment.get()] = scratch(fragment->name + "_xchg", fragment->dtype, {elements});
}

void LowerContext::replaceScratch(const Buffer& from, const Buffer& to) {
    for (auto& b : scratch_)
        if (b == from) b = to;
}

std::string LowerContext::freshName(const std::string& base) {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    return name;
}

VarPtr LowerContext::freshVar(const std::string& base, DType t) { return makeVar(freshName(base), t); }

void LowerContext::requireLaunch(Expr condition, std::string message) {
    condition = simplify(condition);
    if (const int64_t* c = asConstInt(condition); c && *c) return;
    for (const auto& check : launchChecks)
        if (check.condition && equal(check.condition, condition)) return;
    launchChecks.push_back({condition, "", 0, std::move(message)});
}

void LowerContext::requireAlignment(const Buffer& buffer, int bytes) {
    // A view starts where its tensor does.
    const Buffer& tensor = buffer->viewOf ? buffer->viewOf : buffer;
    for (auto& check : launchChecks) {
        if (!check.condition && check.tensor == tensor->name) {
            check.alignBytes = std::max(check.alignBytes, bytes);
            return;
        }
    }
    launchChecks.push_back({{}, tensor->name, bytes,
                            fmt::format("{} must be {}-byte aligned for vectorised access", tensor->name, bytes)});
}

const Buffer& LowerContext::tensorMap(const Buffer& tensor, const std::vector<int64_t>& box, int swizzleBytes) {
    // A view has a map of its own (its shape is the map's); the parameter's pointer is its base.
    const std::string& param = tensor->viewOf ? tensor->viewOf->name : tensor->name;
    for (const auto& m : tensorMaps) {
        bool same = tensor->viewOf || m.source->viewOf ? m.source == tensor : m.tensor == param;
        if (same && m.box == box && m.swizzleBytes == swizzleBytes) return m.map;
    }
    Buffer map = makeBuffer(freshName(tensor->name + "_map"), DType::U8, MemScope::Global, {});
    reserveName(map->name);
    tensorMaps.push_back({map, param, box, swizzleBytes, tensor});
    return tensorMaps.back().map;
}

ForKind LowerContext::slotLoopKind() const {
    return target.backend == Backend::Cpu ? ForKind::Serial : ForKind::Unroll;
}

bool LowerContext::vectorizeGlobal() const { return target.backend != Backend::Cpu && !generalShapes; }

VarBounds LowerContext::bounds() const { return {{threadIndex.get(), Interval{0, threads - 1}}}; }

} // namespace tlc
