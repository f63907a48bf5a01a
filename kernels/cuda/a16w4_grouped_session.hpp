// What the grouped W4A16 kernels (a16w4_blockscale_grouped, a16w4_tiled_grouped) share around their own weight
// packing and launch: the session that packs every expert's FP4 weights once and prepares problems on them, and
// the shapes they refuse.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "kernels/cuda/a16w4_launch.cuh"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels::cuda {

// Every expert's weights in a kernel's packed layout, with the format and seed they were drawn from.
template <class Packed>
struct A16w4GroupedWeights {
  OperandFormat format;
  uint64_t seed;
  Packed packed;
};

// `Prepared` is constructed from (CudaDevice&, const A16w4GroupedWeights<Packed>&, const GroupedShape&, seed).
template <class Prepared, class Packed>
class A16w4GroupedSession final : public GroupedGemmSession {
 public:
  using Weights = A16w4GroupedWeights<Packed>;
  using Pack = Packed (*)(const OperandEncoding& weights, uint64_t seed, int64_t batch, int64_t n, int64_t k,
                          cudaStream_t stream);
  using ActivationBytes = std::size_t (*)(const GroupedShape&, const Packed&);

  // Packs every expert's weights of `shape` (drawn from `seed`) with `pack`, once.
  A16w4GroupedSession(CudaDevice& device, const GroupedWeightShape& shape, uint64_t seed, Pack pack,
                      ActivationBytes activation_bytes)
      : device_(device),
        weights_{a16w4_operands(shape.format), seed,
                 pack(operand_encodings(a16w4_operands(shape.format)).b, seed, shape.groups, shape.n, shape.k,
                      device.stream())},
        activation_bytes_(activation_bytes) {}

  std::size_t activation_bytes(const GroupedShape& shape) const override {
    return activation_bytes_(shape, weights_.packed);
  }
  std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) override {
    return std::make_unique<Prepared>(device_, weights_, shape, seed);
  }

 private:
  CudaDevice& device_;
  Weights weights_;
  ActivationBytes activation_bytes_;
};

// Why a grouped W4A16 kernel cannot run `shape`, activation rows `a_row_elements` long in memory, or nothing.
inline std::optional<std::string> a16w4_grouped_shape_problem(const GroupedShape& shape, int64_t a_row_elements) {
  if (shape.n < 1 || shape.k < 1) return "N and K must be positive";
  if (auto reason = fp4_k_problem(shape.k)) return reason;
  if (shape.layout_rows() * std::max(shape.n, a_row_elements) > int64_t(INT32_MAX) ||
      shape.groups() * shape.n * shape.k / 2 > int64_t(INT32_MAX) * 4)
    return "an operand over 2^31 elements";
  return std::nullopt;
}

}  // namespace shapescope::kernels::cuda
