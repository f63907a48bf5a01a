#pragma once

#include <memory>

#include "kernels/cuda/cuda_device.hpp"

namespace shapescope::kernels::cuda {

// A PreparedGemm whose run() launches one empty kernel on the device's current stream.
std::unique_ptr<PreparedGemm> make_empty_run(CudaDevice& device);

}  // namespace shapescope::kernels::cuda
