// kernel_bench: our kernels against cuBLASLt (block-scaled FP8 and dense bf16) on
// the same device in the same run, every point through profiler::measure in each
// timing mode asked for (events: a lone cold launch; graph: a CUDA graph rotating over
// operand copies, with our kernels' programmatic dependent launch off and on; kernel:
// CUPTI kernel durations, measured last since tracing slows every launch), and every
// point checked against the float64 reference first. Shapes come from the model
// catalog (`--shapes MODEL:TP[:MODULE]`) or are given raw (`--shape N,K[,batch]`, as
// profile takes them). Prints, per mode, shape and M, each kernel's time, our speed-up over each baseline (baseline time / our time: above 1 means ours
// is faster) and, for M <= 64, the fraction of the HBM roofline: the fewest bytes a run
// must move over the device-to-device copy bandwidth measured in this run, divided by
// our time. Then per shape and M band, and pooled over shapes per mode and band (the
// cross-check table), the geometric means of those ratios.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_main.hpp"
#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/statistics.hpp"
#include "common/user_error.hpp"
#include "common/model_catalog.hpp"
#include "common/shape_axes.hpp"
#include "kernels/copy_bandwidth.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"
#include "profiler/operand_sizes.hpp"
#include "profiler/session_pool.hpp"

namespace shapescope {
namespace {

using kernels::GemmShape;

struct ShapeCase {
  std::string label;
  int64_t n, k, batch_count;
};

// `MODEL:TP[:MODULE]` -> the catalog's GEMMs, then the raw `N,K[,batch]` shapes; each (N, K, batch) once,
// refused (as profile refuses it) when its operands at the largest M cannot be addressed.
std::vector<ShapeCase> bench_shapes(const std::vector<std::string>& specs, const std::vector<std::string>& raw,
                                    int64_t largest_m) {
  const ModelCatalog catalog = ModelCatalog::load_default();
  std::vector<GemmProblem> problems;
  for (const std::string& spec : specs) {
    const auto first = spec.find(':');
    if (first == std::string::npos) throw UserError("--shapes " + spec + ": write MODEL:TP[:MODULE], e.g. deepseek_v3:8");
    const auto second = spec.find(':', first + 1);
    const std::string model = spec.substr(0, first);
    const std::string tp_text = spec.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    const std::string module = second == std::string::npos ? "all" : spec.substr(second + 1);
    int tp = 0;
    try {
      tp = std::stoi(tp_text);
    } catch (const std::exception&) {
      throw UserError("--shapes " + spec + ": TP '" + tp_text + "' is not a number");
    }
    const std::vector<GemmProblem> layers = catalog.problems(model, module, tp);
    problems.insert(problems.end(), layers.begin(), layers.end());
  }
  const std::vector<GemmProblem> shapes = parse_shapes(raw);
  problems.insert(problems.end(), shapes.begin(), shapes.end());
  problems = distinct_shapes(problems);
  profiler::check_operand_sizes(problems, largest_m, 0);
  std::vector<ShapeCase> cases;
  for (const GemmProblem& problem : problems) {
    const std::string label = is_raw_shape(problem) ? shape_label(problem)
                                                    : fmt::format("{}.{}.tp{}", problem.model, problem.module, problem.tp);
    cases.push_back({label, problem.n, problem.k, problem.batch_count});
  }
  return cases;
}

// A timing variant: a mode, and for graph timing whether our kernels use PDL.
struct Variant {
  std::string name;  // events | graph | graph+pdl | kernel
  kernels::TimingMode timing;
  bool pdl = false;
  bool baselines = true;  // graph+pdl: the baselines ignore PDL, graph's rows serve
};

Variant parse_variant(const std::string& name) {
  if (name == "events") return {name, kernels::TimingMode::events};
  if (name == "graph") return {name, kernels::TimingMode::graph};
  if (name == "graph+pdl") return {name, kernels::TimingMode::graph, true, false};
  if (name == "kernel") return {name, kernels::TimingMode::kernel};
  throw UserError("--timings " + name + ": use events, graph, graph+pdl or kernel");
}

struct Point {
  std::string variant, shape_label, kernel;
  GemmShape shape;
  std::string status;  // ok | numerical_fail | unsupported | error
  std::string note;    // launch name, or why not
  double median_us = 0, min_bytes = 0, rel_err = 0;
  int samples = 0, operand_sets = 1;
};

std::vector<Point> run_shape(kernels::Device& device, const ShapeCase& shape_case, const std::string& kernel_name,
                             const std::vector<int64_t>& ms, const profiler::MeasureOptions& options,
                             const std::string& variant, uint64_t& seed) {
  std::vector<Point> points;
  const kernels::KernelEntry& entry = kernels::find_kernel(kernel_name);
  std::unique_ptr<profiler::SessionPool> sessions;
  std::string open_error;
  try {
    sessions = std::make_unique<profiler::SessionPool>(
        entry, device, kernels::WeightShape{shape_case.n, shape_case.k, shape_case.batch_count}, ++seed);
  } catch (const std::exception& error) {
    open_error = error.what();
  }
  for (const int64_t m : ms) {
    Point point;
    point.variant = variant;
    point.shape_label = shape_case.label;
    point.kernel = kernel_name;
    point.shape = GemmShape{m, shape_case.n, shape_case.k, shape_case.batch_count};
    if (const auto reason = entry.unsupported_reason(point.shape)) {
      point.status = "unsupported";
      point.note = *reason;
    } else if (!sessions) {
      point.status = "error";
      point.note = open_error;
    } else {
      try {
        const uint64_t gemm_seed = ++seed;
        const auto gemm = sessions->first().prepare(m, gemm_seed);
        const kernels::CheckResult check = gemm->check();
        point.rel_err = check.rel_err;
        point.min_bytes = gemm->min_bytes();
        point.note = gemm->launch_name();
        point.status = check.passed(kernels::kCheckThreshold) ? "ok" : "numerical_fail";
        profiler::Rotation rotation;
        rotation.sets = {gemm.get()};
        if (options.timing == kernels::TimingMode::graph && !options.hot)
          rotation = profiler::prepare_rotation(device, *sessions, *gemm, m, gemm_seed);
        const profiler::Measurement measurement = profiler::measure(device, rotation.sets, options);
        point.median_us = measurement.median_us;
        point.samples = measurement.samples;
        point.operand_sets = measurement.operand_sets;
        if (!measurement.launched.empty()) point.note += " [" + measurement.launched + "]";
      } catch (const kernels::UnsupportedShape& refused) {
        point.status = "unsupported";
        point.note = refused.what();
      } catch (const std::exception& error) {
        point.status = "error";
        point.note = error.what();
      }
    }
    points.push_back(point);
  }
  return points;
}

const Point* find_point(const std::vector<Point>& points, const std::string& kernel, const std::string& shape_label,
                        int64_t m) {
  for (const Point& p : points)
    if (p.kernel == kernel && p.shape_label == shape_label && p.shape.m == m && p.status == "ok") return &p;
  return nullptr;
}

// The points of one variant; graph+pdl borrows graph's baseline rows.
std::vector<Point> points_of(const std::vector<Point>& all, const Variant& variant,
                             const std::vector<std::string>& baselines) {
  std::vector<Point> selected;
  for (const Point& p : all) {
    const bool baseline = std::find(baselines.begin(), baselines.end(), p.kernel) != baselines.end();
    if (p.variant == variant.name || (!variant.baselines && baseline && p.variant == "graph")) selected.push_back(p);
  }
  return selected;
}

struct Band {
  std::string name;
  int64_t lo, hi;
};
const std::vector<Band> kBands = {{"M 1-3", 1, 3}, {"M 4-64", 4, 64}, {"M 65-512", 65, 512}, {"M >=1024", 1024, 1 << 30}};

// "cublaslt_fp8_blockscale" -> "lt_fp8_b": column headers stay narrow.
std::string short_name(const std::string& kernel) {
  const std::string prefix = "cublaslt_";
  const std::string name = kernel.rfind(prefix, 0) == 0 ? "lt_" + kernel.substr(prefix.size()) : kernel;
  return name.substr(0, 8);
}

std::string cell(double value, const char* format) { return std::isnan(value) ? "-" : fmt::format(fmt::runtime(format), value); }

// Per point: times, speed-ups of each of ours over each baseline, roofline fraction at small M.
void print_points(const std::vector<Point>& points, const std::vector<ShapeCase>& shapes, const std::vector<int64_t>& ms,
                  const std::vector<std::string>& ours, const std::vector<std::string>& baselines, double copy_bw) {
  std::string header = fmt::format("{:<24} {:>5}", "shape", "M");
  for (const auto& k : ours) header += fmt::format(" {:>12}", k.substr(0, 12));
  for (const auto& k : baselines) header += fmt::format(" {:>12}", k.substr(0, 12));
  for (const auto& o : ours)
    for (const auto& b : baselines) header += fmt::format(" {:>9}", (o == ours.front() ? "x" : "x'") + short_name(b));
  header += fmt::format(" {:>8}", "roofline");
  std::printf("\ntimes in us (median); xNAME = NAME time / our time (>1: ours faster); x' = second of ours\n%s\n",
              header.c_str());
  for (const ShapeCase& shape : shapes) {
    for (const int64_t m : ms) {
      std::string line = fmt::format("{:<24} {:>5}", shape.label, m);
      auto time_of = [&](const std::string& kernel) {
        const Point* p = find_point(points, kernel, shape.label, m);
        return p ? p->median_us : NAN;
      };
      for (const auto& k : ours) line += fmt::format(" {:>12}", cell(time_of(k), "{:.2f}"));
      for (const auto& k : baselines) line += fmt::format(" {:>12}", cell(time_of(k), "{:.2f}"));
      for (const auto& o : ours)
        for (const auto& b : baselines) line += fmt::format(" {:>9}", cell(time_of(b) / time_of(o), "{:.2f}"));
      const Point* primary = find_point(points, ours.front(), shape.label, m);
      const double roofline = primary && m <= 64 ? primary->min_bytes / copy_bw / primary->median_us : NAN;
      line += fmt::format(" {:>8}", cell(roofline * 100.0, "{:.0f}%"));
      std::printf("%s\n", line.c_str());
    }
  }
}

// Per shape and M band: geometric mean speed-ups; mean roofline fraction for M <= 64.
void print_bands(const std::vector<Point>& points, const std::vector<ShapeCase>& shapes, const std::vector<int64_t>& ms,
                 const std::vector<std::string>& ours, const std::vector<std::string>& baselines, double copy_bw) {
  std::printf("\nper shape and M band: geometric mean of baseline time / our time (points where both ran)\n");
  std::string header = fmt::format("{:<24} {:<9} {:>10}", "shape", "band", "fp8 MB");
  for (const auto& o : ours)
    for (const auto& b : baselines) header += fmt::format(" {:>22}", o.substr(0, 10) + " vs " + short_name(b));
  header += fmt::format(" {:>9}", "roofline");
  std::printf("%s\n", header.c_str());
  for (const ShapeCase& shape : shapes) {
    for (const Band& band : kBands) {
      std::string line = fmt::format("{:<24} {:<9} {:>10.1f}", shape.label, band.name,
                                     double(shape.n * shape.k * shape.batch_count) / 1e6);
      bool any = false;
      for (const auto& o : ours)
        for (const auto& b : baselines) {
          std::vector<double> ratios;
          for (const int64_t m : ms) {
            if (m < band.lo || m > band.hi) continue;
            const Point* po = find_point(points, o, shape.label, m);
            const Point* pb = find_point(points, b, shape.label, m);
            if (po && pb) ratios.push_back(pb->median_us / po->median_us);
          }
          any = any || !ratios.empty();
          const double speedup = ratios.empty() ? NAN : geometric_mean(ratios);
          line += fmt::format(" {:>22}", cell(speedup, "{:.2f}") + fmt::format(" (n={})", ratios.size()));
        }
      std::vector<double> fractions;
      for (const int64_t m : ms) {
        if (m < band.lo || m > band.hi || m > 64) continue;
        if (const Point* p = find_point(points, ours.front(), shape.label, m))
          fractions.push_back(p->min_bytes / copy_bw / p->median_us);
      }
      double mean_fraction = NAN;
      if (!fractions.empty()) {
        mean_fraction = 0;
        for (double f : fractions) mean_fraction += f / double(fractions.size());
      }
      line += fmt::format(" {:>9}", cell(mean_fraction * 100.0, "{:.0f}%"));
      if (any || !fractions.empty()) std::printf("%s\n", line.c_str());
    }
  }
}

// The cross-check table: per timing variant and M band, the geometric mean over every
// shape and M where both ran of baseline time / our time.
void print_pooled(const std::vector<Point>& all, const std::vector<Variant>& variants,
                  const std::vector<std::string>& ours, const std::vector<std::string>& baselines) {
  std::printf("\npooled over shapes: geometric mean of baseline time / our time, per timing and M band\n");
  std::string header = fmt::format("{:<10} {:<9}", "timing", "band");
  for (const auto& o : ours)
    for (const auto& b : baselines) header += fmt::format(" {:>26}", o.substr(0, 14) + " vs " + short_name(b));
  std::printf("%s\n", header.c_str());
  for (const Variant& variant : variants) {
    const std::vector<Point> points = points_of(all, variant, baselines);
    for (const Band& band : kBands) {
      std::string line = fmt::format("{:<10} {:<9}", variant.name, band.name);
      for (const auto& o : ours)
        for (const auto& b : baselines) {
          std::vector<double> ratios;
          for (const Point& po : points) {
            if (po.kernel != o || po.status != "ok" || po.shape.m < band.lo || po.shape.m > band.hi) continue;
            if (const Point* pb = find_point(points, b, po.shape_label, po.shape.m))
              ratios.push_back(pb->median_us / po.median_us);
          }
          line += fmt::format(" {:>26}", cell(geometric_mean(ratios), "{:.3f}") + fmt::format(" (n={})", ratios.size()));
        }
      std::printf("%s\n", line.c_str());
    }
  }
}

void write_csv(const std::string& path, const std::vector<Point>& points, double copy_bw) {
  std::string text = csv::format_row({"timing", "shape", "kernel", "m", "n", "k", "batch_count", "status", "median_us",
                                      "samples", "operand_sets", "rel_err", "min_bytes", "roofline_fraction", "note"});
  for (const Point& p : points) {
    const bool timed = p.status == "ok" || p.status == "numerical_fail";
    text += csv::format_row({p.variant, p.shape_label, p.kernel, std::to_string(p.shape.m), std::to_string(p.shape.n),
                             std::to_string(p.shape.k), std::to_string(p.shape.batch_count), p.status,
                             timed ? fmt::format("{:.3f}", p.median_us) : "", std::to_string(p.samples),
                             std::to_string(p.operand_sets), timed ? fmt::format("{:.3e}", p.rel_err) : "",
                             fmt::format("{:.0f}", p.min_bytes),
                             timed ? fmt::format("{:.4f}", p.min_bytes / copy_bw / p.median_us) : "", p.note});
  }
  write_file_atomically(path, text);
}

int run(int argc, char** argv) {
  CLI::App app{"kernel_bench: our block-scaled kernels vs cuBLASLt, same device, same run, per timing mode"};
  std::vector<std::string> shape_specs = {"deepseek_v3:8"};
  std::vector<std::string> timings = {"events", "graph", "graph+pdl", "kernel"};
  std::vector<int64_t> ms = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  std::vector<std::string> ours = {"fp8_blockscale", "fp8_blockscale_bpreshuffle"};
  std::vector<std::string> baselines = {"cublaslt_fp8_blockscale", "cublaslt_bf16"};
  std::string csv_path;
  profiler::MeasureOptions options;
  options.max_seconds_per_point = 0.25;
  options.target_rel_stderr = 0.01;
  std::vector<std::string> raw_shapes;
  app.add_option("--shapes", shape_specs, "catalog shapes MODEL:TP[:MODULE], e.g. deepseek_v3:8, deepseek_v3:1:gate_up_proj")
      ->delimiter(',');
  app.add_option("--shape", raw_shapes, "raw shape N,K[,batch] as profile --shape takes it (repeatable); without "
                                        "--shapes only these are measured");
  app.add_option("--timings", timings, "events, graph, graph+pdl (ours with programmatic dependent launch), kernel")
      ->delimiter(',');
  app.add_option("--ms", ms, "M values")->delimiter(',');
  app.add_option("--ours", ours, "our kernels (the first is the one the roofline column describes)")->delimiter(',');
  app.add_option("--baselines", baselines, "baseline kernels")->delimiter(',');
  app.add_option("--csv", csv_path, "also write every point to this CSV");
  app.add_option("--seconds-per-point", options.max_seconds_per_point, "time cap per measured point");
  app.add_flag("--hot", options.hot, "keep operands in L2 between samples (default: cold)");
  CLI11_PARSE(app, argc, argv);

  std::vector<Variant> variants;
  for (const std::string& name : timings) variants.push_back(parse_variant(name));
  // Kernel tracing stays attached once on: it goes last.
  std::stable_partition(variants.begin(), variants.end(),
                        [](const Variant& v) { return v.timing != kernels::TimingMode::kernel; });
  if (!raw_shapes.empty() && app.count("--shapes") == 0) shape_specs.clear();
  if (ms.empty()) throw UserError("--ms: give at least one M value");
  const std::vector<ShapeCase> shapes = bench_shapes(shape_specs, raw_shapes, *std::max_element(ms.begin(), ms.end()));
  kernels::register_cuda_kernels();
  const auto device = kernels::make_cuda_device();
  if (!device) throw UserError("kernel_bench needs a CUDA GPU: " + kernels::cuda_unavailable_reason());
  const kernels::DeviceInfo info = device->info();
  const double copy_bw = kernels::measure_copy_bandwidth(*device);
  std::printf("%s, %d SMs, L2 %.0f MB; device-to-device copy %.2f TB/s (read + write); %s\n", info.name.c_str(),
              info.multiprocessors, double(info.l2_bytes) / 1e6, copy_bw / 1e6, options.hot ? "hot" : "cold");

  std::vector<Point> points;
  uint64_t seed = 0xbe4c40000;
  for (const Variant& variant : variants) {
    profiler::MeasureOptions variant_options = options;
    variant_options.timing = variant.timing;
    device->set_programmatic_launch(variant.pdl);
    for (const ShapeCase& shape : shapes) {
      std::vector<std::string> kernels = ours;
      if (variant.baselines) kernels.insert(kernels.end(), baselines.begin(), baselines.end());
      for (const auto& kernel : kernels) {
        const auto shape_points = run_shape(*device, shape, kernel, ms, variant_options, variant.name, seed);
        points.insert(points.end(), shape_points.begin(), shape_points.end());
      }
      std::fprintf(stderr, "  %s %s done\n", variant.name.c_str(), shape.label.c_str());
    }
  }
  for (const Point& p : points)
    if (p.status != "ok" && p.status != "unsupported")
      std::printf("  %s %s %s M=%ld: %s %s (rel_err %.3e)\n", p.variant.c_str(), p.kernel.c_str(),
                  p.shape_label.c_str(), long(p.shape.m), p.status.c_str(), p.note.c_str(), p.rel_err);
  for (const Variant& variant : variants) {
    const std::vector<Point> selected = points_of(points, variant, baselines);
    std::printf("\n===== timing %s =====\n", variant.name.c_str());
    print_points(selected, shapes, ms, ours, baselines, copy_bw);
    print_bands(selected, shapes, ms, ours, baselines, copy_bw);
  }
  print_pooled(points, variants, ours, baselines);
  if (!csv_path.empty()) write_csv(csv_path, points, copy_bw);
  return 0;
}

}  // namespace
}  // namespace shapescope

int main(int argc, char** argv) { return shapescope::bench_main("kernel_bench", shapescope::run, argc, argv); }
