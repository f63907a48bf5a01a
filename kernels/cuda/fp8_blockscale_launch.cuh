// Launches the compiled instances of fp8_blockscale_kernel (fp8_blockscale_kernel.cuh)
// for a schedule: the dense GEMMs (fp8_blockscale.cu) and the grouped ones
// (fp8_blockscale_grouped.cu) pick their instance here from the heuristic's configuration.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"

namespace shapescope::kernels::cuda {

// Launches one instance; under split-K as (split_k, 1, 1) clusters, as many as fit at once.
template <int kRowGroups, int kKGroups, int kBlockN, bool kClusterSplit, bool kPreshuffledB, class Schedule>
void launch_fp8_instance(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                         cudaStream_t stream) {
  constexpr int kStages = fp8_stages(kRowGroups, kKGroups, kBlockN, kClusterSplit);
  static_assert(kStages >= 3, "the ring needs three stages");
  const auto kernel = fp8_blockscale_kernel<kRowGroups, kKGroups, kBlockN, kClusterSplit, kStages, kPreshuffledB, Schedule>;
  static const bool shared_limit_raised = [&] {  // above 48 KB only after opting in, once per instance
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, config.shared_bytes()));
    return true;
  }();
  (void)shared_limit_raised;
  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(unsigned(config.ctas));
  launch.blockDim = dim3(unsigned(config.threads()));
  launch.dynamicSmemBytes = std::size_t(config.shared_bytes());
  launch.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(config.split_k);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  if (kClusterSplit) {
    launch.attrs = &cluster;
    launch.numAttrs = 1;
    // Asked once per instance and cluster size, not on every (timed) launch.
    static std::array<std::atomic<int>, kFp8MaxSplit + 1> fitting_clusters_by_split{};
    std::atomic<int>& fitting_clusters = fitting_clusters_by_split.at(std::size_t(config.split_k));
    if (fitting_clusters.load() == 0) {
      int fitting = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fitting, kernel, &launch));
      if (fitting < 1)
        throw std::runtime_error("fp8_blockscale: no cluster of " + std::to_string(config.split_k) +
                                 " CTAs fits this GPU");
      fitting_clusters.store(fitting);
    }
    launch.gridDim.x = unsigned(std::min(config.ctas / config.split_k, fitting_clusters.load()) * config.split_k);
  }
  CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, params));
}

// The compiled instances (fp8_config_compiled says which configurations they cover).
template <bool kPreshuffledB, class Schedule>
void launch_fp8_instance_for(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                             cudaStream_t stream) {
  const bool split = config.cluster_split();
  if (fp8_config_compiled(config) && config.k_groups == (config.row_groups == 1 ? 2 : 1)) {
    if (config.row_groups == 1)
      return split ? launch_fp8_instance<1, 2, 128, true, kPreshuffledB, Schedule>(params, config, stream)
                   : launch_fp8_instance<1, 2, 128, false, kPreshuffledB, Schedule>(params, config, stream);
    if (config.row_groups == 2 && config.block_n == 128)
      return split ? launch_fp8_instance<2, 1, 128, true, kPreshuffledB, Schedule>(params, config, stream)
                   : launch_fp8_instance<2, 1, 128, false, kPreshuffledB, Schedule>(params, config, stream);
    if (config.row_groups == 2 && config.block_n == 256)
      return launch_fp8_instance<2, 1, 256, false, kPreshuffledB, Schedule>(params, config, stream);
    if (config.row_groups == 3) return launch_fp8_instance<3, 1, 128, false, kPreshuffledB, Schedule>(params, config, stream);
  }
  throw std::logic_error("fp8_blockscale: no kernel instance for " + describe(config));
}

}  // namespace shapescope::kernels::cuda
