// `profile --repeat R` and the steady-state warm-up: drift in the GPU's
// clock and temperature must not pose as shape. R passes go over the M list,
// each in its own shuffled order, so slow drift spreads over all M instead of
// correlating with M; each point then keeps the median over passes and the
// spread between them. Before the sweep the largest GEMM runs until the SM clock settles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/model_catalog.hpp"
#include "common/profile_schema.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::profiler {

struct ScheduledPoint {
  int pass = 0;
  int64_t m = 0;
};

// Pass by pass, every M of `m_values` once per pass; with one pass the given order,
// with several each pass in a different seeded shuffle.
std::vector<ScheduledPoint> repeat_schedule(const std::vector<int64_t>& m_values, int passes, uint64_t seed);

// One row from the rows of the same M measured in several passes:
//   kernel_time      median of the pass medians (robust to one disturbed pass)
//   time_us_min/max  the fastest and slowest pass median (the run-to-run spread)
//   time_us_stddev   standard deviation of the pass medians
//   ci95_us          the larger of the Student-t 95% half-width over passes and the widest within-pass one
//   samples          all samples together; passes = the number of rows
//   clocks, power    SM clock: the lowest start and end clocks; temperature and power: the highest
//   status           the first failing pass's status and note, else ok
// tflops, utils and gbytes_per_s follow the median time. Rows must share M; an empty list is an error.
ProfileRow combine_passes(const std::vector<ProfileRow>& passes);

struct SteadyClockOptions {
  double window_seconds = 0.5;     // the clock is sampled once per window of back-to-back runs
  double tolerance = 0.01;         // settled: three windows within 1% of each other
  double max_seconds = 30;
};

struct SteadyClock {
  std::optional<kernels::ClockSample> settled;  // nothing when the device reports no clock
  double seconds = 0;
  bool reached = false;                          // false: gave up at max_seconds
};

// Runs `gemm` back to back until the SM clock stops moving (or max_seconds pass).
SteadyClock warm_until_clock_settles(kernels::Device& device, kernels::PreparedGemm& gemm,
                                     const SteadyClockOptions& options);

// A point that ran below kThrottleClockRatio of the steady clock becomes status throttled, with a note saying so.
void flag_off_steady_clock(ProfileRow& row, double steady_sm_clock_mhz);

// Before a GPU sweep: warms the device on the sweep's largest GEMM (largest N*K, largest M up
// to kWarmUpMaxM, first kernel that runs it) until the SM clock settles; says so on stderr.
// Returns the settled SM clock in MHz, or 0 when nothing could run or the device tells no clock.
constexpr int64_t kWarmUpMaxM = 16384;
double warm_up_for_sweep(kernels::Device& device, const std::vector<int64_t>& m_values,
                         const std::vector<GemmProblem>& problems, const std::vector<std::string>& kernel_names,
                         uint64_t seed);

}  // namespace shapescope::profiler
