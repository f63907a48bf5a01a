// fp8_blockscale_grouped: our block-scaled FP8 kernel (fp8_blockscale_kernel.cuh) over the
// groups of a grouped GEMM in one persistent launch, with the grouped schedule
// (fp8_blockscale_grouped_schedule.cuh): the tiles of every expert with rows, none of
// padding. A and C sit in the problem's layout (contiguous with any alignment, or masked
// slots); A's scales in that layout with each group's first row rounded up to 4
// (grouped_scale_layout: their TMA boxes start on 16 bytes), the padding named in the
// launch name. The rows per group are read on the device, so a masked layout replays under
// a CUDA graph for any valid counts up to max_m. B holds every expert: [groups x N][K].
// A problem with no rows launches nothing (the host knows the prepared counts), and says so.
#include <algorithm>
#include <string>

#include "common/user_error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/fp8_blockscale_grouped_config.hpp"
#include "kernels/cuda/fp8_blockscale_grouped_schedule.cuh"
#include "kernels/cuda/fp8_blockscale_launch.cuh"
#include "kernels/cuda/grouped_operands.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/cuda/tensor_map.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

struct GroupedFp8Weights {
  GroupedWeightShape shape;
  uint64_t seed = 0;
  DeviceBuffer<uint8_t> codes;   // [groups * n][k]
  DeviceBuffer<float> scales;    // [groups][ceil(n/128)][ceil(k/128)]
  CUtensorMap rows_128{}, rows_256{};  // B in boxes of 128 or 256 rows

  const CUtensorMap& map_for(const Fp8BlockscaleConfig& config) const {
    return config.block_n == 256 ? rows_256 : rows_128;
  }
};

class Fp8GroupedPrepared final : public CudaGroupedPreparedGemm {
 public:
  Fp8GroupedPrepared(CudaDevice& device, const GroupedFp8Weights& weights, const GroupedShape& shape, uint64_t seed)
      : CudaGroupedPreparedGemm(device, OperandFormat::fp8_blockscale, shape, seed, weights.seed),
        spec_(fp8_device_spec(device.ordinal())),
        config_(choose_fp8_grouped_config(shape, spec_)) {
    const cudaStream_t stream = device.stream();
    const int64_t k = shape.k, n = shape.n, kblocks = synthetic::blocks(k);
    const int block_m = config_.block_m();
    const int64_t layout_rows = std::max<int64_t>(shape.layout_rows(), 1);
    const GroupedShape scale_layout = grouped_scale_layout(shape);
    scale_padding_rows_ = scale_layout.layout_rows() - shape.layout_rows();
    // A and its scales reach a tile past the last row, so no copy crosses the tensor's edge.
    const int64_t rows_allocated = (layout_rows + block_m + 3) / 4 * 4;
    const int64_t scale_rows_allocated = (std::max<int64_t>(scale_layout.layout_rows(), 1) + block_m + 3) / 4 * 4;
    a_ = DeviceBuffer<uint8_t>(std::size_t(rows_allocated * k));
    a_scales_ = DeviceBuffer<float>(std::size_t(scale_rows_allocated * kblocks));  // M-major: [K block][row]
    c_ = DeviceBuffer<uint16_t>(std::size_t(layout_rows * n));
    group_rows_ = DeviceBuffer<int>(std::size_t(shape.groups()));
    CUDA_CHECK(cudaMemsetAsync(a_.data(), 0, a_.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(a_scales_.data(), 0, a_scales_.bytes(), stream));
    for (int64_t g = 0; g < shape.groups(); ++g) {
      const int64_t rows = shape.rows[std::size_t(g)], first = shape.first_row(g), routed = shape.routed_row(g);
      fill_routed_fp8_rows(a_.data() + first * k, seed, routed, rows, k, stream);
      fill_routed_a_scales(a_scales_.data() + scale_layout.first_row(g), seed, routed, rows, k,
                           ScaleStrides{0, 1, scale_rows_allocated}, stream);
      executed_rows_ += (rows + block_m - 1) / block_m * block_m;
    }
    const std::vector<int> rows32(shape.rows.begin(), shape.rows.end());
    CUDA_CHECK(cudaMemcpyAsync(group_rows_.data(), rows32.data(), group_rows_.bytes(), cudaMemcpyHostToDevice, stream));

    Fp8BlockscaleParams& gemm = params_.gemm;
    gemm.a_box_rows = int(grouped_a_box_rows(shape, block_m));
    gemm.a_map = swizzled_tile_map(a_.data(), 1, rows_allocated, k, gemm.a_box_rows);
    gemm.a_scale_map = scale_column_map(a_scales_.data(), scale_rows_allocated, kblocks, gemm.a_box_rows);
    gemm.b_map = weights.map_for(config_);
    gemm.c_map = swizzled_tile_map(c_.data(), 2, layout_rows, n, block_m);
    gemm.b_scales = weights.scales.data();
    gemm.m = int(layout_rows);
    gemm.n = int(n);
    gemm.k = int(k);
    gemm.split_k = config_.split_k;
    gemm.kblocks_per_split = config_.kblocks_per_split;
    params_.group_rows = group_rows_.data();
    params_.c = c_.data();
    params_.groups = int(shape.groups());
    params_.align = shape.layout == GroupLayout::contiguous ? int(shape.align) : 1;
    params_.slot_rows = shape.layout == GroupLayout::masked ? int(shape.max_m) : 0;
    params_.scale_align = int(scale_layout.align);
    params_.scale_slot_rows = shape.layout == GroupLayout::masked ? int(scale_layout.max_m) : 0;
    params_.band_m_tiles = grouped_band_m_tiles(shape, config_, spec_);
    set_output(c_.data(), shape);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    if (shape_.useful_rows() == 0) return;  // no group has rows: nothing to launch
    launch_fp8_instance_for<false, GroupedSchedule>(params_, config_, spec_, device_.programmatic_launch(),
                                                    device_.stream());
  }
  std::string launch_name() const override {
    if (shape_.useful_rows() == 0) return "fp8_blockscale_grouped: no group has rows, nothing launched";
    return "fp8_blockscale_grouped/" + describe(config_) + (device_.programmatic_launch() ? "+pdl" : "") +
           (scale_padding_rows_ > 0 ? ", A scales in groups of 4 rows (+" + std::to_string(scale_padding_rows_) +
                                          " rows)"
                                    : "");
  }
  int64_t executed_rows() const override { return executed_rows_; }

 private:
  Fp8DeviceSpec spec_;
  Fp8BlockscaleConfig config_;
  int64_t executed_rows_ = 0;  // whole tiles of every group with rows
  int64_t scale_padding_rows_ = 0;  // rows A's scales add to the layout's (grouped_scale_layout)
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<float> a_scales_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<int> group_rows_;
  Fp8GroupedParams params_;
};

class Fp8GroupedSession final : public GroupedGemmSession {
 public:
  Fp8GroupedSession(CudaDevice& device, const GroupedWeightShape& shape, uint64_t seed) : device_(device) {
    weights_.shape = shape;
    weights_.seed = seed;
    const cudaStream_t stream = device.stream();
    const int64_t nblocks = synthetic::blocks(shape.n), kblocks = synthetic::blocks(shape.k);
    weights_.codes = DeviceBuffer<uint8_t>(std::size_t(shape.groups * shape.n * shape.k));
    weights_.scales = DeviceBuffer<float>(std::size_t(shape.groups * nblocks * kblocks));
    fill_fp8_codes(weights_.codes.data(), seed, synthetic::b_codes, shape.groups, shape.n, shape.k, stream);
    fill_b_scales(weights_.scales.data(), seed, shape.groups, shape.n, shape.k,
                  ScaleStrides{nblocks * kblocks, kblocks, 1}, stream);
    weights_.rows_128 = swizzled_tile_map(weights_.codes.data(), 1, shape.groups * shape.n, shape.k, 128);
    weights_.rows_256 = swizzled_tile_map(weights_.codes.data(), 1, shape.groups * shape.n, shape.k, 256);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(const GroupedShape& shape) const override {
    const int64_t rows = shape.layout_rows() + 192 + 4;  // the tallest tile past the end
    const int64_t scale_rows = grouped_scale_layout(shape).layout_rows() + 192 + 4;
    return std::size_t(rows * shape.k + scale_rows * synthetic::blocks(shape.k) * 4 +
                       shape.layout_rows() * shape.n * 2 + shape.groups() * 4);
  }

  std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) override {
    return std::make_unique<Fp8GroupedPrepared>(device_, weights_, shape, seed);
  }

 private:
  CudaDevice& device_;
  GroupedFp8Weights weights_;
};

std::optional<std::string> fp8_grouped_unsupported_reason(const GroupedShape& shape) {
  if (auto reason = fp8_blockscale_unsupported_reason(GemmShape{1, shape.n, shape.k, 1})) return reason;
  if ((shape.layout_rows() + 256) * std::max(shape.n, shape.k) > int64_t(INT32_MAX) ||
      shape.groups() * shape.n > int64_t(INT32_MAX))
    return "an operand over 2^31 elements";
  return std::nullopt;
}

}  // namespace

GroupedKernelEntry fp8_blockscale_grouped_entry() {
  GroupedKernelEntry entry;
  entry.name = "fp8_blockscale_grouped";
  entry.backend = BackendKind::cuda;
  entry.dtype = "fp8";
  entry.formats_taken = {BlockFormatId::fp8_blockscale};
  entry.peak_kernel = "cublaslt_fp8_blockscale";
  entry.formats = "A e4m3 1x128 f32 scales (contiguous or masked groups), B [groups] e4m3 128x128 f32 scales "
                  "(row-major), C bf16";
  entry.description =
      "ours: fp8_blockscale's persistent TMA + wgmma kernel with a group-aware schedule walking the rows per group on "
      "the device: every expert's tiles in one launch, no tile of padding";
  entry.unsupported_reason = fp8_grouped_unsupported_reason;
  entry.describe_config = [](const GroupedShape& shape) {
    const Fp8DeviceSpec spec = current_device_spec().value_or(fp8_reference_spec());
    const Fp8BlockscaleConfig config = choose_fp8_grouped_config(shape, spec);
    return describe(config) + " over " + std::to_string(grouped_tiles(shape, config.block_m(), config.block_n)) +
           " tiles" + (current_device_spec() ? "" : " (no GPU visible: as on the reference " + spec.name + ")");
  };
  entry.open = [](Device& device, const GroupedWeightShape& shape, uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    return std::make_unique<Fp8GroupedSession>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
