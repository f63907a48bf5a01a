#include "profiler/measurement_fingerprint.hpp"

#include <fmt/format.h>

#include "profiler/build_commit.hpp"

namespace shapescope::profiler {

MeasurementFingerprint measurement_fingerprint(const MeasureOptions& measure, uint64_t seed, bool programmatic_launch,
                                               const std::string& kernel, const kernels::DeviceInfo& device,
                                               int passes) {
  MeasurementFingerprint fingerprint = {
      {"kernel", kernel},
      {"device", device.name},
      {"timing", kernels::to_string(measure.timing)},
      {"programmatic_launch", programmatic_launch ? "on" : "off"},
      {"cache", measure.hot ? "hot" : "cold"},
      {"seed", std::to_string(seed)},
      {"build", kBuildCommit},
  };
  // The CPU's threads change its times; a GPU's SM count is fixed by the device name.
  if (device.backend == "cpu") fingerprint.push_back({"threads", std::to_string(device.multiprocessors)});
  // Cold event samples behind stream holds are not timed as without them; without, no field, as files before it.
  if (holds_stream(measure)) fingerprint.push_back({"blocking_kernel", "on"});
  // A row's median over R passes is not one pass's reading; one pass adds no field, as files before --repeat.
  if (passes > 1) fingerprint.push_back({"passes", std::to_string(passes)});
  return fingerprint;
}

nlohmann::json fingerprint_json(const MeasurementFingerprint& fingerprint) {
  nlohmann::json object = nlohmann::json::object();
  for (const FingerprintField& field : fingerprint) object[field.name] = field.value;
  return object;
}

std::string fingerprint_difference(const nlohmann::json& recorded, const MeasurementFingerprint& current) {
  if (!recorded.is_object()) return "no measurement fingerprint in the file's sidecar";
  for (const FingerprintField& field : current) {
    const auto found = recorded.find(field.name);
    const std::string before = found == recorded.end() ? "(none)" : found->is_string() ? found->get<std::string>()
                                                                                     : found->dump();
    if (before != field.value) {
      return fmt::format("{}: {} in the file, {} in this run", field.name, before, field.value);
    }
  }
  for (const auto& [name, value] : recorded.items()) {
    bool known = false;
    for (const FingerprintField& field : current) known = known || field.name == name;
    if (!known) return fmt::format("{}: {} in the file, (none) in this run", name, value.dump());
  }
  return "";
}

}  // namespace shapescope::profiler
