#include "profiler/resume.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

namespace {

constexpr const char* kMeasureAnew = "use another --out, or delete the file to measure it anew";

}  // namespace

std::vector<ProfileRow> resumable_rows(const std::filesystem::path& csv, const MeasurementFingerprint& fingerprint,
                                       const std::vector<int64_t>& wanted_m) {
  std::vector<ProfileRow> rows = read_profile_csv(csv);
  if (rows.empty()) return rows;  // nothing measured: nothing to mix
  std::set<int64_t> measured;
  for (const ProfileRow& row : rows) measured.insert(row.batch);
  if (std::all_of(wanted_m.begin(), wanted_m.end(), [&](int64_t m) { return measured.count(m) > 0; })) {
    return rows;  // every M asked for is in the file: nothing is measured, so nothing is mixed
  }
  const std::optional<nlohmann::json> sidecar = read_sidecar(csv);
  if (!sidecar) {
    throw UserError(fmt::format("cannot resume {}: it has no sidecar {}, so how its rows were measured is unknown; {}",
                                csv.string(), sidecar_path(csv).filename().string(), kMeasureAnew));
  }
  const auto recorded = sidecar->find(sidecar_key::kMeasurementFingerprint);
  if (recorded == sidecar->end()) {
    throw UserError(fmt::format("cannot resume {}: its sidecar records no measurement fingerprint (an older "
                                "shapescope wrote it); {}",
                                csv.string(), kMeasureAnew));
  }
  const std::string difference = fingerprint_difference(*recorded, fingerprint);
  if (!difference.empty()) {
    throw UserError(fmt::format("cannot resume {}: its rows were measured otherwise ({}); rerun with the file's "
                                "options, or {}",
                                csv.string(), difference, kMeasureAnew));
  }
  return rows;
}

void check_resumable(const SweepPlan& plan, const kernels::DeviceInfo& device) {
  for (const GemmProblem& problem : plan.problems) {
    for (const std::string& kernel : plan.kernels) {
      const std::string name = profile_file_name(problem, kernel, plan.measure.timing);
      resumable_rows(plan.out_dir / name,
                     measurement_fingerprint(plan.measure, plan.seed, plan.programmatic_launch, kernel, device,
                                             std::max(1, plan.repeat)),
                     m_values_of_file(plan, name));
    }
  }
}

}  // namespace shapescope::profiler
