#pragma once
#include "hip_runtime.h"
#include "../cuda_fp16.h"
