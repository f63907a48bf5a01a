#include "profiler/moe_routing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/csv.hpp"
#include "common/interrupt.hpp"
#include "common/size_limits.hpp"
#include "common/user_error.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::profiler {

namespace {

constexpr const char* kRoutingForms = "uniform, balanced, lognormal:SIGMA, zipf:S or file:CSV";

// A stream of uniform doubles in [0, 1) from (seed, stream): splitmix64 over a counter.
class CounterRandom {
 public:
  CounterRandom(uint64_t seed, uint64_t stream) : key_(kernels::synthetic::mix(seed ^ (stream * 0xA24BAED4963EE407ull))) {}
  double uniform() { return double(kernels::synthetic::mix(key_ + counter_++) >> 11) * 0x1p-53; }
  double normal() {  // Box-Muller; 1 - u keeps the logarithm finite
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return radius * std::cos(2.0 * std::numbers::pi * uniform());
  }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

enum Stream : uint64_t { popularity_stream = 11, token_stream = 12 };

double positive_parameter(const std::string& text, const std::string& value, const char* what) {
  double parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || value.empty() || !(parsed > 0) ||
      !std::isfinite(parsed)) {
    throw UserError(fmt::format("--routing {}: {} '{}' is not a positive number; e.g. --routing {}", text, what, value,
                                what == std::string("sigma") ? "lognormal:1.0" : "zipf:1.2"));
  }
  return parsed;
}

// Columns expert,tokens (any order, more columns ignored); each expert at most once, counts >= 0.
std::vector<double> read_histogram(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw UserError(fmt::format("--routing file:{}: no such file; give a CSV with columns expert,tokens", path));
  }
  const csv::Table table = csv::read_file(path);
  const int expert_column = table.column("expert"), tokens_column = table.column("tokens");
  if (expert_column < 0 || tokens_column < 0) {
    throw UserError(fmt::format("--routing file:{}: the header needs columns expert and tokens (one row per expert)",
                                path));
  }
  std::vector<double> histogram;
  std::set<int64_t> seen;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const std::string where = fmt::format("--routing file:{}:{}", path, table.row_lines[i]);
    const std::string& expert_text = table.rows[i][std::size_t(expert_column)];
    const std::string& tokens_text = table.rows[i][std::size_t(tokens_column)];
    int64_t expert = -1;
    const auto [expert_end, expert_error] =
        std::from_chars(expert_text.data(), expert_text.data() + expert_text.size(), expert);
    if (expert_error != std::errc() || expert_end != expert_text.data() + expert_text.size() || expert < 0 ||
        expert >= kMaxModelDimension) {
      throw UserError(fmt::format("{}: expert '{}' is not an expert index (0, 1, ... below {}); fix the row", where,
                                  expert_text, kMaxModelDimension));
    }
    double tokens = -1;
    const auto [tokens_end, tokens_error] =
        std::from_chars(tokens_text.data(), tokens_text.data() + tokens_text.size(), tokens);
    if (tokens_error != std::errc() || tokens_end != tokens_text.data() + tokens_text.size() || !(tokens >= 0) ||
        !std::isfinite(tokens)) {
      throw UserError(fmt::format("{}: tokens '{}' is not a count >= 0; fix the row", where, tokens_text));
    }
    if (!seen.insert(expert).second) {
      throw UserError(fmt::format("{}: expert {} appears twice; give each expert one row", where, expert));
    }
    if (std::size_t(expert) >= histogram.size()) histogram.resize(std::size_t(expert) + 1, 0.0);
    histogram[std::size_t(expert)] = tokens;
  }
  if (histogram.empty()) throw UserError(fmt::format("--routing file:{}: no rows; one row per expert", path));
  return histogram;
}

// Log-weights to weights relative to the largest, each at least the smallest normal double: a steep skew
// (zipf:1000, lognormal:1e300) neither overflows nor underflows to zero, so every expert stays drawable and a
// token always finds top_k distinct experts.
void popularity_from_logs(std::vector<double>& weights) {
  const double largest = *std::max_element(weights.begin(), weights.end());
  for (double& weight : weights) {
    const double relative = weight == largest ? 1.0 : std::exp(weight - largest);
    weight = relative >= std::numeric_limits<double>::min() ? relative : std::numeric_limits<double>::min();
  }
}

std::vector<double> draw_popularity(const RoutingSpec& spec, int64_t experts, int64_t top_k, uint64_t seed) {
  std::vector<double> popularity(std::size_t(experts), 1.0);
  CounterRandom random(seed, popularity_stream);
  switch (spec.kind) {
    case RoutingKind::uniform:
    case RoutingKind::balanced:
      break;
    case RoutingKind::lognormal:
      for (double& weight : popularity) weight = spec.parameter * random.normal();
      popularity_from_logs(popularity);
      break;
    case RoutingKind::zipf: {
      std::vector<int64_t> rank(static_cast<std::size_t>(experts));
      for (int64_t e = 0; e < experts; ++e) rank[std::size_t(e)] = e + 1;
      for (int64_t e = experts - 1; e > 0; --e)  // Fisher-Yates
        std::swap(rank[std::size_t(e)], rank[std::size_t(int64_t(random.uniform() * double(e + 1)))]);
      for (int64_t e = 0; e < experts; ++e)
        popularity[std::size_t(e)] = -spec.parameter * std::log(double(rank[std::size_t(e)]));
      popularity_from_logs(popularity);
      break;
    }
    case RoutingKind::histogram: {
      if (int64_t(spec.histogram.size()) > experts) {
        throw UserError(fmt::format("--routing {}: the histogram names expert {} but the layer has {} experts (0..{}); "
                                    "use a histogram of this model",
                                    spec.text(), spec.histogram.size() - 1, experts, experts - 1));
      }
      popularity.assign(std::size_t(experts), 0.0);
      std::copy(spec.histogram.begin(), spec.histogram.end(), popularity.begin());
      const int64_t used = std::count_if(popularity.begin(), popularity.end(), [](double w) { return w > 0; });
      if (used < top_k) {
        throw UserError(fmt::format("--routing {}: only {} experts received tokens, fewer than top_k={}; every token "
                                    "needs {} distinct experts",
                                    spec.text(), used, top_k, top_k));
      }
      break;
    }
  }
  return popularity;
}

}  // namespace

std::string RoutingSpec::text() const {
  switch (kind) {
    case RoutingKind::uniform:
      return "uniform";
    case RoutingKind::balanced:
      return "balanced";
    case RoutingKind::lognormal:
      return fmt::format("lognormal:{}", parameter);
    case RoutingKind::zipf:
      return fmt::format("zipf:{}", parameter);
    case RoutingKind::histogram:
      return "file:" + file;
  }
  return "unknown";
}

std::string RoutingSpec::label() const {
  switch (kind) {
    case RoutingKind::lognormal:
      return fmt::format("lognormal{}", parameter);
    case RoutingKind::zipf:
      return fmt::format("zipf{}", parameter);
    case RoutingKind::histogram: {
      std::string stem;
      for (const char c : std::filesystem::path(file).stem().string())
        stem += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
      return "file_" + stem;
    }
    default:
      return text();
  }
}

RoutingSpec parse_routing(const std::string& text) {
  RoutingSpec spec;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string value = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool has_value = colon != std::string::npos;
  if (kind == "uniform" || kind == "balanced") {
    if (has_value) throw UserError(fmt::format("--routing {}: {} takes no parameter; use --routing {}", text, kind, kind));
    spec.kind = kind == "uniform" ? RoutingKind::uniform : RoutingKind::balanced;
  } else if (kind == "lognormal") {
    spec.kind = RoutingKind::lognormal;
    spec.parameter = positive_parameter(text, value, "sigma");
  } else if (kind == "zipf") {
    spec.kind = RoutingKind::zipf;
    spec.parameter = positive_parameter(text, value, "exponent");
  } else if (kind == "file") {
    if (value.empty()) throw UserError("--routing file: needs a path, e.g. --routing file:histogram.csv");
    spec.kind = RoutingKind::histogram;
    spec.file = value;
    spec.histogram = read_histogram(value);
  } else {
    throw UserError(fmt::format("--routing '{}' is not one of {}", text, kRoutingForms));
  }
  return spec;
}

Router::Router(const RoutingSpec& spec, int64_t experts, int64_t top_k, uint64_t popularity_seed)
    : spec_(spec), experts_(experts), top_k_(top_k) {
  if (experts < 1 || top_k < 1 || top_k > experts) {
    throw UserError(fmt::format("routing needs 1 <= top_k <= experts (got top_k={}, experts={})", top_k, experts));
  }
  popularity_ = draw_popularity(spec, experts, top_k, popularity_seed);
  cumulative_.resize(popularity_.size());
  double sum = 0;
  for (std::size_t e = 0; e < popularity_.size(); ++e) cumulative_[e] = sum += popularity_[e];
}

std::vector<int64_t> Router::expert_rows(int64_t tokens, uint64_t token_seed) const {
  std::vector<int64_t> rows(std::size_t(experts_), 0);
  if (spec_.kind == RoutingKind::balanced) {
    // Pair index t * top_k + j goes to expert (t * top_k + j) mod E: top_k consecutive, so distinct.
    const int64_t pairs = tokens * top_k_;
    for (int64_t e = 0; e < experts_; ++e) rows[std::size_t(e)] = pairs / experts_ + (e < pairs % experts_ ? 1 : 0);
    return rows;
  }
  CounterRandom random(token_seed, token_stream);
  const double total = cumulative_.back();
  std::vector<int64_t> chosen;
  chosen.reserve(std::size_t(top_k_));
  constexpr int kMaxRedraws = 64;  // then draw exactly from the experts not chosen yet
  for (int64_t token = 0; token < tokens; ++token) {
    // Millions of tokens take seconds: an interrupt stops the draw (the caller then measures nothing).
    if (token % 65536 == 0 && interrupt_requested()) return rows;
    chosen.clear();
    while (int64_t(chosen.size()) < top_k_) {
      int64_t expert = -1;
      for (int attempt = 0; attempt < kMaxRedraws && expert < 0; ++attempt) {
        const double target = random.uniform() * total;
        const auto at = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
        const int64_t candidate = std::min<int64_t>(at - cumulative_.begin(), experts_ - 1);
        if (popularity_[std::size_t(candidate)] > 0 &&
            std::find(chosen.begin(), chosen.end(), candidate) == chosen.end())
          expert = candidate;
      }
      if (expert < 0) {
        double remaining = 0;
        for (int64_t e = 0; e < experts_; ++e)
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) remaining += popularity_[std::size_t(e)];
        double target = random.uniform() * remaining;
        for (int64_t e = 0; e < experts_ && expert < 0; ++e) {
          if (std::find(chosen.begin(), chosen.end(), e) != chosen.end() || popularity_[std::size_t(e)] <= 0) continue;
          target -= popularity_[std::size_t(e)];
          if (target < 0) expert = e;
        }
        if (expert < 0) {  // rounding left the target at the very end: the last expert still free
          for (int64_t e = experts_ - 1; e >= 0 && expert < 0; --e)
            if (popularity_[std::size_t(e)] > 0 && std::find(chosen.begin(), chosen.end(), e) == chosen.end()) expert = e;
        }
      }
      if (expert < 0) throw std::logic_error("routing found no free expert with tokens for a token's top_k");
      chosen.push_back(expert);
      ++rows[std::size_t(expert)];
    }
  }
  return rows;
}

std::vector<int64_t> local_rows(const std::vector<int64_t>& expert_rows, int64_t ep, int64_t rank) {
  const int64_t per_rank = int64_t(expert_rows.size()) / ep;
  return std::vector<int64_t>(expert_rows.begin() + rank * per_rank, expert_rows.begin() + (rank + 1) * per_rank);
}

}  // namespace shapescope::profiler
