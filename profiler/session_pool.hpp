// The sessions of one (kernel, weight shape) a sweep measures with, dense or grouped: the first
// always, and in graph timing the further copies it rotates over, each with its own weights
// (seeded apart), opened the first time a point asks for them and kept for the sweep.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/grouped_gemm.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::profiler {

// Entry: a dense or grouped kernel entry; Session and WeightShape: what its open() gives and takes.
template <class Entry, class Session, class WeightShape>
class BasicSessionPool {
 public:
  // Opens the first session; throws what the kernel's open throws.
  BasicSessionPool(const Entry& kernel, kernels::Device& device, const WeightShape& shape, uint64_t seed);
  Session& first() { return *sessions_.front(); }
  Session& at(int index) { return *sessions_.at(std::size_t(index)); }
  // Opens sessions until `count` are open, one fails to open (memory, say) or a signal came; returns
  // how many are open, and why the last one failed in `why` when fewer.
  int ensure(int count, std::string& why);

 private:
  const Entry& kernel_;
  kernels::Device& device_;
  WeightShape shape_;
  uint64_t seed_;
  std::vector<std::unique_ptr<Session>> sessions_;
};

using SessionPool = BasicSessionPool<kernels::KernelEntry, kernels::GemmSession, kernels::WeightShape>;
using GroupedSessionPool =
    BasicSessionPool<kernels::GroupedKernelEntry, kernels::GroupedGemmSession, kernels::GroupedWeightShape>;

// Weights of operand set i: distinct seeds, so no two sets share contents either.
uint64_t operand_set_seed(uint64_t seed, int set);

// Graph timing's operand sets for one point: `first` (prepared by the caller from the
// first session), then as many more as plan_operand_sets asks for and memory allows; fewer once a signal
// came (the measurement that follows then stops at once).
struct Rotation {
  std::vector<std::unique_ptr<kernels::PreparedGemm>> extra;  // sets 1..
  std::vector<kernels::PreparedGemm*> sets;                   // first, then extra
  std::string note;  // "" when the sets reach the L2 multiple, else why the rotation is partly warm
};
// `size`: what the pool's sessions prepare, the M of a dense GEMM or the GroupedShape of a grouped one.
Rotation prepare_rotation(kernels::Device& device, SessionPool& pool, kernels::PreparedGemm& first, int64_t size,
                          uint64_t seed);
Rotation prepare_rotation(kernels::Device& device, GroupedSessionPool& pool, kernels::PreparedGemm& first,
                          const kernels::GroupedShape& size, uint64_t seed);

}  // namespace shapescope::profiler
