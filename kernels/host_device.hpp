// Lets one inline definition serve host code and GPU device code (nvcc and hipcc alike).
#pragma once
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SHAPESCOPE_HD __host__ __device__ __forceinline__
#else
#define SHAPESCOPE_HD inline
#endif
