// tl_hip.h -- device helpers for tlc's HIP output. Sections: see tl_common.h. The matrix-core
// helpers are tl_hip_mfma.h; what HIP shares with CUDA is tl_gpu.h.
#pragma once

#include <hip/hip_runtime.h>

#include "tl_common.h"
#include "tl_gpu.h"

