// Launches fp8_blockscale's swap-AB decode kernel: one instance per weight rows (64, 128), token width
// (8, 16, 32, 64) and weight order, picked from the configuration.
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_blockscale_launch.cuh"
#include "kernels/cuda/fp8_blockscale_swapab_kernel.cuh"
#include "kernels/cuda/fp8_blockscale_swapab_launch.hpp"

namespace shapescope::kernels::cuda {
namespace {

template <int kWeightRows, int kTokens, bool kPreshuffledB>
void launch_instance(const Fp8SwapAbParams& params, const Fp8SwapAbConfig& config, bool programmatic,
                     cudaStream_t stream) {
  const auto kernel = fp8_blockscale_swapab_kernel<kWeightRows, kTokens, kPreshuffledB>;
  static const bool raised = [&] {  // above 48 KB of dynamic shared memory only after opting in, once
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    fp8_swapab_shared_bytes(kWeightRows, kTokens)));
    return true;
  }();
  (void)raised;
  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(unsigned(config.ctas));
  launch.blockDim = dim3(unsigned(fp8_swapab_threads(kTokens)));
  launch.dynamicSmemBytes = std::size_t(fp8_swapab_shared_bytes(kWeightRows, kTokens));
  launch.stream = stream;
  cudaLaunchAttribute attributes[2]{};
  launch.attrs = attributes;
  // The K ranges of a weight tile: one cluster of consecutive CTAs.
  if (config.splits > 1) attributes[launch.numAttrs++] = fp8_cluster_attribute(config.splits);
  if (programmatic) {
    cudaLaunchAttribute& overlap = attributes[launch.numAttrs++];
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
  }
  CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, params));
}

template <int kWeightRows, bool kPreshuffledB>
void launch_for_tokens(const Fp8SwapAbParams& params, const Fp8SwapAbConfig& config, bool programmatic,
                       cudaStream_t stream) {
  switch (config.tokens) {
    case 8: return launch_instance<kWeightRows, 8, kPreshuffledB>(params, config, programmatic, stream);
    case 16: return launch_instance<kWeightRows, 16, kPreshuffledB>(params, config, programmatic, stream);
    case 32: return launch_instance<kWeightRows, 32, kPreshuffledB>(params, config, programmatic, stream);
    case 64: return launch_instance<kWeightRows, 64, kPreshuffledB>(params, config, programmatic, stream);
    default: throw std::logic_error("fp8_blockscale: no swap-AB instance for " + describe(config));
  }
}

template <bool kPreshuffledB>
void launch_for_rows(const Fp8SwapAbParams& params, const Fp8SwapAbConfig& config, bool programmatic,
                     cudaStream_t stream) {
  if (config.weight_rows == 64) return launch_for_tokens<64, kPreshuffledB>(params, config, programmatic, stream);
  if (config.weight_rows == 128) return launch_for_tokens<128, kPreshuffledB>(params, config, programmatic, stream);
  throw std::logic_error("fp8_blockscale: no swap-AB instance for " + describe(config));
}

}  // namespace

void launch_fp8_blockscale_swapab(const Fp8SwapAbParams& params, const Fp8SwapAbConfig& config, bool preshuffled_b,
                                  bool programmatic, cudaStream_t stream) {
  if (config.ctas < 1 || config.splits < 1 || config.splits > kFp8SwapAbMaxSplits || config.ctas % config.splits != 0 ||
      params.splits != config.splits)
    throw std::logic_error("fp8_blockscale: swap-AB launch of " + describe(config) + " with mismatched parameters");
  preshuffled_b ? launch_for_rows<true>(params, config, programmatic, stream)
                : launch_for_rows<false>(params, config, programmatic, stream);
}

}  // namespace shapescope::kernels::cuda
