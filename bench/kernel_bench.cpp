// kernel_bench: our kernels against cuBLASLt (block-scaled FP8 and dense bf16) on
// the same device in the same run, every point through profiler::measure (cold:
// L2 flushed before each sample) and every point checked against the float64
// reference first. Prints, per shape and M, each kernel's time, our speed-up over
// each baseline (baseline time / our time: above 1 means ours is faster) and, for
// M <= 64, the fraction of the HBM roofline: the fewest bytes a run must move over
// the device-to-device copy bandwidth measured in this run, divided by our time.
// Then per shape and M band the geometric means of those ratios.
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

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/statistics.hpp"
#include "common/user_error.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

#if SHAPESCOPE_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#endif

namespace shapescope {
namespace {

using kernels::GemmShape;

struct ShapeCase {
  std::string label;
  int64_t n, k, batch_count;
};

// DeepSeek-V3 at TP8 (the AITER tuned set), its large TP1 GEMMs, the absorbed MLA batches, Qwen3 at TP8.
const std::map<std::string, std::vector<ShapeCase>>& shape_sets() {
  static const std::map<std::string, std::vector<ShapeCase>> sets = {
      {"dsv3_tp8",
       {{"dsv3.qkv_a", 2112, 7168, 1}, {"dsv3.q_b", 3072, 1536, 1}, {"dsv3.kv_b", 4096, 512, 1},
        {"dsv3.o", 7168, 2048, 1}, {"dsv3.gate_up", 4608, 7168, 1}, {"dsv3.down", 7168, 2304, 1},
        {"dsv3.moe_gate_up", 512, 7168, 1}, {"dsv3.moe_down", 7168, 256, 1}}},
      {"dsv3_tp1_large", {{"dsv3.down.tp1", 7168, 18432, 1}, {"dsv3.q_b.tp1", 24576, 1536, 1},
                          {"dsv3.gate_up.tp1", 36864, 7168, 1}}},
      {"mla_tp8", {{"mla.absorb_q", 512, 128, 16}, {"mla.absorb_out", 128, 512, 16}}},
      {"qwen3_tp8", {{"qwen3_235b.qkv", 1152, 4096, 1}, {"qwen3_235b.o", 4096, 1024, 1},
                     {"qwen3_235b.moe_gate_up", 384, 4096, 1}, {"qwen3_235b.moe_down", 4096, 192, 1}}},
  };
  return sets;
}

struct Point {
  std::string shape_label, kernel;
  GemmShape shape;
  std::string status;  // ok | numerical_fail | unsupported | error
  std::string note;    // launch name, or why not
  double median_us = 0, min_bytes = 0, rel_err = 0;
  int samples = 0;
};

// Device-to-device copy bandwidth in bytes/µs (bytes read plus bytes written), median of 15 copies of 1 GiB.
double measured_copy_bandwidth() {
#if SHAPESCOPE_HAVE_CUDA
  constexpr size_t kBytes = size_t(1) << 30;
  void *source = nullptr, *destination = nullptr;
  if (cudaMalloc(&source, kBytes) != cudaSuccess || cudaMalloc(&destination, kBytes) != cudaSuccess)
    throw std::runtime_error("kernel_bench: cannot allocate 2 GiB for the copy-bandwidth measurement");
  cudaMemset(source, 1, kBytes);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> us;
  for (int i = 0; i < 18; ++i) {
    cudaEventRecord(start);
    cudaMemcpyAsync(destination, source, kBytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= 3) us.push_back(double(ms) * 1000.0);  // first copies warm up
  }
  const cudaError_t error = cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(source);
  cudaFree(destination);
  if (error != cudaSuccess) throw std::runtime_error(std::string("kernel_bench copy: ") + cudaGetErrorString(error));
  std::sort(us.begin(), us.end());
  return 2.0 * double(kBytes) / us[us.size() / 2];
#else
  return NAN;
#endif
}

std::vector<Point> run_shape(kernels::Device& device, const ShapeCase& shape_case,
                             const std::string& kernel_name, const std::vector<int64_t>& ms,
                             const profiler::MeasureOptions& options, uint64_t& seed) {
  std::vector<Point> points;
  const kernels::KernelEntry& entry = kernels::find_kernel(kernel_name);
  std::unique_ptr<kernels::GemmSession> session;
  std::string open_error;
  try {
    session = entry.open(device, kernels::WeightShape{shape_case.n, shape_case.k, shape_case.batch_count}, ++seed);
  } catch (const std::exception& error) {
    open_error = error.what();
  }
  for (const int64_t m : ms) {
    Point point;
    point.shape_label = shape_case.label;
    point.kernel = kernel_name;
    point.shape = GemmShape{m, shape_case.n, shape_case.k, shape_case.batch_count};
    if (const auto reason = entry.unsupported_reason(point.shape)) {
      point.status = "unsupported";
      point.note = *reason;
    } else if (!session) {
      point.status = "error";
      point.note = open_error;
    } else {
      try {
        const auto gemm = session->prepare(m, ++seed);
        const kernels::CheckResult check = gemm->check();
        point.rel_err = check.rel_err;
        point.min_bytes = gemm->min_bytes();
        point.note = gemm->launch_name();
        point.status = check.passed(1e-2) ? "ok" : "numerical_fail";
        const profiler::Measurement measurement = profiler::measure(device, *gemm, options);
        point.median_us = measurement.median_us;
        point.samples = measurement.samples;
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
  std::printf("\ntimes in us (median, cold); xNAME = NAME time / our time (>1: ours faster); x' = second of ours\n%s\n",
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

void write_csv(const std::string& path, const std::vector<Point>& points, double copy_bw) {
  std::string text = csv::format_row({"shape", "kernel", "m", "n", "k", "batch_count", "status", "median_us", "samples",
                                      "rel_err", "min_bytes", "roofline_fraction", "note"});
  for (const Point& p : points) {
    const bool timed = p.status == "ok" || p.status == "numerical_fail";
    text += csv::format_row({p.shape_label, p.kernel, std::to_string(p.shape.m), std::to_string(p.shape.n),
                             std::to_string(p.shape.k), std::to_string(p.shape.batch_count), p.status,
                             timed ? fmt::format("{:.3f}", p.median_us) : "", std::to_string(p.samples),
                             timed ? fmt::format("{:.3e}", p.rel_err) : "", fmt::format("{:.0f}", p.min_bytes),
                             timed ? fmt::format("{:.4f}", p.min_bytes / copy_bw / p.median_us) : "", p.note});
  }
  write_file_atomically(path, text);
}

int run(int argc, char** argv) {
  CLI::App app{"kernel_bench: our block-scaled kernels vs cuBLASLt, same device, same run"};
  std::vector<std::string> sets = {"dsv3_tp8"};
  std::vector<int64_t> ms = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  std::vector<std::string> ours = {"fp8_blockscale", "fp8_blockscale_bpreshuffle"};
  std::vector<std::string> baselines = {"cublaslt_fp8_blockscale", "cublaslt_bf16"};
  std::string csv_path;
  profiler::MeasureOptions options;
  options.max_seconds_per_point = 0.25;
  options.target_rel_stderr = 0.01;
  app.add_option("--set", sets, "shape sets: dsv3_tp8, dsv3_tp1_large, mla_tp8, qwen3_tp8")->delimiter(',');
  app.add_option("--ms", ms, "M values")->delimiter(',');
  app.add_option("--ours", ours, "our kernels (the first is the one the roofline column describes)")->delimiter(',');
  app.add_option("--baselines", baselines, "baseline kernels")->delimiter(',');
  app.add_option("--csv", csv_path, "also write every point to this CSV");
  app.add_option("--seconds-per-point", options.max_seconds_per_point, "time cap per measured point");
  app.add_flag("--hot", options.hot, "keep operands in L2 between samples (default: flush before each)");
  CLI11_PARSE(app, argc, argv);

  kernels::register_cuda_kernels();
  const auto device = kernels::make_cuda_device();
  if (!device) throw UserError("kernel_bench needs a CUDA GPU: " + kernels::cuda_unavailable_reason());
  const kernels::DeviceInfo info = device->info();
  const double copy_bw = measured_copy_bandwidth();
  std::printf("%s, %d SMs; device-to-device copy %.2f TB/s (read + write); %s measurement\n", info.name.c_str(),
              info.multiprocessors, copy_bw / 1e6, options.hot ? "hot" : "cold (L2 evicted by a read pass)");

  std::vector<Point> points;
  std::vector<ShapeCase> shapes;
  uint64_t seed = 0xbe4c40000;
  for (const std::string& set : sets) {
    const auto found = shape_sets().find(set);
    if (found == shape_sets().end())
      throw UserError("--set " + set + ": unknown; use dsv3_tp8, dsv3_tp1_large, mla_tp8 or qwen3_tp8");
    for (const ShapeCase& shape : found->second) {
      shapes.push_back(shape);
      for (const auto& kernel : ours) {
        const auto shape_points = run_shape(*device, shape, kernel, ms, options, seed);
        points.insert(points.end(), shape_points.begin(), shape_points.end());
      }
      for (const auto& kernel : baselines) {
        const auto shape_points = run_shape(*device, shape, kernel, ms, options, seed);
        points.insert(points.end(), shape_points.begin(), shape_points.end());
      }
      std::fprintf(stderr, "  %s done\n", shape.label.c_str());
    }
  }
  for (const Point& p : points)
    if (p.status != "ok" && p.status != "unsupported")
      std::printf("  %s %s M=%ld: %s %s (rel_err %.3e)\n", p.kernel.c_str(), p.shape_label.c_str(), long(p.shape.m),
                  p.status.c_str(), p.note.c_str(), p.rel_err);
  print_points(points, shapes, ms, ours, baselines, copy_bw);
  print_bands(points, shapes, ms, ours, baselines, copy_bw);
  if (!csv_path.empty()) write_csv(csv_path, points, copy_bw);
  return 0;
}

}  // namespace
}  // namespace shapescope

int main(int argc, char** argv) {
  try {
    return shapescope::run(argc, argv);
  } catch (const shapescope::UserError& error) {
    std::fprintf(stderr, "kernel_bench: %s\n", error.what());
    return 2;
  }
}
