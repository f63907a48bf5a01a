// grouped_bench: our grouped block-scaled FP8 kernel (fp8_blockscale_grouped) against the
// cuBLASLt loops (one call per expert: block-scaled FP8 and dense bf16) on the same
// device in the same run, every point checked against the float64 reference first and
// timed by the measurement core (profiler/measure.hpp), by default as a CUDA graph
// rotating over operand copies (each with its own experts' weights) as an engine's
// decode graph runs it. Sections:
//   decode    DeepSeek-V3 experts at EP8 (32 of 256 experts per GPU, top-8), 1..256 tokens,
//             uniform routing, contiguous (align 128) and masked
//   prefill   the same at 4096..16384 tokens, contiguous
//   deepgemm  DeepGEMM's published H800 grouped problems, our TFLOP/s beside theirs
//   preset    --grouped-preset nvfp4_targets as FP8 at align 1 (as published) and 4, each as a fraction of its
//             speed of light:
//             max(useful FLOPs at the datasheet FP8 peak, fewest bytes at the copy bandwidth
//             measured in this run) / our time
// Ratios are baseline time / our time: above 1 means ours is faster.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_main.hpp"
#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/device_peaks.hpp"
#include "common/user_error.hpp"
#include "kernels/copy_bandwidth.hpp"
#include "kernels/grouped_gemm.hpp"
#include "profiler/grouped_presets.hpp"
#include "profiler/grouped_setup.hpp"
#include "profiler/measure.hpp"
#include "profiler/session_pool.hpp"
#include "profiler/moe_routing.hpp"

namespace shapescope {
namespace {

using kernels::GroupedShape;
using kernels::GroupLayout;

constexpr const char* kOurs = "fp8_blockscale_grouped";
const std::vector<std::string> kBaselines = {"cublaslt_fp8_blockscale_grouped_loop", "cublaslt_bf16_grouped_loop"};
const std::vector<std::string> kBaselineColumns = {"x lt_fp8_loop", "x lt_bf16_loop"};  // baseline time / ours

// DeepSeek-V3's routed experts at EP8: 256 experts, top-8, 32 per GPU.
constexpr int64_t kDeepseekExperts = 256, kDeepseekTopK = 8, kDeepseekEp = 8;
struct ExpertLayer {
  std::string label;
  int64_t n, k;
};
const std::vector<ExpertLayer> kDeepseekLayers = {{"dsv3.gate_up", 4096, 7168}, {"dsv3.down", 7168, 2048}};

// DeepGEMM's README (H800): grouped GEMM TFLOP/s for these problems.
struct PublishedProblem {
  std::string label;
  int64_t groups, rows, n, k;
  GroupLayout layout;
  double published_tflops;
};
const std::vector<PublishedProblem> kDeepGemmH800 = {
    {"contiguous 4x8192", 4, 8192, 4096, 7168, GroupLayout::contiguous, 1346},
    {"contiguous 8x4096", 8, 4096, 7168, 2048, GroupLayout::contiguous, 1214},
    {"masked 4x256", 4, 256, 4096, 7168, GroupLayout::masked, 932},
    {"masked 2x512", 2, 512, 4096, 7168, GroupLayout::masked, 1040}};

struct Case {
  std::string section, label;
  GroupedShape shape;
  double published_tflops = NAN;
};

struct Timed {
  std::string status = "-";  // ok | numerical_fail | unsupported | error
  std::string note;
  double median_us = NAN, rel_err = NAN, min_bytes = 0;
  int64_t executed_rows = 0;
  int operand_sets = 1;
};

std::vector<Case> cases_for(const std::vector<std::string>& sections, const std::vector<int64_t>& decode_tokens,
                            const std::vector<int64_t>& prefill_tokens) {
  const auto wanted = [&](const char* name) { return std::find(sections.begin(), sections.end(), name) != sections.end(); };
  std::vector<Case> cases;
  const profiler::Router router(profiler::parse_routing("uniform"), kDeepseekExperts, kDeepseekTopK, 1);
  const auto routed = [&](int64_t tokens) {
    return profiler::local_rows(router.expert_rows(tokens, profiler::token_seed_for(1, tokens)), kDeepseekEp);
  };
  for (const ExpertLayer& layer : kDeepseekLayers) {
    if (wanted("decode")) {
      for (const int64_t tokens : decode_tokens) {
        cases.push_back({"decode", fmt::format("{} T={}", layer.label, tokens),
                         lay_out_groups(layer.n, layer.k, routed(tokens), GroupLayout::contiguous, 128, 128)});
        cases.push_back({"decode", fmt::format("{} T={}", layer.label, tokens),
                         lay_out_groups(layer.n, layer.k, routed(tokens), GroupLayout::masked, 64, 64)});
      }
    }
    if (wanted("prefill")) {
      for (const int64_t tokens : prefill_tokens)
        cases.push_back({"prefill", fmt::format("{} T={}", layer.label, tokens),
                         lay_out_groups(layer.n, layer.k, routed(tokens), GroupLayout::contiguous, 128, 128)});
    }
  }
  if (wanted("deepgemm")) {
    for (const PublishedProblem& p : kDeepGemmH800) {
      cases.push_back({"deepgemm", p.label,
                       lay_out_groups(p.n, p.k, std::vector<int64_t>(std::size_t(p.groups), p.rows), p.layout,
                                      128, 128),
                       p.published_tflops});
    }
  }
  if (wanted("preset")) {
    // As published (groups start on any row: A's scales padded per group) and every group padded to 4 rows.
    for (const profiler::PresetGroupedProblem& p : profiler::find_grouped_preset("nvfp4_targets").problems) {
      for (const int64_t align : {1, 4})
        cases.push_back({"preset", p.label, lay_out_groups(p.n, p.k, p.rows, GroupLayout::contiguous, align, align)});
    }
  }
  return cases;
}

Timed run_case(kernels::Device& device, const std::string& kernel_name, const GroupedShape& shape,
               const profiler::MeasureOptions& options, uint64_t seed) {
  Timed timed;
  const kernels::GroupedKernelEntry& entry = kernels::find_grouped_kernel(kernel_name);
  if (const auto reason = entry.unsupported_reason(shape)) {
    timed.status = "unsupported";
    timed.note = *reason;
    return timed;
  }
  try {
    profiler::GroupedSessionPool pool(entry, device, {shape.groups(), shape.n, shape.k}, seed);
    const auto gemm = pool.first().prepare(shape, seed + 1);
    const kernels::CheckResult check = gemm->check();
    timed.rel_err = check.rel_err;
    timed.status = check.passed(kernels::kCheckThreshold) ? "ok" : "numerical_fail";
    timed.note = gemm->launch_name();
    timed.min_bytes = gemm->min_bytes();
    timed.executed_rows = gemm->executed_rows();
    profiler::Rotation rotation;
    rotation.sets = {gemm.get()};
    if (options.timing == kernels::TimingMode::graph && !options.hot) {  // rotate: no replay finds its bytes in L2
      rotation = profiler::prepare_rotation(device, pool, *gemm, shape, seed + 1);
      if (!rotation.note.empty()) timed.note += " [" + rotation.note + "]";
    }
    const profiler::Measurement measurement = profiler::measure(device, rotation.sets, options);
    timed.median_us = measurement.median_us;
    timed.operand_sets = measurement.operand_sets;
  } catch (const kernels::UnsupportedShape& refused) {
    timed.status = "unsupported";
    timed.note = refused.what();
  } catch (const std::exception& error) {
    timed.status = "error";
    timed.note = error.what();
  }
  return timed;
}

std::string cell(double value, const char* format) {
  return std::isnan(value) ? "-" : fmt::format(fmt::runtime(format), value);
}

struct Row {
  Case c;
  Timed ours;
  std::vector<Timed> baselines;
};

double tflops(const GroupedShape& shape, const Timed& timed) {
  return timed.status == "ok" ? shape.useful_flops() / timed.median_us / 1e6 : NAN;
}

void print_section(const std::string& section, const std::vector<Row>& rows, double peak_tflops, double copy_bw) {
  std::vector<const Row*> in;
  for (const Row& row : rows)
    if (row.c.section == section) in.push_back(&row);
  if (in.empty()) return;
  std::printf("\n== %s\n%-22s %-15s %6s %6s %9s %9s", section.c_str(), "problem", "layout", "rows", "active", "ours us",
              "TFLOP/s");
  for (const std::string& column : kBaselineColumns) std::printf(" %14s", column.c_str());
  if (section == "deepgemm") std::printf(" %14s", "DeepGEMM H800");
  if (section == "preset") std::printf(" %9s %8s", "SOL us", "of SOL");
  std::printf("\n");
  std::vector<std::vector<double>> ratios(kBaselines.size());
  for (const Row* row : in) {
    const GroupedShape& s = row->c.shape;
    std::printf("%-22s %-15s %6ld %6ld %9s %9s", row->c.label.c_str(), s.layout_text().c_str(), long(s.useful_rows()),
                long(s.active_groups()), cell(row->ours.status == "ok" ? row->ours.median_us : NAN, "{:.2f}").c_str(),
                cell(tflops(s, row->ours), "{:.0f}").c_str());
    for (std::size_t i = 0; i < kBaselines.size(); ++i) {
      const Timed& b = row->baselines[i];
      const double ratio = b.status == "ok" && row->ours.status == "ok" ? b.median_us / row->ours.median_us : NAN;
      if (!std::isnan(ratio)) ratios[i].push_back(ratio);
      std::printf(" %14s", cell(ratio, "{:.2f}").c_str());
    }
    if (section == "deepgemm") std::printf(" %14s", cell(row->c.published_tflops, "{:.0f}").c_str());
    if (section == "preset") {
      const double sol_us = std::max(s.useful_flops() / (peak_tflops * 1e6), row->ours.min_bytes / copy_bw);
      std::printf(" %9s %8s", cell(sol_us, "{:.2f}").c_str(),
                  cell(row->ours.status == "ok" ? 100 * sol_us / row->ours.median_us : NAN, "{:.0f}%").c_str());
    }
    std::printf("\n");
  }
  for (std::size_t i = 0; i < kBaselines.size(); ++i) {
    double log_sum = 0;
    for (const double r : ratios[i]) log_sum += std::log(r);
    std::printf("  %s time / ours: geometric mean %s over %zu problems\n", kBaselines[i].c_str(),
                cell(ratios[i].empty() ? NAN : std::exp(log_sum / double(ratios[i].size())), "{:.3f}").c_str(),
                ratios[i].size());
  }
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::string text = csv::format_row({"section", "problem", "layout", "rows", "active_groups", "n", "k", "kernel", "status",
                                      "median_us", "tflops", "executed_rows", "operand_sets", "rel_err", "note"});
  for (const Row& row : rows) {
    const auto emit = [&](const std::string& kernel, const Timed& t) {
      const GroupedShape& s = row.c.shape;
      text += csv::format_row({row.c.section, row.c.label, s.layout_text(), std::to_string(s.useful_rows()),
                               std::to_string(s.active_groups()), std::to_string(s.n), std::to_string(s.k), kernel,
                               t.status, cell(t.median_us, "{:.3f}"), cell(tflops(s, t), "{:.1f}"),
                               std::to_string(t.executed_rows), std::to_string(t.operand_sets),
                               cell(t.rel_err, "{:.3e}"), t.note});
    };
    emit(kOurs, row.ours);
    for (std::size_t i = 0; i < kBaselines.size(); ++i) emit(kBaselines[i], row.baselines[i]);
  }
  write_file_atomically(path, text);
}

int run(int argc, char** argv) {
  CLI::App app{"grouped_bench: fp8_blockscale_grouped vs the cuBLASLt loops, same device, same run"};
  std::vector<std::string> sections = {"decode", "prefill", "deepgemm", "preset"};
  std::vector<int64_t> decode_tokens = {1, 8, 32, 64, 128, 256};
  std::vector<int64_t> prefill_tokens = {4096, 8192, 16384};
  std::string csv_path, timing = "graph", pdl = "on";
  profiler::MeasureOptions options;
  options.max_seconds_per_point = 0.25;
  options.target_rel_stderr = 0.01;
  app.add_option("--sections", sections, "decode, prefill, deepgemm, preset")->delimiter(',');
  app.add_option("--decode-tokens", decode_tokens, "tokens per decode batch")->delimiter(',');
  app.add_option("--prefill-tokens", prefill_tokens, "tokens per prefill batch")->delimiter(',');
  app.add_option("--csv", csv_path, "also write every point to this CSV");
  app.add_option("--seconds-per-point", options.max_seconds_per_point, "time cap per measured point");
  app.add_option("--timing", timing, "events | graph (replays rotating over operand copies) | kernel")->capture_default_str();
  app.add_option("--pdl", pdl, "on | off: our kernel's programmatic dependent launch (graph timing)")->capture_default_str();
  app.add_flag("--hot", options.hot, "keep operands in L2 (one operand set); default: cold");
  CLI11_PARSE(app, argc, argv);
  options.timing = kernels::parse_timing_mode(timing);
  if (pdl != "on" && pdl != "off") throw UserError("--pdl " + pdl + ": use on or off");

  kernels::register_cuda_kernels();
  const auto device = kernels::make_cuda_device();
  if (!device) throw UserError("grouped_bench needs a CUDA GPU: " + kernels::cuda_unavailable_reason());
  const kernels::DeviceInfo info = device->info();
  const std::optional<double> peak = peak_tflops(info.name, "fp8");
  if (!peak) throw UserError("no datasheet FP8 peak for " + info.name + "; add it to common/device_peaks.cpp");
  const double copy_bw = kernels::measure_copy_bandwidth(*device);
  const bool programmatic = options.timing == kernels::TimingMode::graph && pdl == "on";
  device->set_programmatic_launch(programmatic);
  std::printf("%s, %d SMs; datasheet FP8 %.1f TFLOP/s; device-to-device copy %.2f TB/s (read + write); timing %s%s%s\n",
              info.name.c_str(), info.multiprocessors, *peak, copy_bw / 1e6, timing.c_str(),
              programmatic ? " with PDL for ours" : "", options.hot ? ", hot" : ", cold");
  const std::string missing = kernels::missing_grouped_kernels();
  if (!missing.empty()) std::printf("%s\n", missing.c_str());

  std::vector<Row> rows;
  uint64_t seed = 0x9b0000;
  for (const Case& c : cases_for(sections, decode_tokens, prefill_tokens)) {
    Row row{c, run_case(*device, kOurs, c.shape, options, seed += 2), {}};
    for (const std::string& baseline : kBaselines) row.baselines.push_back(run_case(*device, baseline, c.shape, options, seed += 2));
    for (const Timed* t : {&row.ours, &row.baselines[0], &row.baselines[1]})
      if (t->status != "ok" && t->status != "unsupported")
        std::printf("  %s %s: %s %s (rel_err %.3e)\n", c.label.c_str(), c.shape.layout_text().c_str(), t->status.c_str(),
                    t->note.c_str(), t->rel_err);
    std::fprintf(stderr, "  %s %s %s done\n", c.section.c_str(), c.label.c_str(), c.shape.layout_text().c_str());
    rows.push_back(std::move(row));
  }
  for (const char* section : {"decode", "prefill", "deepgemm", "preset"}) print_section(section, rows, *peak, copy_bw);
  std::printf("\nDeepGEMM's figures are its README's, measured on an H800 (same SM count and FP8 rate as the H100 SXM).\n");
  if (!csv_path.empty()) write_csv(csv_path, rows);
  return 0;
}

}  // namespace
}  // namespace shapescope

int main(int argc, char** argv) { return shapescope::bench_main("grouped_bench", shapescope::run, argc, argv); }
