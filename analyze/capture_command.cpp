#include "analyze/capture_command.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analyze/batch_distribution.hpp"
#include "analyze/capture_report.hpp"
#include "analyze/report_html.hpp"
#include "analyze/step_time_model.hpp"
#include "common/atomic_file.hpp"
#include "common/capture_verification.hpp"
#include "common/model_catalog.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// A replay belongs to this recommendation when it ran the same model and TP and compared lists of these sizes.
void check_replay_matches(const CaptureVerification& replay, const std::string& path,
                          const CaptureRecommendation& recommendation) {
  const StepTimeModel& model = *recommendation.model;
  if (replay.model != model.model || replay.tp != model.tp) {
    throw UserError(fmt::format("--capture-replay {}: it replayed {} at tp{}, these profiles are {} at tp{}; pass the "
                                "replay of this recommendation",
                                path, replay.model, replay.tp, model.model, model.tp));
  }
  for (const ListReplay* replayed : {&replay.baseline, &replay.candidate}) {
    const bool listed = std::any_of(recommendation.lists.begin(), recommendation.lists.end(), [&](const auto& list) {
      return list.key == replayed->key && list.evaluation.sizes == replayed->sizes;
    });
    if (!listed) {
      throw UserError(fmt::format("--capture-replay {}: its list {} is not a list of this recommendation (other "
                                  "options or profiles); replay this recommendation's --json",
                                  path, replayed->key));
    }
  }
}

}  // namespace

int run_capture_sizes(const AnalyzeRequest& request, const CaptureRequest& capture, std::ostream& out) {
  if (request.m_weights_path.empty()) {
    throw UserError("--capture-sizes needs --m-weights: a CSV m,weight or uniform:B, geometric:R, zipf:S");
  }
  if (!capture.report_path.empty() && std::filesystem::path(capture.report_path).extension() != ".html") {
    throw UserError(fmt::format("--report {}: --capture-sizes writes its report as a page; name it .html",
                                capture.report_path));
  }
  std::optional<CaptureVerification> replay;
  if (!capture.replay_path.empty()) replay = read_capture_verification(capture.replay_path);
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
  if (replay) check_replay_matches(*replay, capture.replay_path, recommendation);

  print_capture_recommendation(out, recommendation);
  if (replay) fmt::print(out, "--capture-replay {}:\n{}", capture.replay_path, capture_verification_text(*replay));
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
