// When a point counts as throttled: its SM clock fell below this fraction of the
// reference, the clock at the start of the point (measure.cpp) or the steady clock
// reached before the sweep (repeat_sweep.cpp).
#pragma once

namespace shapescope::profiler {

inline constexpr double kThrottleClockRatio = 0.97;

}  // namespace shapescope::profiler
