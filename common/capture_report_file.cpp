#include "common/capture_report_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/size_limits.hpp"
#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

constexpr const char* kFix = "pass the JSON analyze --capture-sizes --json wrote";

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  // object[key] of the JSON type `is` accepts; `where` names the object for the message.
  const json& need(const json& object, const char* key, const std::string& where, bool (json::*is)() const noexcept,
                   const char* type) const {
    if (!object.is_object() || !object.contains(key)) fail(fmt::format("{} has no '{}'", where, key));
    const json& value = object[key];
    if (!(value.*is)()) fail(fmt::format("{}'s '{}' is not {}", where, key, type));
    return value;
  }
  int64_t integer(const json& object, const char* key, const std::string& where) const {
    return need(object, key, where, &json::is_number_integer, "an integer").get<int64_t>();
  }
  // An integer from 1 to `most`.
  int64_t count(const json& object, const char* key, const std::string& where, int64_t most) const {
    const int64_t value = integer(object, key, where);
    if (value < 1 || value > most) fail(fmt::format("{}'s '{}' is {}; expected 1 to {}", where, key, value, most));
    return value;
  }
  double number(const json& object, const char* key, const std::string& where) const {
    return need(object, key, where, &json::is_number, "a number").get<double>();
  }
  std::string text(const json& object, const char* key, const std::string& where) const {
    return need(object, key, where, &json::is_string, "a string").get<std::string>();
  }
  const json& array(const json& object, const char* key, const std::string& where) const {
    return need(object, key, where, &json::is_array, "an array");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw UserError(fmt::format("{}: {}; {}", path_, what, kFix));
  }

 private:
  std::string path_;
};

json parse_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UserError(fmt::format("{}: cannot open; {}", path, kFix));
  std::stringstream content;
  content << file.rdbuf();
  try {
    return json::parse(content.str());
  } catch (const json::exception& error) {  // parse_error, or out_of_range for a number past a double
    throw UserError(fmt::format("{}: not JSON ({}); {}", path, error.what(), kFix));
  }
}

CaptureReportModule read_module(const Reader& reader, const json& entry, const std::string& where) {
  CaptureReportModule module;
  module.module = reader.text(entry, "module", where);
  const std::string named = fmt::format("{} ({})", where, module.module);
  module.n = reader.count(entry, "n", named, kMaxModelDimension);
  module.k = reader.count(entry, "k", named, kMaxModelDimension);
  module.batch_count = reader.count(entry, "batch_count", named, kMaxModelDimension);
  module.layers = reader.count(entry, "layers", named, kMaxModelLayers);
  module.cost_model = reader.text(entry, "cost_model", named);
  const json& points = reader.array(entry, "points", named);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string point = fmt::format("{} points[{}]", named, i);
    module.kernel_at[reader.count(points[i], "m", point, kMaxBatchTokens)] = reader.text(points[i], "kernel", point);
  }
  return module;
}

}  // namespace

const CaptureReportList& CaptureReportFile::list(const std::string& key) const {
  const auto found = std::find_if(lists.begin(), lists.end(), [&](const CaptureReportList& l) { return l.key == key; });
  if (found == lists.end()) {
    std::vector<std::string> keys;
    for (const CaptureReportList& l : lists) keys.push_back(l.key);
    throw UserError(fmt::format("{}: no list '{}' (its lists: {})", path, key, fmt::join(keys, ", ")));
  }
  return *found;
}

CaptureReportFile read_capture_report(const std::string& path) {
  const json root = parse_file(path);
  const Reader reader(path);
  if (!root.is_object()) reader.fail("not a JSON object");
  CaptureReportFile report;
  report.path = path;
  report.model = reader.text(root, "model", "the report");
  report.tp = static_cast<int>(reader.count(root, "tp", "the report", kMaxModelDimension));
  report.device = root.value("device", "");
  report.recommended = reader.text(root, "recommended", "the report");

  const json& grid = reader.array(root, "grid", "the report");
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const std::string where = fmt::format("grid[{}]", i);
    report.step_us[reader.count(grid[i], "m", where, kMaxBatchTokens)] = reader.number(grid[i], "step_us", where);
  }
  const json& modules = reader.array(root, "modules", "the report");
  if (modules.empty()) reader.fail("'modules' is empty");
  for (std::size_t i = 0; i < modules.size(); ++i) {
    report.modules.push_back(read_module(reader, modules[i], fmt::format("modules[{}]", i)));
  }
  const json& lists = reader.array(root, "lists", "the report");
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const std::string where = fmt::format("lists[{}]", i);
    CaptureReportList list;
    list.key = reader.text(lists[i], "key", where);
    list.label = lists[i].value("label", list.key);
    for (const json& size : reader.array(lists[i], "sizes", where)) {
      if (!size.is_number_integer() || size.get<int64_t>() < 1 || size.get<int64_t>() > kMaxBatchTokens)
        reader.fail(fmt::format("{}'s 'sizes' must hold integers from 1 to {}", where, kMaxBatchTokens));
      list.sizes.push_back(size.get<int64_t>());
    }
    list.expected_step_us = reader.number(lists[i], "expected_step_us", where);
    report.lists.push_back(std::move(list));
  }
  report.list(report.recommended);  // the recommended key must name a list

  const json& batches = reader.array(root, "batches", "the report");
  if (batches.empty()) reader.fail("'batches' is empty");
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const std::string where = fmt::format("batches[{}]", i);
    CaptureReportBatch batch;
    batch.batch = reader.count(batches[i], "batch", where, kMaxBatchTokens);
    batch.weight = reader.number(batches[i], "weight", where);
    const json& served = reader.need(batches[i], "served", where, &json::is_object, "an object");
    for (const auto& [key, use] : served.items()) {
      batch.served[key] = reader.count(use, "size", fmt::format("{} served '{}'", where, key), kMaxBatchTokens);
    }
    report.batches.push_back(std::move(batch));
  }
  return report;
}

}  // namespace shapescope
