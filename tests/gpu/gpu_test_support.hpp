// How GPU tests get the device: every CUDA kernel registered, and a skip (not a
// failure) where no GPU is usable, so CI without a GPU passes.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "kernels/kernel.hpp"

namespace shapescope::kernels {

inline std::unique_ptr<Device> open_device() {
  register_cuda_kernels();
  return make_cuda_device();
}

#define REQUIRE_GPU(device) \
  if (!(device)) GTEST_SKIP() << ::shapescope::kernels::cuda_unavailable_reason()

}  // namespace shapescope::kernels
