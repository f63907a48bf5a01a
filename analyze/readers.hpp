// The input formats read_series_file knows, in detection order. A format is
// chosen when the header holds all its required columns; to add one, write a
// read_<format>_csv.cpp and list it in series_formats().
#pragma once

#include <string>
#include <vector>

#include "analyze/series.hpp"
#include "common/csv.hpp"

namespace shapescope::analyze {

// Reads every row as it stands into Series::points (unsorted, duplicates and
// failed rows included); read_series_file finalizes each series.
using SeriesReader = std::vector<Series> (*)(const csv::Table& table, const std::string& path,
                                             const ReadOptions& options);

struct SeriesFormat {
  std::string name;
  std::vector<std::string> required_columns;
  SeriesReader read;
};

const std::vector<SeriesFormat>& series_formats();

std::vector<Series> read_shapescope_csv(const csv::Table& table, const std::string& path, const ReadOptions& options);
std::vector<Series> read_study_csv(const csv::Table& table, const std::string& path, const ReadOptions& options);
std::vector<Series> read_aiter_csv(const csv::Table& table, const std::string& path, const ReadOptions& options);

}  // namespace shapescope::analyze
