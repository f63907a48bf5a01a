// The batch sizes a serving engine captures CUDA graphs for by default; profile's
// `cudagraph` M preset and analyze --capture-sizes both start from this list.
#pragma once

#include <cstdint>
#include <vector>

namespace shapescope {

// vLLM: 1, 2, 4, then 8..512 step 8 (67 sizes).
std::vector<int64_t> vllm_default_capture_sizes();

}  // namespace shapescope
