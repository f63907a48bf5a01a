// a16w4_blockscale: C (bf16) = A (bf16) x dequant(B)^T with B FP4 e2m1 in the MXFP4 (e8m0 per 32), NVFP4
// (ue4m3 per 16 and an fp32 per-tensor scale) or e2m1_e8m0_16 layout: weight-only FP4 on Hopper. The weights
// are packed once per session (a16w4_weights.cu). At decode M the weights stream through registers into
// mma.sync (a16w4_blockscale_kernel.cuh); past the crossover of a16w4_blockscale_config.hpp they are
// dequantized to bf16 inside the run and multiplied by cuBLASLt's bf16 GEMM, as serving engines hand FP4
// layers to a bf16 GEMM at prefill.
#include <cuda_runtime.h>

#include <algorithm>
#include <optional>

#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "kernels/cuda/forced_setting.hpp"
#include "kernels/cuda/a16w4_blockscale_kernel.cuh"
#include "kernels/cuda/a16w4_dequantized_gemm.hpp"
#include "kernels/cuda/a16w4_launch.cuh"
#include "kernels/cuda/device_spec_cache.hpp"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/a16w4_weights.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

struct DenseParams {
  const uint16_t* a = nullptr;  // [m][k]
  const uint4* weights = nullptr;
  const uint32_t* scales = nullptr;
  const float* output_scale = nullptr;
  uint16_t* c = nullptr;  // [m][n]
  float* partials = nullptr;
  unsigned* arrivals = nullptr;  // [m tiles][warp tiles]
  A16w4Layout layout;
  int m = 0, n = 0, k = 0;
  int chunks_per_split = 0;
  int run_warps = 0;  // the persistent grid's warps (A16w4Config::run_warps)
};

// The shared memory of a CTA: the partial tiles of warps kWarpsK > 1 park to be summed, and the warps' rings.
template <int kWarpsK>
constexpr int kDenseParkedFloats = kWarpsK > 1 ? (kWarpsK - 1) * (kA16w4Warps / kWarpsK) * 16 * 32 : 1;

// One CTA's work. Grid: x the M tiles (adjacent CTAs share weights in L2 when M is large), y groups of kWarpsN
// warp tiles, z the K splits: summed in the fp32 workspace, or (kClusterSum) one thread-block cluster summed
// through its distributed shared memory.
template <int kRows, int kWarpsK, a16w4::ScaleCode kScale, bool kClusterSum>
__device__ __forceinline__ void dense_cta(const DenseParams& p, float* parked, a16w4::WarpRing* rings) {
  constexpr int kWarpsN = kA16w4Warps / kWarpsK;
  const int warp = threadIdx.x / 32, wn = warp % kWarpsN, wk = warp / kWarpsN;
  const int64_t warp_tile = int64_t(blockIdx.y) * kWarpsN + wn;
  const bool has_tile = warp_tile < p.layout.warp_tiles;
  const int m0 = int(blockIdx.x) * kRows;
  const int begin = int(blockIdx.z) * p.chunks_per_split;
  const int end = std::min<int>(begin + p.chunks_per_split, int(p.layout.chunks));
  const a16w4::WarpWork work{p.a,
                             p.k,
                             p.m,
                             p.k,
                             p.k % 8 == 0,
                             p.weights + p.layout.weight_word(has_tile ? warp_tile : 0, 0, 0) / 4,
                             p.scales + p.layout.scale_word(has_tile ? warp_tile : 0, 0, 0),
                             int64_t(kA16w4TilesPerWarp) * 8 * p.layout.scale_words_per_row,
                             p.layout.scale_words_per_row,
                             m0,
                             begin + wk,
                             end,
                             kWarpsK};
  float accumulators[kA16w4TilesPerWarp][4] = {};

  // Under programmatic dependent launch the previous grid may still run: the weights (which no kernel writes)
  // are put in flight first, then wait for it before touching the activations and the output, then let the
  // next grid be scheduled (it waits for ours in turn).
  if (has_tile) a16w4::start_warp_tile(work, rings[warp]);
  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
  if (has_tile) a16w4::multiply_warp_tile<kScale, kRows == 16>(work, rings[warp], accumulators);
  a16w4::sum_along_k<kWarpsN, kWarpsK>(accumulators, parked);
  if constexpr (kClusterSum) {
    if (!a16w4::sum_over_cluster(accumulators, reinterpret_cast<float*>(&rings[warp]), wk == 0 && has_tile))
      return;
  }
  if (wk != 0 || !has_tile) return;
  const a16w4::WarpOutput output{p.c,
                                 p.n,
                                 p.m,
                                 p.n,
                                 m0,
                                 int(warp_tile) * kA16w4WarpN,
                                 *p.output_scale,
                                 p.partials,
                                 p.arrivals + int64_t(blockIdx.x) * p.layout.warp_tiles + warp_tile,
                                 kClusterSum ? 1 : int(gridDim.z)};
  a16w4::finish_warp_tile<kRows == 16>(accumulators, output);
}

// The K splits summed in the workspace, and in a cluster: kernels of their own, so that the first is the same
// machine code as before there was a second.
template <int kRows, int kWarpsK, a16w4::ScaleCode kScale>
__global__ void __launch_bounds__(32 * kA16w4Warps, kA16w4WarpsPerSm / kA16w4Warps) a16w4_dense_kernel(const DenseParams p) {
  __shared__ float parked[kDenseParkedFloats<kWarpsK>];
  __shared__ a16w4::WarpRing rings[kA16w4Warps];
  dense_cta<kRows, kWarpsK, kScale, false>(p, parked, rings);
}

template <int kRows, int kWarpsK, a16w4::ScaleCode kScale>
__global__ void __launch_bounds__(32 * kA16w4Warps, kA16w4WarpsPerSm / kA16w4Warps)
    a16w4_dense_cluster_kernel(const DenseParams p) {
  __shared__ float parked[kDenseParkedFloats<kWarpsK>];
  __shared__ a16w4::WarpRing rings[kA16w4Warps];
  dense_cta<kRows, kWarpsK, kScale, true>(p, parked, rings);
}

// The persistent grid: warp g of run_warps walks units [g U / run_warps, (g + 1) U / run_warps) of the U
// (tile, chunk) units (a16w4::WarpRun), its pieces of tiles that other warps share summed in the workspace (the
// last to arrive, counting chunks, writes the tile), its whole tiles stored straight.
template <int kRows, a16w4::ScaleCode kScale>
__global__ void __launch_bounds__(32 * kA16w4Warps, kA16w4WarpsPerSm / kA16w4Warps)
    a16w4_dense_run_kernel(const DenseParams p) {
  __shared__ a16w4::WarpRing rings[kA16w4Warps];
  const int warp = threadIdx.x / 32;
  const int64_t g = int64_t(blockIdx.x) * kA16w4Warps + warp;
  const int chunks = int(p.layout.chunks), tile_units = int(p.layout.warp_tiles) * chunks;
  const int64_t units = int64_t((p.m + kRows - 1) / kRows) * tile_units;
  const a16w4::WarpRun run{int(g * units / p.run_warps), int(std::min<int64_t>(g + 1, p.run_warps) * units / p.run_warps),
                           chunks, tile_units, kRows};
  const a16w4::WarpWork work{p.a, p.k, p.m, p.k, p.k % 8 == 0, p.weights, p.scales,
                             int64_t(kA16w4TilesPerWarp) * 8 * p.layout.scale_words_per_row,
                             p.layout.scale_words_per_row, 0, run.first, run.last, 1};
  a16w4::start_warp_run(work, run, rings[warp]);  // weights only: before the previous grid ends (PDL)
  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
  const float output_scale = *p.output_scale;
  a16w4::multiply_warp_run<kScale, kRows == 16>(
      work, run, rings[warp],
      [&](const float (&accumulators)[kA16w4TilesPerWarp][4], int tile, int first, int end) {
        const int m_tile = tile / int(p.layout.warp_tiles), warp_tile = tile % int(p.layout.warp_tiles);
        const bool whole = end - first == chunks;
        const a16w4::WarpOutput output{p.c,
                                       p.n,
                                       p.m,
                                       p.n,
                                       m_tile * kRows,
                                       warp_tile * kA16w4WarpN,
                                       output_scale,
                                       p.partials,
                                       p.arrivals + int64_t(m_tile) * p.layout.warp_tiles + warp_tile,
                                       whole ? 1 : chunks,
                                       end - first};
        a16w4::finish_warp_tile<kRows == 16>(accumulators, output);
      });
}

cudaLaunchAttribute k_splits_cluster(int split) {
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = unsigned(split);
  return cluster;
}

// launch_kernel (programmatic_launch.cuh) with the K splits of a tile as one cluster.
void launch_dense_cluster(void (*kernel)(DenseParams), dim3 grid, dim3 block, const DenseParams& params,
                          bool programmatic, cudaStream_t stream) {
  cudaLaunchConfig_t launch{};
  launch.gridDim = grid;
  launch.blockDim = block;
  launch.stream = stream;
  cudaLaunchAttribute attributes[2] = {k_splits_cluster(int(grid.z)), {}};
  attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[1].val.programmaticStreamSerializationAllowed = 1;
  launch.attrs = attributes;
  launch.numAttrs = programmatic ? 2 : 1;
  CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, params));
}

// The fewest clusters of `split` CTAs that any instance of the cluster kernel keeps resident on the current
// device.
int fewest_resident_clusters(int split) {
  int fewest = -1;
  for (const int rows : {8, 16})
    for (const int warps_k : {1, 2, 4})
      for (const ScaleType scale : {ScaleType::e8m0, ScaleType::ue4m3}) {
        const A16w4Config config{rows, kA16w4Warps / warps_k, warps_k, split, true};
        dispatch_a16w4(config, scale, [&]<int kRows, int kWarpsK, a16w4::ScaleCode kScale>() {
          cudaLaunchConfig_t launch{};
          launch.gridDim = dim3(1, 1, unsigned(split));
          launch.blockDim = dim3(unsigned(config.threads()));
          cudaLaunchAttribute cluster = k_splits_cluster(split);
          launch.attrs = &cluster;
          launch.numAttrs = 1;
          int clusters = 0;
          CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, a16w4_dense_cluster_kernel<kRows, kWarpsK, kScale>,
                                                    &launch));
          fewest = fewest < 0 ? clusters : std::min(fewest, clusters);
        });
      }
  return fewest;
}

A16w4DeviceSpec query_a16w4_spec(int ordinal) {
  A16w4DeviceSpec spec;
  spec.multiprocessors = fp8_device_spec(ordinal).multiprocessors;
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != ordinal) CUDA_CHECK(cudaSetDevice(ordinal));  // the occupancy queries ask the current device
  for (int split = 2; split <= kA16w4MostClusterSplits; ++split)
    spec.clusters_by_split[std::size_t(split)] = fewest_resident_clusters(split);
  if (current != ordinal) CUDA_CHECK(cudaSetDevice(current));
  return spec;
}

// SHAPESCOPE_A16W4_RUNS=1 takes the persistent grid at every shape, =0 never: the knob of a calibration run and
// of the tests, unset in normal runs.
std::optional<bool> forced_runs() {
  const std::optional<int> value = forced_setting("SHAPESCOPE_A16W4_RUNS");
  if (!value) return std::nullopt;
  return *value != 0;
}

A16w4Config choose_dense_config(const GemmShape& shape, const A16w4DeviceSpec& spec) {
  const int rows = shape.m <= 8 ? 8 : 16;
  const A16w4Layout layout = A16w4Layout::of(shape.n, shape.k, 32);
  return choose_a16w4_dense_config(shape.m, (shape.m + rows - 1) / rows * layout.warp_tiles, layout.chunks, spec,
                                   forced_runs());
}

class A16w4Prepared final : public CudaPreparedGemm {
 public:
  A16w4Prepared(CudaDevice& device, const ReferenceProblem& problem, const A16w4Weights& weights, ScaleType scale)
      : CudaPreparedGemm(device, problem),
        config_(choose_dense_config(problem.shape, a16w4_device_spec(device.ordinal()))),
        scale_(scale) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    a_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.k));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    fill_bf16_values(a_.data(), problem.seed_a, synthetic::a_bf16, 1, s.m, s.k, stream);
    if ((config_.split_k > 1 && !config_.cluster_sum) || config_.run_warps > 0) {
      const int64_t m_tiles = (s.m + config_.rows - 1) / config_.rows;
      partials_ = DeviceBuffer<float>(std::size_t(s.m * s.n));
      arrivals_ = DeviceBuffer<unsigned>(std::size_t(m_tiles * weights.layout.warp_tiles));
      CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream));
      CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    }
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    params_ = DenseParams{a_.data(),
                          reinterpret_cast<const uint4*>(weights.words.data()),
                          weights.scales.data(),
                          weights.output_scales.data(),
                          c_.data(),
                          partials_.data(),
                          arrivals_.data(),
                          weights.layout,
                          int(s.m),
                          int(s.n),
                          int(s.k),
                          int((weights.layout.chunks + config_.split_k - 1) / config_.split_k),
                          int(config_.run_warps)};
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    dispatch_a16w4(config_, scale_, [&]<int kRows, int kWarpsK, a16w4::ScaleCode kScale>() {
      const dim3 grid(unsigned((params_.m + kRows - 1) / kRows),
                      unsigned((params_.layout.warp_tiles + config_.warps_n - 1) / config_.warps_n),
                      unsigned(config_.split_k));
      const dim3 block(unsigned(config_.threads()));
      if (config_.run_warps > 0)
        launch_kernel(a16w4_dense_run_kernel<kRows, kScale>,
                      dim3(unsigned((config_.run_warps + kA16w4Warps - 1) / kA16w4Warps)), block, 0, params_,
                      device_.programmatic_launch(), device_.stream());
      else if (config_.cluster_sum)
        launch_dense_cluster(a16w4_dense_cluster_kernel<kRows, kWarpsK, kScale>, grid, block, params_,
                             device_.programmatic_launch(), device_.stream());
      else
        launch_kernel(a16w4_dense_kernel<kRows, kWarpsK, kScale>, grid, block, 0, params_,
                      device_.programmatic_launch(), device_.stream());
    });
  }
  std::string launch_name() const override {
    return "a16w4_blockscale/" + describe(config_) + (device_.programmatic_launch() ? "+pdl" : "");
  }

 private:
  A16w4Config config_;
  ScaleType scale_;
  DeviceBuffer<uint16_t> a_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> arrivals_;
  DenseParams params_;
};

class A16w4Session final : public GemmSession {
 public:
  A16w4Session(CudaDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device),
        shape_(shape),
        seed_(seed),
        format_(a16w4_operands(shape.format)),
        weights_(pack_a16w4_weights(operand_encodings(format_).b, seed, 1, shape.n, shape.k, device.stream())) {}

  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * (shape_.k + shape_.n) * 2 + m * shape_.n * 4 + (m + 7) / 8 * weights_.layout.warp_tiles * 4);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{format_, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    const ScaleType scale = operand_encodings(format_).b.scale;
    if (!a16w4_dequantizes(m, a16w4_flops_per_byte()))
      return std::make_unique<A16w4Prepared>(device_, problem, weights_, scale);
    if (!dequantized_) dequantized_ = std::make_unique<A16w4DequantizedPath>(weights_, scale, shape_.n, shape_.k);
    return dequantized_->prepare(device_, problem);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  OperandFormat format_;
  A16w4Weights weights_;
  std::unique_ptr<A16w4DequantizedPath> dequantized_;  // made at the first M past the crossover
};

std::optional<std::string> a16w4_unsupported_reason(const GemmShape& shape) {
  return a16w4_dense_shape_problem(shape, shape.k);
}

}  // namespace

const A16w4DeviceSpec& a16w4_device_spec(int ordinal) { return cached_device_spec(ordinal, &query_a16w4_spec); }

A16w4DeviceSpec a16w4_current_spec() {
  if (missing_device_reason()) return A16w4DeviceSpec{fp8_reference_spec().multiprocessors, {}};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return a16w4_device_spec(device);
}

KernelEntry a16w4_blockscale_entry() {
  KernelEntry entry(a16w4_identity(
      "a16w4_blockscale",
      "A bf16, B e2m1 with e8m0 per 32 (mxfp4), ue4m3 per 16 + f32 per tensor (nvfp4) or e8m0 per 16 (e2m1_e8m0_16), "
      "dequantized in registers, C bf16",
      "ours: weight-streaming W4A16 for decode, FP4 weights pre-shuffled for 16-byte register loads, mma.sync bf16 "
      "with the block scale folded into the dequantization, split-K with a fused reduction; past the crossover M the "
      "weights dequantized to bf16 in the run, then cuBLASLt bf16"));
  entry.unsupported_reason = a16w4_unsupported_reason;
  entry.describe_config = [](const GemmShape& shape) {
    return describe(choose_dense_config(shape, a16w4_current_spec()));
  };
  entry.config_for = [](const GemmShape& shape) {
    const A16w4Config config = choose_dense_config(shape, a16w4_current_spec());
    return KernelConfig{config.rows, config.tile_n(), 1, 1, config.cluster_k(), config.split_k};
  };
  add_a16w4_dequantized_path(entry);
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights("a16w4_blockscale", shape,
                              a16w4_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<A16w4Session>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
