#include "profiler/sidecar.hpp"

#include <chrono>
#include <fstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/shape_axes.hpp"
#include "common/user_error.hpp"
#include "kernels/cpu/cpu_system.hpp"
#include "profiler/build_commit.hpp"
#include "profiler/operand_sets.hpp"

namespace shapescope::profiler {

std::string utc_now_iso8601() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

namespace {

nlohmann::json format_json(BlockFormatId id) {
  const BlockFormat& format = block_format(id);
  return {{"name", format.name},
          {"activations", describe(format.activations)},
          {"weights", describe(format.weights)},
          {"weight_only", format.weight_only},
          {"dtype", format.dtype}};
}

}  // namespace

nlohmann::json sidecar_json(const SidecarContent& c) {
  nlohmann::json device = {{"name", c.device.name},
                           {"backend", c.device.backend},
                           {"multiprocessors", c.device.multiprocessors},
                           {"l2_bytes", c.device.l2_bytes},
                           {"memory_bytes", c.device.memory_bytes},
                           {"driver_version", c.device.driver_version},
                           {"runtime_version", c.device.runtime_version},
                           {"max_sm_clock_mhz", c.device.max_sm_clock_mhz},
                           {"uuid", c.device.uuid},
                           {"copy_tb_per_s", c.device.copy_tb_per_s}};
  nlohmann::json clock = nullptr;
  if (c.clock) {
    clock = {{"sm_clock_mhz", c.clock->sm_clock_mhz},
             {"temperature_c", c.clock->temperature_c},
             {"power_w", c.clock->power_w}};
  }
  const auto kernel = [&c]() -> nlohmann::json {
    if (c.grouped_kernel)
      return {{"name", c.grouped_kernel->name}, {"dtype", c.grouped_kernel->dtype},
              {"formats", c.grouped_kernel->formats}, {"description", c.grouped_kernel->description}};
    return {{"name", c.kernel->name}, {"dtype", c.kernel->dtype}, {"formats", c.kernel->formats},
            {"description", c.kernel->description}};
  };
  nlohmann::json content = {
      {"shapescope_version", SHAPESCOPE_VERSION},
      {"git_commit", kBuildCommit},  // the build's commit (profiler/build_commit.hpp)
      {"date_utc", utc_now_iso8601()},
      {"command_line", c.command_line},
      {"device", device},
      {"cpu_model", kernels::cpu::cpu_model_name()},
      {"clock_at_start", clock},
      {"kernel", kernel()},
      {"problem",
       {{"model", c.problem.model}, {"module", c.problem.module}, {"tp", c.problem.tp}, {"n", c.problem.n},
        {"k", c.problem.k}, {"batch_count", c.problem.batch_count}, {"experts", c.problem.experts},
        {"top_k", c.problem.top_k}, {"cuts_scale_block", c.problem.cuts_scale_block},
        {"raw_shape", is_raw_shape(c.problem)}, {"format", to_string(c.problem.format)}}},
      {"format", format_json(c.format)},  // profile --shape: no model, module "" and tp 1
      {"peak", {{"tflops", c.peak.tflops}, {"source", c.peak.source}}},
      {"measurement",
       {{"warmup_runs", c.measure.warmup_runs}, {"min_samples", c.measure.min_samples},
        {"max_samples", c.measure.max_samples}, {"target_rel_stderr", c.measure.target_rel_stderr},
        {"max_seconds_per_point", c.measure.max_seconds_per_point}, {"hot", c.measure.hot},
        {"seed", c.seed}, {"timing", kernels::to_string(c.measure.timing)},
        {"programmatic_launch", c.programmatic_launch},
        {"graph_rotation",
         {{"max_operand_sets", kMaxOperandSets}, {"target_l2_multiple", kRotationL2Multiple},
          {"memory_share", kRotationMemoryShare}}},
        {"timing_floors", c.floors.to_json()}}},
      {"measurement_fingerprint", fingerprint_json(c.fingerprint)},
      {"sweep",
       {{"wall_s", c.timing.wall_s}, {"setup_s", c.timing.setup_s}, {"timed_kernel_s", c.timing.timed_s},
        {"overhead_ratio", c.timing.overhead()}, {"interrupted", c.interrupted}}},
  };
  if (c.phases.points() > 0) content["sweep"]["point_phases"] = c.phases.to_json();
  if (c.grouped) content["grouped"] = *c.grouped;
  return content;
}

std::filesystem::path sidecar_path(const std::filesystem::path& csv_path) {
  std::filesystem::path path = csv_path;
  return path.replace_extension(".json");
}

void write_sidecar(const std::filesystem::path& csv_path, const SidecarContent& content) {
  write_file_atomically(sidecar_path(csv_path), json_text(sidecar_json(content), 2));
}

std::optional<nlohmann::json> read_sidecar(const std::filesystem::path& csv_path) {
  const std::filesystem::path path = sidecar_path(csv_path);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    throw UserError(fmt::format("{}: not valid JSON; fix or delete the sidecar (and its CSV) to measure again",
                                path.string()));
  }
  return parsed;
}

}  // namespace shapescope::profiler
