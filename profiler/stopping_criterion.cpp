#include "profiler/stopping_criterion.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.hpp"
#include "profiler/measure.hpp"
#include "profiler/sample_stats.hpp"

namespace shapescope::profiler {

namespace {

class StderrCriterion : public StoppingCriterion {
 public:
  StderrCriterion(int min_samples, double target) : min_samples_(min_samples), target_(target) {}
  void add(double sample_us) override { samples_.push_back(sample_us); }
  bool done() const override { return precise_enough(samples_, min_samples_, target_); }

 private:
  std::vector<double> samples_;
  int min_samples_;
  double target_;
};

class Ci95Criterion : public StoppingCriterion {
 public:
  Ci95Criterion(int min_samples, double max_rel_ci95) : min_samples_(std::max(min_samples, 2)), max_(max_rel_ci95) {}
  void add(double sample_us) override { samples_.push_back(sample_us); }
  bool done() const override { return int(samples_.size()) >= min_samples_ && relative_ci95(samples_) <= max_; }

 private:
  std::vector<double> samples_;
  int min_samples_;
  double max_;
};

// The profile records the median, so this pins the median down: stderr's rule where the samples settle (a
// stable kernel stops at the same count), or else the median's distribution-free interval, which a few slow
// outliers (a clock dip, another process) widen by a rank each where they keep the mean's stderr up for
// hundreds of samples.
class MedianCi95Criterion : public StoppingCriterion {
 public:
  MedianCi95Criterion(int min_samples, double target_rel_stderr, double max_rel_median_ci95)
      : min_samples_(min_samples), target_(target_rel_stderr), max_(max_rel_median_ci95) {}
  void add(double sample_us) override { samples_.push_back(sample_us); }
  bool done() const override {
    if (precise_enough(samples_, min_samples_, target_)) return true;
    return int(samples_.size()) >= min_samples_ && relative_median_ci95(samples_) <= max_;
  }

 private:
  std::vector<double> samples_;
  int min_samples_;
  double target_;
  double max_;
};

}  // namespace

const std::vector<StoppingCriterionEntry>& stopping_criteria() {
  static const std::vector<StoppingCriterionEntry> entries = {
      {"stderr", "the mean's standard error below --target-rel-stderr, after --min-samples", {},
       [](const std::map<std::string, double>&, const MeasureOptions& options) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<StderrCriterion>(options.min_samples, options.target_rel_stderr);
       }},
      {"ci95", "the mean's 95% interval within max-rel-ci95 of it, after min-samples",
       {{"max-rel-ci95", 0.01}, {"min-samples", 3}},
       [](const std::map<std::string, double>& params, const MeasureOptions&) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<Ci95Criterion>(int(params.at("min-samples")), params.at("max-rel-ci95"));
       }},
      {"median-ci95",
       "stderr's rule, or the median's distribution-free 95% interval within max-rel-ci95 of it (outliers cost a "
       "rank, not hundreds of samples)",
       {{"max-rel-ci95", 0.01}},
       [](const std::map<std::string, double>& params, const MeasureOptions& options) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<MedianCi95Criterion>(options.min_samples, options.target_rel_stderr,
                                                      params.at("max-rel-ci95"));
       }},
  };
  return entries;
}

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureOptions& options) {
  const std::vector<StoppingCriterionEntry>& entries = stopping_criteria();
  std::vector<std::string> names;
  for (const StoppingCriterionEntry& entry : entries) {
    names.push_back(entry.name);
    if (entry.name != options.stopping_criterion) continue;
    std::map<std::string, double> params = entry.defaults;
    std::vector<std::string> known;
    for (const auto& [key, value] : entry.defaults) known.push_back(key);
    for (const auto& [key, value] : options.criterion_params) {
      if (!entry.defaults.count(key))
        throw UserError(fmt::format("--criterion-param {}: the {} criterion takes {}", key, entry.name,
                                    known.empty() ? std::string("no parameters") : fmt::format("{}", fmt::join(known, ", "))));
      if (!std::isfinite(value) || value <= 0)
        throw UserError(fmt::format("--criterion-param {}={}: give a positive number", key, value));
      params[key] = value;
    }
    return entry.make(params, options);
  }
  throw UserError(fmt::format("--stopping-criterion '{}': give one of {}", options.stopping_criterion,
                              fmt::join(names, ", ")));
}

void parse_criterion_param(const std::string& text, std::map<std::string, double>& params) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    throw UserError(fmt::format("--criterion-param '{}': give KEY=VALUE, e.g. max-rel-ci95=0.01", text));
  const std::string value = text.substr(equals + 1);
  try {
    std::size_t used = 0;
    params[text.substr(0, equals)] = std::stod(value, &used);
    if (used == value.size()) return;
  } catch (const std::exception&) {
  }
  throw UserError(fmt::format("--criterion-param '{}': '{}' is not a number", text, value));
}

}  // namespace shapescope::profiler
