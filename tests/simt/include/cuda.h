// A stand-in for the driver API's <cuda.h> used by the SIMT simulator: the tensor-map part
// (CUtensorMap and cuTensorMapEncodeTiled), so that the runtime's host helper
// tl::make_tensor_map_2d (tl_cuda_tma_host.h, section tma_host) runs against it and the TMA emulation
// in cuda_runtime.h reads the maps it makes. The encoder checks the driver's documented rules
// (cuda.h of CUDA 12/13, cuTensorMapEncodeTiled) and stores the fields in the opaque words.
#pragma once

#include <cstdint>
#include <cstring>

typedef std::uint32_t cuuint32_t;
typedef std::uint64_t cuuint64_t;

enum CUresult { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };
#define CUDAAPI

#define CU_TENSOR_MAP_NUM_QWORDS 16
typedef struct CUtensorMap_st {
    alignas(64) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

typedef enum CUtensorMapDataType_enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    CU_TENSOR_MAP_DATA_TYPE_UINT16,
    CU_TENSOR_MAP_DATA_TYPE_UINT32,
    CU_TENSOR_MAP_DATA_TYPE_INT32,
    CU_TENSOR_MAP_DATA_TYPE_UINT64,
    CU_TENSOR_MAP_DATA_TYPE_INT64,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ
} CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum {
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    CU_TENSOR_MAP_INTERLEAVE_16B,
    CU_TENSOR_MAP_INTERLEAVE_32B
} CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum {
    CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    CU_TENSOR_MAP_SWIZZLE_32B,
    CU_TENSOR_MAP_SWIZZLE_64B,
    CU_TENSOR_MAP_SWIZZLE_128B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B
} CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum {
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;

namespace simt {
// What the simulator keeps in a CUtensorMap's opaque words.
struct TensorMap {
    std::uint64_t magic;  // kTensorMapMagic once encoded
    unsigned char* base;
    std::uint32_t rank, elementBytes, swizzleSpan;  // span 0: no swizzle
    std::uint64_t dims[5];
    std::uint64_t strides[4];  // bytes: strides[i - 1] is that of dimension i
    std::uint32_t box[5];
};
static_assert(sizeof(TensorMap) <= sizeof(CUtensorMap), "fits the opaque words");
constexpr std::uint64_t kTensorMapMagic = 0x73696d74746d6170ull;

inline TensorMap decodeTensorMap(const CUtensorMap* map) {
    TensorMap m;
    std::memcpy(&m, map->opaque, sizeof m);
    return m;
}
} // namespace simt

inline CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                       cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim,
                                       const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
                                       const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                       CUtensorMapFloatOOBfill oobFill) {
    (void)l2Promotion;
    static const std::uint32_t sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    if (!tensorMap || unsigned(tensorDataType) > 12u || tensorRank == 0 || tensorRank > 5) return CUDA_ERROR_INVALID_VALUE;
    if (reinterpret_cast<std::uintptr_t>(globalAddress) % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
    // Only what tlc uses is emulated: no interleave, 16-byte-chunk swizzles, zero fill.
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || unsigned(swizzle) > 3u || oobFill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        return CUDA_ERROR_INVALID_VALUE;
    simt::TensorMap m{};
    m.magic = simt::kTensorMapMagic;
    m.base = static_cast<unsigned char*>(globalAddress);
    m.rank = tensorRank;
    m.elementBytes = sizes[tensorDataType];
    m.swizzleSpan = swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? 0 : 16u << unsigned(swizzle);
    for (cuuint32_t i = 0; i < tensorRank; ++i) {
        if (globalDim[i] == 0 || globalDim[i] > (cuuint64_t(1) << 32)) return CUDA_ERROR_INVALID_VALUE;
        if (boxDim[i] == 0 || boxDim[i] > 256) return CUDA_ERROR_INVALID_VALUE;
        if (elementStrides[i] != 1) return CUDA_ERROR_INVALID_VALUE;  // traversal strides are not emulated
        m.dims[i] = globalDim[i];
        m.box[i] = boxDim[i];
        if (i > 0) {
            cuuint64_t s = globalStrides[i - 1];
            if (s % 16 != 0 || s >= (cuuint64_t(1) << 40)) return CUDA_ERROR_INVALID_VALUE;
            m.strides[i - 1] = s;
        }
    }
    const std::uint64_t innerBytes = std::uint64_t(boxDim[0]) * m.elementBytes;
    if (innerBytes % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
    if (m.swizzleSpan != 0 && innerBytes > m.swizzleSpan) return CUDA_ERROR_INVALID_VALUE;
    std::memset(tensorMap->opaque, 0, sizeof tensorMap->opaque);
    std::memcpy(tensorMap->opaque, &m, sizeof m);
    return CUDA_SUCCESS;
}
