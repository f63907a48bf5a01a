// How sensitive the anomaly rules are, measured on synthetic sweeps with ground
// truth (analyze/synthetic_sweep.hpp: heteroscedastic AR(1) noise, slow clock
// drift, outliers; injected single-batch, multi-batch and kernel-switch cliffs
// of -15..-50%). Per noise level and rule it prints the share of cliffs found
// and the false alarms per 1000 batches.
//
// Scatter ±s: 95% of a cliff-free batch's noise lies within ±s of its level
// (σ = s/1.96), at the sweep's nominal loudness (small M is up to 4/3 louder,
// large M 3/4).
// Found (analyze/rule_sensitivity.hpp): a single-batch cliff when its own M is
// flagged; a multi-batch or kernel-switch cliff when a flag lies at its first M
// or within ±1 batch of it.
// False alarm: a flag at an M with no injected change (outside every cliff's
// batches, a single-batch cliff's ±3 shoulder batches and a longer cliff's
// neighbour on either side), per 1000 such batches; counted on the sweeps with
// cliffs and on as many cliff-free sweeps of the same noise.
//
// Each sweep with cliffs holds every (kind, depth) once, so a cell of the table
// is `--sweeps` cliffs. Seeds are the sweep's index from `--seed`: the figures
// are the same on every machine.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analyze/anomaly.hpp"
#include "analyze/rule_sensitivity.hpp"
#include "analyze/synthetic_sweep.hpp"
#include "common/user_error.hpp"

namespace {

using namespace shapescope::analyze;

const std::vector<CliffKind> kKinds = {CliffKind::single_batch, CliffKind::multi_batch, CliffKind::kernel_switch};
const std::vector<double> kDepths = {0.15, 0.2, 0.3, 0.4, 0.5};

struct RuleTallies {
  SensitivityTally with_cliffs, cliff_free;
};

std::vector<int64_t> flagged_ms(const Series& series, AnomalyRule rule) {
  std::vector<int64_t> ms;
  for (const Anomaly& anomaly : find_anomalies(series, rule, {})) ms.push_back(anomaly.m);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t sweeps = 200, batches = 2000;
  uint64_t seed = 1;
  std::vector<double> scatters = {2, 5, 10, 15, 20};
  std::vector<std::string> rule_names = {"study", "noise-aware"};
  CLI::App app{"anomaly rule sensitivity on synthetic sweeps with injected cliffs"};
  app.add_option("--sweeps", sweeps, "sweeps with cliffs per noise level (and as many cliff-free ones)")
      ->capture_default_str();
  app.add_option("--batches", batches, "batches per sweep")->capture_default_str();
  app.add_option("--seed", seed, "seed of the first sweep")->capture_default_str();
  app.add_option("--scatter", scatters, "noise levels ±s in percent")->capture_default_str();
  app.add_option("--rule", rule_names, "rules to measure: study, noise-aware")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<AnomalyRule> rules;
    for (const std::string& name : rule_names) rules.push_back(parse_anomaly_rule(name));
    std::vector<CliffRequest> cliffs;
    for (const CliffKind kind : kKinds) {
      for (const double depth : kDepths) cliffs.push_back({kind, depth});
    }

    std::string table = fmt::format(
        "rule sensitivity: per noise level {} sweeps of {} batches with {} cliffs each (every kind x depth once) and "
        "{} cliff-free sweeps; seeds {}..{}\n",
        sweeps, batches, cliffs.size(), sweeps, seed, seed + sweeps - 1);
    table += "found: single-batch at its M; multi-batch / kernel-switch at its first M +-1 batch. "
             "false alarm: a flag at an M with no injected change.\n\n";
    std::string header = fmt::format("{:<8} {:<14} {:<12}", "scatter", "cliff", "rule");
    for (const double depth : kDepths) header += fmt::format(" {:>6}", fmt::format("-{:g}%", 100 * depth));
    table += header + "\n";

    std::vector<std::vector<RuleTallies>> tallies(scatters.size(), std::vector<RuleTallies>(rules.size()));
    for (std::size_t level = 0; level < scatters.size(); ++level) {
      for (std::size_t s = 0; s < sweeps; ++s) {
        SweepSpec spec;
        spec.batches = batches;
        spec.scatter = scatters[level] / 100;
        spec.seed = seed + s;
        SweepSpec clean = spec;
        spec.cliffs = cliffs;
        const SyntheticSweep with_cliffs = synthetic_sweep(spec);
        const SyntheticSweep cliff_free = synthetic_sweep(clean);
        for (std::size_t r = 0; r < rules.size(); ++r) {
          tallies[level][r].with_cliffs.add(with_cliffs, flagged_ms(with_cliffs.series, rules[r]));
          tallies[level][r].cliff_free.add(cliff_free, flagged_ms(cliff_free.series, rules[r]));
        }
      }
      for (const CliffKind kind : kKinds) {
        for (std::size_t r = 0; r < rules.size(); ++r) {
          std::string row = fmt::format("{:<8} {:<14} {:<12}", fmt::format("±{:g}%", scatters[level]),
                                        to_string(kind), to_string(rules[r]));
          for (const double depth : kDepths) {
            row += fmt::format(" {:>5.1f}%", 100 * tallies[level][r].with_cliffs.detection[{kind, depth}].rate());
          }
          table += row + "\n";
        }
      }
    }
    table += fmt::format("\nfalse alarms per 1000 batches with no injected change\n{:<8} {:<12} {:>12} {:>14}\n",
                         "scatter", "rule", "cliff-free", "beside cliffs");
    for (std::size_t level = 0; level < scatters.size(); ++level) {
      for (std::size_t r = 0; r < rules.size(); ++r) {
        table += fmt::format("{:<8} {:<12} {:>12.3f} {:>14.3f}\n", fmt::format("±{:g}%", scatters[level]),
                             to_string(rules[r]), tallies[level][r].cliff_free.false_alarms_per_1000(),
                             tallies[level][r].with_cliffs.false_alarms_per_1000());
      }
    }
    std::fputs(table.c_str(), stdout);
  } catch (const shapescope::UserError& error) {
    std::fprintf(stderr, "rule_sensitivity: %s\n", error.what());
    return 2;
  }
  return 0;
}
