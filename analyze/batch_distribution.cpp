#include "analyze/batch_distribution.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

constexpr const char* kShapes = "uniform:B, geometric:R (0 < R < 1), zipf:S (S > 0)";

// The whole of `text` as a finite number, else nullopt.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A named shape weighs every batch from 1 to its last one by one: a million batch sizes is beyond any engine
// (vLLM's max_num_seqs is in the hundreds), and a typo of 10^12 must not run for hours.
constexpr int64_t kMaxDistributionBatch = int64_t(1) << 20;

int64_t checked_last(const std::string& spec, int64_t last) {
  if (last < 1 || last > kMaxDistributionBatch) {
    throw UserError(fmt::format("--m-weights {}: the largest batch {} must lie from 1 to {}", spec, last,
                                kMaxDistributionBatch));
  }
  return last;
}

// Named shapes without a natural end stop at the engine's largest batch.
int64_t largest_batch(const std::string& spec, std::optional<int64_t> max_batch) {
  if (!max_batch) throw UserError(fmt::format("--m-weights {} has no largest batch; add --max-batch B", spec));
  return checked_last(spec, *max_batch);
}

}  // namespace

MWeights batch_distribution(const std::string& spec, std::optional<int64_t> max_batch) {
  std::error_code error;
  if (std::filesystem::is_regular_file(spec, error)) return MWeights::read(spec);
  const std::size_t colon = spec.find(':');
  const std::string shape = spec.substr(0, colon);
  const std::optional<double> parameter =
      colon == std::string::npos ? std::nullopt : parse_number(spec.substr(colon + 1));
  if (shape != "uniform" && shape != "geometric" && shape != "zipf") {
    throw UserError(fmt::format("--m-weights {}: no such file and not a named distribution; pass a CSV m,weight or "
                                "one of {}",
                                spec, kShapes));
  }
  const bool given = parameter.has_value();
  const double value = parameter.value_or(0);
  std::map<int64_t, double> weights;
  if (shape == "uniform") {
    if (!given || value < 1 || value != std::floor(value)) {
      throw UserError(fmt::format("--m-weights {}: B must be a positive integer (e.g. uniform:256)", spec));
    }
    const int64_t last = checked_last(spec, value > double(kMaxDistributionBatch) ? kMaxDistributionBatch + 1
                                                                                  : static_cast<int64_t>(value));
    if (max_batch && last > *max_batch) {
      throw UserError(fmt::format("--m-weights {} reaches batch {}, beyond --max-batch {}; lower B or raise "
                                  "--max-batch",
                                  spec, last, *max_batch));
    }
    for (int64_t batch = 1; batch <= last; ++batch) weights[batch] = 1.0;
  } else if (shape == "geometric") {
    if (!given || !(value > 0 && value < 1)) {
      throw UserError(fmt::format("--m-weights {}: R must lie strictly between 0 and 1 (e.g. geometric:0.98)", spec));
    }
    const int64_t last = largest_batch(spec, max_batch);
    for (int64_t batch = 1; batch <= last; ++batch) weights[batch] = std::pow(value, batch - 1);
  } else {
    if (!given || !(value > 0)) {
      throw UserError(fmt::format("--m-weights {}: S must be positive (e.g. zipf:1.2)", spec));
    }
    const int64_t last = largest_batch(spec, max_batch);
    for (int64_t batch = 1; batch <= last; ++batch) weights[batch] = std::pow(static_cast<double>(batch), -value);
  }
  return MWeights::from_weights(std::move(weights), spec);
}

}  // namespace shapescope::analyze
