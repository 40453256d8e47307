// The C-family emitter shared by the CUDA, HIP and C++ backends: a precedence-aware expression
// printer (with the extra parentheses that keep -Wall's -Wparentheses quiet) and the statement
// printer, with virtual hooks for what differs between targets (type names, math functions,
// shared memory, barriers, atomics, the launcher). The backends are small subclasses.
#pragma once

#include "emit/Analysis.h"
#include "emit/CText.h"
#include "emit/CodeWriter.h"
#include "emit/Emit.h"
#include "emit/Names.h"
#include "emit/Runtime.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::codegen {

// The grids of the group (ir::Kernel::group) whose first part is kernels[first]: consecutive,
// in part order. Throws EmitError when some are missing.
std::vector<const ir::Kernel*> groupParts(const std::vector<ir::Kernel>& kernels, size_t first);

// A launcher parameter as the typed C++ launcher and its extern "C" twin declare it.
struct LauncherParam {
    const ir::KernelParam* param;
    std::string name;   // as declared (the .tl name where C++ allows it)
    std::string type;   // "const __half*", "int", "float"
    std::string cType;  // in the extern "C" twin: "const void*", "int", "float"
};

struct LauncherSignature {
    std::string name;        // gemm
    std::string cName;       // tl_gemm
    std::string kernelName;  // gemm_kernel (GPU) / gemm_block (CPU)
    std::vector<LauncherParam> params;
};

class CEmitter {
public:
    CEmitter(const Target& target, const EmitOptions& options);
    virtual ~CEmitter() = default;

    // Chooses the file-level names (kernel functions, launchers, extern "C" twins) of every
    // kernel; call once before the emit* functions.
    void prepare(const std::vector<ir::Kernel>& kernels);

    // Everything one kernel contributes to the source, inside the namespace: the kernel
    // function(s) and the launcher definition.
    void emitKernel(const ir::Kernel& kernel, CodeWriter& out);
    // The typed launcher declaration with its comment (for the header, or the source when
    // there is no header), and the extern "C" twin's declaration / definition.
    void emitLauncherDeclaration(const ir::Kernel& kernel, CodeWriter& out);
    void emitCTwinDeclaration(const ir::Kernel& kernel, CodeWriter& out);
    void emitCTwinDefinition(const ir::Kernel& kernel, CodeWriter& out);
    // --emit-variants (Dispatcher.cpp): the declarations of a variant set's dispatcher functions
    // (count, names, pick, launch by index, launch the pick) and their definitions.
    void emitDispatcherDeclaration(const VariantSet& set, const std::vector<ir::Kernel>& kernels, CodeWriter& out);
    void emitDispatcher(const VariantSet& set, const std::vector<ir::Kernel>& kernels, CodeWriter& out);
    // The extern "C" twin of a variant set's default launcher (tl_<name>, picking the variant).
    void emitDispatcherCTwinDeclaration(const VariantSet& set, const std::vector<ir::Kernel>& kernels, CodeWriter& out);
    void emitDispatcherCTwinDefinition(const VariantSet& set, const std::vector<ir::Kernel>& kernels, CodeWriter& out);
    // --emit-manifest (Manifest.cpp): every launcher of the file as JSON, for tools and bindings
    // that should not parse C++. Call after the launchers were emitted.
    std::string manifest(const std::vector<ir::Kernel>& kernels, const std::string& sourceName) const;

    // --emit=python (Python.cpp): a pybind11 module binding every launcher of the file (not the
    // variants of a dispatcher: the dispatcher). Call after the launchers were emitted.
    std::string pythonBinding(const std::vector<ir::Kernel>& kernels, const std::string& sourceName);
    // The alignment a tensor's pointer needs: its element's, or what a launch check or a TMA map
    // of any of the kernels asks for (the manifest's alignment_bytes).
    static int tensorAlignment(const ir::KernelParam& p, const std::vector<const ir::Kernel*>& kernels);

    // A group's workspace must be this aligned (vector and TMA accesses; cudaMalloc gives 256).
    static constexpr int kWorkspaceAlign = 16;

    // A source kernel of several grids or with global scratch (ir::Kernel::group): its parts
    // are consecutive in emit()'s list; emitKernel() gives each its kernel function and a
    // static launcher (with a check-only mode), these the launcher that takes the workspace and
    // runs the parts in order, and NAME_workspace_size (Group.cpp).
    void emitGroupDeclaration(const std::vector<const ir::Kernel*>& parts, CodeWriter& out);
    void emitGroup(const std::vector<const ir::Kernel*>& parts, CodeWriter& out);
    void emitGroupCTwinDeclaration(const std::vector<const ir::Kernel*>& parts, CodeWriter& out);
    void emitGroupCTwinDefinition(const std::vector<const ir::Kernel*>& parts, CodeWriter& out);

    // Toolkit and standard headers, and runtime sections, that the header needs for the
    // launcher types of these kernels / that the source needs for what was emitted so far.
    virtual std::vector<std::string> headerIncludes(const std::set<DType>& paramTypes) const = 0;
    virtual void headerRuntime(const std::set<DType>& paramTypes, RuntimeNeeds& needs) const = 0;
    virtual std::vector<std::string> sourceIncludes() const = 0;
    const RuntimeNeeds& runtimeNeeds() const { return needs_; }
    // Preprocessor lines for the top of the header before the includes (HIP's platform macro).
    virtual std::vector<std::string> headerPrologue() const { return {}; }
    // Lines at the top of the source file, after its banner (and header include).
    virtual std::vector<std::string> sourcePrologue() const { return {}; }
    // Lines around the source's code (runtime sections, kernels, launchers), below all of its
    // includes: the cpu targets' `#pragma GCC target` region.
    virtual std::vector<std::string> codeRegionOpen() const { return {}; }
    virtual std::vector<std::string> codeRegionClose() const { return {}; }

    virtual std::string typeName(DType t) const;

protected:
    // ---- what backends provide ----------------------------------------------------------
    virtual std::string lowPrecisionType(DType t) const = 0;  // f16, bf16, fp8
    virtual std::string kernelSuffix() const = 0;             // "_kernel" / "_block"
    virtual void emitKernelFunction(const ir::Kernel& k, const LauncherSignature& sig) = 0;
    virtual void emitLaunch(const ir::Kernel& k, const LauncherSignature& sig) = 0;  // grid + launch
    virtual std::string errorType() const = 0;     // cudaError_t / hipError_t / int
    virtual std::string successValue() const = 0;  // cudaSuccess / ...
    virtual std::string invalidValue() const = 0;  // cudaErrorInvalidValue / ...
    virtual std::string streamType() const = 0;    // cudaStream_t / hipStream_t / "" (none)
    // A status expression that zeroes `bytes` at `ptr` (on the launcher's stream on GPUs).
    virtual std::string zeroScratch(const std::string& ptr, const std::string& bytes) {
        return "(std::memset(" + ptr + ", 0, " + bytes + "), " + successValue() + ")";
    }
    virtual std::string roleValue(ir::VarRole role) const = 0;  // threadIdx.x / 0
    virtual std::string callText(const ir::Call* c, const std::vector<std::string>& args) = 0;
    // A call of an instruction helper of the runtime headers (Runtime.h, findInstructionHelper):
    // `tl::name<immediates>(rest)`, its section needed; nothing for other calls.
    std::optional<std::string> instructionHelperCall(const ir::Call* c, const std::vector<std::string>& args) const;
    virtual std::string minMaxText(const ir::Binary* b, const std::string& x, const std::string& y) = 0;
    virtual void emitSharedOrLocal(const ir::Allocate* a) = 0;  // declares the buffer
    virtual void emitBarrier() = 0;
    virtual void emitAtomicAdd(const ir::Store* s, const std::string& target, const std::string& value) = 0;
    virtual void emitAtomicMinMax(const ir::Store* s, const std::string& target, const std::string& value,
                                  bool max) = 0;
    virtual std::string loopPragma(const ir::For* f) const = 0;  // "" for none
    // Writes the loop in another form (the cpu's explicit vectors) and returns true, or false.
    virtual bool emitOtherForm(const ir::For*) { return false; }
    virtual std::string printfName() const = 0;
    // The backend's runtime files, by name prefix (Runtime.h, findBackendSection): {"tl_cpu"}, or
    // {"tl_cuda", "tl_gpu"}: tl_cuda.h, tl_cuda_mma.h, ..., tl_gpu.h.
    virtual std::vector<std::string> runtimePrefixes() const = 0;
    virtual std::string restrictQualifier() const { return "__restrict__"; }
    // In a part's launcher, when it is only checking: what launching would check besides
    // emitLaunchChecks (the GPU backends build the tensor maps, which check TMA's rules).
    virtual void emitPartChecks(const ir::Kernel&) {}

    // ---- shared machinery -----------------------------------------------------------------
    std::string expr(const ir::Expr& e) { return print(e, 0); }
    std::string print(const ir::Expr& e, int parentPrec);
    std::string castText(DType to, DType from, const std::string& value);
    std::string intLiteral(int64_t v, DType t) const;
    std::string floatLiteral(const ir::FloatImm* f);
    std::string offsetText(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
    std::string elementText(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
    std::string bufferName(const ir::BufferNode* b) const;
    std::string varName(const ir::Var* v) const;
    std::string roleName(ir::VarRole role) const;
    static const void* roleOwner(ir::VarRole role);
    void need(std::string_view file, std::string_view section) const { needs_.add(file, section); }
    void needSection(std::string_view section) const;  // the backend's section of that name
    void include(std::string header) const { includes_.insert(std::move(header)); }

    void emitStmt(const ir::Stmt& s);
    void emitBody(const ir::Stmt& s);  // a block's statements in a new scope
    void locate(const ir::Stmt& s);
    void emitEvaluate(const ir::Evaluate* e);
    void emitStore(const ir::Store* s);
    void emitFor(const ir::For* f);
    void emitLoop(const ir::For* f);  // as a C++ for loop
    void emitIf(const ir::IfThenElse* i, bool chained);
    void emitAllocate(const ir::Allocate* a);
    void emitComment(const ir::Comment* c);
    void line(const std::string& text);  // one statement; wrapped at 100 columns when longer
    void openBrace(const std::string& head);  // "head {" and a new scope
    void closeBrace(const std::string& tail = "}");

    // Kernel-level helpers for the backends.
    std::string sourceName() const;
    std::string where(SourceLoc loc) const;  // "gemm.tl:12"
    // The header comment's first line of a launcher: "NAME (gemm.tl:12) with block_M = 128, ...".
    std::string launcherTitle(const ir::Kernel& k, const std::string& name) const;
    // A scalar or size parameter in a launcher's comment: "alpha: f32", "M: i32 (size)".
    static std::string scalarParamText(const ir::KernelParam& p);
    const LauncherSignature& signature(const ir::Kernel& k) const;
    void beginKernel(const ir::Kernel& k);  // analysis and per-kernel state
    std::vector<std::string> kernelParams(const ir::Kernel& k);  // "const float* __restrict__ A", ...
    void declareKernelParams(const ir::Kernel& k);
    static const void* paramOwner(const ir::KernelParam& p);  // what names_ knows the parameter by
    void declareRoleVariables(bool includeBlocks);
    void emitLaunchChecks(const ir::Kernel& k);
    std::vector<std::string> gridExtentNames(const ir::Kernel& k);  // declares blocks_x, ...
    std::vector<std::string> argumentList(const ir::Kernel& k) const;  // A, B, C, M, N, K as declared
    // "head item, item, ...tail" as lines of at most 100 columns (after indentColumns),
    // continuation lines aligned after head.
    // onePerLine: when it does not fit on one line, one item per line (function signatures).
    static std::vector<std::string> wrapCall(const std::string& head, const std::vector<std::string>& items,
                                             const std::string& tail, int indentColumns, bool onePerLine = false);
    bool wordTyped(DType t) const;  // typeName is one token, so T(x) is a valid cast
    void wrapNarrowInteger(DType type, std::string& text, int& prec) const;

    const Target& target_;
    const EmitOptions& options_;
    mutable RuntimeNeeds needs_;             // runtime sections the source uses
    mutable std::set<std::string> includes_;  // standard headers the source uses
    mutable std::set<DType> usedTypes_;       // every type the source spells
    std::vector<std::string> fileLevelNames_;  // every function name of the file
    NameScope names_;                          // within the function being emitted
    void startFunction();                      // fresh names_ that knows the file-level names
    const ir::Kernel* kernel_ = nullptr;
    KernelInfo info_;
    CodeWriter* out_ = nullptr;
    uint32_t lastLine_ = 0;     // the .tl line of the last location comment
    uint32_t pendingLine_ = 0;  // a location to write before the next line
    void flushLocation();
    std::map<const ir::Kernel*, LauncherSignature> signatures_;
    struct GroupNames {
        std::string launch, workspaceSize;    // flash_decoding, flash_decoding_workspace_size
        std::string cLaunch, cWorkspaceSize;  // tl_flash_decoding, tl_flash_decoding_workspace_size
        std::vector<LauncherParam> params;     // the launcher's (no scratch), tensors written by any part non-const
        bool general = false;  // a general variant's group: a static launcher only (no size function, no twin)
    };
    std::map<std::string, GroupNames> groupNames_;  // by Kernel::group

    // Shape variants (ShapeVariants.cpp, ir::Kernel::generalShapes): a kernel's general variant
    // has a static launcher that the fast one's calls when the fast path's conditions fail.
    // prepare() pairs them and gives both launchers the same parameter types (a tensor either
    // writes is not const).
    void prepareShapeVariants(const std::vector<ir::Kernel>& kernels);
    std::map<const ir::Kernel*, std::vector<const ir::Kernel*>> generalOf_;  // fast (part 0) -> general parts
    // The general variant of k (its parts, for a group's part 0); empty when it has none.
    std::vector<const ir::Kernel*> generalParts(const ir::Kernel& k) const;
    // The launcher checks of k's fast path: refusals, or (a plain kernel with a general variant)
    // one test that calls the general variant's launcher instead.
    void emitFastPathChecks(const ir::Kernel& k);
    // What a launcher refuses on failure of `c`, as C: "K % 8 != 0", "!tl::is_aligned(A, 16)".
    std::string failingTest(const ir::Expr& condition);
    // The header comment's sentence on which variant runs when; "" for a kernel without one.
    std::string variantsDescription(const std::vector<const ir::Kernel*>& fast) const;
    // A general variant's title line in the source.
    void emitGeneralTitle(const ir::Kernel& k);
    std::string launchDescription(const ir::Kernel& k) const;  // "grid (...) of 128-thread blocks, ..."
    std::vector<std::string> checkDescriptions(const ir::Kernel& k) const;
    std::string workspaceSizeExpr(const std::vector<const ir::Kernel*>& parts, const ir::Buffer& b);
    struct DispatcherNames {
        std::string launch, count, names, pick, variant;  // gemm, gemm_variant_count, ...
        std::string cLaunch;                               // tl_gemm
    };
    std::map<std::string, DispatcherNames> dispatcherNames_;  // by VariantSet::name
    void emitCTwinDeclaration(const ir::Kernel& k, const std::string& cName, CodeWriter& out);
    void emitCTwinDefinition(const ir::Kernel& k, const std::string& cName, const std::string& callee, CodeWriter& out);
    // Python.cpp: one bound launcher, where its sizes come from, its pieces of the binding.
    struct BoundLauncher;
    struct SizeSource {
        const LauncherParam* tensor;  // the array whose shape (or strides) has the size
        int dim;
        bool fromStrides;
    };
    std::optional<SizeSource> derivedSize(const BoundLauncher& b, const ir::KernelParam& size) const;
    std::string pythonDoc(const BoundLauncher& b) const;
    void emitPythonDevice(const std::vector<BoundLauncher>& bound, CodeWriter& w) const;
    void emitBoundFunction(const BoundLauncher& b, CodeWriter& out);
    std::string qualified(const std::string& name) const;  // "::tl_kernels::gemm"
    std::vector<std::string> dispatcherParams(const VariantSet& set, const std::vector<ir::Kernel>& kernels,
                                              bool withDefaults);
};

std::unique_ptr<CEmitter> makeCudaEmitter(const Target& target, const EmitOptions& options);
std::unique_ptr<CEmitter> makeHipEmitter(const Target& target, const EmitOptions& options);
std::unique_ptr<CEmitter> makeCpuEmitter(const Target& target, const EmitOptions& options);

// A buffer's element type and shape as the launcher comments show it: "f16[M, K]".
std::string bufferTypeText(const ir::Buffer& b);

} // namespace tlc::codegen
