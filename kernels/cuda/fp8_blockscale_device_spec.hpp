// What the FP8 heuristic and launch need to know about the GPU, instead of one GPU's
// constants: SMs, shared memory per block, and how many split-K clusters are resident at
// once. fp8_blockscale.cu queries it once per device from the CUDA runtime; without a GPU
// (`profile --list-kernels` on a CPU machine, CPU tests) the named reference spec stands in.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace shapescope::kernels::cuda {

constexpr int kFp8MaxSplit = 6;  // split-K runs in a thread-block cluster of this many CTAs at most

struct Fp8DeviceSpec {
  std::string name;
  int multiprocessors = 0;
  int shared_bytes_per_block_optin = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  int64_t l2_bytes = 0;                  // cudaDevAttrL2CacheSize
  // Clusters of `split` CTAs resident at once (cudaOccupancyMaxActiveClusters on the split
  // instances with their shared memory and block size; the fewest over the instances). A
  // cluster lives in one GPC, so SMs a GPC cannot fill with whole clusters stay idle.
  // [1]: the unsplit grid, one CTA per SM. 0: a split that does not run on this device.
  std::array<int, kFp8MaxSplit + 1> clusters_by_split{};

  int64_t fitting_clusters(int64_t split) const {
    return split >= 1 && split <= kFp8MaxSplit ? clusters_by_split[std::size_t(split)] : 0;
  }
};

// An H100 SXM as measured (docs/KERNEL_NOTES.md, 2026-11-22): 132 SMs, 227 KB per block, 50 MB of
// L2, and cudaOccupancyMaxActiveClusters 66, 39, 30 and 17 clusters of 2, 3, 4 and 6 CTAs (a 4-split
// of 32 tiles then runs in two waves); splits of 5 were not measured, so not used.
inline Fp8DeviceSpec fp8_reference_spec() {
  return Fp8DeviceSpec{"H100 SXM", 132, 227 * 1024, 50 << 20, {0, 132, 66, 39, 30, 0, 17}};
}

}  // namespace shapescope::kernels::cuda
