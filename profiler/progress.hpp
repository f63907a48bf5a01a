// A one-line progress bar with ETA on stderr, redrawn in place.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace shapescope::profiler {

class Progress {
 public:
  // Draws nothing when disabled (stderr is not a terminal and --progress was not given).
  Progress(int64_t total_points, bool enabled);
  // One point done; `label` names what is being measured (e.g. the file and M).
  void advance(const std::string& label);
  // Ends the line so later output starts clean; the destructor does it too, however the sweep ends.
  void finish();
  ~Progress() { finish(); }

  // "1h02m", "3m05s", "42s" for an ETA.
  static std::string format_duration(double seconds);

 private:
  int64_t total_, done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace shapescope::profiler
