#include "emit/GpuEmitter.h"

#include "ir/Simplify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace tlc::codegen {

using namespace ir;

namespace {

// "[128][32] " for a shared buffer's comment.
std::string shapeComment(const Buffer& b) {
    std::string dims;
    for (const auto& d : b->shape) {
        const int64_t* v = asConstInt(d);
        dims += "[" + (v ? std::to_string(*v) : std::string("?")) + "]";
    }
    return dims.empty() ? "" : dims + " ";
}

// " // 4 x 32" for a per-thread array of rank 2 or more.
std::string localShapeComment(const Buffer& b) {
    if (b->shape.size() < 2) return "";
    std::string dims;
    for (const auto& d : b->shape) {
        const int64_t* v = asConstInt(d);
        dims += (dims.empty() ? "" : " x ") + (v ? std::to_string(*v) : std::string("?"));
    }
    return "  // " + dims;
}

// CUtensorMapDataType of a TMA'd tensor's elements (8-bit types travel as bytes).
const char* tensorMapType(DType t) {
    switch (t) {
    case DType::F16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::BF16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::F32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::F64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::I32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::U32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    case DType::I64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
    case DType::U64: return "CU_TENSOR_MAP_DATA_TYPE_UINT64";
    case DType::I16:
    case DType::U16: return "CU_TENSOR_MAP_DATA_TYPE_UINT16";
    case DType::I8:
    case DType::U8:
    case DType::F8E4M3:
    case DType::F8E5M2: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    default: throw EmitError(fmt::format("emit: no TMA element type for {}", dtypeName(t)));
    }
}

} // namespace

GpuEmitter::GpuEmitter(const Target& target, const EmitOptions& options, const GpuToolkit& kit)
    : CEmitter(target, options), kit_(kit) {
    needs_ = RuntimeNeeds(kit.api);
}

std::string GpuEmitter::spelled(std::string_view row, const std::vector<std::string>& args) const {
    return spell(kit_.api, row, args);
}

const GpuToolkit::SmallType* GpuEmitter::smallType(DType t) const {
    for (const auto& s : kit_.smallTypes)
        if (s.type == t) return &s;
    return nullptr;
}

std::vector<std::string> GpuEmitter::headerIncludes(const std::set<DType>& types) const {
    std::vector<std::string> out = {"<cstdint>", kit_.headerApi};
    for (const auto& s : kit_.smallTypes)
        if (s.header && types.count(s.type) && std::find(out.begin(), out.end(), s.header) == out.end())
            out.push_back(s.header);
    return out;
}

void GpuEmitter::headerRuntime(const std::set<DType>& types, RuntimeNeeds& needs) const {
    for (const auto& s : kit_.smallTypes)
        if (s.section && types.count(s.type)) needs.add("tl_types.h", s.section);
}

std::vector<std::string> GpuEmitter::sourceIncludes() const {
    // The source's API header (HIP: the device API) first, in place of the header's.
    std::vector<std::string> out;
    if (kit_.sourceApi != kit_.headerApi) out.push_back(kit_.sourceApi);
    for (const auto& h : headerIncludes(usedTypes_))
        if (h != kit_.headerApi || kit_.sourceApi == kit_.headerApi) out.push_back(h);
    out.insert(out.end(), includes_.begin(), includes_.end());
    return out;
}

std::string GpuEmitter::lowPrecisionType(DType t) const {
    const GpuToolkit::SmallType* s = smallType(t);
    if (!s) return "float";
    if (s->section) need("tl_types.h", s->section);
    return s->name;
}

// Builds each tensor map the kernel takes (tl::make_tensor_map_2d and tl::make_tensor_map<R>
// check TMA's alignment and stride rules and return an error code instead of a map when they
// fail: nothing launches).
void GpuEmitter::emitTensorMaps(const Kernel& k) {
    for (const auto& m : k.tensorMaps) {
        const KernelParam* tensor = nullptr;
        for (const auto& p : k.params)
            if (p.kind == KernelParam::Kind::Tensor && p.name == m.tensor) tensor = &p;
        const size_t rank = m.box.size();
        // The map's sizes and strides are its source's: the parameter, or a view of it.
        const Buffer& b = m.source && m.source->viewOf ? m.source : tensor ? tensor->buffer : m.source;
        if (!tensor || !b || b->shape.size() != rank || rank > 5)
            throw EmitError("emit: a tensor map of an unknown tensor or of another rank, '" + m.tensor + "'");
        needSection("tma_host");
        const std::string base = bufferName(tensor->buffer.get());
        std::string name = names_.declare(m.map.get(), m.map->name);
        std::string swizzle = m.swizzleBytes ? fmt::format("CU_TENSOR_MAP_SWIZZLE_{}B", m.swizzleBytes)
                                             : std::string("CU_TENSOR_MAP_SWIZZLE_NONE");
        std::string described = b->viewOf ? fmt::format("{} (viewed as {})", m.tensor, b->name) : m.tensor;
        line(fmt::format("CUtensorMap {}{{}};  // {} in TMA boxes of {}{}", name, described, fmt::join(m.box, " x "),
                         m.swizzleBytes ? fmt::format(", {}-byte swizzle", m.swizzleBytes) : ""));
        // An empty tensor has no map (the driver refuses one), and the kernel loads nothing from it.
        Expr nonEmpty;
        for (const Expr& extent : b->shape) {
            Expr positive = binary(BinaryOp::Gt, extent, intImm(0));
            nonEmpty = nonEmpty ? logicalAnd(nonEmpty, positive) : positive;
        }
        nonEmpty = simplify(nonEmpty);
        const int64_t* always = asConstInt(nonEmpty);
        bool guarded = !always || !*always;
        std::string status = names_.declare(nullptr, name + "_status");
        if (guarded) {
            line(fmt::format("if ({}) {{", expr(nonEmpty)));
            out_->indent();
        }
        const int64_t bytes = dtypeBytes(b->dtype);
        if (rank == 2) {
            // Element type, rows, columns, row stride in bytes; box rows, box columns, swizzle.
            line(fmt::format("const {} {} = tl::make_tensor_map_2d(&{}, {},", errorType(), status, name, base));
            line(fmt::format("    {}, {}, {}, uint64_t({}) * {},", tensorMapType(b->dtype), expr(b->shape[0]),
                             expr(b->shape[1]), expr(b->strides[0]), bytes));
            line(fmt::format("    {}, {}, {});", m.box[0], m.box[1], swizzle));
        } else {
            // Element type; sizes, byte strides (all but the innermost) and box, outermost first.
            std::vector<std::string> sizes, strides;
            for (size_t d = 0; d < rank; ++d) {
                sizes.push_back(fmt::format("uint64_t({})", expr(b->shape[d])));
                if (d + 1 < rank) strides.push_back(fmt::format("uint64_t({}) * {}", expr(b->strides[d]), bytes));
            }
            line(fmt::format("const {} {} = tl::make_tensor_map<{}>(&{}, {},", errorType(), status, rank, name, base));
            line(fmt::format("    {},", tensorMapType(b->dtype)));
            line(fmt::format("    {{{}}},", join(sizes, ", ")));
            line(fmt::format("    {{{}}},", join(strides, ", ")));
            line(fmt::format("    {{{}}}, {});", fmt::join(m.box, ", "), swizzle));
        }
        line(fmt::format("if ({} != {}) return {};", status, successValue(), status));
        if (guarded) {
            out_->dedent();
            line("}");
        }
    }
}

void GpuEmitter::emitKernelFunction(const Kernel& k, const LauncherSignature& sig) {
    if (k.threads < 1 || k.threads > target_.maxThreadsPerBlock)
        throw EmitError(fmt::format("emit: kernel {} has {} threads per block ({} allows 1 to {})", k.name, k.threads,
                                    target_.name, target_.maxThreadsPerBlock));
    plan_ = &k.sharedPlan;
    sharedBytes_ = k.sharedBytes;
    startFunction();
    declareKernelParams(k);
    std::vector<std::string> params = kernelParams(k);
    // TMA tensor maps live in the parameter space (__grid_constant__: their address is valid).
    for (const auto& m : k.tensorMaps)
        params.push_back("const __grid_constant__ CUtensorMap " + names_.declare(m.map.get(), m.map->name));
    // setmaxnreg needs the register count at entry fixed: one block per SM (else ptxas ignores it).
    std::string bounds = k.producerThreads ? fmt::format("{}, 1", k.threads) : std::to_string(k.threads);
    // A thread-block cluster (grid's `cluster`, passes/pipeline/Cluster.cpp) is the kernel's
    // compile-time attribute: a plain launch of a grid of whole clusters runs it.
    std::string cluster;
    if (k.clusterSize > 1) {
        int dims[3] = {1, 1, 1};
        dims[k.clusterDim] = k.clusterSize;
        cluster = fmt::format("__cluster_dims__({}, {}, {})", dims[0], dims[1], dims[2]);
    }
    std::string attributes = fmt::format("__global__ void __launch_bounds__({}){}", bounds,
                                         cluster.empty() ? "" : " " + cluster);
    std::string head = attributes + " " + sig.kernelName + "(";
    // The attributes on a line of their own, the name and parameters after, where the name and
    // the first parameter do not fit beside them (the line would break inside the attributes).
    const size_t first = params.empty() ? 1 : params[0].size() + 1;
    if (!cluster.empty() || size_t(4 * out_->depth()) + head.size() + first > size_t(kLineWidth)) {
        line(attributes);
        head = sig.kernelName + "(";
    }
    for (const auto& l : wrapCall(head, params, ")", 0, true)) line(l);
    line("{");
    out_->indent();
    if (sharedBytes_) {
        // One pool, planned by plan-shared-memory; each buffer is a typed pointer into it.
        for (const auto& s : k.sharedPlan)
            if (kSharedPoolAlign % s.align != 0)
                throw EmitError(fmt::format("emit: shared buffer '{}' needs {}-byte alignment", s.buffer->name, s.align));
        names_.declareExact(nullptr, "tl_smem");
        line(fmt::format("extern __shared__ __align__({}) unsigned char tl_smem[];  // {} bytes, set at launch",
                         kSharedPoolAlign, sharedBytes_));
    }
    declareRoleVariables(true);
    emitStmt(k.body);
    out_->dedent();
    line("}");
}

void GpuEmitter::emitLaunch(const Kernel& k, const LauncherSignature& sig) {
    std::vector<std::string> blocks = gridExtentNames(k);
    if (sharedBytes_ > kStaticSharedLimit) {
        std::string status = names_.declare(nullptr, "attribute");
        line(fmt::format("const {} {} = {};", errorType(), status,
                         spelled("TL_SET_MAX_DYNAMIC_SHARED", {sig.kernelName, std::to_string(sharedBytes_)})));
        line(fmt::format("if ({} != {}) return {};", status, successValue(), status));
    }
    // Whole clusters: the blocks past the grid's end take part in their cluster's protocol and
    // store nothing (passes/pipeline/WarpSpecialize.cpp).
    if (k.clusterSize > 1 && size_t(k.clusterDim) < blocks.size()) {
        std::string& b = blocks[size_t(k.clusterDim)];
        b = fmt::format("({} + {}) / {} * {}", b, k.clusterSize - 1, k.clusterSize, k.clusterSize);
    }
    std::string grid = blocks[0];
    if (blocks.size() > 1) {
        grid = "dim3(";
        for (size_t i = 0; i < blocks.size(); ++i) grid += (i ? ", " : "") + blocks[i];
        grid += ")";
    }
    emitTensorMaps(k);
    std::vector<std::string> args = argumentList(k);
    for (const auto& m : k.tensorMaps) args.push_back(*names_.lookup(m.map.get()));
    std::string config = fmt::format("<<<{}, {}, {}, stream>>>(", grid, k.threads, sharedBytes_);
    const int indent = 4 * out_->depth();
    if (indent + int(sig.kernelName.size() + config.size()) + 8 <= kLineWidth) {
        for (const auto& l : wrapCall(sig.kernelName + config, args, ");", indent)) line(l);
    } else {
        // A long kernel name: the configuration on a line of its own, never split (out_->line:
        // line() would wrap inside the chevrons).
        out_->line(sig.kernelName);
        for (const auto& l : wrapCall(config, args, ");", indent + 8)) out_->line("        " + l);
    }
    line(fmt::format("return {}GetLastError();", kit_.api));
}

std::string GpuEmitter::roleValue(VarRole role) const {
    switch (role) {
    case VarRole::ThreadIndex: return "threadIdx.x";
    case VarRole::BlockIndexX: return "blockIdx.x";
    case VarRole::BlockIndexY: return "blockIdx.y";
    case VarRole::BlockIndexZ: return "blockIdx.z";
    case VarRole::Plain: break;
    }
    return "0";
}

std::string GpuEmitter::callText(const Call* c, const std::vector<std::string>& args) {
    const std::string& n = c->name;
    auto arity = [&](size_t count) {
        if (args.size() != count)
            throw EmitError(fmt::format("emit: {} takes {} argument(s), got {}", n, count, args.size()));
    };
    // The calls of the spelling table: shfl_xor -> TL_SHFL_XOR(...).
    auto row = [&](size_t count) {
        arity(count);
        std::string name = "TL_";
        for (char ch : n) name += char(std::toupper(static_cast<unsigned char>(ch)));
        return spelled(name, args);
    };
    if (n == "shfl_xor" || n == "shfl_down" || n == "shfl_up" || n == "shfl_idx") return row(3);
    if (n == "sync_warp") return row(0);
    // A persistent kernel (passes/PersistentTiles.cpp): the grid's size in the kernel, and the
    // launcher's grid, the SMs at most.
    if (n == "grid_dim_x") {
        arity(0);
        return "int(gridDim.x)";
    }
    if (n == "persistent_ctas") {
        arity(2);
        needSection("persistent");
        return "tl::persistent_ctas(" + args[0] + ", " + args[1] + ")";
    }
    if (n == "memory_fence") {
        arity(0);
        return "__threadfence()";
    }
    // A parallel loop's stores of neighbouring columns (ops/parallel/VectorStores.cpp): the
    // element's address and the lanes' values.
    if (n == "store_vec" || n == "atomic_add_vec") {
        const size_t lanes = args.size() - 1;
        if (args.empty() || (lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16))
            throw EmitError(fmt::format("emit: {} of {} values", n, args.size() - 1));
        std::string list;
        for (const auto& a : args) list += (list.empty() ? "" : ", ") + a;
        if (n == "store_vec") {
            needSection("vector_moves");
            return "tl::store_vec(" + list + ")";
        }
        if (lanes > 4 || c->args[1].dtype() != DType::F32)
            throw EmitError(fmt::format("emit: a vector atomic add of {} x {}", lanes, dtypeName(c->args[1].dtype())));
        needSection("vector_atomic_add");
        return fmt::format("tl::atomic_add_v{}({})", lanes, list);
    }
    if (n == "split_k_arrive") {
        arity(1);
        needSection("split_k");
        return "tl::split_k_arrive(" + args[0] + ")";
    }
    if (n == "ballot") return "uint64_t(" + row(1) + ")";  // u64 in the language: HIP's wavefronts have 64 lanes
    if (n == "any" || n == "all") return "bool(" + row(1) + ")";
    if (n == "dp4a") {
        arity(3);
        return spelled(c->dtype == DType::U32 ? "TL_DP4A_U32" : "TL_DP4A_I32", args);
    }
    // warp_reduce_sum/max/min(value, width): the runtime's butterfly over `width` lanes.
    if (n.rfind("warp_reduce_", 0) == 0) {
        arity(2);
        if (!asConstInt(c->args[1])) throw EmitError("emit: " + n + " takes a constant width");
        needSection("warp");
        return fmt::format("tl::{}<{}>({})", n, args[1], args[0]);
    }
    if (auto helper = instructionHelperCall(c, args)) return *helper;
    DType t = c->dtype;
    if (n == "abs" && isInteger(t)) {
        arity(1);
        return (t == DType::I64 ? "llabs(" : "abs(") + args[0] + ")";
    }
    if (t != DType::F32 && t != DType::F64)
        throw EmitError(fmt::format("emit: {} on {} (math runs on f32 or f64)", n, dtypeName(t)));
    bool f32 = t == DType::F32;
    struct Math {
        const char* name;
        const char* f32;
        const char* f64;
    };
    static const Math table[] = {
        {"exp", "expf", "exp"},         {"exp2", "exp2f", "exp2"},        {"log", "logf", "log"},
        {"log2", "log2f", "log2"},      {"sqrt", "sqrtf", "sqrt"},        {"rsqrt", "rsqrtf", "rsqrt"},
        {"abs", "fabsf", "fabs"},       {"tanh", "tanhf", "tanh"},        {"erf", "erff", "erf"},
        {"fast_exp", "__expf", "exp"},  {"fast_exp2", "exp2f", "exp2"},   {"fast_log", "__logf", "log"},
        {"fast_log2", "__log2f", "log2"},
    };
    if (n == "pow") {
        arity(2);
        return fmt::format("{}({}, {})", f32 ? "powf" : "pow", args[0], args[1]);
    }
    arity(1);
    for (const auto& m : table)
        if (n == m.name) return fmt::format("{}({})", f32 ? m.f32 : m.f64, args[0]);
    if (n == "sigmoid" || n == "silu" || n == "gelu" || n == "relu") {
        needSection("math");
        return fmt::format("tl::{}({})", n, args[0]);
    }
    if (n == "fast_tanh") {
        if (!f32) return "tanh(" + args[0] + ")";
        if (kit_.fastTanhSection) needSection(kit_.fastTanhSection);
        return fmt::format("{}({})", kit_.fastTanh, args[0]);
    }
    throw EmitError("emit: unknown function '" + n + "'");
}

std::string GpuEmitter::minMaxText(const Binary* b, const std::string& x, const std::string& y) {
    bool isMin = b->op == BinaryOp::Min;
    if (b->dtype == DType::F32) return fmt::format("{}({}, {})", isMin ? "fminf" : "fmaxf", x, y);
    if (b->dtype == DType::F64) return fmt::format("{}({}, {})", isMin ? "fmin" : "fmax", x, y);
    return fmt::format("{}({}, {})", isMin ? "min" : "max", x, y);
}

void GpuEmitter::emitSharedOrLocal(const Allocate* a) {
    const Buffer& b = a->buffer;
    std::string name = names_.declare(b.get(), b->name);
    // mbarrier arrays have the type the runtime's helpers take.
    std::string type = b->isMbarrierArray() ? "uint64_t" : typeName(b->dtype);
    int64_t elements = std::max<int64_t>(bufferSpan(b), 1);
    if (b->scope == MemScope::Shared) {
        if (a->init) throw EmitError("emit: shared buffer '" + b->name + "' with an initial value");
        const SharedSlot* slot = nullptr;
        for (const auto& s : *plan_)
            if (s.buffer.get() == b.get()) slot = &s;
        if (!slot) throw EmitError("emit: shared buffer '" + b->name + "' has no place in the shared-memory plan");
        std::string what = fmt::format("  // {}{}, offset {}", shapeComment(b), dtypeName(b->dtype), slot->offset);
        if (b->shape.empty())
            line(fmt::format("{}& {} = *reinterpret_cast<{}*>(tl_smem + {});{}", type, name, type, slot->offset, what));
        else
            line(fmt::format("{}* const {} = reinterpret_cast<{}*>(tl_smem + {});{}", type, name, type, slot->offset,
                             what));
        return;
    }
    if (b->scope == MemScope::Global) throw EmitError("emit: an allocation of global buffer '" + b->name + "'");
    // Fragments and locals: a per-thread array, aligned for the widest vector move on it.
    int elementBytes = dtypeBytes(b->dtype);
    const BufferUse* use = info_.use(b.get());
    std::string align;
    if (use && use->vectorBytes > elementBytes) align = fmt::format("__align__({}) ", std::min(use->vectorBytes, 16));
    line(fmt::format("{}{} {}[{}];{}", align, type, name, elements, localShapeComment(b)));
}

void GpuEmitter::emitAtomicAdd(const Store* s, const std::string& target, const std::string& value) {
    DType t = s->buffer->dtype;
    if (std::find(kit_.atomicAdd.begin(), kit_.atomicAdd.end(), t) != kit_.atomicAdd.end()) {
        line(fmt::format("atomicAdd(&{}, {});", target, value));
    } else if (t == DType::I64) {
        line(fmt::format("atomicAdd(reinterpret_cast<unsigned long long*>(&{}), static_cast<unsigned long long>({}));",
                         target, value));
    } else if (dtypeBits(t) == 8 || dtypeBits(t) == 16) {
        needSection("narrow_atomic_add");
        line(fmt::format("tl::atomic_add_narrow(&{}, {});", target, value));
    } else {
        throw EmitError(fmt::format("emit: atomic add on {}", dtypeName(t)));
    }
}

// atomicMax/atomicMin for i32, u32 and u64; i64 and floats through the runtime's
// compare-and-swap loop (CUDA has no float forms, HIP no signed 64-bit one).
void GpuEmitter::emitAtomicMinMax(const Store* s, const std::string& target, const std::string& value, bool max) {
    DType t = s->buffer->dtype;
    const char* op = max ? "Max" : "Min";
    if (t == DType::I32 || t == DType::U32) {
        line(fmt::format("atomic{}(&{}, {});", op, target, value));
    } else if (t == DType::U64) {
        line(fmt::format("atomic{}(reinterpret_cast<unsigned long long*>(&{}), static_cast<unsigned long long>({}));", op,
                         target, value));
    } else if (t == DType::I64 || t == DType::F32 || t == DType::F64) {
        needSection("atomic_minmax");
        line(fmt::format("tl::atomic_{}(&{}, {});", max ? "max" : "min", target, value));
    } else {
        throw EmitError(fmt::format("emit: atomic {} on {}", max ? "max" : "min", dtypeName(t)));
    }
}

std::string GpuEmitter::loopPragma(const For* f) const {
    if (f->forKind == ForKind::Rolled) return "#pragma unroll 1";
    return f->forKind == ForKind::Unroll || f->forKind == ForKind::Vectorized ? "#pragma unroll" : "";
}

} // namespace tlc::codegen
