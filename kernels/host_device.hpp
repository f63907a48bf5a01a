// Lets one inline definition serve host code and GPU device code (nvcc and hipcc alike).
#pragma once
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // __host__, __device__ and __forceinline__ (nvcc knows them without a header)
#endif
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SHAPESCOPE_HD __host__ __device__ __forceinline__
#else
#define SHAPESCOPE_HD inline
#endif
