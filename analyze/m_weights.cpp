#include "analyze/m_weights.hpp"

#include <cmath>

#include <fmt/format.h>

#include "analyze/csv_fields.hpp"
#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

MWeights MWeights::read(const std::string& path) {
  const csv::Table table = csv::read_file(path);
  const std::string missing = missing_columns(table, {"m", "weight"});
  if (!missing.empty()) {
    throw UserError(fmt::format("{}:1: missing column(s) {}; an M histogram has columns m,weight", path, missing));
  }
  MWeights result;
  result.uniform_ = false;
  result.source_ = path;
  double total = 0;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const CsvRecord record(table, row, path);
    const int64_t m = record.integer("m");
    const double weight = record.number("weight");
    if (weight < 0) throw UserError(fmt::format("{}: weight {} is negative; use 0 or more", record.where(), weight));
    total += weight;
    if (!std::isfinite(total)) {
      throw UserError(fmt::format("{}: the weights so far sum past the largest double; give relative weights "
                                  "(shares or counts)", record.where()));
    }
    if (!result.weights_.emplace(m, weight).second) {
      throw UserError(fmt::format("{}: M={} appears twice; list each M once", record.where(), m));
    }
  }
  if (result.weights_.empty()) throw UserError(fmt::format("{}: no rows; list m,weight pairs", path));
  return result;
}

MWeights MWeights::from_weights(std::map<int64_t, double> weights, std::string source) {
  MWeights result;
  result.uniform_ = false;
  result.weights_ = std::move(weights);
  result.source_ = std::move(source);
  return result;
}

double MWeights::weight(int64_t m) const {
  if (uniform_) return 1.0;
  const auto it = weights_.find(m);
  return it == weights_.end() ? 0.0 : it->second;
}

}  // namespace shapescope::analyze
