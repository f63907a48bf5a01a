// Host side shared by the W4A16 launchers (a16w4_blockscale*.cu, a16w4_tiled*.cu): the SMs the
// heuristic plans for, their identity and the shapes they take, and the dispatch from a configuration and a scale type
// to the instance compiled for it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/block_format.hpp"
#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "kernels/cuda/a16w4_blockscale_kernel.cuh"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/kernel.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"

namespace shapescope::kernels::cuda {

// The multiprocessors the heuristic plans for: the current GPU's, or the reference H100's without one.
inline int a16w4_multiprocessors() {
  return current_device_spec().value_or(fp8_reference_spec()).multiprocessors;
}

// A W4A16 kernel's identity: the FP4 weight formats, and the bf16 peak class (weight-only: the math runs at the
// bf16 tensor-core rate).
inline KernelIdentity a16w4_identity(std::string name, std::string formats, std::string description) {
  return {.name = std::move(name),
          .backend = BackendKind::cuda,
          .dtype = "bf16",
          .formats = std::move(formats),
          .formats_taken = a16w4_formats(),
          .description = std::move(description)};
}

// Why the W4A16 kernels cannot run weights of K columns, or nothing.
inline std::optional<std::string> fp4_k_problem(int64_t k) {
  if (k % 2 != 0) return "K=" + std::to_string(k) + " is odd (FP4 packs two elements per byte)";
  return std::nullopt;
}

// Why a dense W4A16 kernel cannot run `shape`, activation rows `a_row_elements` long in memory, or nothing.
inline std::optional<std::string> a16w4_dense_shape_problem(const GemmShape& shape, int64_t a_row_elements) {
  if (auto reason = batch_count_problem(shape)) return reason;
  if (auto reason = extent_problem(shape)) return reason;
  if (auto reason = fp4_k_problem(shape.k)) return reason;
  return int32_index_problem({shape.m * std::max(shape.n, a_row_elements), shape.n * shape.k});
}

// Calls launch.template operator()<kRows, kWarpsK, kScale>() for the instance `config` and `scale` name.
template <class Launch>
void dispatch_a16w4(const A16w4Config& config, ScaleType scale, const Launch& launch) {
  const auto with_scale = [&]<a16w4::ScaleCode kScale>() {
    const auto is = [&](int rows, int warps_k) { return config.rows == rows && config.warps_k == warps_k; };
    if (is(8, 1)) return launch.template operator()<8, 1, kScale>();
    if (is(8, 2)) return launch.template operator()<8, 2, kScale>();
    if (is(8, 4)) return launch.template operator()<8, 4, kScale>();
    if (is(16, 1)) return launch.template operator()<16, 1, kScale>();
    if (is(16, 2)) return launch.template operator()<16, 2, kScale>();
    if (is(16, 4)) return launch.template operator()<16, 4, kScale>();
    throw std::logic_error("a16w4: no kernel instance for " + describe(config));
  };
  if (scale == ScaleType::e8m0)
    with_scale.template operator()<a16w4::ScaleCode::e8m0>();
  else
    with_scale.template operator()<a16w4::ScaleCode::ue4m3>();
}

}  // namespace shapescope::kernels::cuda
