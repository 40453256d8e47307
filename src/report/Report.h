// The kernel report (--report=FILE, docs/report.md): one self-contained HTML page per run that
// shows what the compiler decided for each kernel, as pictures. It draws what the driver already
// computed (the emitted code and its line comments, the lowered kernel's launch, shared-memory
// plan and pipeline summaries, the Tile IR it came from, layout inference's facts, the decision
// log, the recommender's ranking); it decides nothing. One file per section:
//
//     Html.{h,cpp}       escaping, colours, the page's style and script
//     SourceView.cpp     the source beside the emitted code, lines linked; the launch
//     Dataflow.cpp       buffers and the tile ops between them, in program order
//     LayoutView.cpp     fragment layouts (thread and register per element), shared bank grids
//     PipelineView.cpp   each pipelined loop's steady-state step and stage timeline
//     Resources.cpp      shared memory, registers (ptxas or the model's estimate), occupancy
//     Choices.cpp        the recommender's candidates and every --explain decision
//     Ptxas.cpp          --report-ptxas: registers and spills from nvcc -Xptxas -v
//     Report.cpp         the page: a section per kernel
#pragma once

#include "ir/Kernel.h"
#include "recommend/Recommend.h"
#include "support/DecisionLog.h"
#include "support/SourceFile.h"
#include "target/Target.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::report {

// What ptxas said of one kernel (its __global__ function).
struct PtxasKernel {
    int registers = 0;
    int64_t spillStores = 0, spillLoads = 0;
    int64_t stackBytes = 0;
};
struct PtxasResult {
    bool ran = false;
    std::string note;  // why it did not run, or the command it ran
    std::map<std::string, PtxasKernel> kernels;  // by the __global__ function's name (demangled or not)
};

// Runs nvcc on the emitted CUDA source (when `target` is a CUDA target and nvcc is on PATH or in
// /usr/local/cuda/bin) with -Xptxas -v and reads each kernel's registers and spills.
PtxasResult runPtxas(const std::string& source, const std::string& headerName, const std::string& header,
                     const Target& target);

struct ReportInput {
    const SourceFile* source = nullptr;  // the .tl file
    const Target* target = nullptr;
    const std::vector<ir::Kernel>* kernels = nullptr;  // lowered, each with its tileLevel and decision log
    std::string emitted;                               // the emitted source, as written
    std::string emittedName;                           // its file name ("gemm.cu"), or "<stdout>"
    std::map<std::string, Recommendation> rankings;    // by source kernel name: `auto` kernels' candidates
    std::optional<PtxasResult> ptxas;                  // --report-ptxas
    std::string commandLine;                           // for the page's header
};

// The page. Never fails: a section whose data is missing says so.
std::string renderReport(const ReportInput& input);

} // namespace tlc::report
