// a16w4_blockscale_grouped: the W4A16 main loop (a16w4_blockscale_kernel.cuh) over the experts of a grouped
// GEMM in one launch: routed MoE experts in FP4 (gpt-oss's MXFP4, NVFP4) with bf16 activations, contiguous or
// masked groups. The rows per group are read on the device, so a masked layout replays under a CUDA graph for
// any counts up to max_m. The grid's x is the active-group slot: a CTA finds the j-th group with rows itself
// (a warp ballot over the counts), so experts nobody was routed to cost no CTA beyond a slot count known at
// prepare (contiguous: at most the routed rows; masked: every group). A group's rows are walked 8 or 16 at a
// time, each pass re-reading its weights (from L2 after the first): the kernel is made for decode, where an
// expert sees a few rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "common/user_error.hpp"
#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "kernels/cuda/a16w4_blockscale_kernel.cuh"
#include "kernels/cuda/a16w4_grouped_session.hpp"
#include "kernels/cuda/a16w4_launch.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/a16w4_weights.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/grouped_operands.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels::cuda {
namespace {

struct GroupedParams {
  const uint16_t* a = nullptr;  // [layout rows][k]
  const uint4* weights = nullptr;   // [groups][layout.weight_words() / 4]
  const uint32_t* scales = nullptr;  // [groups][layout.scale_words()]
  const float* output_scales = nullptr;  // [groups]
  uint16_t* c = nullptr;             // [layout rows][n]
  float* partials = nullptr;         // [layout rows][n], split-K only
  unsigned* arrivals = nullptr;      // [layout rows][warp tiles], split-K only
  const int* group_rows = nullptr;   // [groups], on the device
  int groups = 0;
  int align = 1;      // contiguous: each group's first row a multiple of this
  int slot_rows = 0;  // masked: rows per group slot; 0: contiguous
  A16w4Layout layout;
  int n = 0, k = 0;
  int chunks_per_split = 0;
};

struct ActiveGroup {
  int group = -1, rows = 0, first_row = 0;
};

// The `slot`-th group with rows (group -1 when fewer have rows), found by each warp on its own.
__device__ ActiveGroup find_active_group(const GroupedParams& p, int slot) {
  const int lane = threadIdx.x % 32;
  int seen = 0, row = 0;
  for (int base = 0; base < p.groups; base += 32) {
    const int group = base + lane;
    const int rows = group < p.groups ? __ldg(p.group_rows + group) : 0;
    const int extent = p.slot_rows > 0 ? p.slot_rows : (rows + p.align - 1) / p.align * p.align;
    int before = extent;  // inclusive scan of the extents of this batch of groups
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const int other = __shfl_up_sync(0xFFFFFFFFu, before, offset);
      if (lane >= offset) before += other;
    }
    before -= extent;
    const unsigned active = __ballot_sync(0xFFFFFFFFu, rows > 0);
    const int count = __popc(active);
    if (slot < seen + count) {
      const int index = int(__fns(active, 0, slot - seen + 1));
      return ActiveGroup{base + index, __shfl_sync(0xFFFFFFFFu, rows, index),
                         row + __shfl_sync(0xFFFFFFFFu, before, index)};
    }
    seen += count;
    row += __shfl_sync(0xFFFFFFFFu, before + extent, 31);
  }
  return ActiveGroup{};
}

// Grid: x the active-group slots, y groups of kWarpsN warp tiles, z the K splits.
template <int kRows, int kWarpsK, a16w4::ScaleCode kScale>
__global__ void __launch_bounds__(32 * kA16w4Warps, kA16w4WarpsPerSm / kA16w4Warps)
    a16w4_grouped_kernel(const GroupedParams p) {
  constexpr int kWarpsN = kA16w4Warps / kWarpsK;
  __shared__ float parked[kWarpsK > 1 ? (kWarpsK - 1) * kWarpsN * 16 * 32 : 1];
  __shared__ a16w4::WarpRing rings[kA16w4Warps];
  const int warp = threadIdx.x / 32, wn = warp % kWarpsN, wk = warp / kWarpsN;
  const int64_t warp_tile = int64_t(blockIdx.y) * kWarpsN + wn;
  const bool has_tile = warp_tile < p.layout.warp_tiles;
  const int begin = int(blockIdx.z) * p.chunks_per_split;
  const int end = std::min<int>(begin + p.chunks_per_split, int(p.layout.chunks));

  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
  const ActiveGroup active = find_active_group(p, int(blockIdx.x));
  if (active.group < 0) return;  // the whole CTA: every warp found the same
  const int64_t tile = has_tile ? warp_tile : 0;
  const uint4* weights = p.weights + (active.group * p.layout.weight_words() + p.layout.weight_word(tile, 0, 0)) / 4;
  const uint32_t* scales = p.scales + active.group * p.layout.scale_words() + p.layout.scale_word(tile, 0, 0);
  const uint16_t* a = p.a + int64_t(active.first_row) * p.k;
  const float output_scale = __ldg(p.output_scales + active.group);
  for (int m0 = 0; m0 < active.rows; m0 += kRows) {
    const a16w4::WarpWork work{a,
                               p.k,
                               active.rows,
                               p.k,
                               p.k % 8 == 0,
                               weights,
                               scales,
                               int64_t(kA16w4TilesPerWarp) * 8 * p.layout.scale_words_per_row,
                               p.layout.scale_words_per_row,
                               m0,
                               begin + wk,
                               end,
                               kWarpsK};
    float accumulators[kA16w4TilesPerWarp][4] = {};
    if (has_tile) {
      a16w4::start_warp_tile(work, rings[warp]);
      a16w4::multiply_warp_tile<kScale, kRows == 16>(work, rings[warp], accumulators);
    }
    a16w4::sum_along_k<kWarpsN, kWarpsK>(accumulators, parked);
    if (wk == 0 && has_tile) {
      const a16w4::WarpOutput output{
          p.c + int64_t(active.first_row) * p.n,
          p.n,
          active.rows,
          p.n,
          m0,
          int(warp_tile) * kA16w4WarpN,
          output_scale,
          p.partials + int64_t(active.first_row) * p.n,
          p.arrivals + int64_t(active.first_row + m0) * p.layout.warp_tiles + warp_tile,  // one counter per pass
          int(gridDim.z)};
      a16w4::finish_warp_tile<kRows == 16>(accumulators, output);
    }
    if constexpr (kWarpsK > 1) __syncthreads();  // `parked` is free again
  }
}

// Active-group slots of the grid: the most groups that can have rows.
int64_t group_slots(const GroupedShape& shape) {
  return shape.layout == GroupLayout::masked ? shape.groups() : std::min(shape.groups(), shape.useful_rows());
}

A16w4Config choose_grouped_config(const GroupedShape& shape, int multiprocessors) {
  const int rows = shape.max_rows() <= 8 ? 8 : 16;
  int64_t row_tiles = 0;
  for (const int64_t r : shape.rows) row_tiles += (r + rows - 1) / rows;
  const A16w4Layout layout = A16w4Layout::of(shape.n, shape.k, 32);
  return choose_a16w4_config(shape.max_rows(), std::max<int64_t>(row_tiles, 1) * layout.warp_tiles, layout.chunks,
                             multiprocessors);
}

using GroupedWeights = A16w4GroupedWeights<A16w4Weights>;

class A16w4GroupedPrepared final : public CudaGroupedPreparedGemm {
 public:
  A16w4GroupedPrepared(CudaDevice& device, const GroupedWeights& weights, const GroupedShape& shape, uint64_t seed)
      : CudaGroupedPreparedGemm(device, weights.format, shape, seed, weights.seed),
        config_(choose_grouped_config(shape, fp8_device_spec(device.ordinal()).multiprocessors)),
        slots_(int(group_slots(shape))),
        scale_(operand_encodings(weights.format).b.scale) {
    const cudaStream_t stream = device.stream();
    const int64_t k = shape.k, n = shape.n, layout_rows = std::max<int64_t>(shape.layout_rows(), 1);
    a_ = DeviceBuffer<uint16_t>(std::size_t(layout_rows * k));
    c_ = DeviceBuffer<uint16_t>(std::size_t(layout_rows * n));
    group_rows_ = DeviceBuffer<int>(std::size_t(std::max<int64_t>(shape.groups(), 1)));
    CUDA_CHECK(cudaMemsetAsync(a_.data(), 0, a_.bytes(), stream));
    for (int64_t g = 0; g < shape.groups(); ++g) {
      const int64_t rows = shape.rows[std::size_t(g)];
      fill_routed_bf16_rows(a_.data() + shape.first_row(g) * k, seed, shape.routed_row(g), rows, k, stream);
      executed_rows_ += (rows + config_.rows - 1) / config_.rows * config_.rows;
    }
    const std::vector<int> rows32(shape.rows.begin(), shape.rows.end());
    if (!rows32.empty())
      CUDA_CHECK(cudaMemcpyAsync(group_rows_.data(), rows32.data(), rows32.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
    if (config_.split_k > 1) {
      partials_ = DeviceBuffer<float>(std::size_t(layout_rows * n));
      arrivals_ = DeviceBuffer<unsigned>(std::size_t(layout_rows * weights.packed.layout.warp_tiles));
      CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream));
      CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    }
    params_ = GroupedParams{a_.data(),
                            reinterpret_cast<const uint4*>(weights.packed.words.data()),
                            weights.packed.scales.data(),
                            weights.packed.output_scales.data(),
                            c_.data(),
                            partials_.data(),
                            arrivals_.data(),
                            group_rows_.data(),
                            int(shape.groups()),
                            shape.layout == GroupLayout::contiguous ? int(shape.align) : 1,
                            shape.layout == GroupLayout::masked ? int(shape.max_m) : 0,
                            weights.packed.layout,
                            int(n),
                            int(k),
                            int((weights.packed.layout.chunks + config_.split_k - 1) / config_.split_k)};
    set_output(c_.data(), shape);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    if (slots_ == 0) return;  // no group can have rows: nothing to launch
    dispatch_a16w4(config_, scale_, [&]<int kRows, int kWarpsK, a16w4::ScaleCode kScale>() {
      const dim3 grid(unsigned(slots_), unsigned((params_.layout.warp_tiles + config_.warps_n - 1) / config_.warps_n),
                      unsigned(config_.split_k));
      launch_kernel(a16w4_grouped_kernel<kRows, kWarpsK, kScale>, grid, dim3(unsigned(config_.threads())), 0, params_,
                    device_.programmatic_launch(), device_.stream());
    });
  }
  std::string launch_name() const override {
    return "a16w4_blockscale_grouped/" + describe(config_) + "_slots" + std::to_string(slots_) +
           (device_.programmatic_launch() ? "+pdl" : "");
  }
  int64_t executed_rows() const override { return executed_rows_; }

 private:
  A16w4Config config_;
  int slots_;
  ScaleType scale_;
  int64_t executed_rows_ = 0;  // each group's rows rounded up to the rows a pass covers
  DeviceBuffer<uint16_t> a_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<int> group_rows_;
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> arrivals_;
  GroupedParams params_;
};

std::size_t activation_bytes(const GroupedShape& shape, const A16w4Weights& packed) {
  const int64_t rows = shape.layout_rows();
  return std::size_t(rows * shape.k * 2 + rows * shape.n * (2 + 4) + rows * packed.layout.warp_tiles * 4 +
                     shape.groups() * 4);
}

std::optional<std::string> a16w4_grouped_unsupported_reason(const GroupedShape& shape) {
  return a16w4_grouped_shape_problem(shape, shape.k);
}

}  // namespace

GroupedKernelEntry a16w4_blockscale_grouped_entry() {
  GroupedKernelEntry entry(a16w4_identity(
      "a16w4_blockscale_grouped",
      "A bf16 (contiguous or masked groups), B [groups] e2m1 with e8m0 per 32 (mxfp4), ue4m3 per 16 + f32 per tensor "
      "(nvfp4) or e8m0 per 16, dequantized in registers, C bf16",
      "ours: a16w4_blockscale's weight-streaming W4A16 loop over every expert with rows in one launch; CTAs find "
      "their expert on the device, split-K with a fused reduction"));
  entry.peak_kernel = "cublaslt_bf16";
  entry.unsupported_reason = a16w4_grouped_unsupported_reason;
  entry.describe_config = [](const GroupedShape& shape) {
    return describe(choose_grouped_config(shape, a16w4_multiprocessors())) + " over " +
           std::to_string(group_slots(shape)) + " group slots";
  };
  entry.open = [](Device& device, const GroupedWeightShape& shape, uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    if (shape.k % 2 != 0)
      throw UserError("a16w4_blockscale_grouped cannot run K=" + std::to_string(shape.k) +
                      ": FP4 packs two elements per byte; pick another kernel for this shape");
    using Session = A16w4GroupedSession<A16w4GroupedPrepared, A16w4Weights>;
    return std::make_unique<Session>(as_cuda_device(device), shape, seed, pack_a16w4_weights, activation_bytes);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
