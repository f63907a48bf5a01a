// Host side of our block-scaled FP8 GEMMs: the normal and the pre-shuffled-B
// entries share one session type and one kernel family (fp8_blockscale_kernel.cuh),
// and differ only in the order B is stored in.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

enum class WeightOrder {
  row_major,    // B[n][k] as a checkpoint stores it
  preshuffled,  // 16 KB tiles in the order and swizzle the main loop consumes
};

std::unique_ptr<GemmSession> open_fp8_blockscale_session(Device& device, const WeightShape& shape, uint64_t seed,
                                                         WeightOrder order);

// Why our FP8 kernels cannot run a shape, or nothing.
std::optional<std::string> fp8_blockscale_unsupported_reason(const GemmShape& shape);

// Pre-shuffled B (fp8_blockscale_bpreshuffle.cu): bytes, and the one-time rearrangement.
int64_t preshuffled_b_bytes(int64_t n, int64_t k);
void preshuffle_b(const uint8_t* row_major, uint8_t* preshuffled, int64_t n, int64_t k, cudaStream_t stream);

// The spec of GPU `ordinal`, queried from the CUDA runtime on first use and kept.
const Fp8DeviceSpec& fp8_device_spec(int ordinal);
// The current GPU's spec, or nothing when no GPU is visible.
std::optional<Fp8DeviceSpec> current_device_spec();

}  // namespace shapescope::kernels::cuda
