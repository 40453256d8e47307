// A stand-in for <cudaTypedefs.h> used by the SIMT simulator: the driver entry point type that
// tl::make_tensor_map_2d looks up (see cuda.h here).
#pragma once

#include "cuda.h"

typedef CUresult(CUDAAPI* PFN_cuTensorMapEncodeTiled_v12000)(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);
#define PFN_cuTensorMapEncodeTiled PFN_cuTensorMapEncodeTiled_v12000
