#include "analyze/capture_command.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analyze/batch_distribution.hpp"
#include "analyze/capture_report.hpp"
#include "analyze/report_html.hpp"
#include "analyze/step_time_model.hpp"
#include "common/atomic_file.hpp"
#include "common/model_catalog.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

int run_capture_sizes(const AnalyzeRequest& request, const CaptureRequest& capture, std::ostream& out) {
  if (request.m_weights_path.empty()) {
    throw UserError("--capture-sizes needs --m-weights: a CSV m,weight or uniform:B, geometric:R, zipf:S");
  }
  if (!capture.report_path.empty() && std::filesystem::path(capture.report_path).extension() != ".html") {
    throw UserError(fmt::format("--report {}: --capture-sizes writes its report as a page; name it .html",
                                capture.report_path));
  }
  const MWeights weights = batch_distribution(request.m_weights_path, capture.options.max_batch);
  std::vector<Series> profiles;
  for (const std::string& input : request.inputs) {
    for (Series& series : read_series_file(input, request.read)) profiles.push_back(std::move(series));
  }
  const std::string& model_name = profiled_model(profiles);
  const ModelSpec spec = capture.hf_config.empty() ? ModelCatalog::load_default().model(model_name)
                                                   : model_from_hf_config(capture.hf_config, model_name);
  const StepTimeModel model = build_step_time_model(spec, profiles, capture.exclude_modules);
  const CaptureRecommendation recommendation = recommend_capture_sizes(model, weights, capture.options);

  print_capture_recommendation(out, recommendation);
  if (!request.json_path.empty()) {
    write_file_atomically(request.json_path, capture_recommendation_json(recommendation).dump(1) + "\n");
    fmt::print(out, "wrote {}\n", request.json_path);
  }
  if (!capture.report_path.empty()) {
    write_file_atomically(capture.report_path, render_capture_html(recommendation));
    fmt::print(out, "wrote {}\n", capture.report_path);
  }
  return 0;
}

}  // namespace shapescope::analyze
