// C++17 with OpenMP: one function per block (the lowering runs one thread per block on the
// CPU), called by the launcher from an OpenMP loop over the grid. Shared memory and fragments
// are plain arrays of that function; arrays over 16 KB are allocated once per OpenMP thread by
// the launcher and passed in, instead of living on the stack of every block.
#include "emit/CEmitter.h"
#include "emit/VectorLoop.h"

#include <fmt/format.h>

#include <map>

namespace tlc::codegen {

using namespace ir;

namespace {

constexpr int64_t kHoistBytes = 16 * 1024;

class CpuEmitter final : public CEmitter {
public:
    using CEmitter::CEmitter;

    std::vector<std::string> headerIncludes(const std::set<DType>&) const override { return {"<cstdint>"}; }
    void headerRuntime(const std::set<DType>& types, RuntimeNeeds& needs) const override {
        needs.add("tl_cpu.h", "status");
        for (DType t : types)
            if (const char* section = typeSection(t)) needs.add("tl_types.h", section);
    }
    std::vector<std::string> sourceIncludes() const override {
        std::vector<std::string> out = {"<cstdint>"};
        out.insert(out.end(), includes_.begin(), includes_.end());
        return out;
    }

    // A target with an instruction set (cpu-avx2, cpu-avx512): the file compiles only with the
    // flags that enable it, rather than falling back silently to narrower code.
    std::vector<std::string> sourcePrologue() const override {
        const CpuIsa& isa = target_.cpuIsa;
        if (isa.macros.empty()) return {};
        std::string test;
        for (const auto& m : isa.macros) test += (test.empty() ? "" : " || ") + fmt::format("!defined({})", m);
        std::vector<std::string> out = {
            fmt::format("// Target {}: compile with {} (or -march=native on such a CPU).", target_.name, isa.compileFlags),
            "#if " + test,
            fmt::format("#error \"tlc: this file was generated for --target={}; compile it with {}\"", target_.name,
                        isa.compileFlags),
            "#endif"};
        return out;
    }
    // Under -march=native g++ and clang vectorise with 256 bits on Intel's AVX-512 servers up to
    // Ice Lake; the profile asks for its own width (g++ here; clang: the flag). The region
    // starts below the includes and ends with the file, so that a unity build's next file and
    // the system headers keep the compiler's own options.
    std::vector<std::string> codeRegionOpen() const override {
        int bits = target_.cpuIsa.vectorBits;
        if (!bits) return {};
        return {fmt::format("// Loops vectorise with {0}-bit vectors (with clang++: -mprefer-vector-width={0}).", bits),
                "#if defined(__GNUC__) && !defined(__clang__)", "#pragma GCC push_options",
                fmt::format("#pragma GCC target(\"prefer-vector-width={}\")", bits), "#endif"};
    }
    std::vector<std::string> codeRegionClose() const override {
        if (!target_.cpuIsa.vectorBits) return {};
        return {"#if defined(__GNUC__) && !defined(__clang__)", "#pragma GCC pop_options", "#endif"};
    }

protected:
    static const char* typeSection(DType t) {
        switch (t) {
        case DType::F16: return "half";
        case DType::BF16: return "bfloat16";
        case DType::F8E4M3: return "fp8_e4m3";
        case DType::F8E5M2: return "fp8_e5m2";
        default: return nullptr;
        }
    }
    std::string lowPrecisionType(DType t) const override {
        const char* section = typeSection(t);
        need("tl_types.h", section);
        return std::string("tl::") + section;
    }
    std::string kernelSuffix() const override { return "_block"; }
    std::vector<std::string> runtimePrefixes() const override { return {"tl_cpu"}; }
    std::string errorType() const override { return "int"; }
    std::string successValue() const override { return "tl::cpu_success"; }
    std::string invalidValue() const override { return "tl::cpu_error_invalid_value"; }
    std::string streamType() const override { return ""; }
    std::string printfName() const override {
        include("<cstdio>");
        return "std::printf";
    }
    // Without a grid dimension the block index is 0; the thread index is always 0.
    std::string roleValue(VarRole) const override { return "0"; }

    void emitKernelFunction(const Kernel& k, const LauncherSignature& sig) override {
        if (k.threads != 1)
            throw EmitError(fmt::format("emit: kernel {} has {} threads per block; the cpu target runs one", k.name,
                                        k.threads));
        needSection("status");
        if (k.gridExtents.empty() || k.gridExtents.size() > 3)
            throw EmitError(fmt::format("emit: kernel {} has {} grid extents (1 to 3)", k.name, k.gridExtents.size()));
        // The large buffers, allocated by the launcher.
        hoisted_.clear();
        for (const Allocate* a : liveAllocations(k, info_)) {
            const Buffer& b = a->buffer;
            int64_t bytes = bufferSpan(b) * dtypeBytes(b->dtype);
            bool seen = false;
            for (const auto& h : hoisted_) seen = seen || h.get() == b.get();
            if (!b->shape.empty() && bytes > kHoistBytes && !seen) hoisted_.push_back(b);
        }

        startFunction();
        declareKernelParams(k);
        std::vector<std::string> params = kernelParams(k);
        // Parameters the block does not use keep their name in a comment (quiet under -Wextra).
        for (size_t i = 0; i < k.params.size(); ++i) {
            const KernelParam& p = k.params[i];
            bool used = p.kind == KernelParam::Kind::Tensor ? info_.live(p.buffer.get()) : info_.used(p.var.get());
            if (!used) {
                size_t space = params[i].rfind(' ');
                params[i] = params[i].substr(0, space + 1) + "/*" + params[i].substr(space + 1) + "*/";
            }
        }
        for (size_t i = 0; i < k.gridExtents.size(); ++i) {
            VarRole role = VarRole(size_t(VarRole::BlockIndexX) + i);
            std::string name = names_.declare(roleOwner(role), info_.roleName[size_t(role)]);
            params.push_back(info_.roleUsed[size_t(role)] ? "int " + name : "int /*" + name + "*/");
        }
        for (const auto& b : hoisted_)
            params.push_back(typeName(b->dtype) + "* __restrict__ " + names_.declare(b.get(), b->name));
        for (const auto& l : wrapCall("static void " + sig.kernelName + "(", params, ")", 0, true)) line(l);
        line("{");
        out_->indent();
        if (info_.roleUsed[size_t(VarRole::ThreadIndex)]) {
            std::string tx = names_.declare(roleOwner(VarRole::ThreadIndex), info_.roleName[size_t(VarRole::ThreadIndex)]);
            line(fmt::format("const int {} = 0;  // one thread per block on the CPU", tx));
        }
        emitStmt(k.body);
        out_->dedent();
        line("}");
    }

    void emitLaunch(const Kernel& k, const LauncherSignature& sig) override {
        needSection("status");
        if (!target_.cpuIsa.cpuid.empty()) {
            // Before any kernel code runs: an illegal instruction would end the caller's process.
            const auto& features = target_.cpuIsa.cpuid;
            line(fmt::format("// {}: the running CPU must have what this file was compiled for.", target_.name));
            for (size_t i = 0; i < features.size(); i += 2) {  // two tests a line
                std::string tests = fmt::format("__builtin_cpu_supports(\"{}\")", features[i]);
                if (i + 1 < features.size()) tests += fmt::format(" && __builtin_cpu_supports(\"{}\")", features[i + 1]);
                bool last = i + 2 >= features.size();
                line((i == 0 ? "if (!(" : "      ") + tests + (last ? ")) {" : " &&"));
            }
            line("    return tl::cpu_error_unsupported_cpu;");
            line("}");
        }
        for (const auto& state : target_.cpuIsa.osPermissions) {  // "xtiledata": the only one known
            needSection(state);
            line(fmt::format("// {}: the OS hands out this state only on request.", state));
            line(fmt::format("if (!tl::request_{}()) return tl::cpu_error_unsupported_cpu;", state));
        }
        if (k.cpuReusesPackedTiles) {
            line("// B's packed tiles are kept for this launch only: the tensors may have changed since.");
            line("tl::cpu_gemm::new_launch();");
        }
        std::vector<std::string> blocks = gridExtentNames(k);
        size_t dims = blocks.size();
        std::vector<std::string> index(dims);
        for (size_t i = 0; i < dims; ++i)
            index[i] = names_.declare(nullptr, info_.roleName[size_t(VarRole::BlockIndexX) + i]);
        std::vector<std::string> args = argumentList(k);
        args.insert(args.end(), index.begin(), index.end());
        // schedule(static): each thread runs consecutive blocks, which the next-block prefetch
        // (passes/PrefetchNextBlock.cpp) counts on.
        std::string clauses = " schedule(static)" + (dims > 1 ? fmt::format(" collapse({})", dims) : std::string());
        bool region = !hoisted_.empty();
        if (region) {
            include("<vector>");
            line("#pragma omp parallel");
            line("{");
            out_->indent();
            line("// Storage for the large buffers, once per thread rather than once per block.");
            for (const auto& b : hoisted_) {
                std::string name = names_.declare(nullptr, b->name);
                line(fmt::format("std::vector<{}> {}({});", typeName(b->dtype), name, bufferSpan(b)));
                args.push_back(name + ".data()");
            }
            line("#pragma omp for" + clauses);
        } else {
            line("#pragma omp parallel for" + clauses);
        }
        // Consecutive blocks differ in x, as on a GPU (the outermost loop runs over the last grid
        // dimension), unless reuse-packed-b asked for another index innermost.
        std::vector<size_t> order;  // outermost first
        const size_t inner = size_t(k.cpuInnerBlockDim) < dims ? size_t(k.cpuInnerBlockDim) : 0;
        for (size_t i = dims; i-- > 0;)
            if (i != inner) order.push_back(i);
        order.push_back(inner);
        for (size_t i : order) {
            line(fmt::format("for (int {} = 0; {} < {}; ++{}) {{", index[i], index[i], blocks[i], index[i]));
            out_->indent();
        }
        for (const auto& l : wrapCall(sig.kernelName + "(", args, ");", 4 * out_->depth())) line(l);
        for (size_t i = 0; i < dims; ++i) {
            out_->dedent();
            line("}");
        }
        if (region) {
            out_->dedent();
            line("}");
        }
        line("return tl::cpu_success;");
    }

    std::string callText(const Call* c, const std::vector<std::string>& args) override {
        const std::string& n = c->name;
        auto arity = [&](size_t count) {
            if (args.size() != count)
                throw EmitError(fmt::format("emit: {} takes {} argument(s), got {}", n, count, args.size()));
        };
        if (auto helper = instructionHelperCall(c, args)) return *helper;
        if (n == "shfl_xor") throw EmitError("emit: shfl_xor on the cpu target (one thread per block)");
        if (n == "memory_fence") {
            arity(0);
            include("<atomic>");
            return "std::atomic_thread_fence(std::memory_order_seq_cst)";
        }
        // tl_cpu.h's streaming_stores helpers and their argument counts: store_row(&tensor[..],
        // &fragment[..], count, result bytes), store_line(&tensor[..], &line[0], stream),
        // streams(result bytes), store_fence(stream), line_head(&tensor[..], row length).
        static const std::map<std::string, size_t> streaming = {
            {"store_row", 4}, {"store_line", 3}, {"streams", 1}, {"store_fence", 1}, {"line_head", 2}};
        if (auto helper = streaming.find(n); helper != streaming.end()) {
            arity(helper->second);
            needSection("streaming_stores");
            return fmt::format("tl::{}({})", n, fmt::join(args, ", "));
        }
        if (n == "load_f32x16") {  // (&fragment[..]): 16 floats as a tl::f32x16 (VectorLoop.h)
            arity(1);
            needSection("f32x16");
            return fmt::format("tl::load_f32x16({})", args[0]);
        }
        if (n == "prefetch") {  // (&tensor[..]): a hint, no value changes
            arity(1);
            needSection("prefetch");
            return fmt::format("tl::prefetch({})", args[0]);
        }
        if (n == "dp4a") {
            arity(3);
            needSection("dp4a");
            return fmt::format("tl::dp4a({}, {}, {})", args[0], args[1], args[2]);
        }
        DType t = c->dtype;
        include("<cmath>");
        if (n == "abs" && isInteger(t)) {
            arity(1);
            include("<cstdlib>");
            return "std::abs(" + args[0] + ")";
        }
        if (t != DType::F32 && t != DType::F64)
            throw EmitError(fmt::format("emit: {} on {} (math runs on f32 or f64)", n, dtypeName(t)));
        if (n == "pow") {
            arity(2);
            return fmt::format("std::pow({}, {})", args[0], args[1]);
        }
        arity(1);
        // The fast variants are the plain functions on the CPU.
        std::string base = n.rfind("fast_", 0) == 0 ? n.substr(5) : n;
        if ((base == "exp" || base == "exp2") && t == DType::F32) {  // vectorisable forms
            needSection("math");
            return fmt::format("tl::{}({})", base, args[0]);
        }
        static const char* plain[] = {"exp", "exp2", "log", "log2", "sqrt", "abs", "tanh", "erf"};
        for (const char* p : plain)
            if (base == p) return fmt::format("std::{}({})", p, args[0]);
        if (base == "rsqrt" || base == "sigmoid" || base == "silu" || base == "gelu" ||
            base == "relu") {
            needSection("math");
            return fmt::format("tl::{}({})", base, args[0]);
        }
        throw EmitError("emit: unknown function '" + n + "'");
    }

    std::string minMaxText(const Binary* b, const std::string& x, const std::string& y) override {
        bool isMin = b->op == BinaryOp::Min;
        if (isFloat(b->dtype)) {  // tl::fmax/fmin: selects, which vectorise
            needSection("math");
            return fmt::format("tl::{}({}, {})", isMin ? "fmin" : "fmax", x, y);
        }
        include("<algorithm>");
        // Operands narrower than int are promoted by C++: name the type so both sides agree.
        std::string explicitType = dtypeBits(b->dtype) < 32 ? "<" + typeName(b->dtype) + ">" : "";
        return fmt::format("std::{}{}({}, {})", isMin ? "min" : "max", explicitType, x, y);
    }

    void emitSharedOrLocal(const Allocate* a) override {
        const Buffer& b = a->buffer;
        if (const std::string* name = names_.lookup(b.get())) {
            std::string dims;
            for (const auto& d : b->shape) dims += (dims.empty() ? "" : ", ") + std::to_string(*asConstInt(d));
            line(fmt::format("// {}: {} {}[{}], per-thread storage from the launcher", *name, scopeName(b->scope),
                             dtypeName(b->dtype), dims));
            return;
        }
        std::string name = names_.declare(b.get(), b->name);
        if (b->shape.empty()) {  // a shared scalar: one thread per block, so a variable
            line(fmt::format("{} {}{{}};", typeName(b->dtype), name));
            return;
        }
        std::string dims;
        if (b->shape.size() >= 2)
            for (const auto& d : b->shape) dims += (dims.empty() ? "  // " : " x ") + std::to_string(*asConstInt(d));
        line(fmt::format("{} {}[{}];{}", typeName(b->dtype), name, std::max<int64_t>(bufferSpan(b), 1), dims));
    }

    void emitBarrier() override {}  // one thread per block

    void emitAtomicAdd(const Store* s, const std::string& target, const std::string& value) override {
        DType t = s->buffer->dtype;
        if (isFloat(t) && dtypeBits(t) < 32) {
            needSection("narrow_atomic_add");
            line(fmt::format("tl::atomic_add_narrow(&{}, {});", target, value));
            return;
        }
        line("#pragma omp atomic");
        line(fmt::format("{} += {};", target, value));
    }

    void emitAtomicMinMax(const Store*, const std::string& target, const std::string& value, bool max) override {
        needSection("atomic_minmax");
        line(fmt::format("tl::atomic_{}(&{}, {});", max ? "max" : "min", target, value));
    }

    // A 16-lane loop that calls exp or exp2: as tl::f32x16 values where tl_cpu.h has them
    // (AVX-512), else as the loop (VectorLoop.h).
    bool emitOtherForm(const For* f) override {
        std::optional<std::vector<VectorStmt>> form = vectorLoopForm(f);
        if (!form) return false;
        needSection("f32x16");
        line(fmt::format("#if defined(TL_CPU_F32X16)  // the {} lanes as one vector", kVectorLanes));
        line("{");
        out_->indent();
        names_.push();
        for (const VectorStmt& s : *form) {
            if (s.kind == VectorStmt::Kind::Store) {
                line(fmt::format("tl::store(&{}, {});", elementText(s.buffer, s.indices), expr(s.value)));
                continue;
            }
            if (!info_.used(s.var.get())) continue;
            std::string value = s.varying ? expr(s.value) : castText(s.var->dtype, s.value.dtype(), expr(s.value));
            std::string name = names_.declare(s.var.get(), s.var->name);
            line(fmt::format("const {} {} = {};", s.varying ? "tl::f32x16" : typeName(s.var->dtype), name, value));
        }
        closeBrace();
        line("#else");
        emitLoop(f);
        line("#endif");
        return true;
    }

    std::string loopPragma(const For* f) const override {
        if (f->forKind == ForKind::Vectorized) return "#pragma omp simd";
        const int64_t* extent = asConstInt(f->extent);
        if (f->forKind != ForKind::Unroll || !extent || *extent < 1) return "";
        return fmt::format("#pragma GCC unroll {}", std::min<int64_t>(*extent, 65534));
    }

private:
    std::vector<Buffer> hoisted_;
};

} // namespace

std::unique_ptr<CEmitter> makeCpuEmitter(const Target& target, const EmitOptions& options) {
    return std::make_unique<CpuEmitter>(target, options);
}

} // namespace tlc::codegen
