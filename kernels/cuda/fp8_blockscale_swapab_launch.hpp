// The launch of fp8_blockscale's swap-AB decode kernel (fp8_blockscale_swapab_kernel.cuh, compiled in
// fp8_blockscale_swapab.cu): its parameters and the one entry point the session calls.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/fp8_blockscale_swapab_config.hpp"

namespace shapescope::kernels::cuda {

struct Fp8SwapAbParams {
  CUtensorMap a_map;                // A [rows][k] e4m3, boxes of a_box_rows x 128 bytes
  CUtensorMap b_map;                // B [n][k] e4m3, boxes of weight_rows x 128 bytes; pre-shuffled: verbatim rows
  CUtensorMap a_scale_map;          // A scales, M-major [ceil(k/128)][rows], boxes of a_box_rows
  const float* b_scales = nullptr;  // [ceil(n/128)][ceil(k/128)]
  __nv_bfloat16* c = nullptr;       // [m][n]
  int m = 0, n = 0, k = 0;          // n a multiple of 8 (pairs of columns are stored together)
  int splits = 1, kblocks_per_split = 1;  // splits: K ranges of a weight tile, the CTAs of one cluster
  int a_box_rows = 8;               // M rounded up to 8: the token rows a copy delivers
};

// The f32 partial tile one K range leaves in its shared memory for the cluster's rank 0.
constexpr int fp8_swapab_partial_floats(int weight_rows, int tokens) { return weight_rows * tokens; }

// Launches `config` (its token width and pre-shuffled or row-major B pick the instance); `programmatic`:
// with programmatic dependent launch.
void launch_fp8_blockscale_swapab(const Fp8SwapAbParams& params, const Fp8SwapAbConfig& config, bool preshuffled_b,
                                  bool programmatic, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
