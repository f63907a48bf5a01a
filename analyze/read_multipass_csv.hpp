// Profiles that hold several passes of one sweep in one file, told apart by a
// `pass` column (e.g. data/h200/study_method_twice_*.csv:
// pass,batch,kernel_time,flops,utils). Each pass becomes its own Series, read
// by the format its other columns match, so stability can compare them.
#pragma once

#include <string>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

// One Series per distinct `pass` value, in order of first appearance, named
// "<file stem> pass <value>". Throws UserError when the file has no `pass` column.
std::vector<Series> read_multipass_csv(const std::string& path, const ReadOptions& options);

// A file with a `pass` column gives one Series per pass; any other file is read by read_series_file.
std::vector<Series> read_series_or_passes(const std::string& path, const ReadOptions& options);

}  // namespace shapescope::analyze
