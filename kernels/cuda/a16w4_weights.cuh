// FP4 weights in the layout of a16w4_layout.hpp, packed on the device from the synthetic operands (one
// session's untimed prepare), for the dense and the grouped W4A16 kernels. Host-callable declarations only.
#pragma once

#include <cstdint>

#include "common/block_format.hpp"
#include "kernels/cuda/a16w4_layout.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace shapescope::kernels::cuda {

struct A16w4Weights {
  A16w4Layout layout;
  DeviceBuffer<uint32_t> words;          // [batch][layout.weight_words()]
  DeviceBuffer<uint32_t> scales;         // [batch][layout.scale_words()]
  DeviceBuffer<float> output_scales;     // [batch]: 2^offset, times the per-tensor scale where the format has one
};

// The B operand of `weights` (an e2m1 encoding with e8m0 or ue4m3 scales per 16 or 32) for `batch` matrices of
// N x K from `seed`, packed and synchronized. Throws UserError when a scale is outside what the kernels fold
// into bf16 (a16w4_layout.hpp), which the synthetic operands never are.
A16w4Weights pack_a16w4_weights(const OperandEncoding& weights, uint64_t seed, int64_t batch, int64_t n, int64_t k,
                                cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
