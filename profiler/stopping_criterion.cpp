#include "profiler/stopping_criterion.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.hpp"
#include "profiler/measure.hpp"
#include "profiler/noise_history.hpp"
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

// median-ci95's rule: stderr's, or the median's distribution-free interval within `max_rel_median_ci95`.
bool median_rule_holds(std::span<const double> samples, int min_samples, double target_rel_stderr,
                       double max_rel_median_ci95) {
  if (precise_enough(samples, min_samples, target_rel_stderr)) return true;
  return int(samples.size()) >= min_samples && relative_median_ci95(samples) <= max_rel_median_ci95;
}

// The profile records the median, so this pins the median down: stderr's rule where the samples settle (a
// stable kernel stops at the same count), or else the median's distribution-free interval, which a few slow
// outliers (a clock dip, another process) widen by a rank each where they keep the mean's stderr up for
// hundreds of samples.
class MedianCi95Criterion : public StoppingCriterion {
 public:
  MedianCi95Criterion(int min_samples, double target_rel_stderr, double max_rel_median_ci95)
      : min_samples_(min_samples), target_(target_rel_stderr), max_(max_rel_median_ci95) {}
  void add(double sample_us) override { samples_.push_back(sample_us); }
  bool done() const override { return median_rule_holds(samples_, min_samples_, target_, max_); }

 private:
  std::vector<double> samples_;
  int min_samples_;
  double target_;
  double max_;
};

// A point's own variance above the pool's by more than this tail of F(n - 1, pool dof) is no sample of the
// pool's spread: 5% of the points that are fall back to the per-point rule (a few samples more each).
constexpr double kGuardTail = 0.05;
// A point whose variance exceeds the pool's beyond this tail stays out of the pool (a spike would widen its
// neighbours' intervals for a window); only so far out, since leaving out the top 5% of a pool's own points
// would bias it low (and a bimodal kernel's points, most of them in one mode, lower still).
constexpr double kPoolOutlierTail = 0.01;

class PooledCi95Criterion : public StoppingCriterion {
 public:
  struct Settings {
    int min_samples;
    double max_rel_ci95;
    int window;
    int min_pool_dof;
  };
  PooledCi95Criterion(const Settings& settings, const MeasureOptions& options, const NoiseHistory* history)
      : settings_(settings), per_point_min_samples_(options.min_samples), target_rel_stderr_(options.target_rel_stderr) {
    if (history) pool_ = history->pooled(settings.window);
    pooled_ = has_pool_ = pool_.dof >= settings.min_pool_dof && pool_.relative_variance > 0;
  }
  void add(double sample_us) override {
    samples_.push_back(sample_us);
    if (done_) return;
    const int n = int(samples_.size());
    // Where the pool cannot stop the point (too few samples yet, a pool too wide for the bar at n, or a point
    // noisier than it), median-ci95's rule does: stderr's rule is part of it, so on the same samples this
    // criterion never takes more than stderr, and a noisy stretch costs what stderr's rule asks.
    if (pooled_ && n >= std::max(settings_.min_samples, 2) && median_half_width(n) <= settings_.max_rel_ci95) {
      const PointNoise own = point_noise(samples_);
      if (own.dof > 0 && own.relative_variance <= pool_.relative_variance *
                                                       upper_variance_ratio_quantile(kGuardTail, own.dof, pool_.dof)) {
        done_ = stopped_on_pool_ = true;
        return;
      }
      pooled_ = false;  // noisier than its neighbours: this point goes by its own samples from here on
    }
    done_ = median_rule_holds(samples_, per_point_min_samples_, target_rel_stderr_, settings_.max_rel_ci95);
  }
  bool done() const override { return done_; }
  bool joins_pool() const override {
    const PointNoise own = point_noise(samples_);
    return !has_pool_ || own.dof == 0 ||
           own.relative_variance <= pool_.relative_variance * upper_variance_ratio_quantile(kPoolOutlierTail, own.dof, pool_.dof);
  }
  std::optional<double> recorded_relative_ci95() const override {
    if (!stopped_on_pool_) return std::nullopt;
    return student_t_975(pool_.dof) * std::sqrt(pool_.relative_variance / double(samples_.size()));
  }

 private:
  // The pooled 95% half-width of the median of n samples, over it.
  double median_half_width(int n) const {
    return student_t_975(pool_.dof) * std::sqrt(median_variance_factor(n) * pool_.relative_variance / n);
  }

  Settings settings_;
  int per_point_min_samples_;
  double target_rel_stderr_;
  PooledNoise pool_;
  bool pooled_ = false;
  bool done_ = false;
  bool stopped_on_pool_ = false;
  bool has_pool_ = false;
  std::vector<double> samples_;
};

}  // namespace

const std::vector<StoppingCriterionEntry>& stopping_criteria() {
  static const std::vector<StoppingCriterionEntry> entries = {
      {"stderr", "the mean's standard error below --target-rel-stderr, after --min-samples", {},
       [](const std::map<std::string, double>&, const MeasureOptions& options,
          const NoiseHistory*) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<StderrCriterion>(options.min_samples, options.target_rel_stderr);
       }},
      {"ci95", "the mean's 95% interval within max-rel-ci95 of it, after min-samples",
       {{"max-rel-ci95", 0.01}, {"min-samples", 3}},
       [](const std::map<std::string, double>& params, const MeasureOptions&,
          const NoiseHistory*) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<Ci95Criterion>(int(params.at("min-samples")), params.at("max-rel-ci95"));
       }},
      {"median-ci95",
       "stderr's rule, or the median's distribution-free 95% interval within max-rel-ci95 of it (outliers cost a "
       "rank, not hundreds of samples)",
       {{"max-rel-ci95", 0.01}},
       [](const std::map<std::string, double>& params, const MeasureOptions& options,
          const NoiseHistory*) -> std::unique_ptr<StoppingCriterion> {
         return std::make_unique<MedianCi95Criterion>(options.min_samples, options.target_rel_stderr,
                                                      params.at("max-rel-ci95"));
       }},
      {"pooled-ci95",
       "the median's 95% interval within max-rel-ci95 of it by the spread pooled over the sweep's last `window` "
       "points, from min-samples; median-ci95's rule where the pool cannot stop the point (never more samples "
       "than stderr)",
       {{"max-rel-ci95", 0.01}, {"min-samples", 3}, {"window", 8}, {"min-pool-dof", 8}},
       [](const std::map<std::string, double>& params, const MeasureOptions& options,
          const NoiseHistory* history) -> std::unique_ptr<StoppingCriterion> {
         const PooledCi95Criterion::Settings settings{int(params.at("min-samples")), params.at("max-rel-ci95"),
                                                      int(params.at("window")), int(params.at("min-pool-dof"))};
         return std::make_unique<PooledCi95Criterion>(settings, options, history);
       }},
  };
  return entries;
}

namespace {

// The entry named by options.stopping_criterion and every parameter it takes: the given ones over its defaults.
std::pair<const StoppingCriterionEntry*, std::map<std::string, double>> resolve(const MeasureOptions& options) {
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
    return {&entry, params};
  }
  throw UserError(fmt::format("--stopping-criterion '{}': give one of {}", options.stopping_criterion,
                              fmt::join(names, ", ")));
}

}  // namespace

std::map<std::string, double> stopping_criterion_params(const MeasureOptions& options) { return resolve(options).second; }

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureOptions& options, const NoiseHistory* history) {
  const auto [entry, params] = resolve(options);
  return entry->make(params, options, history);
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
