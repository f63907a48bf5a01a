#include "profiler/verify_plans.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"
#include "kernels/synthetic_operands.hpp"
#if SHAPESCOPE_HAVE_CUDA
#include "kernels/cuda/gemm_group.hpp"
#endif

namespace shapescope::profiler {

std::string default_verify_output(const std::string& report_path) {
  const std::string suffix = ".json";
  const bool has_suffix = report_path.size() > suffix.size() &&
                          report_path.compare(report_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (has_suffix ? report_path.substr(0, report_path.size() - suffix.size()) : report_path) + ".verify.json";
}

#if SHAPESCOPE_HAVE_CUDA

namespace {

struct PlanMeasurement {
  VerifiedPlan verified;
  double worst_rel_err = 0;
  std::string note;
};

// One plan: the monolithic M, the parts alone (prediction), serial and two-stream groups.
PlanMeasurement measure_plan(kernels::Device& device, kernels::GemmSession& session, const ReportedPlan& reported,
                             const VerifyRequest& request) {
  PlanMeasurement result;
  VerifiedPlan& verified = result.verified;
  verified.series = reported.series;
  verified.m = reported.m;
  verified.parts = reported.parts;

  auto checked = [&](kernels::PreparedGemm& gemm, const std::string& what) {
    const kernels::CheckResult check = gemm.check();
    if (!(check.rel_err <= result.worst_rel_err)) result.worst_rel_err = check.rel_err;
    if (!check.passed(request.check_threshold) && result.note.empty())
      result.note = fmt::format("{} failed its check (rel_err {:.3g}, {} unwritten)", what, check.rel_err,
                                check.unwritten);
  };
  uint64_t seed = kernels::synthetic::mix(request.seed ^ uint64_t(reported.m));
  const auto monolithic = session.prepare(reported.m, ++seed);
  checked(*monolithic, fmt::format("M={}", reported.m));
  verified.monolithic_us = measure(device, *monolithic, request.measure).median_us;

  std::vector<std::unique_ptr<kernels::PreparedGemm>> parts;
  std::vector<kernels::PreparedGemm*> part_pointers;
  verified.predicted_us = 0;
  for (const int64_t part_m : reported.parts) {
    parts.push_back(session.prepare(part_m, ++seed));
    checked(*parts.back(), fmt::format("part M={}", part_m));
    verified.predicted_us += measure(device, *parts.back(), request.measure).median_us;
    part_pointers.push_back(parts.back().get());
  }
  kernels::cuda::GemmGroup serial(device, part_pointers, kernels::cuda::GroupLaunch::serial);
  kernels::cuda::GemmGroup two_streams(device, part_pointers, kernels::cuda::GroupLaunch::two_streams);
  checked(two_streams, "the two-stream group");  // the fork/join must leave every part's output right
  verified.measured_serial_us = measure(device, serial, request.measure).median_us;
  verified.measured_two_streams_us = measure(device, two_streams, request.measure).median_us;
  verified.verdict = plan_verdict(verified.predicted_gain(), verified.measured_gain());
  return result;
}

}  // namespace

VerifyResults verify_plans(kernels::Device& device, const VerifyRequest& request) {
  if (device.kind() != kernels::BackendKind::cuda)
    throw UserError("--verify-plans runs plans on two CUDA streams: use --backend cuda on a machine with a GPU");
  const std::vector<ReportedPlan> plans = read_reported_plans(request.report_path, request.max_plans_per_series);
  const std::string out_path = request.out_path.empty() ? default_verify_output(request.report_path) : request.out_path;

  VerifyResults results;
  results.source = out_path;
  results.device = device.info().name;
  nlohmann::json out = verify_results_json(results.device, request.report_path);
  // Plans of one series share one session: the weights are prepared once.
  std::map<std::string, std::unique_ptr<kernels::GemmSession>> sessions;
  for (const ReportedPlan& plan : plans) {
    auto skip = [&](const std::string& why) {
      fmt::print(stderr, "verify-plans: {} M={}: skipped, {}\n", plan.series, plan.m, why);
      out["skipped"].push_back({{"series", plan.series}, {"m", plan.m}, {"reason", why}});
    };
    const auto& registry = kernels::kernel_registry();
    const auto entry = std::find_if(registry.begin(), registry.end(),
                                    [&](const kernels::KernelEntry& e) { return e.name == plan.kernel; });
    if (entry == registry.end() || entry->backend != kernels::BackendKind::cuda) {
      skip(fmt::format("kernel '{}' is not a CUDA kernel of this binary", plan.kernel));
      continue;
    }
    if (plan.n <= 0 || plan.k <= 0) {
      skip("the report gives no N and K for this series");
      continue;
    }
    try {
      auto& session = sessions[plan.series];
      if (!session) session = entry->open(device, {plan.n, plan.k, plan.batch_count}, request.seed);
      const PlanMeasurement measured = measure_plan(device, *session, plan, request);
      fmt::print(stderr, "verify-plans: {} M={} -> {}: monolithic {:.2f} us, predicted {:.2f}, serial {:.2f}, "
                 "two streams {:.2f}: {}\n", plan.series, plan.m, fmt::join(plan.parts, "+"),
                 measured.verified.monolithic_us, measured.verified.predicted_us,
                 measured.verified.measured_serial_us, measured.verified.measured_two_streams_us,
                 measured.verified.verdict);
      out["plans"].push_back(verified_plan_json(plan, measured.verified, measured.worst_rel_err, measured.note));
      results.plans.push_back(measured.verified);
    } catch (const kernels::UnsupportedShape& refused) {
      skip(refused.what());
    }
  }
  write_file_atomically(out_path, json_text(out, 2));
  return results;
}

#else

VerifyResults verify_plans(kernels::Device&, const VerifyRequest&) {
  throw UserError("--verify-plans needs the CUDA backend: rebuild with nvcc present (-DSHAPESCOPE_CUDA=ON)");
}

#endif

}  // namespace shapescope::profiler
