// The options a profile's rows depend on. Rows measured under different values
// (timing mode, programmatic launch, cold and hot, the blocking kernel, other threads, another seed,
// kernel, device or build, another --repeat) must not share one file: the sidecar records the
// fingerprint and a resumed run compares it field by field. A new option of that kind is one line in measurement_fingerprint().
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

struct FingerprintField {
  std::string name;
  std::string value;
};
using MeasurementFingerprint = std::vector<FingerprintField>;

MeasurementFingerprint measurement_fingerprint(const MeasureOptions& measure, uint64_t seed, bool programmatic_launch,
                                               const std::string& kernel, const kernels::DeviceInfo& device,
                                               int passes = 1);

// {"name": "value", ...}, the sidecar's "measurement_fingerprint".
nlohmann::json fingerprint_json(const MeasurementFingerprint& fingerprint);

// "" when `recorded` (a sidecar's "measurement_fingerprint") holds exactly these fields and values,
// else the first difference, e.g. "timing: cold in the file, hot in this run".
std::string fingerprint_difference(const nlohmann::json& recorded, const MeasurementFingerprint& current);

}  // namespace shapescope::profiler
