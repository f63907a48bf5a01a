// Evicts the L2 by reading a buffer larger than it. A read leaves only clean
// lines behind; a memset would leave dirty ones that the next (timed) kernel
// pays to write back, which made decode-size points look up to 2x slower.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace shapescope::kernels::cuda {

// Reads `bytes` of `buffer` (16-byte aligned) on `stream`; `sink` is a device word
// written only when an impossible checksum appears, so the reads cannot be elided.
void read_to_evict_l2(const uint8_t* buffer, std::size_t bytes, uint32_t* sink, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
