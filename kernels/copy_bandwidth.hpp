// The memory roof a speed-of-light figure divides by: a large device-to-device copy
// on a GPU, a large memcpy on the CPU, timed on the device's own timer.
#pragma once

#include "kernels/kernel.hpp"

namespace shapescope::kernels {

// Bytes moved per µs (bytes read plus bytes written): the median of repeated copies of 1 GiB on
// a CUDA GPU, 64 MiB on the CPU (either well beyond the last-level cache); 0 (unknown) on the HIP backend.
double measure_copy_bandwidth(Device& device);

}  // namespace shapescope::kernels
