#include "common/sidecar_schema.hpp"

#include <fstream>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

// One key of a section: its name and the member of the record it holds. Each section's writer and reader
// come from its table below, as the CSV's columns do in profile_schema.cpp.
template <typename Record>
struct Key {
  const char* name;
  std::variant<int64_t Record::*, uint64_t Record::*, double Record::*, bool Record::*, std::string Record::*,
               json Record::*, std::optional<json> Record::*>
      member;
};

template <typename Record>
using Keys = std::vector<Key<Record>>;

const Keys<SidecarDevice>& device_keys() {
  using R = SidecarDevice;
  static const Keys<R> keys = {
      {"name", &R::name}, {"backend", &R::backend}, {"multiprocessors", &R::multiprocessors},
      {"l2_bytes", &R::l2_bytes}, {"memory_bytes", &R::memory_bytes}, {"driver_version", &R::driver_version},
      {"runtime_version", &R::runtime_version}, {"max_sm_clock_mhz", &R::max_sm_clock_mhz}, {"uuid", &R::uuid},
      {"copy_tb_per_s", &R::copy_tb_per_s},
  };
  return keys;
}

const Keys<SidecarClock>& clock_keys() {
  using R = SidecarClock;
  static const Keys<R> keys = {
      {"sm_clock_mhz", &R::sm_clock_mhz}, {"temperature_c", &R::temperature_c}, {"power_w", &R::power_w}};
  return keys;
}

const Keys<SidecarKernel>& kernel_keys() {
  using R = SidecarKernel;
  static const Keys<R> keys = {
      {"name", &R::name}, {"dtype", &R::dtype}, {"formats", &R::formats}, {"description", &R::description}};
  return keys;
}

const Keys<SidecarProblem>& problem_keys() {
  using R = SidecarProblem;
  static const Keys<R> keys = {
      {"model", &R::model}, {"module", &R::module}, {"tp", &R::tp}, {"n", &R::n}, {"k", &R::k},
      {"batch_count", &R::batch_count}, {"experts", &R::experts}, {"top_k", &R::top_k},
      {"cuts_scale_block", &R::cuts_scale_block}, {"raw_shape", &R::raw_shape}, {"format", &R::format},
  };
  return keys;
}

const Keys<SidecarPeak>& peak_keys() {
  using R = SidecarPeak;
  static const Keys<R> keys = {{"tflops", &R::tflops}, {"source", &R::source}};
  return keys;
}

const Keys<SidecarMeasurement>& measurement_keys() {
  using R = SidecarMeasurement;
  static const Keys<R> keys = {
      {"warmup_runs", &R::warmup_runs}, {"min_samples", &R::min_samples}, {"max_samples", &R::max_samples},
      {"target_rel_stderr", &R::target_rel_stderr}, {"max_seconds_per_point", &R::max_seconds_per_point},
      {"stopping_criterion", &R::stopping_criterion}, {"criterion_params", &R::criterion_params},
      {"hot", &R::hot}, {"seed", &R::seed}, {"timing", &R::timing},
      {"programmatic_launch", &R::programmatic_launch}, {"blocking_kernel", &R::blocking_kernel},
      {"graph_rotation", &R::graph_rotation},
      {"timing_floors", &R::timing_floors},
  };
  return keys;
}

const Keys<SidecarSweep>& sweep_keys() {
  using R = SidecarSweep;
  static const Keys<R> keys = {
      {"wall_s", &R::wall_s}, {"setup_s", &R::setup_s}, {"timed_kernel_s", &R::timed_kernel_s},
      {"overhead_ratio", &R::overhead_ratio}, {sidecar_key::kInterrupted, &R::interrupted},
      {"point_phases", &R::point_phases},
  };
  return keys;
}

const Keys<Sidecar>& top_keys() {
  using R = Sidecar;
  static const Keys<R> keys = {
      {"shapescope_version", &R::shapescope_version}, {"git_commit", &R::git_commit}, {"date_utc", &R::date_utc},
      {"command_line", &R::command_line}, {"cpu_model", &R::cpu_model},
      {sidecar_key::kMeasurementFingerprint, &R::measurement_fingerprint}, {"grouped", &R::grouped},
      {"format", &R::format}, {"m_search", &R::m_search},
  };
  return keys;
}

// The sections' keys (the others are in sidecar_key).
using sidecar_key::kClockAtStart;
using sidecar_key::kDevice;
using sidecar_key::kPeak;
using sidecar_key::kSweep;
constexpr const char* kKernel = "kernel";
constexpr const char* kProblem = "problem";
constexpr const char* kMeasurement = "measurement";

// An absent optional is no key at all.
template <typename Record>
json object_of(const Record& record, const Keys<Record>& keys) {
  json object = json::object();
  for (const Key<Record>& key : keys) {
    std::visit(
        [&](auto member) {
          const auto& value = record.*member;
          using Value = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::optional<json>>) {
            if (value) object[key.name] = *value;
          } else {
            object[key.name] = value;
          }
        },
        key.member);
  }
  return object;
}

// A key holding another type than its declaration's keeps the default.
template <typename Value>
bool holds(const json& value) {
  if constexpr (std::is_same_v<Value, int64_t>) return value.is_number_integer();
  if constexpr (std::is_same_v<Value, uint64_t>) return value.is_number_unsigned();
  if constexpr (std::is_same_v<Value, double>) return value.is_number();
  if constexpr (std::is_same_v<Value, bool>) return value.is_boolean();
  if constexpr (std::is_same_v<Value, std::string>) return value.is_string();
  return true;  // JSON carried as it is
}

template <typename Record>
void read_object(const json& object, const Keys<Record>& keys, Record& record) {
  if (!object.is_object()) return;
  for (const Key<Record>& key : keys) {
    const auto found = object.find(key.name);
    if (found == object.end()) continue;
    std::visit(
        [&](auto member) {
          auto& target = record.*member;
          using Value = std::remove_cvref_t<decltype(target)>;
          if constexpr (std::is_same_v<Value, std::optional<json>>) {
            target = *found;
          } else if (holds<Value>(*found)) {
            target = found->template get<Value>();
          }
        },
        key.member);
  }
}

template <typename Record>
void read_section(const json& sidecar, const char* section, const Keys<Record>& keys, Record& record) {
  const auto found = sidecar.find(section);
  if (found != sidecar.end()) read_object(*found, keys, record);
}

}  // namespace

json sidecar_json(const Sidecar& sidecar) {
  json content = object_of(sidecar, top_keys());
  content[kDevice] = object_of(sidecar.device, device_keys());
  content[kClockAtStart] = sidecar.clock_at_start ? object_of(*sidecar.clock_at_start, clock_keys()) : json(nullptr);
  content[kKernel] = object_of(sidecar.kernel, kernel_keys());
  content[kProblem] = object_of(sidecar.problem, problem_keys());
  content[kPeak] = object_of(sidecar.peak, peak_keys());
  content[kMeasurement] = object_of(sidecar.measurement, measurement_keys());
  content[kSweep] = object_of(sidecar.sweep, sweep_keys());
  return content;
}

Sidecar parse_sidecar(const json& content) {
  Sidecar sidecar;
  if (!content.is_object()) return sidecar;
  read_object(content, top_keys(), sidecar);
  read_section(content, kDevice, device_keys(), sidecar.device);
  if (const auto clock = content.find(kClockAtStart); clock != content.end() && clock->is_object())
    read_object(*clock, clock_keys(), sidecar.clock_at_start.emplace());
  read_section(content, kKernel, kernel_keys(), sidecar.kernel);
  read_section(content, kProblem, problem_keys(), sidecar.problem);
  read_section(content, kPeak, peak_keys(), sidecar.peak);
  read_section(content, kMeasurement, measurement_keys(), sidecar.measurement);
  read_section(content, kSweep, sweep_keys(), sidecar.sweep);
  return sidecar;
}

std::filesystem::path sidecar_path(const std::filesystem::path& csv_path) {
  std::filesystem::path path = csv_path;
  return path.replace_extension(".json");
}

std::optional<json> read_sidecar(const std::filesystem::path& csv_path) {
  const std::filesystem::path path = sidecar_path(csv_path);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  json parsed = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    throw UserError(fmt::format("{}: not valid JSON; fix or delete the sidecar (and its CSV, to measure it again)",
                                path.string()));
  }
  return parsed;
}

}  // namespace shapescope
