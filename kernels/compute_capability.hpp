// Whether a GPU is new enough for a kernel that needs a compute capability (Blackwell's block-scaled FP4 and MXFP8
// GEMMs need 10.0): the one line a sweep that names such a kernel stops with, before any work, on an older GPU.
// No CUDA here, so the CPU tests check it.
#pragma once

#include <optional>
#include <string>

namespace shapescope::kernels {

inline std::optional<std::string> compute_capability_problem(const std::string& kernel, int needed_major,
                                                             const std::string& gpu, int major, int minor) {
  if (major >= needed_major) return std::nullopt;
  return kernel + " needs a GPU of compute capability " + std::to_string(needed_major) + ".0 or newer; " + gpu +
         " is " + std::to_string(major) + "." + std::to_string(minor) + ": drop --kernel " + kernel +
         " or run on such a GPU";
}

}  // namespace shapescope::kernels
