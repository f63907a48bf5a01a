#include "profiler/worker_timeline.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace shapescope::profiler {

namespace {

// One write per line with O_APPEND: a line is never interleaved, and a kill leaves at most the last one torn.
void append_line(const std::filesystem::path& path, const nlohmann::json& event) {
  const std::string line = event.dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the table is a report: a worker never fails for want of it
  [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace

double monotonic_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

std::filesystem::path worker_log_path(const std::filesystem::path& out, int slot) {
  return out / fmt::format("worker-{}.log", slot);
}

void log_worker_ready(const std::filesystem::path& out, int slot) {
  append_line(worker_log_path(out, slot), {{"event", "ready"}, {"pid", int(::getpid())}, {"t", monotonic_seconds()}});
}

void log_worker_shard(const std::filesystem::path& out, int slot, int shard, int64_t points, double start_s,
                      double end_s) {
  append_line(worker_log_path(out, slot), {{"event", "shard"},
                                           {"pid", int(::getpid())},
                                           {"shard", shard},
                                           {"points", points},
                                           {"start", start_s},
                                           {"end", end_s}});
}

void read_worker_log(const std::filesystem::path& out, int slot, WorkerTimeline& timeline) {
  std::ifstream in(worker_log_path(out, slot));
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) continue;
    try {
      if (event.at("event") == "ready") {
        for (WorkerProcess& process : timeline.processes)
          if (process.pid == event.at("pid").get<int>()) process.ready_s = event.at("t").get<double>();
      } else if (event.at("event") == "shard") {
        timeline.shards.push_back({event.at("shard").get<int>(), event.at("points").get<int64_t>(),
                                   event.at("start").get<double>(), event.at("end").get<double>()});
      }
    } catch (const nlohmann::json::exception&) {  // a line without the fields: torn or foreign
    }
  }
}

std::string worker_table(const std::vector<WorkerTimeline>& workers) {
  double run_end = 0;
  for (const WorkerTimeline& worker : workers)
    for (const WorkerProcess& process : worker.processes) run_end = std::max(run_end, process.ended_s);
  std::size_t name_width = 6;
  for (const WorkerTimeline& worker : workers) name_width = std::max(name_width, worker.description.size());
  std::string text = fmt::format("{:<{}}  {:>6}  {:>7}  {:>10}  {:>8}  {:>8}  {:>6}  {:>12}\n", "worker", name_width,
                                 "shards", "points", "start-up s", "busy s", "wall s", "busy", "idle at end");
  for (const WorkerTimeline& worker : workers) {
    if (worker.processes.empty()) continue;
    double startup = 0, busy = 0, first_start = worker.processes.front().started_s, last_end = 0;
    for (const WorkerProcess& process : worker.processes) {
      startup += (process.ready_s >= 0 ? process.ready_s : process.ended_s) - process.started_s;
      first_start = std::min(first_start, process.started_s);
      last_end = std::max(last_end, process.ended_s);
    }
    int64_t points = 0;
    for (const WorkerShard& shard : worker.shards) busy += shard.end_s - shard.start_s, points += shard.points;
    const double wall = last_end - first_start;
    text += fmt::format("{:<{}}  {:>6}  {:>7}  {:>10.1f}  {:>8.1f}  {:>8.1f}  {:>5.0f}%  {:>10.1f} s\n",
                        worker.description, name_width, worker.shards.size(), points, startup, busy, wall,
                        wall > 0 ? 100 * busy / wall : 0.0, run_end - last_end);
  }
  return text;
}

}  // namespace shapescope::profiler
