// The peak each MFU is a fraction of: the --peak-tflops override, the datasheet
// rate for the device and kernel dtype, or a rate measured once per run (a large
// GEMM of the same dtype through the registry; on the CPU always an Eigen sgemm).
#pragma once

#include <map>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::profiler {

enum class PeakMode { datasheet, measured };

struct Peak {
  double tflops = 0;
  std::string source;  // e.g. "datasheet NVIDIA H200 fp8", "measured: Eigen sgemm 2048^3, 2 threads", "--peak-tflops"
};

class PeakResolver {
 public:
  PeakResolver(PeakMode mode, double override_tflops) : mode_(mode), override_tflops_(override_tflops) {}
  // Cached per dtype (one entry for the CPU), so a run measures each peak once. Throws UserError when no peak is known.
  const Peak& peak_for(kernels::Device& device, const kernels::KernelEntry& kernel);

 private:
  Peak resolve(kernels::Device& device, const kernels::KernelEntry& kernel) const;
  PeakMode mode_;
  double override_tflops_;
  std::map<std::string, Peak> cache_;
};

}  // namespace shapescope::profiler
