// Calibration of the fp8_blockscale cost model (kernels/cuda/fp8_blockscale_config.hpp)
// against measured profiles of that kernel, typically one per forced tile
// (SHAPESCOPE_FP8_ROW_GROUPS / SHAPESCOPE_FP8_BLOCK_N; each row's kernel_name names the
// configuration that ran). All rows are pooled per (N, K, M) and configuration; then:
//  - per point: the fastest measured configuration, the model's choice and the regret
//    (measured time of the choice / the fastest; "unmeasured" when no profile ran it);
//  - per shape and overall: geometric-mean regret, points more than 5% off, the worst;
//  - anomalies along M, as `analyze` flags them (its default rule) and as MFU drops of more
//    than 5% below a smaller M, for the model's choices and for the fastest measured
//    configuration at each M: the latter no compiled tile avoids;
//  - the fit: rms of log(measured / modelled) over every measured configuration above
//    --min-us, and with --fit the constants that minimize it (Nelder-Mead on their logs),
//    with the choices and regrets those constants would give.
// Times are the profile's; the H100 reference spec stands for the device (132 SMs).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analyze/anomaly.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "analyze/series.hpp"
#include "common/statistics.hpp"
#include "common/user_error.hpp"
#include "kernels/cuda/fp8_blockscale_config.hpp"

namespace {

using namespace shapescope;
using namespace shapescope::kernels::cuda;
using shapescope::kernels::GemmShape;

struct Measured {
  Fp8BlockscaleConfig config;
  double us = 0, utils = 0, ci95_us = 0, stddev_us = 0;
  std::string source;
};

struct ShapePoints {
  int64_t n = 0, k = 0;
  std::string label;
  std::map<int64_t, std::vector<Measured>> by_m;  // every configuration measured at M
};

bool same_config(const Fp8BlockscaleConfig& a, const Fp8BlockscaleConfig& b) {
  return a.row_groups == b.row_groups && a.k_groups == b.k_groups && a.block_n == b.block_n && a.split_k == b.split_k &&
         a.tail_kblocks == b.tail_kblocks && a.dp_tiles == b.dp_tiles && a.stream_k == b.stream_k;
}

std::string tile_name(const Fp8BlockscaleConfig& c) {
  return fmt::format("{}x{}{}{}", c.block_m(), c.block_n, c.split_k > 1 ? fmt::format(" s{}", c.split_k) : "",
                     c.tail_split() ? fmt::format(" {}{}", c.stream_k ? "streamk" : "tail", c.tail_kblocks) : "");
}

// Profiles named on the command line, or found below a named folder: the kernel's CSVs by the
// profiler's file name (profile_file_name: ..._K<k>_<kernel>[_<timing>].csv; batched GEMMs are not priced here).
std::vector<std::string> profile_files(const std::vector<std::string>& inputs, const std::string& kernel) {
  const std::regex of_kernel(".*_K[0-9]+_" + kernel + "(_graph|_kernel)?\\.csv");
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    if (!std::filesystem::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(input))
      if (entry.is_regular_file() && std::regex_match(entry.path().filename().string(), of_kernel))
        files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Reads the files into shapes; rows measured another way (timing mode, another kernel) are left out.
std::vector<ShapePoints> read_points(const std::vector<std::string>& files, const std::string& kernel,
                                     const std::string& timing, int multiprocessors) {
  std::vector<ShapePoints> shapes;
  int skipped_files = 0;
  for (const std::string& file : files) {
    std::vector<analyze::Series> read;
    try {
      read = analyze::read_series_file(file, analyze::ReadOptions{});
    } catch (const UserError& error) {  // e.g. a forced split the shape cannot run: every row failed
      std::printf("left out %s\n", error.what());
      continue;
    }
    for (const analyze::Series& series : read) {
      if (series.kernel != kernel || (!timing.empty() && series.timing != timing) || series.batch_count != 1) {
        ++skipped_files;
        continue;
      }
      if (series.multiprocessors != 0 && series.multiprocessors != multiprocessors)
        throw UserError(fmt::format("{}: measured on {} SMs, the model's reference spec has {}; give profiles of that "
                                    "device only",
                                    file, series.multiprocessors, multiprocessors));
      auto shape = std::find_if(shapes.begin(), shapes.end(),
                                [&](const ShapePoints& s) { return s.n == series.n && s.k == series.k; });
      if (shape == shapes.end()) {
        std::string label = series.model.empty() ? "" : series.model + " " + series.module + " ";
        label += fmt::format("{}N{} K{}", series.tp ? fmt::format("TP{} ", series.tp) : "", series.n, series.k);
        shapes.push_back({series.n, series.k, label, {}});
        shape = std::prev(shapes.end());
      }
      for (const analyze::SeriesPoint& point : series.points) {
        // The swap-AB decode kernel is not the tiled kernel the model prices (fp8_blockscale_swapab_config.hpp).
        if (point.kernel_name.find("/swapab_") != std::string::npos) continue;
        const std::optional<Fp8BlockscaleConfig> config = parse_fp8_config_name(point.kernel_name);
        if (!config) throw UserError(fmt::format("{}:{}: kernel_name '{}' names no configuration", file, point.line,
                                                 point.kernel_name));
        std::vector<Measured>& at = shape->by_m[point.m];
        Measured measured{*config, point.time_us, point.utils, point.ci95_us, point.stddev_us, file};
        const auto same = std::find_if(at.begin(), at.end(), [&](const Measured& m) { return same_config(m.config, *config); });
        if (same == at.end()) at.push_back(measured);
        else if (measured.us < same->us) *same = measured;  // the same configuration measured twice: the faster
      }
    }
  }
  if (shapes.empty())
    throw UserError(fmt::format("no {} profile with timing '{}' among {} file(s); name profile CSVs or folders holding "
                                "them, or pass --timing",
                                kernel, timing, files.size()));
  if (skipped_files) std::printf("left out %d series of another kernel or timing mode\n", skipped_files);
  return shapes;
}

const Measured* find_measured(const std::vector<Measured>& at, const Fp8BlockscaleConfig& config) {
  const auto it = std::find_if(at.begin(), at.end(), [&](const Measured& m) { return same_config(m.config, config); });
  return it == at.end() ? nullptr : &*it;
}

const Measured& fastest(const std::vector<Measured>& at) {
  return *std::min_element(at.begin(), at.end(), [](const Measured& a, const Measured& b) { return a.us < b.us; });
}

// rms of log(measured / modelled) over every measured configuration above min_us.
double rms_log_error(const std::vector<ShapePoints>& shapes, const GridCostModel& model, const Fp8DeviceSpec& spec,
                     double min_us, std::size_t* count = nullptr) {
  double sum = 0;
  std::size_t n = 0;
  for (const ShapePoints& shape : shapes)
    for (const auto& [m, at] : shape.by_m)
      for (const Measured& measured : at) {
        if (measured.us < min_us) continue;
        // A split of the last wave is priced as its name states it (grid, ranges, whole tiles).
        const Fp8BlockscaleConfig config =
            measured.config.tail_split()
                ? measured.config
                : with_split(measured.config, GemmShape{m, shape.n, shape.k, 1}, measured.config.split_k, spec);
        const double modelled = model.microseconds(GemmShape{m, shape.n, shape.k, 1}, config, config.split_k, spec);
        if (!std::isfinite(modelled)) continue;
        const double e = std::log(measured.us / modelled);
        sum += e * e;
        ++n;
      }
  if (count) *count = n;
  return n ? std::sqrt(sum / double(n)) : 0.0;
}

// The constants the fit moves (all positive: fitted as logs).
const std::vector<std::pair<const char*, double GridCostModel::*>>& fitted_constants() {
  static const std::vector<std::pair<const char*, double GridCostModel::*>> constants = {
      {"hbm_bytes_per_us", &GridCostModel::hbm_bytes_per_us},
      {"intake_64x128", &GridCostModel::intake_64x128},
      {"intake_128x128", &GridCostModel::intake_128x128},
      {"intake_192x128", &GridCostModel::intake_192x128},
      {"intake_128x256", &GridCostModel::intake_128x256},
      {"intake_with_a_beyond_l2", &GridCostModel::intake_with_a_beyond_l2},
      {"tensor_us", &GridCostModel::tensor_us},
      {"chain_us", &GridCostModel::chain_us},
      {"startup_us", &GridCostModel::startup_us},
      {"unit_us", &GridCostModel::unit_us},
      {"store_bytes_per_us", &GridCostModel::store_bytes_per_us},
      {"split_fixed_us", &GridCostModel::split_fixed_us},
      {"partial_tile_us", &GridCostModel::partial_tile_us},
  };
  return constants;
}

GridCostModel with_logs(GridCostModel model, const std::vector<double>& logs) {
  for (std::size_t i = 0; i < logs.size(); ++i) model.*(fitted_constants()[i].second) = std::exp(logs[i]);
  return model;
}

// Nelder-Mead on the constants' logs, restarted from its best vertex until it stops improving.
GridCostModel fit(const std::vector<ShapePoints>& shapes, const GridCostModel& start, const Fp8DeviceSpec& spec,
                  double min_us, int iterations) {
  const std::size_t dims = fitted_constants().size();
  const auto cost = [&](const std::vector<double>& logs) {
    return rms_log_error(shapes, with_logs(start, logs), spec, min_us);
  };
  std::vector<double> best(dims);
  for (std::size_t i = 0; i < dims; ++i) best[i] = std::log(start.*(fitted_constants()[i].second));
  double best_cost = cost(best);
  for (int restart = 0; restart < 8; ++restart) {
    std::vector<std::vector<double>> simplex(dims + 1, best);
    std::vector<double> costs(dims + 1, best_cost);
    for (std::size_t i = 0; i < dims; ++i) {
      simplex[i + 1][i] += 0.15;
      costs[i + 1] = cost(simplex[i + 1]);
    }
    for (int it = 0; it < iterations; ++it) {
      std::vector<std::size_t> order(dims + 1);
      for (std::size_t i = 0; i <= dims; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] < costs[b]; });
      const std::size_t worst = order[dims], second = order[dims - 1], lowest = order[0];
      std::vector<double> centroid(dims, 0.0);
      for (std::size_t i = 0; i <= dims; ++i)
        if (i != worst)
          for (std::size_t d = 0; d < dims; ++d) centroid[d] += simplex[i][d] / double(dims);
      const auto along = [&](double t) {
        std::vector<double> x(dims);
        for (std::size_t d = 0; d < dims; ++d) x[d] = centroid[d] + t * (simplex[worst][d] - centroid[d]);
        return x;
      };
      const std::vector<double> reflected = along(-1.0);
      const double reflected_cost = cost(reflected);
      if (reflected_cost < costs[lowest]) {
        const std::vector<double> expanded = along(-2.0);
        const double expanded_cost = cost(expanded);
        if (expanded_cost < reflected_cost) simplex[worst] = expanded, costs[worst] = expanded_cost;
        else simplex[worst] = reflected, costs[worst] = reflected_cost;
      } else if (reflected_cost < costs[second]) {
        simplex[worst] = reflected, costs[worst] = reflected_cost;
      } else {
        const std::vector<double> contracted = along(0.5);
        const double contracted_cost = cost(contracted);
        if (contracted_cost < costs[worst]) {
          simplex[worst] = contracted, costs[worst] = contracted_cost;
        } else {
          for (std::size_t i = 0; i <= dims; ++i) {
            if (i == lowest) continue;
            for (std::size_t d = 0; d < dims; ++d) simplex[i][d] = simplex[lowest][d] + 0.5 * (simplex[i][d] - simplex[lowest][d]);
            costs[i] = cost(simplex[i]);
          }
        }
      }
    }
    const std::size_t lowest =
        std::size_t(std::min_element(costs.begin(), costs.end()) - costs.begin());
    const bool improved = costs[lowest] < best_cost * (1.0 - 1e-4);
    if (costs[lowest] < best_cost) best = simplex[lowest], best_cost = costs[lowest];
    if (!improved) break;
  }
  return with_logs(start, best);
}

struct PointVerdict {
  int64_t m = 0;
  const Measured* best = nullptr;
  Fp8BlockscaleConfig chosen;
  const Measured* chosen_measured = nullptr;  // nullptr: no profile ran the model's choice
  double regret() const { return chosen_measured ? chosen_measured->us / best->us : 0.0; }
};

// MFU drops of more than `drop` below the best smaller M, and what `analyze` flags (its default rule).
struct AnomalyCounts {
  std::vector<std::pair<int64_t, double>> mfu_drops;  // M, fraction lost against the best smaller M
  std::vector<analyze::Anomaly> flagged;
};
AnomalyCounts anomalies(const ShapePoints& shape, const std::vector<std::pair<int64_t, const Measured*>>& along_m,
                        double drop) {
  AnomalyCounts counts;
  analyze::Series series;
  series.name = shape.label;
  series.n = shape.n;
  series.k = shape.k;
  double best_utils = 0;
  for (const auto& [m, measured] : along_m) {
    if (best_utils > 0 && measured->utils < (1.0 - drop) * best_utils)
      counts.mfu_drops.push_back({m, 1.0 - measured->utils / best_utils});
    best_utils = std::max(best_utils, measured->utils);
    analyze::SeriesPoint point;
    point.m = m;
    point.time_us = measured->us;
    point.utils = measured->utils;
    point.ci95_us = measured->ci95_us;
    point.stddev_us = measured->stddev_us;
    point.kernel_name = describe(measured->config);
    series.points.push_back(point);
  }
  if (series.points.size() > analyze::kMinimumWindow)
    counts.flagged = analyze::find_anomalies(series, analyze::AnomalyRule::noise_aware, analyze::RuleOptions{});
  return counts;
}

// The drops of the model's choices that the fastest measured configurations do not have, or
// have by `margin` less: those the choice causes. The others no compiled tile avoids.
std::string list_caused_drops(const std::vector<std::pair<int64_t, double>>& chosen,
                              const std::vector<std::pair<int64_t, double>>& fastest, double margin) {
  std::string text;
  for (const auto& [m, lost] : chosen) {
    const auto at = std::find_if(fastest.begin(), fastest.end(), [&](const auto& d) { return d.first == m; });
    if (at == fastest.end() || at->second < lost - margin) text += fmt::format(" {}({:.0f}%)", m, 100 * lost);
  }
  return text.empty() ? " none" : text;
}
std::string list_flagged(const std::vector<analyze::Anomaly>& flagged, const std::vector<analyze::Anomaly>& unless_in,
                         bool in) {
  std::string text;
  for (const analyze::Anomaly& a : flagged) {
    const bool found = std::any_of(unless_in.begin(), unless_in.end(), [&](const analyze::Anomaly& b) { return b.m == a.m; });
    if (found == in) text += fmt::format(" {}({:.0f}% vs M={})", a.m, 100 * a.drop(), a.reference_m);
  }
  return text.empty() ? " none" : text;
}

struct Options {
  std::vector<std::string> inputs;
  std::string kernel = "fp8_blockscale";
  std::string timing = "graph";
  double min_us = 9.0;
  double off_by = 0.05;
  double anomaly_drop = 0.05;
  int worst = 15;
  bool table = false;
  bool fit = false;
  int iterations = 3000;
};

void report(const std::vector<ShapePoints>& shapes, const GridCostModel& model, const Fp8DeviceSpec& spec,
            const Options& options, const std::string& title) {
  std::printf("\n=== %s ===\n", title.c_str());
  std::vector<double> all_regrets;
  std::vector<PointVerdict> all_verdicts;
  std::vector<std::string> verdict_shape;
  std::size_t total = 0, unmeasured = 0, off = 0, caused_flags = 0;
  for (const ShapePoints& shape : shapes) {
    std::vector<double> regrets;
    std::vector<std::pair<int64_t, const Measured*>> chosen_along_m, best_along_m;
    std::size_t shape_unmeasured = 0, shape_off = 0;
    if (options.table)
      std::printf("\n%s\n%6s  %-14s %9s  %-14s %9s %9s  %7s\n", shape.label.c_str(), "M", "fastest", "us", "model's",
                  "us", "modelled", "regret");
    for (const auto& [m, at] : shape.by_m) {
      const GemmShape gemm{m, shape.n, shape.k, 1};
      PointVerdict verdict{m, &fastest(at), choose_fp8_blockscale_config(gemm, spec, model), nullptr};
      verdict.chosen_measured = find_measured(at, verdict.chosen);
      best_along_m.push_back({m, verdict.best});
      ++total;
      if (verdict.chosen_measured) {
        regrets.push_back(verdict.regret());
        chosen_along_m.push_back({m, verdict.chosen_measured});
        if (verdict.regret() > 1.0 + options.off_by) ++shape_off;
      } else {
        ++shape_unmeasured;
      }
      if (options.table)
        std::printf("%6lld  %-14s %9.1f  %-14s %9s %9.1f  %7s\n", static_cast<long long>(m),
                    tile_name(verdict.best->config).c_str(), verdict.best->us, tile_name(verdict.chosen).c_str(),
                    verdict.chosen_measured ? fmt::format("{:.1f}", verdict.chosen_measured->us).c_str() : "-",
                    model.microseconds(gemm, verdict.chosen, verdict.chosen.split_k, spec),
                    verdict.chosen_measured ? fmt::format("{:.3f}", verdict.regret()).c_str() : "unmeas.");
      all_verdicts.push_back(verdict);
      verdict_shape.push_back(shape.label);
    }
    all_regrets.insert(all_regrets.end(), regrets.begin(), regrets.end());
    unmeasured += shape_unmeasured;
    off += shape_off;
    const AnomalyCounts chosen = anomalies(shape, chosen_along_m, options.anomaly_drop);
    const AnomalyCounts best = anomalies(shape, best_along_m, options.anomaly_drop);
    std::printf("%s: %zu M, choice measured at %zu, geomean regret %.4f, %zu more than %.0f%% off\n", shape.label.c_str(),
                shape.by_m.size(), regrets.size(), geometric_mean(regrets), shape_off, 100 * options.off_by);
    caused_flags += std::size_t(std::count_if(chosen.flagged.begin(), chosen.flagged.end(), [&](const analyze::Anomaly& a) {
      return std::none_of(best.flagged.begin(), best.flagged.end(), [&](const analyze::Anomaly& b) { return b.m == a.m; });
    }));
    std::printf("  analyze flags the model's choices at:%s\n    of which the fastest tiles are flagged too:%s\n"
                "    the fastest tiles are flagged at:%s\n",
                list_flagged(chosen.flagged, best.flagged, false).c_str(),
                list_flagged(chosen.flagged, best.flagged, true).c_str(),
                list_flagged(best.flagged, {}, false).c_str());
    std::printf("  MFU >%.0f%% below a smaller M: %zu M with the model's choices, %zu with the fastest tiles; caused by "
                "the choice:%s\n",
                100 * options.anomaly_drop, chosen.mfu_drops.size(), best.mfu_drops.size(),
                list_caused_drops(chosen.mfu_drops, best.mfu_drops, options.anomaly_drop).c_str());
  }
  std::printf("\nALL: %zu points, choice measured at %zu (%zu unmeasured), geomean regret %.4f, %zu more than %.0f%% off; "
              "%zu analyze flags where the fastest tiles have none\n",
              total, all_regrets.size(), unmeasured, geometric_mean(all_regrets), off, 100 * options.off_by, caused_flags);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < all_verdicts.size(); ++i)
    if (all_verdicts[i].chosen_measured) order.push_back(i);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return all_verdicts[a].regret() > all_verdicts[b].regret(); });
  order.resize(std::min<std::size_t>(order.size(), std::size_t(options.worst)));
  std::printf("worst points:\n");
  for (const std::size_t i : order) {
    const PointVerdict& v = all_verdicts[i];
    std::printf("  %-40s M=%-5lld %-10s %8.1f us, fastest %-10s %8.1f us: regret %.3f\n", verdict_shape[i].c_str(),
                static_cast<long long>(v.m), tile_name(v.chosen).c_str(), v.chosen_measured->us,
                tile_name(v.best->config).c_str(), v.best->us, v.regret());
  }
  std::string unmeasured_list;
  for (std::size_t i = 0; i < all_verdicts.size(); ++i)
    if (!all_verdicts[i].chosen_measured)
      unmeasured_list += fmt::format("  {} M={}: {}\n", verdict_shape[i], all_verdicts[i].m,
                                     describe(all_verdicts[i].chosen));
  if (!unmeasured_list.empty()) std::printf("choices no profile ran (measure them to judge):\n%s", unmeasured_list.c_str());
  std::size_t fitted = 0;
  const double rms = rms_log_error(shapes, model, spec, options.min_us, &fitted);
  std::printf("fit: rms log(measured/modelled) %.4f over %zu measured configurations above %.0f us\n", rms, fitted,
              options.min_us);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"fp8_blockscale cost model against measured profiles (forced tiles): regret, anomalies, fit"};
  app.add_option("inputs", options.inputs, "profile CSVs or folders holding them (searched recursively)")->required();
  app.add_option("--kernel", options.kernel, "the kernel whose profiles are read");
  app.add_option("--timing", options.timing, "only profiles timed this way ('' for any)");
  app.add_option("--min-us", options.min_us, "the fit's points: measured above this");
  app.add_option("--worst", options.worst, "worst points listed");
  app.add_flag("--table", options.table, "print every point");
  app.add_flag("--fit", options.fit, "refit the constants and report their choices too");
  app.add_option("--iterations", options.iterations, "Nelder-Mead steps per restart");
  CLI11_PARSE(app, argc, argv);
  try {
    for (const char* forced :
         {"SHAPESCOPE_FP8_ROW_GROUPS", "SHAPESCOPE_FP8_BLOCK_N", "SHAPESCOPE_FP8_SPLIT_K", "SHAPESCOPE_FP8_TAIL_SPLITS"})
      if (std::getenv(forced))
        throw UserError(std::string(forced) + " is set: the model's own choice is wanted; unset it");
    const Fp8DeviceSpec spec = fp8_reference_spec();
    const std::vector<ShapePoints> shapes =
        read_points(profile_files(options.inputs, options.kernel), options.kernel, options.timing, spec.multiprocessors);
    const GridCostModel model;
    report(shapes, model, spec, options, "the compiled-in model");
    if (options.fit) {
      const GridCostModel fitted = fit(shapes, model, spec, options.min_us, options.iterations);
      std::printf("\nfitted constants:\n");
      for (const auto& [name, member] : fitted_constants())
        std::printf("  %-24s %12.5g (was %.5g)\n", name, fitted.*member, model.*member);
      report(shapes, fitted, spec, options, "the fitted constants");
    }
  } catch (const UserError& error) {
    std::fprintf(stderr, "cost_model_fit: %s\n", error.what());
    return 2;
  }
  return 0;
}
