#include "profiler/sidecar.hpp"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/shape_axes.hpp"
#include "kernels/cpu/cpu_system.hpp"
#include "profiler/build_commit.hpp"
#include "profiler/operand_sets.hpp"
#include "profiler/stopping_criterion.hpp"

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

Sidecar sidecar_of(const SidecarContent& c) {
  Sidecar sidecar;
  sidecar.shapescope_version = SHAPESCOPE_VERSION;
  sidecar.git_commit = kBuildCommit;  // the build's commit (profiler/build_commit.hpp)
  sidecar.date_utc = utc_now_iso8601();
  sidecar.command_line = c.command_line;
  sidecar.device = {c.device.name,          c.device.backend,          c.device.multiprocessors,
                    c.device.l2_bytes,      c.device.memory_bytes,     c.device.driver_version,
                    c.device.runtime_version, c.device.max_sm_clock_mhz, c.device.uuid, c.device.copy_tb_per_s};
  sidecar.cpu_model = kernels::cpu::cpu_model_name();
  if (c.clock) sidecar.clock_at_start = SidecarClock{c.clock->sm_clock_mhz, c.clock->temperature_c, c.clock->power_w};
  if (c.grouped_kernel) {
    sidecar.kernel = {c.grouped_kernel->name, c.grouped_kernel->dtype, c.grouped_kernel->formats,
                      c.grouped_kernel->description};
  } else {
    sidecar.kernel = {c.kernel->name, c.kernel->dtype, c.kernel->formats, c.kernel->description};
  }
  sidecar.problem = {c.problem.model,   c.problem.module,      c.problem.tp,      c.problem.n,
                     c.problem.k,       c.problem.batch_count, c.problem.experts, c.problem.top_k,
                     c.problem.cuts_scale_block, is_raw_shape(c.problem), std::string(to_string(c.problem.format))};
  sidecar.peak = {c.peak.tflops, c.peak.source};
  SidecarMeasurement& measurement = sidecar.measurement;
  measurement.warmup_runs = c.measure.warmup_runs;
  measurement.min_samples = c.measure.min_samples;
  measurement.max_samples = c.measure.max_samples;
  measurement.target_rel_stderr = c.measure.target_rel_stderr;
  measurement.stopping_criterion = c.measure.stopping_criterion;
  measurement.criterion_params = stopping_criterion_params(c.measure);
  measurement.max_seconds_per_point = c.measure.max_seconds_per_point;
  measurement.hot = c.measure.hot;
  measurement.seed = c.seed;
  measurement.timing = kernels::to_string(c.measure.timing);
  measurement.programmatic_launch = c.programmatic_launch;
  measurement.blocking_kernel = c.measure.blocking_kernel;
  measurement.graph_rotation = {{"max_operand_sets", kMaxOperandSets},
                                {"target_l2_multiple", kRotationL2Multiple},
                                {"memory_share", kRotationMemoryShare}};
  measurement.timing_floors = c.floors.to_json();
  sidecar.measurement_fingerprint = fingerprint_json(c.fingerprint);
  sidecar.sweep = {c.timing.wall_s, c.timing.setup_s, c.timing.timed_s, c.timing.overhead(), c.interrupted,
                   std::nullopt};
  if (c.phases.points() > 0) sidecar.sweep.point_phases = c.phases.to_json();
  sidecar.grouped = c.grouped;
  sidecar.format = format_json(c.format);
  sidecar.m_search = c.m_search;
  return sidecar;
}

}  // namespace

nlohmann::json sidecar_json(const SidecarContent& content) { return shapescope::sidecar_json(sidecar_of(content)); }

void write_sidecar(const std::filesystem::path& csv_path, const SidecarContent& content) {
  write_file_atomically(sidecar_path(csv_path), json_text(sidecar_json(content), 2));
}

}  // namespace shapescope::profiler
