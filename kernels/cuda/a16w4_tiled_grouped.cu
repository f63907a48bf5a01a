// a16w4_tiled_grouped: the tiled W4A16 kernel (a16w4_tiled_kernel.cuh) over the experts of a grouped GEMM in one
// launch: FP4 experts (MXFP4, NVFP4, e2m1_e8m0_16) with bf16 activations, contiguous or masked groups, for the
// tens to hundreds of rows per expert of prefill and of large decode batches. The grid's x walks the row tiles
// of every group (contiguous: as many as the problem has; masked: every slot's, those past a group's rows exit at
// once), each CTA finding its group from the rows per group on the device; tiles of a group's last rows are
// partial, so a group starts on any row and nothing is written outside it.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "common/user_error.hpp"
#include "kernels/cuda/a16w4_grouped_session.hpp"
#include "kernels/cuda/a16w4_launch.cuh"
#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/a16w4_tiled_launch.hpp"
#include "kernels/cuda/a16w4_tiled_weights.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"
#include "kernels/cuda/grouped_operands.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels::cuda {
namespace {

int64_t group_row_tiles(const GroupedShape& shape, int block_m) {
  int64_t tiles = 0;
  for (const int64_t rows : shape.rows) tiles += (rows + block_m - 1) / block_m;
  return tiles;
}

A16w4TiledConfig choose_grouped_config(const GroupedShape& shape, int multiprocessors) {
  const A16w4TiledLayout layout = A16w4TiledLayout::of(shape.n, shape.k, 32);
  return choose_a16w4_tiled_config(group_row_tiles(shape, 128), group_row_tiles(shape, 64), group_row_tiles(shape, 32),
                                   layout.n_tiles, layout.k_steps, multiprocessors);
}

// The grid's row units: each group's row tiles (contiguous), or every tile a masked slot can hold.
int64_t row_units(const GroupedShape& shape, int block_m) {
  if (shape.layout == GroupLayout::masked) return shape.groups() * ((shape.max_m + block_m - 1) / block_m);
  return group_row_tiles(shape, block_m);
}

using GroupedWeights = A16w4GroupedWeights<A16w4TiledWeights>;

class A16w4TiledGroupedPrepared final : public CudaGroupedPreparedGemm {
 public:
  A16w4TiledGroupedPrepared(CudaDevice& device, const GroupedWeights& weights, const GroupedShape& shape,
                            uint64_t seed)
      : CudaGroupedPreparedGemm(device, weights.format, shape, seed, weights.seed),
        config_(choose_grouped_config(shape, fp8_device_spec(device.ordinal()).multiprocessors)),
        scale_(operand_encodings(weights.format).b.scale),
        row_units_(row_units(shape, config_.block_m)) {
    const cudaStream_t stream = device.stream();
    const int64_t k = shape.k, n = shape.n, layout_rows = std::max<int64_t>(shape.layout_rows(), 1);
    a_ = strided_activations(layout_rows, k, stream, [&](uint16_t* dense) {
      for (int64_t g = 0; g < shape.groups(); ++g)
        fill_routed_bf16_rows(dense + shape.first_row(g) * k, seed, shape.routed_row(g), shape.rows[std::size_t(g)],
                              k, stream);
    });
    c_ = DeviceBuffer<uint16_t>(std::size_t(layout_rows * n));
    group_rows_ = DeviceBuffer<int>(std::size_t(std::max<int64_t>(shape.groups(), 1)));
    for (const int64_t rows : shape.rows) executed_rows_ += (rows + config_.block_m - 1) / config_.block_m * config_.block_m;
    const std::vector<int> rows32(shape.rows.begin(), shape.rows.end());
    if (!rows32.empty())
      CUDA_CHECK(cudaMemcpyAsync(group_rows_.data(), rows32.data(), rows32.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
    if (config_.split_k > 1) {
      partials_ = DeviceBuffer<float>(std::size_t(layout_rows * n));
      arrivals_ = DeviceBuffer<unsigned>(std::size_t(std::max<int64_t>(row_units_, 1) * weights.packed.layout.n_tiles));
      CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream));
      CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    }
    activations_ = a16w4_tiled_activation_map(a_.data(), layout_rows, k, config_);
    params_.codes = weights.packed.codes.data();
    params_.scales = weights.packed.scales.data();
    params_.tensor_scales = weights.packed.tensor_scales.data();
    params_.c = c_.data();
    params_.partials = partials_.data();
    params_.arrivals = arrivals_.data();
    params_.layout = weights.packed.layout;
    params_.n = int(n);
    params_.steps_per_split = config_.steps_per_split;
    params_.group_rows = group_rows_.data();
    params_.groups = int(shape.groups());
    params_.align = shape.layout == GroupLayout::contiguous ? int(shape.align) : 1;
    params_.slot_rows = shape.layout == GroupLayout::masked ? int(shape.max_m) : 0;
    params_.slot_tiles = int((shape.max_m + config_.block_m - 1) / config_.block_m);
    set_output(c_.data(), shape);
    allow_a16w4_tiled_shared_memory(config_, scale_);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    // No group: `groups` 0 would read as a dense problem, and there is nothing to launch.
    if (params_.groups == 0) return;
    launch_a16w4_tiled(params_, activations_, config_, scale_, row_units_, device_.programmatic_launch(),
                       device_.stream());
  }
  std::string launch_name() const override {
    return "a16w4_tiled_grouped/" + describe(config_) + "_units" + std::to_string(row_units_) +
           (device_.programmatic_launch() ? "+pdl" : "");
  }
  int64_t executed_rows() const override { return executed_rows_; }

 private:
  A16w4TiledConfig config_;
  ScaleType scale_;
  int64_t row_units_;
  int64_t executed_rows_ = 0;  // each group's rows rounded up to the tile
  DeviceBuffer<uint16_t> a_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<int> group_rows_;
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> arrivals_;
  A16w4TiledParams params_;
  CUtensorMap activations_{};
};

std::size_t activation_bytes(const GroupedShape& shape, const A16w4TiledWeights& packed) {
  const int64_t rows = shape.layout_rows();
  return std::size_t(rows * a16w4_tiled_lda(shape.k) * 2 * 2 + rows * shape.n * (2 + 4) +
                     (row_units(shape, 32) + 1) * packed.layout.n_tiles * 4 + shape.groups() * 4);
}

std::optional<std::string> a16w4_tiled_grouped_unsupported_reason(const GroupedShape& shape) {
  return a16w4_grouped_shape_problem(shape, a16w4_tiled_lda(shape.k));
}

}  // namespace

GroupedKernelEntry a16w4_tiled_grouped_entry() {
  GroupedKernelEntry entry(a16w4_identity(
      "a16w4_tiled_grouped",
      "A bf16 (contiguous or masked groups), B [groups] e2m1 with e8m0 per 32 (mxfp4), ue4m3 per 16 + f32 per tensor "
      "(nvfp4) or e8m0 per 16, dequantized to bf16 in registers, C bf16",
      "ours: a16w4_tiled's wgmma W4A16 tiles over every expert's rows in one launch; CTAs find their expert on the "
      "device, partial tiles at group ends, split-K with a fused reduction"));
  entry.peak_kernel = "cublaslt_bf16";
  entry.unsupported_reason = a16w4_tiled_grouped_unsupported_reason;
  entry.describe_config = [](const GroupedShape& shape) {
    const A16w4TiledConfig config = choose_grouped_config(shape, a16w4_multiprocessors());
    return describe(config) + " over " + std::to_string(row_units(shape, config.block_m)) + " row tiles";
  };
  entry.open = [](Device& device, const GroupedWeightShape& shape, uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    if (auto reason = fp4_k_problem(shape.k))
      throw UserError("a16w4_tiled_grouped cannot run: " + *reason + "; pick another kernel for this shape");
    using Session = A16w4GroupedSession<A16w4TiledGroupedPrepared, A16w4TiledWeights>;
    return std::make_unique<Session>(as_cuda_device(device), shape, seed, pack_a16w4_tiled_weights, activation_bytes);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
