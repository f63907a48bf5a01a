// The sessions of one (kernel, weight shape) a sweep measures with: the first always,
// and in graph timing the further copies it rotates over, each with its own weights
// (seeded apart), opened the first time a point asks for them and kept for the sweep.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace shapescope::profiler {

class SessionPool {
 public:
  // Opens the first session; throws what the kernel's open throws.
  SessionPool(const kernels::KernelEntry& kernel, kernels::Device& device, const kernels::WeightShape& shape,
              uint64_t seed);
  kernels::GemmSession& first() { return *sessions_.front(); }
  kernels::GemmSession& at(int index) { return *sessions_.at(std::size_t(index)); }
  // Opens sessions until `count` are open or one fails to open (memory, say); returns
  // how many are open, and why the last one failed in `why` when fewer.
  int ensure(int count, std::string& why);

 private:
  const kernels::KernelEntry& kernel_;
  kernels::Device& device_;
  kernels::WeightShape shape_;
  uint64_t seed_;
  std::vector<std::unique_ptr<kernels::GemmSession>> sessions_;
};

// Weights of operand set i: distinct seeds, so no two sets share contents either.
uint64_t operand_set_seed(uint64_t seed, int set);

}  // namespace shapescope::profiler
