#include "profiler/operand_sets.hpp"

#include <algorithm>
#include <cmath>

namespace shapescope::profiler {

OperandSetPlan plan_operand_sets(double set_bytes, std::size_t l2_bytes, std::size_t free_bytes) {
  OperandSetPlan plan;
  if (!(set_bytes > 0)) return plan;
  const double wanted = std::ceil(kRotationL2Multiple * double(l2_bytes) / set_bytes);
  const double fitting = std::floor(kRotationMemoryShare * double(free_bytes) / set_bytes);
  plan.sets = int(std::clamp(std::min(wanted, fitting), 1.0, double(kMaxOperandSets)));
  plan.cold = double(plan.sets) * set_bytes >= kRotationL2Multiple * double(l2_bytes);
  return plan;
}

}  // namespace shapescope::profiler
