#include "profiler/session_pool.hpp"

#include <algorithm>
#include <exception>

#include "kernels/synthetic_operands.hpp"

namespace shapescope::profiler {

uint64_t operand_set_seed(uint64_t seed, int set) {
  return set == 0 ? seed : kernels::synthetic::mix(seed ^ (uint64_t(set) * 0x9E3779B97F4A7C15ull));
}

SessionPool::SessionPool(const kernels::KernelEntry& kernel, kernels::Device& device,
                         const kernels::WeightShape& shape, uint64_t seed)
    : kernel_(kernel), device_(device), shape_(shape), seed_(seed) {
  sessions_.push_back(kernel_.open(device_, shape_, seed_));
}

int SessionPool::ensure(int count, std::string& why) {
  while (int(sessions_.size()) < count) {
    try {
      sessions_.push_back(kernel_.open(device_, shape_, operand_set_seed(seed_, int(sessions_.size()))));
    } catch (const std::exception& error) {
      why = error.what();
      break;
    }
  }
  return std::min(count, int(sessions_.size()));
}

}  // namespace shapescope::profiler
