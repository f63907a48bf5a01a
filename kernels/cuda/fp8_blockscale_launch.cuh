// Launches the compiled instances of fp8_blockscale_kernel (fp8_blockscale_kernel.cuh) for
// a schedule: the dense GEMMs (fp8_blockscale.cu) and the grouped ones
// (fp8_blockscale_grouped.cu) pick their instance of kFp8Instances here from the
// heuristic's configuration. A schedule may leave instances out (Schedule::uses).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"

namespace shapescope::kernels::cuda {

// Launches instance kIndex of kFp8Instances; under split-K as (split_k, 1, 1) clusters, as
// many as fit at once; `programmatic`: with programmatic dependent launch (the kernel waits
// for the previous grid before touching global memory).
template <std::size_t kIndex, bool kPreshuffledB, class Schedule>
void launch_fp8_instance(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                         bool programmatic, cudaStream_t stream) {
  constexpr Fp8Instance kInstance = kFp8Instances[kIndex];
  if constexpr (!Schedule::uses(kInstance)) {
    throw std::logic_error("fp8_blockscale: this schedule does not run " + describe(config));
  } else {
    const auto kernel = fp8_blockscale_kernel<kInstance.row_groups, kInstance.k_groups, kInstance.block_n,
                                              kInstance.cluster_split, kInstance.stages(), kPreshuffledB, Schedule>;
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
    std::array<cudaLaunchAttribute, 2> attributes{};
    launch.attrs = attributes.data();
    if constexpr (kInstance.cluster_split) {
      cudaLaunchAttribute& cluster = attributes[launch.numAttrs++];
      cluster.id = cudaLaunchAttributeClusterDimension;
      cluster.val.clusterDim.x = unsigned(config.split_k);
      cluster.val.clusterDim.y = 1;
      cluster.val.clusterDim.z = 1;
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
    if (programmatic) {  // after the occupancy query, which needs only the cluster shape
      cudaLaunchAttribute& overlap = attributes[launch.numAttrs++];
      overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      overlap.val.programmaticStreamSerializationAllowed = 1;
    }
    CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, params));
  }
}

// One launcher per entry of kFp8Instances, in its order: adding an instance there adds it here.
template <class Schedule>
using Fp8InstanceLauncher = void (*)(const typename Schedule::Params&, const Fp8BlockscaleConfig&, bool, cudaStream_t);
template <bool kPreshuffledB, class Schedule, std::size_t... kIndex>
constexpr std::array<Fp8InstanceLauncher<Schedule>, sizeof...(kIndex)> fp8_instance_launchers(
    std::index_sequence<kIndex...>) {
  return {&launch_fp8_instance<kIndex, kPreshuffledB, Schedule>...};
}

template <bool kPreshuffledB, class Schedule>
void launch_fp8_instance_for(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                             bool programmatic, cudaStream_t stream) {
  static constexpr auto kLaunchers =
      fp8_instance_launchers<kPreshuffledB, Schedule>(std::make_index_sequence<std::size(kFp8Instances)>{});
  const int index = fp8_instance_index(config);
  if (index < 0) throw std::logic_error("fp8_blockscale: no kernel instance for " + describe(config));
  kLaunchers[std::size_t(index)](params, config, programmatic, stream);
}

}  // namespace shapescope::kernels::cuda
