#include "profiler/session_pool.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/operand_sets.hpp"

namespace shapescope::profiler {

uint64_t operand_set_seed(uint64_t seed, int set) {
  return set == 0 ? seed : kernels::synthetic::mix(seed ^ (uint64_t(set) * 0x9E3779B97F4A7C15ull));
}

template <class Entry, class Session, class WeightShape>
BasicSessionPool<Entry, Session, WeightShape>::BasicSessionPool(const Entry& kernel, kernels::Device& device,
                                                               const WeightShape& shape, uint64_t seed)
    : kernel_(kernel), device_(device), shape_(shape), seed_(seed) {
  sessions_.push_back(kernel_.open(device_, shape_, seed_));
}

template <class Entry, class Session, class WeightShape>
int BasicSessionPool<Entry, Session, WeightShape>::ensure(int count, std::string& why) {
  // Each set is a kernel opened on its own weights (seconds on a slow CPU backend): a signal stops the opening.
  while (int(sessions_.size()) < count && !interrupt_requested()) {
    try {
      sessions_.push_back(kernel_.open(device_, shape_, operand_set_seed(seed_, int(sessions_.size()))));
    } catch (const std::exception& error) {
      why = error.what();
      break;
    }
  }
  return std::min(count, int(sessions_.size()));
}

template class BasicSessionPool<kernels::KernelEntry, kernels::GemmSession, kernels::WeightShape>;
template class BasicSessionPool<kernels::GroupedKernelEntry, kernels::GroupedGemmSession, kernels::GroupedWeightShape>;

namespace {

template <class Pool, class Size>
Rotation rotation_over(kernels::Device& device, Pool& pool, kernels::PreparedGemm& first, const Size& size,
                       uint64_t seed) {
  Rotation rotation;
  rotation.sets.push_back(&first);
  const double set_bytes = first.min_bytes();
  const std::size_t l2_bytes = device.info().l2_bytes;
  const OperandSetPlan wanted = plan_operand_sets(set_bytes, l2_bytes, device.free_memory_bytes());
  std::string why;
  const int open = pool.ensure(wanted.sets, why);
  for (int set = 1; set < open && !interrupt_requested(); ++set) {
    try {
      rotation.extra.push_back(pool.at(set).prepare(size, operand_set_seed(seed, set)));
    } catch (const std::exception& error) {
      why = error.what();
      break;
    }
    rotation.sets.push_back(rotation.extra.back().get());
  }
  const double total_bytes = double(rotation.sets.size()) * set_bytes;
  if (total_bytes < kRotationL2Multiple * double(l2_bytes)) {
    rotation.note = fmt::format("graph rotation over {} operand sets ({:.1f} MB) is below {}x the L2{}{}: partly warm",
                                rotation.sets.size(), total_bytes / 1e6, kRotationL2Multiple,
                                why.empty() ? "" : "; ", why);
  }
  return rotation;
}

}  // namespace

Rotation prepare_rotation(kernels::Device& device, SessionPool& pool, kernels::PreparedGemm& first, int64_t size,
                          uint64_t seed) {
  return rotation_over(device, pool, first, size, seed);
}

Rotation prepare_rotation(kernels::Device& device, GroupedSessionPool& pool, kernels::PreparedGemm& first,
                          const kernels::GroupedShape& size, uint64_t seed) {
  return rotation_over(device, pool, first, size, seed);
}

}  // namespace shapescope::profiler
