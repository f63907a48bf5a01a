// fp8_blockscale: our block-scaled FP8 GEMM for Hopper (wgmma e4m3, DeepGEMM-style
// promotion), with B row-major; the session here also serves the pre-shuffled entry. At decode
// the heuristic may pick the swap-AB kernel (fp8_blockscale_swapab_launch.hpp) instead of the tiled one.
#include "kernels/cuda/fp8_blockscale.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/device_spec_cache.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"
#include "kernels/cuda/fp8_blockscale_launch.cuh"
#include "kernels/cuda/fp8_blockscale_swapab_launch.hpp"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/cuda/tensor_map.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

// The fewest clusters of `split` any split instance that fits the device keeps resident
// (all of them hold one CTA per SM), over both weight orders; 0 when none fits. The grouped
// schedule runs the same instances (but the 192-row tile) with the same shared memory and
// block size, so the dense instances' answer stands for it too.
template <bool kPreshuffledB>
int fewest_resident_clusters(int split, const Fp8DeviceSpec& spec, int fewest) {
  for (std::size_t i = 0; i < std::size(kFp8Instances); ++i) {
    if (!kFp8Instances[i].cluster_split || !fp8_fits_device(kFp8Instances[i].with_split_k(split), spec)) continue;
    const int clusters = kFp8InstanceFunctions<kPreshuffledB, DenseSchedule>[i].resident_clusters(split);
    fewest = fewest == 0 ? clusters : std::min(fewest, clusters);
  }
  return fewest;
}

Fp8DeviceSpec query_device_spec(int ordinal) {
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != ordinal) CUDA_CHECK(cudaSetDevice(ordinal));  // the occupancy queries ask the current device
  Fp8DeviceSpec spec;
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  spec.name = properties.name;
  CUDA_CHECK(cudaDeviceGetAttribute(&spec.multiprocessors, cudaDevAttrMultiProcessorCount, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&spec.shared_bytes_per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                    ordinal));
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ordinal));
  spec.l2_bytes = l2_bytes;
  spec.clusters_by_split[1] = spec.multiprocessors;
  for (int split = 2; split <= kFp8MaxSplit; ++split)
    spec.clusters_by_split[std::size_t(split)] =
        fewest_resident_clusters<true>(split, spec, fewest_resident_clusters<false>(split, spec, 0));
  if (current != ordinal) CUDA_CHECK(cudaSetDevice(current));
  return spec;
}

template <class Schedule>
void launch_fp8_schedule(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                         const Fp8DeviceSpec& spec, WeightOrder order, bool programmatic, cudaStream_t stream) {
  order == WeightOrder::preshuffled
      ? launch_fp8_instance_for<true, Schedule>(params, config, spec, programmatic, stream)
      : launch_fp8_instance_for<false, Schedule>(params, config, spec, programmatic, stream);
}

// The split of the last wave and the weights loaded ahead run in instances of their own, so those
// without them are unchanged by them.
void launch_fp8_blockscale(const Fp8LastWaveSplitParams& params, const Fp8BlockscaleConfig& config,
                           const Fp8DeviceSpec& spec, WeightOrder order, bool programmatic, cudaStream_t stream) {
  if (config.tail_split())
    launch_fp8_schedule<LastWaveSplitSchedule>(params, config, spec, order, programmatic, stream);
  else if (config.weights_ahead)
    launch_fp8_schedule<DenseWeightsAheadSchedule>(params.gemm, config, spec, order, programmatic, stream);
  else
    launch_fp8_schedule<DenseSchedule>(params.gemm, config, spec, order, programmatic, stream);
}

// The tensor maps B is copied through: one per tile width (a pre-shuffled copy moves
// one 128-row tile verbatim, whatever the width).
struct BTileMaps {
  WeightOrder order = WeightOrder::row_major;
  CUtensorMap rows_64{}, rows_128{}, rows_256{};  // rows_64: swap-AB's 64-row weight tiles

  const CUtensorMap& for_config(const Fp8BlockscaleConfig& config) const {
    return order == WeightOrder::row_major && config.block_n == 256 ? rows_256 : rows_128;
  }
};

class Fp8BlockscalePrepared final : public CudaPreparedGemm {
 public:
  Fp8BlockscalePrepared(CudaDevice& device, const ReferenceProblem& problem, const BTileMaps& b_maps,
                        const float* b_scales, WeightOrder order)
      : CudaPreparedGemm(device, problem),
        order_(order),
        spec_(fp8_device_spec(device.ordinal())),
        config_(choose_fp8_blockscale_config(problem.shape, spec_)),
        swap_ab_(choose_fp8_swapab_config(problem.shape, spec_)) {
    const GemmShape& s = problem.shape;
    Fp8BlockscaleParams& gemm = params_.gemm;
    const int64_t kblocks = synthetic::blocks(s.k);
    // A and its scales are allocated in whole tiles of rows (zeros past M), so no copy
    // reaches past the tensor: boxes crossing its edge measured up to 1.5x slower. Swap-AB
    // copies M rounded up to 8 rows, all of A.
    gemm.a_box_rows = int(std::min<int64_t>(swap_ab_ ? kFp8SwapAbMaxTokens : config_.block_m(), (s.m + 7) / 8 * 8));
    const int64_t rows_tiled = (s.m + gemm.a_box_rows - 1) / gemm.a_box_rows * gemm.a_box_rows;
    a_ = DeviceBuffer<uint8_t>(std::size_t(rows_tiled * s.k));
    a_scales_ = DeviceBuffer<float>(std::size_t(rows_tiled * kblocks));  // M-major: [K block][row]
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    const cudaStream_t stream = device.stream();
    CUDA_CHECK(cudaMemsetAsync(a_.data(), 0, a_.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(a_scales_.data(), 0, a_scales_.bytes(), stream));
    fill_fp8_codes(a_.data(), problem.seed_a, synthetic::a_codes, 1, s.m, s.k, stream);
    fill_a_scales(a_scales_.data(), problem.seed_a, 1, s.m, s.k, ScaleStrides{rows_tiled * kblocks, 1, rows_tiled},
                  stream);
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    gemm.a_map = swizzled_tile_map(a_.data(), 1, rows_tiled, s.k, gemm.a_box_rows);
    gemm.a_scale_map = scale_column_map(a_scales_.data(), rows_tiled, kblocks, gemm.a_box_rows);
    gemm.b_map = b_maps.for_config(config_);
    gemm.c_map = swizzled_tile_map(c_.data(), 2, s.m, s.n, config_.block_m());
    gemm.b_scales = b_scales;
    gemm.m = int(s.m);
    gemm.n = int(s.n);
    gemm.k = int(s.k);
    gemm.split_k = config_.split_k;
    gemm.kblocks_per_split = config_.kblocks_per_split;
    if (config_.tail_split()) {  // one partial tile per CTA, one arrival count per CTA (kept at 0 between launches)
      tail_partials_ = DeviceBuffer<float>(std::size_t(config_.ctas) * std::size_t(fp8_partial_tile_floats(config_)));
      tail_arrivals_ = DeviceBuffer<int>(std::size_t(config_.ctas));
      CUDA_CHECK(cudaMemsetAsync(tail_arrivals_.data(), 0, tail_arrivals_.bytes(), stream));
      params_.dp_tiles = config_.dp_tiles;
      params_.runs = config_.tail_runs(kblocks, GridCostModel::dense_work(s, config_).tiles);
      params_.tail_partials = tail_partials_.data();
      params_.tail_arrivals = tail_arrivals_.data();
    }
    if (swap_ab_) set_swap_ab_params(b_maps);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    if (swap_ab_) {
      launch_fp8_blockscale_swapab(swap_params_, *swap_ab_, order_ == WeightOrder::preshuffled,
                                   device_.programmatic_launch(), device_.stream());
      return;
    }
    launch_fp8_blockscale(params_, config_, spec_, order_, device_.programmatic_launch(), device_.stream());
  }
  std::string launch_name() const override {
    return std::string(order_ == WeightOrder::preshuffled ? "fp8_blockscale_bpreshuffle/" : "fp8_blockscale/") +
           (swap_ab_ ? describe(*swap_ab_) : describe(config_)) + (device_.programmatic_launch() ? "+pdl" : "");
  }

 private:
  WeightOrder order_;
  Fp8DeviceSpec spec_;
  Fp8BlockscaleConfig config_;
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<float> a_scales_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<float> tail_partials_;
  DeviceBuffer<int> tail_arrivals_;
  Fp8LastWaveSplitParams params_;  // the dense GEMM's (gemm) and, when it runs, the last-wave split's
  std::optional<Fp8SwapAbConfig> swap_ab_;  // set: the swap-AB decode kernel runs instead
  Fp8SwapAbParams swap_params_{};

  // The swap-AB kernel's operands: the same A, scales and C; B in boxes of its weight rows (a K split
  // reduces within a cluster: no workspace).
  void set_swap_ab_params(const BTileMaps& b_maps) {
    const Fp8BlockscaleParams& gemm = params_.gemm;
    swap_params_.a_map = gemm.a_map;
    swap_params_.b_map = swap_ab_->weight_rows == 64 ? b_maps.rows_64 : b_maps.rows_128;
    swap_params_.a_scale_map = gemm.a_scale_map;
    swap_params_.b_scales = gemm.b_scales;
    swap_params_.c = reinterpret_cast<__nv_bfloat16*>(c_.data());
    swap_params_.m = gemm.m;
    swap_params_.n = gemm.n;
    swap_params_.k = gemm.k;
    swap_params_.splits = swap_ab_->splits;
    swap_params_.kblocks_per_split = swap_ab_->kblocks_per_split;
    swap_params_.a_box_rows = gemm.a_box_rows;
  }
};

class Fp8BlockscaleSession final : public GemmSession {
 public:
  Fp8BlockscaleSession(CudaDevice& device, const WeightShape& shape, uint64_t seed, WeightOrder order)
      : device_(device), shape_(shape), seed_(seed), order_(order) {
    b_maps_.order = order;
    const int64_t kblocks = synthetic::blocks(shape.k);
    const int64_t nblocks = synthetic::blocks(shape.n);
    const cudaStream_t stream = device.stream();
    DeviceBuffer<uint8_t> row_major(std::size_t(shape.n * shape.k));
    fill_fp8_codes(row_major.data(), seed, synthetic::b_codes, 1, shape.n, shape.k, stream);
    if (order == WeightOrder::preshuffled) {
      b_ = DeviceBuffer<uint8_t>(std::size_t(preshuffled_b_bytes(shape.n, shape.k)));
      preshuffle_b(row_major.data(), b_.data(), shape.n, shape.k, stream);
      const int64_t rows = preshuffled_b_bytes(shape.n, shape.k) / 128;
      b_maps_.rows_128 = verbatim_rows_map(b_.data(), rows, 128);
      b_maps_.rows_64 = verbatim_rows_map(b_.data(), rows, 64);
      CUDA_CHECK(cudaStreamSynchronize(stream));  // before row_major is freed
    } else {
      b_ = std::move(row_major);
      b_maps_.rows_128 = swizzled_tile_map(b_.data(), 1, shape.n, shape.k, 128);
      b_maps_.rows_256 = swizzled_tile_map(b_.data(), 1, shape.n, shape.k, 256);
      b_maps_.rows_64 = swizzled_tile_map(b_.data(), 1, shape.n, shape.k, 64);
    }
    b_scales_ = DeviceBuffer<float>(std::size_t(nblocks * kblocks));
    fill_b_scales(b_scales_.data(), seed, 1, shape.n, shape.k, ScaleStrides{nblocks * kblocks, kblocks, 1}, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(int64_t m) const override {
    const int64_t rows_tiled = m + fp8_tallest_tile_rows() - 1;  // whole tiles: less than one tile of padding
    // Under split-K over the last wave, a partial tile and a count per CTA.
    const int64_t tail_bytes =
        int64_t(fp8_device_spec(device_.ordinal()).multiprocessors) * (fp8_largest_partial_tile_floats() * 4 + 4);
    return std::size_t(rows_tiled * (shape_.k + synthetic::blocks(shape_.k) * 4) + m * shape_.n * 2 + tail_bytes);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::fp8_blockscale, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<Fp8BlockscalePrepared>(device_, problem, b_maps_, b_scales_.data(), order_);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  WeightOrder order_;
  DeviceBuffer<uint8_t> b_;
  BTileMaps b_maps_;
  DeviceBuffer<float> b_scales_;
};

// The configuration a shape runs: the swap-AB decode kernel's or the tiled kernel's.
std::string describe_fp8_choice(const GemmShape& shape, const Fp8DeviceSpec& spec) {
  if (const auto swap_ab = choose_fp8_swapab_config(shape, spec)) return describe(*swap_ab);
  return describe(choose_fp8_blockscale_config(shape, spec));
}

}  // namespace

std::unique_ptr<GemmSession> open_fp8_blockscale_session(Device& device, const WeightShape& shape, uint64_t seed,
                                                         WeightOrder order) {
  require_supported_weights("fp8_blockscale", shape,
                            fp8_blockscale_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
  return std::make_unique<Fp8BlockscaleSession>(as_cuda_device(device), shape, seed, order);
}

std::optional<std::string> fp8_blockscale_unsupported_reason(const GemmShape& shape) {
  if (auto reason = batch_count_problem(shape)) return reason;
  if (shape.k <= 0 || shape.k % 16 != 0)
    return "K=" + std::to_string(shape.k) + " is not a positive multiple of 16 (16-byte row copies)";
  if (shape.m < 1 || shape.n < 1) return "M and N must be positive";
  if (shape.n % 8 != 0) return "N=" + std::to_string(shape.n) + " is not a multiple of 8 (16-byte output rows for the bulk store)";
  return int32_index_problem({shape.m * shape.n, shape.n * shape.k, shape.m * shape.k});
}

const Fp8DeviceSpec& fp8_device_spec(int ordinal) { return cached_device_spec(ordinal, &query_device_spec); }

std::optional<Fp8DeviceSpec> current_device_spec() {
  if (missing_device_reason()) return std::nullopt;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return fp8_device_spec(device);
}

KernelEntry fp8_blockscale_entry() {
  KernelEntry entry(
      {.name = "fp8_blockscale",
       .backend = BackendKind::cuda,
       .dtype = "fp8",
       .formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales (row-major), C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description = "ours: persistent, warp-specialized (TMA copy warpgroup + wgmma e4m3 math warpgroups), "
                      "per-128-K promotion outside the tensor cores; small M streams B with split-K, decode as "
                      "swap-AB (weights as the MMA's M, tokens as its N)"});
  entry.unsupported_reason = fp8_blockscale_unsupported_reason;
  entry.describe_config = [](const GemmShape& shape) {
    if (const auto spec = current_device_spec()) return describe_fp8_choice(shape, *spec);
    const Fp8DeviceSpec reference = fp8_reference_spec();
    return describe_fp8_choice(shape, reference) + " (no GPU visible: as on the reference " + reference.name + ", " +
           std::to_string(reference.multiprocessors) + " SMs)";
  };
  entry.config_for = [](const GemmShape& shape) {
    const Fp8DeviceSpec spec = current_device_spec().value_or(fp8_reference_spec());
    if (const auto swap_ab = choose_fp8_swapab_config(shape, spec)) return kernel_config(*swap_ab);
    const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(shape, spec);
    // Split-K runs as a cluster of split_k CTAs along K that reduce one tile on chip; over the
    // last wave as K runs of CTAs outside any cluster, reduced through global memory (split_k:
    // the most runs of one tile).
    const int64_t kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
    return KernelConfig{config.block_m(), config.block_n, 1, 1, config.split_k, config.ctas_per_tile(kblocks)};
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) {
    return open_fp8_blockscale_session(device, shape, seed, WeightOrder::row_major);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
