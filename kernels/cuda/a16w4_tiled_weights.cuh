// FP4 weights in the tile layout of a16w4_tiled_config.hpp, packed on the device from the synthetic operands
// (one session's untimed prepare), for the dense and the grouped tiled W4A16 kernels. Host-callable only.
#pragma once

#include <cstdint>

#include "common/block_format.hpp"
#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace shapescope::kernels::cuda {

struct A16w4TiledWeights {
  A16w4TiledLayout layout;
  DeviceBuffer<uint8_t> codes;          // [batch][layout.code_bytes()]
  DeviceBuffer<uint8_t> scales;         // [batch][layout.scale_bytes()]
  DeviceBuffer<float> tensor_scales;    // [batch]: the per-tensor scale, 1 where the format has none
};

// The B operand of `weights` (e2m1 with e8m0 or ue4m3 scales per 16 or 32) for `batch` matrices of N x K from
// `seed`, packed and synchronized. Throws UserError for a scale code whose products bf16 cannot hold exactly
// (e8m0 above 2^125, a NaN code), which the synthetic operands never have.
A16w4TiledWeights pack_a16w4_tiled_weights(const OperandEncoding& weights, uint64_t seed, int64_t batch, int64_t n,
                                           int64_t k, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
