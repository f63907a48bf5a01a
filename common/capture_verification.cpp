#include "common/capture_verification.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

double saving_pct(double baseline_us, double candidate_us) {
  return baseline_us > 0 ? 100 * (baseline_us - candidate_us) / baseline_us : 0;
}

json list_json(const ListReplay& list) {
  return {{"key", list.key},
          {"label", list.label},
          {"sizes", list.sizes},
          {"report_expected_us", list.report_expected_us},
          {"predicted_us", list.predicted_us},
          {"measured_us", list.measured_us}};
}

// "in both", "default only": which of the two lists capture a size.
std::string lists_capturing(const CaptureVerification& verification, int64_t size) {
  const auto has = [&](const ListReplay& list) {
    return std::binary_search(list.sizes.begin(), list.sizes.end(), size);
  };
  const bool baseline = has(verification.baseline), candidate = has(verification.candidate);
  if (baseline && candidate) return "both";
  return baseline ? verification.baseline.key : verification.candidate.key;
}

double required_number(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) {
    throw UserError(fmt::format("{}: '{}' must be a number; rerun profile --verify-capture-sizes", where, key));
  }
  return object[key].get<double>();
}

ListReplay read_list(const json& root, const char* key, const std::string& path) {
  const std::string where = fmt::format("{}: {}", path, key);
  if (!root.contains(key) || !root[key].is_object()) {
    throw UserError(fmt::format("{}: no '{}' object; rerun profile --verify-capture-sizes", path, key));
  }
  const json& object = root[key];
  ListReplay list;
  list.key = object.value("key", "");
  list.label = object.value("label", list.key);
  if (object.contains("sizes") && object["sizes"].is_array()) {
    for (const json& size : object["sizes"]) {
      if (size.is_number_integer()) list.sizes.push_back(size.get<int64_t>());
    }
  }
  list.report_expected_us = required_number(object, "report_expected_us", where);
  list.predicted_us = required_number(object, "predicted_us", where);
  list.measured_us = required_number(object, "measured_us", where);
  return list;
}

}  // namespace

double CaptureVerification::predicted_saving_pct() const {
  return saving_pct(baseline.predicted_us, candidate.predicted_us);
}

double CaptureVerification::measured_saving_pct() const {
  return saving_pct(baseline.measured_us, candidate.measured_us);
}

std::vector<int64_t> sizes_serving_batches(const CaptureReportFile& report, const std::string& key) {
  report.list(key);  // names the lists when there is no such list
  std::set<int64_t> sizes;
  for (const CaptureReportBatch& batch : report.batches) {
    if (!(batch.weight > 0)) continue;
    const auto served = batch.served.find(key);
    if (served == batch.served.end()) {
      throw UserError(fmt::format("{}: batch {} names no size for list '{}'; pass the JSON analyze --capture-sizes "
                                  "--json wrote",
                                  report.path, batch.batch, key));
    }
    sizes.insert(served->second);
  }
  return {sizes.begin(), sizes.end()};
}

ListReplay replay_list(const CaptureReportFile& report, const std::string& key,
                       const std::vector<ReplayedSize>& sizes) {
  const CaptureReportList& listed = report.list(key);
  ListReplay list;
  list.key = listed.key;
  list.label = listed.label;
  list.sizes = listed.sizes;
  list.report_expected_us = listed.expected_step_us;
  double total_weight = 0;
  for (const CaptureReportBatch& batch : report.batches) {
    if (!(batch.weight > 0)) continue;
    const int64_t size = batch.served.at(key);
    const auto replayed = std::find_if(sizes.begin(), sizes.end(), [&](const ReplayedSize& r) { return r.size == size; });
    if (replayed == sizes.end()) throw std::out_of_range(fmt::format("size {} of list {} was not replayed", size, key));
    list.predicted_us += batch.weight * replayed->predicted_us;
    list.measured_us += batch.weight * replayed->measured_us;
    total_weight += batch.weight;
  }
  list.predicted_us /= total_weight;
  list.measured_us /= total_weight;
  return list;
}

json capture_verification_json(const CaptureVerification& verification) {
  json sizes = json::array();
  for (const ReplayedSize& size : verification.sizes) {
    sizes.push_back({{"size", size.size},
                     {"predicted_us", size.predicted_us},
                     {"measured_us", size.measured_us},
                     {"error_pct", size.error_pct()},
                     {"ci95_us", size.ci95_us},
                     {"samples", size.samples},
                     {"launches", size.launches},
                     {"weight_copies", size.weight_copies},
                     {"max_rel_err", size.max_rel_err},
                     {"kernels", size.kernels},
                     {"lists", lists_capturing(verification, size.size)},
                     {"note", size.note}});
  }
  const ListReplay& baseline = verification.baseline;
  const ListReplay& candidate = verification.candidate;
  return {{"tool", "shapescope profile --verify-capture-sizes"},
          {"device", verification.device},
          {"report", verification.report},
          {"model", verification.model},
          {"tp", verification.tp},
          {"timing", "graph"},
          {"programmatic_launch", verification.programmatic_launch},
          {"sizes", sizes},
          {"baseline", list_json(baseline)},
          {"candidate", list_json(candidate)},
          {"saving",
           {{"predicted_us", baseline.predicted_us - candidate.predicted_us},
            {"predicted_pct", verification.predicted_saving_pct()},
            {"measured_us", baseline.measured_us - candidate.measured_us},
            {"measured_pct", verification.measured_saving_pct()}}},
          {"notes", verification.notes}};
}

std::string capture_verification_text(const CaptureVerification& verification) {
  std::string text = fmt::format("capture-size replay of {} at tp{} on {} ({} sizes, graph timing{})\n",
                                 verification.model, verification.tp, verification.device, verification.sizes.size(),
                                 verification.programmatic_launch ? ", PDL on" : "");
  text += fmt::format("  {:>7}  {:<22} {:>8} {:>14} {:>13} {:>8}  {}\n", "size", "captured by", "GEMMs",
                      "predicted us", "measured us", "diff", "note");
  for (const ReplayedSize& size : verification.sizes) {
    text += fmt::format("  {:>7}  {:<22} {:>8} {:>14.1f} {:>13.1f} {:>+7.2f}%  {}\n", size.size,
                        lists_capturing(verification, size.size), size.launches, size.predicted_us, size.measured_us,
                        size.error_pct(), size.note);
  }
  text += fmt::format("  {:<56} {:>14} {:>13}\n", "expected step time sum_b w(b) T(size serving b)", "predicted us",
                      "measured us");
  for (const ListReplay* list : {&verification.baseline, &verification.candidate}) {
    text += fmt::format("  {:<56} {:>14.2f} {:>13.2f}\n", list->label, list->predicted_us, list->measured_us);
  }
  text += fmt::format("  saving of {} against {}: predicted {:.2f} us ({:+.2f}%), measured {:.2f} us ({:+.2f}%)\n",
                      verification.candidate.key, verification.baseline.key,
                      verification.baseline.predicted_us - verification.candidate.predicted_us,
                      verification.predicted_saving_pct(),
                      verification.baseline.measured_us - verification.candidate.measured_us,
                      verification.measured_saving_pct());
  for (const std::string& note : verification.notes) text += fmt::format("  note: {}\n", note);
  return text;
}

CaptureVerification read_capture_verification(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UserError(fmt::format("{}: cannot open; pass the file profile --verify-capture-sizes wrote", path));
  std::stringstream content;
  content << file.rdbuf();
  json root;
  try {
    root = json::parse(content.str());
  } catch (const json::exception& error) {  // parse_error, or out_of_range for a number past a double
    throw UserError(
        fmt::format("{}: not JSON ({}); pass the file profile --verify-capture-sizes wrote", path, error.what()));
  }
  if (!root.is_object() || !root.contains("sizes") || !root["sizes"].is_array()) {
    throw UserError(fmt::format("{}: no \"sizes\" array; pass the file profile --verify-capture-sizes wrote", path));
  }
  CaptureVerification verification;
  verification.device = root.value("device", "");
  verification.report = root.value("report", "");
  verification.model = root.value("model", "");
  verification.tp = root.value("tp", 0);
  verification.programmatic_launch = root.value("programmatic_launch", false);
  for (std::size_t i = 0; i < root["sizes"].size(); ++i) {
    const json& entry = root["sizes"][i];
    const std::string where = fmt::format("{}: sizes[{}]", path, i);
    if (!entry.is_object() || !entry.contains("size") || !entry["size"].is_number_integer()) {
      throw UserError(fmt::format("{}: needs an integer 'size'; rerun profile --verify-capture-sizes", where));
    }
    ReplayedSize size;
    size.size = entry["size"].get<int64_t>();
    size.predicted_us = required_number(entry, "predicted_us", where);
    size.measured_us = required_number(entry, "measured_us", where);
    size.launches = entry.value("launches", int64_t{0});
    size.note = entry.value("note", "");
    verification.sizes.push_back(std::move(size));
  }
  verification.baseline = read_list(root, "baseline", path);
  verification.candidate = read_list(root, "candidate", path);
  if (root.contains("notes") && root["notes"].is_array()) {
    for (const json& note : root["notes"]) {
      if (note.is_string()) verification.notes.push_back(note.get<std::string>());
    }
  }
  return verification;
}

}  // namespace shapescope
