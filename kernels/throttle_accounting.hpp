// The driver's cumulative throttle accounting: how long the board's power policy has held the clock below
// what was asked, read around a point so that its share of the point's time shows what the clock did between
// the point's start and end readings (which say nothing of it). A device that can tell implements
// ThrottleAccountingSource beside kernels::Device (the CUDA device, through NVML); the profiler asks for it
// by dynamic_cast where `profile --power-accounting` wants it, and records nothing without it.
#pragma once

#include <optional>

namespace shapescope::kernels {

// A policy's counter: the time it has held the clock down so far, and when the driver stamped that.
struct PolicyHeldTime {
  double at_s = 0;    // the counter's own timestamp
  double held_s = 0;  // cumulative time in violation of the policy
};

struct ThrottleReading {
  std::optional<PolicyHeldTime> power;  // absent where the driver does not count it
  double power_limit_w = 0;             // the board's enforced power limit; 0 when unknown
};

// The share of the time between two readings of a policy's counter that the policy held the clock down;
// nothing where either reading is missing or the counter's timestamp did not advance.
inline std::optional<double> held_share(const std::optional<PolicyHeldTime>& start,
                                        const std::optional<PolicyHeldTime>& end) {
  if (!start || !end || end->at_s <= start->at_s) return std::nullopt;
  return (end->held_s - start->held_s) / (end->at_s - start->at_s);
}

class ThrottleAccountingSource {
 public:
  virtual ~ThrottleAccountingSource() = default;
  // Nothing when the device cannot say now.
  virtual std::optional<ThrottleReading> read_throttle_accounting() const = 0;
};

}  // namespace shapescope::kernels
