#include "profiler/counter_pass.hpp"

#include <map>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

namespace {

std::vector<std::string> split_launched(const std::string& launched) {
  std::vector<std::string> names;
  constexpr std::string_view separator = "; ";  // the kernel timer's `launched` list
  for (std::size_t begin = 0; begin < launched.size();) {
    const std::size_t end = std::min(launched.find(separator, begin), launched.size());
    names.push_back(launched.substr(begin, end - begin));
    begin = end + separator.size();
  }
  return names;
}

}  // namespace

std::unique_ptr<kernels::CounterSession> open_counters(kernels::Device& device) {
  std::unique_ptr<kernels::CounterSession> session;
  try {
    session = device.counters();
  } catch (const std::exception& error) {
    throw UserError(fmt::format("--counters: {}", error.what()));
  }
  if (!session)
    throw UserError(fmt::format("--counters: the {} backend has no hardware counters; use a GPU or drop --counters",
                                device.info().backend));
  return session;
}

std::vector<KernelCounters> collect_counters(kernels::Device& device, kernels::CounterSession& counters,
                                             const kernels::KernelEntry& kernel, const GemmProblem& problem,
                                             const std::filesystem::path& csv, const std::vector<int64_t>& m_values,
                                             uint64_t seed, bool cold) {
  std::map<int64_t, bool> good;  // M -> the CSV holds an ok (or throttled) row
  for (const ProfileRow& row : read_profile_csv(csv))
    good[row.batch] = good[row.batch] || is_measured_status(row.status);
  std::unique_ptr<kernels::GemmSession> session =
      kernel.open(device, kernels::WeightShape{problem.n, problem.k, problem.batch_count}, seed);
  std::vector<KernelCounters> collected;
  for (const int64_t m : m_values) {
    if (interrupt_requested()) break;
    if (!good[m]) continue;
    std::unique_ptr<kernels::PreparedGemm> gemm = session->prepare(m, activation_seed(seed, m));
    // The names of what one run launches, from the kernel timer (CUPTI activity on the GPU),
    // traced apart from the counted run: tracing ends before counting starts.
    std::string launched;
    {
      std::unique_ptr<kernels::Timer> tracer = device.make_kernel_timer();
      tracer->start();
      gemm->run();
      tracer->stop();
      tracer->elapsed_us();
      launched = tracer->launched();
    }
    // Every pass starts as a cold timed sample does: the operands evicted by the read pass,
    // every line dirtied before (operand fills, the traced run, the pass before) written
    // back during it, and the GPU idle, so the pass counts its own run only.
    const auto before_each_pass = [&device, cold] {
      if (!cold) return;
      device.flush_cache();
      device.synchronize();
    };
    KernelCounters row = counters.collect(*gemm, before_each_pass);
    row.m = m;
    row.min_bytes = gemm->min_bytes();
    row.kernels = split_launched(launched);
    collected.push_back(std::move(row));
  }
  return collected;
}

std::vector<std::filesystem::path> run_counter_pass(kernels::Device& device, kernels::CounterSession& counters,
                                                    const SweepPlan& plan) {
  std::vector<std::filesystem::path> written;
  for (const GemmProblem& problem : plan.problems) {
    for (const std::string& kernel_name : plan.kernels) {
      if (interrupt_requested()) return written;
      const std::filesystem::path csv = plan.out_dir / profile_file_name(problem, kernel_name, plan.measure.timing);
      if (!std::filesystem::exists(csv)) continue;
      const std::vector<KernelCounters> rows = collect_counters(device, counters, kernels::find_kernel(kernel_name),
                                                                problem, csv, plan.m_values, plan.seed,
                                                                !plan.measure.hot);
      if (rows.empty()) continue;
      write_counters_file(counters_path(csv), rows);
      written.push_back(counters_path(csv));
    }
  }
  return written;
}

}  // namespace shapescope::profiler
