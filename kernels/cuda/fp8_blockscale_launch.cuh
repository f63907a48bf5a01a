// Launches the compiled instances of fp8_blockscale_kernel (fp8_blockscale_kernel.cuh) for
// a schedule: the dense GEMMs (fp8_blockscale.cu) and the grouped ones
// (fp8_blockscale_grouped.cu) pick their instance of kFp8Instances here from the
// heuristic's configuration. A schedule may leave instances out (Schedule::uses).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"

namespace shapescope::kernels::cuda {

template <std::size_t kIndex, bool kPreshuffledB, class Schedule>
constexpr auto fp8_instance_kernel() {
  constexpr Fp8Instance kInstance = kFp8Instances[kIndex];
  return fp8_blockscale_kernel<kInstance.row_groups, kInstance.k_groups, kInstance.block_n, kInstance.cluster_split,
                               kInstance.stages(), kPreshuffledB, Schedule>;
}

// Above 48 KB of dynamic shared memory only after opting in: once per instance, and only
// for an instance that fits the device (the callers check).
template <std::size_t kIndex, bool kPreshuffledB, class Schedule>
void fp8_opt_in_shared_memory() {
  static const bool raised = [] {
    const int bytes = kFp8Instances[kIndex].with_split_k(kFp8Instances[kIndex].cluster_split ? 2 : 1).shared_bytes();
    CUDA_CHECK(cudaFuncSetAttribute(fp8_instance_kernel<kIndex, kPreshuffledB, Schedule>(),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)raised;
}

inline cudaLaunchAttribute fp8_cluster_attribute(int split) {
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(split);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  return cluster;
}

// Clusters of `split` CTAs of split instance kIndex resident at once on the current device
// (0 for an instance the schedule does not run).
template <std::size_t kIndex, bool kPreshuffledB, class Schedule>
int fp8_resident_clusters(int split) {
  if constexpr (!Schedule::uses(kFp8Instances[kIndex])) {
    return 0;
  } else {
    const Fp8BlockscaleConfig config = kFp8Instances[kIndex].with_split_k(split);
    fp8_opt_in_shared_memory<kIndex, kPreshuffledB, Schedule>();
    cudaLaunchConfig_t launch{};
    launch.gridDim = dim3(unsigned(split));
    launch.blockDim = dim3(unsigned(config.threads()));
    launch.dynamicSmemBytes = std::size_t(config.shared_bytes());
    cudaLaunchAttribute cluster = fp8_cluster_attribute(split);
    launch.attrs = &cluster;
    launch.numAttrs = 1;
    int clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, fp8_instance_kernel<kIndex, kPreshuffledB, Schedule>(),
                                              &launch));
    return clusters;
  }
}

// Launches instance kIndex of kFp8Instances as sized for `spec` (under split-K as (split_k, 1, 1)
// clusters); `programmatic`: with programmatic dependent launch (the kernel waits for the
// previous grid before touching global memory).
template <std::size_t kIndex, bool kPreshuffledB, class Schedule>
void launch_fp8_instance(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                         const Fp8DeviceSpec& spec, bool programmatic, cudaStream_t stream) {
  if constexpr (!Schedule::uses(kFp8Instances[kIndex])) {
    throw std::logic_error("fp8_blockscale: this schedule does not run " + describe(config));
  } else {
    if (config.ctas < config.split_k || config.ctas / config.split_k > spec.fitting_clusters(config.split_k) ||
        !fp8_fits_device(config, spec))
      throw std::logic_error("fp8_blockscale: " + describe(config) + " was not sized for " + spec.name);
    fp8_opt_in_shared_memory<kIndex, kPreshuffledB, Schedule>();
    cudaLaunchConfig_t launch{};
    launch.gridDim = dim3(unsigned(config.ctas));
    launch.blockDim = dim3(unsigned(config.threads()));
    launch.dynamicSmemBytes = std::size_t(config.shared_bytes());
    launch.stream = stream;
    std::array<cudaLaunchAttribute, 2> attributes{};
    launch.attrs = attributes.data();
    if (kFp8Instances[kIndex].cluster_split) attributes[launch.numAttrs++] = fp8_cluster_attribute(config.split_k);
    if (programmatic) {
      cudaLaunchAttribute& overlap = attributes[launch.numAttrs++];
      overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      overlap.val.programmaticStreamSerializationAllowed = 1;
    }
    CUDA_CHECK(cudaLaunchKernelEx(&launch, fp8_instance_kernel<kIndex, kPreshuffledB, Schedule>(), params));
  }
}

// Per entry of kFp8Instances, in its order (adding an instance there adds it here): its
// launcher and its cluster occupancy query.
template <class Schedule>
struct Fp8InstanceFunctions {
  void (*launch)(const typename Schedule::Params&, const Fp8BlockscaleConfig&, const Fp8DeviceSpec&, bool,
                 cudaStream_t);
  int (*resident_clusters)(int split);
};
template <bool kPreshuffledB, class Schedule, std::size_t... kIndex>
constexpr std::array<Fp8InstanceFunctions<Schedule>, sizeof...(kIndex)> fp8_instance_functions(
    std::index_sequence<kIndex...>) {
  return {Fp8InstanceFunctions<Schedule>{&launch_fp8_instance<kIndex, kPreshuffledB, Schedule>,
                                         &fp8_resident_clusters<kIndex, kPreshuffledB, Schedule>}...};
}
template <bool kPreshuffledB, class Schedule>
constexpr auto kFp8InstanceFunctions =
    fp8_instance_functions<kPreshuffledB, Schedule>(std::make_index_sequence<std::size(kFp8Instances)>{});

template <bool kPreshuffledB, class Schedule>
void launch_fp8_instance_for(const typename Schedule::Params& params, const Fp8BlockscaleConfig& config,
                             const Fp8DeviceSpec& spec, bool programmatic, cudaStream_t stream) {
  const int index = fp8_instance_index(config);
  if (index < 0) throw std::logic_error("fp8_blockscale: no kernel instance for " + describe(config));
  kFp8InstanceFunctions<kPreshuffledB, Schedule>[std::size_t(index)].launch(params, config, spec, programmatic,
                                                                            stream);
}

}  // namespace shapescope::kernels::cuda
