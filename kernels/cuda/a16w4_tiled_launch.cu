#include "kernels/cuda/a16w4_tiled_launch.hpp"

#include <stdexcept>

#include "kernels/cuda/a16w4_tiled_kernel.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/tensor_map.hpp"

namespace shapescope::kernels::cuda {
namespace {

// Calls visit(kernel) with the instance for the configuration's token tile and the scale type.
template <class Visit>
void with_instance(const A16w4TiledConfig& config, ScaleType scale, const Visit& visit) {
  using a16w4_tiled::ScaleCode;
  const bool e8m0 = scale == ScaleType::e8m0;
  if (scale != ScaleType::e8m0 && scale != ScaleType::ue4m3)
    throw std::logic_error("a16w4_tiled: no instance for the scale type " + std::string(to_string(scale)));
  if (config.block_m == 128)
    return e8m0 ? visit(a16w4_tiled::a16w4_tiled_kernel<128, ScaleCode::e8m0>)
                : visit(a16w4_tiled::a16w4_tiled_kernel<128, ScaleCode::ue4m3>);
  if (config.block_m == 64)
    return e8m0 ? visit(a16w4_tiled::a16w4_tiled_kernel<64, ScaleCode::e8m0>)
                : visit(a16w4_tiled::a16w4_tiled_kernel<64, ScaleCode::ue4m3>);
  if (config.block_m == 32)
    return e8m0 ? visit(a16w4_tiled::a16w4_tiled_kernel<32, ScaleCode::e8m0>)
                : visit(a16w4_tiled::a16w4_tiled_kernel<32, ScaleCode::ue4m3>);
  throw std::logic_error("a16w4_tiled: no instance for " + describe(config));
}

}  // namespace

void allow_a16w4_tiled_shared_memory(const A16w4TiledConfig& config, ScaleType scale) {
  with_instance(config, scale, [&](void (*kernel)(a16w4_tiled::A16w4TiledArguments)) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, config.shared_bytes()));
  });
}

void launch_a16w4_tiled(const A16w4TiledParams& params, const CUtensorMap& activations, const A16w4TiledConfig& config,
                        ScaleType scale, int64_t row_units, bool programmatic, cudaStream_t stream) {
  if (row_units == 0) return;  // no rows anywhere: nothing to launch
  const dim3 grid(unsigned(row_units), unsigned(params.layout.n_tiles), unsigned(config.split_k));
  const a16w4_tiled::A16w4TiledArguments arguments{params, activations};
  with_instance(config, scale, [&](void (*kernel)(a16w4_tiled::A16w4TiledArguments)) {
    launch_kernel(kernel, grid, dim3(kA16w4TiledThreads), std::size_t(config.shared_bytes()), arguments,
                  programmatic, stream);
  });
}

CUtensorMap a16w4_tiled_activation_map(const uint16_t* a, int64_t rows, int64_t k, const A16w4TiledConfig& config) {
  return swizzled_tile_map(a, 2, rows, a16w4_tiled_lda(k), config.block_m);
}

}  // namespace shapescope::kernels::cuda
