#include "common/engine_capture_sizes.hpp"

namespace shapescope {

std::vector<int64_t> vllm_default_capture_sizes() {
  std::vector<int64_t> sizes = {1, 2, 4};
  for (int64_t size = 8; size <= 512; size += 8) sizes.push_back(size);
  return sizes;
}

}  // namespace shapescope
