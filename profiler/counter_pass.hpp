// `profile --counters`: after a file's points are timed, one counted launch per M (and
// one traced launch for the names of the kernels it runs), written to the counters file
// beside the CSV (common/kernel_counters.hpp). Apart from timing, since collecting
// counters replays the kernel once per pass and would perturb the timed samples.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "common/kernel_counters.hpp"
#include "common/model_catalog.hpp"
#include "kernels/kernel.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

// What `profile --counters` says before any work when the device has no counters (the
// CPU), or they cannot be used here: throws UserError with one line. Returns the session.
std::unique_ptr<kernels::CounterSession> open_counters(kernels::Device& device);

// Counters of each M (status ok or throttled in the CSV) of `m_values`, with the operands
// the sweep timed (same seeds); M values the CSV holds no good row for are skipped. `cold`:
// before every counter pass the last-level cache is flushed and the device waited for, as
// before a cold timed sample.
std::vector<KernelCounters> collect_counters(kernels::Device& device, kernels::CounterSession& counters,
                                             const kernels::KernelEntry& kernel, const GemmProblem& problem,
                                             const std::filesystem::path& csv, const std::vector<int64_t>& m_values,
                                             uint64_t seed, bool cold);

// For every file of `plan` (after run_sweep): collects and merges its counters file.
// Returns the counters files written.
std::vector<std::filesystem::path> run_counter_pass(kernels::Device& device, kernels::CounterSession& counters,
                                                    const SweepPlan& plan);

}  // namespace shapescope::profiler
