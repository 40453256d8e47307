// tl_cuda_tma_host.h -- the host side of TMA for tlc's CUDA launchers: tensor maps made through
// the driver's cuTensorMapEncodeTiled (reached through the runtime API, so that programs need
// not link libcuda). Host code only: it compiles with a host compiler and the toolkit's headers.
// The device side is tl_cuda_tma.h. Sections: see tl_common.h.
#pragma once

#include <cuda_runtime.h>

// tlc:section tma_host
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdint>
namespace tl {
// Host side of TMA: make_tensor_map_2d fills *out with a tensor map of a row-major 2-D tensor (`rows` x `cols`
// elements of `dtype`, rows `rowStrideBytes` apart, starting at device address `base`) whose
// boxes are boxRows x boxCols elements, with `swizzle`. Reaches the driver's
// cuTensorMapEncodeTiled through the runtime (cudaGetDriverEntryPointByVersion, or
// cudaGetDriverEntryPoint before CUDA 12.5), so programs need not link libcuda. Returns
// cudaErrorInvalidValue, without calling the driver, when TMA's rules fail: base and row stride
// 16-byte aligned, stride >= cols * element size and < 2^40, sizes in [1, 2^32], box sides in
// [1, 256], the box's row (boxCols * element size) a multiple of 16 bytes and, with a swizzle,
// exactly the swizzle span (32, 64 or 128 bytes; the driver allows less, tlc's layouts assume
// equal); only the 16-byte-chunk swizzles (NONE, 32B, 64B, 128B). cudaErrorNotSupported when
// the driver has no cuTensorMapEncodeTiled, cudaErrorInvalidValue when it refuses the map.
inline unsigned tensor_map_element_bytes(CUtensorMapDataType dtype) {
    switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;  // packed sub-byte types: not supported here
    }
}
inline unsigned tensor_map_swizzle_span(CUtensorMapSwizzle swizzle) {
    switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return ~0u;
    }
}
// The same for a tensor of Rank (1 to 5) dimensions, each given outermost first as the tile
// language writes them: sizes[Rank] in elements, strideBytes[Rank - 1] the byte strides of all
// but the innermost (contiguous) dimension, box[Rank] the box's extent in each (1 where the tile
// squeezes a dimension). The rules above hold per dimension: every stride a multiple of 16 and
// at least the bytes of the dimensions inside it, the innermost box side is the box's row.
template <int Rank>
inline cudaError_t make_tensor_map(CUtensorMap* out, const void* base, CUtensorMapDataType dtype,
                                   const uint64_t (&sizes)[Rank], const uint64_t (&strideBytes)[Rank > 1 ? Rank - 1 : 1],
                                   const uint32_t (&box)[Rank], CUtensorMapSwizzle swizzle) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA tensor maps have 1 to 5 dimensions");
    const uint64_t es = tensor_map_element_bytes(dtype);
    const unsigned span = tensor_map_swizzle_span(swizzle);
    if (!out || !base || es == 0 || span == ~0u) return cudaErrorInvalidValue;
    if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return cudaErrorInvalidValue;
    // The driver takes dimensions innermost first.
    cuuint64_t dims[Rank], strides[Rank > 1 ? Rank - 1 : 1] = {};
    cuuint32_t boxDims[Rank], elementStrides[Rank];
    uint64_t inner = es;  // bytes spanned by the dimensions inside the current one
    for (int d = 0; d < Rank; ++d) {
        const int i = Rank - 1 - d;  // the d-th innermost dimension
        if (sizes[i] == 0 || sizes[i] > (uint64_t(1) << 32)) return cudaErrorInvalidValue;
        if (box[i] == 0 || box[i] > 256) return cudaErrorInvalidValue;
        if (d > 0) {
            const uint64_t s = strideBytes[i];
            if (s % 16 != 0 || s < inner || s >= (uint64_t(1) << 40)) return cudaErrorInvalidValue;
            strides[d - 1] = s;
            inner = s * sizes[i];
        } else {
            inner = es * sizes[i];
        }
        dims[d] = sizes[i];
        boxDims[d] = box[i];
        elementStrides[d] = 1;
    }
    const uint64_t boxRowBytes = box[Rank - 1] * es;
    if (boxRowBytes % 16 != 0 || (span != 0 && boxRowBytes != span)) return cudaErrorInvalidValue;
    using Encode = PFN_cuTensorMapEncodeTiled_v12000;
    static Encode encode = nullptr;
    if (!encode) {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                                              &found);
#else
        cudaError_t status = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
        if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) return cudaErrorNotSupported;
        encode = reinterpret_cast<Encode>(fn);
    }
    CUresult result = encode(out, dtype, Rank, const_cast<void*>(base), dims, strides, boxDims, elementStrides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
// The 2-D map described at the top of this section.
inline cudaError_t make_tensor_map_2d(CUtensorMap* out, const void* base, CUtensorMapDataType dtype, uint64_t rows,
                                      uint64_t cols, uint64_t rowStrideBytes, uint32_t boxRows, uint32_t boxCols,
                                      CUtensorMapSwizzle swizzle) {
    return make_tensor_map<2>(out, base, dtype, {rows, cols}, {rowStrideBytes}, {boxRows, boxCols}, swizzle);
}
} // namespace tl
// tlc:end
