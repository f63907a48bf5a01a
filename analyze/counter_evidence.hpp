// Hardware counters of an anomaly M against its reference M, turned into named causes
// (`analyze --explain-with-counters`): what the timing alone cannot tell, such as a hidden
// second kernel (a split-K reduction), operand re-reads from DRAM, SMs idle through a
// tail, or fewer warps resident. The thresholds are declared once, here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/explain.hpp"
#include "common/kernel_counters.hpp"

namespace shapescope::analyze {

struct CounterThresholds {
  // DRAM bytes per minimum byte (operands read once, output written once) at the anomaly
  // over the same at the reference: at or above this, the kernel re-reads operands.
  double dram_ratio = 1.25;
  // Percentage points of elapsed time more that the SMs sat idle (100 - sm active %).
  double idle_sm_points = 10;
  // Achieved occupancy at the anomaly over the reference's: at or below this, fewer warps hide latency.
  double occupancy_ratio = 0.8;
};
inline constexpr CounterThresholds kCounterThresholds{};

struct CounterFindings {
  std::vector<Cause> causes;
  std::string why_not;  // when no cause holds: the compared figures, one line
};

CounterFindings counter_causes(const KernelCounters& here, const KernelCounters& reference,
                               const CounterThresholds& thresholds = kCounterThresholds);

// What an extra kernel most likely is, from its name ("split-K reduction" for a reduce kernel).
std::string kernel_role(const std::string& kernel_name);

}  // namespace shapescope::analyze
