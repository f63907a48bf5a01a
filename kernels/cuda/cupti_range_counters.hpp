// Hardware counters of one run through CUPTI's range profiler (CUDA 12.6+): auto ranges
// (one per kernel), user replay (we rerun the whole run once per counter pass, each pass
// after the caller's preparation: a flush and a wait for cold counts), and the profiler
// host API to turn metric names into a configuration and counter data into values. The
// metric set is common/kernel_counters.hpp's; each metric is checked against the chip at
// run time, and one the chip lacks is reported missing, not fatal.
//
// Not kernel replay: there CUPTI saves the memory a kernel may write before its first pass
// (and restores it before each further one) after any flush of ours, and nothing can come
// between that copy and the kernel; the counted kernel then paid the write-back of lines
// dirtied before it (DRAM writes x1.5-9 of Nsight Compute's with its caches flushed per
// pass). A run needs no restoring: it rewrites its outputs, and the timing modes rerun it too.
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/kernel_counters.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

class CuptiRangeCounters final : public CounterSession {
 public:
  // Loads libcupti, checks that this user may read counters on `ordinal`'s device and
  // builds the configuration; the range profiler itself is enabled at the first collect(),
  // so timing done before it runs untouched. Throws std::runtime_error with one line.
  explicit CuptiRangeCounters(int ordinal);
  ~CuptiRangeCounters() override;
  CuptiRangeCounters(const CuptiRangeCounters&) = delete;
  CuptiRangeCounters& operator=(const CuptiRangeCounters&) = delete;

  KernelCounters collect(PreparedGemm& run, const std::function<void()>& before_each_pass) override;

 private:
  struct Api;
  void enable();
  KernelCounters collect_once(PreparedGemm& run, const std::function<void()>& before_each_pass);
  std::unique_ptr<Api> api_;
  CUcontext context_ = nullptr;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  std::vector<std::string> metric_names_;  // those the chip has, in counter_metrics() order
  std::vector<const char*> metric_pointers_;
  std::vector<std::string> missing_;
  std::vector<uint8_t> config_;
  std::vector<uint8_t> counter_data_;
};

}  // namespace shapescope::kernels::cuda
