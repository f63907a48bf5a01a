// Lets one inline definition serve host code and CUDA device code.
#pragma once
#if defined(__CUDACC__)
#define SHAPESCOPE_HD __host__ __device__ __forceinline__
#else
#define SHAPESCOPE_HD inline
#endif
