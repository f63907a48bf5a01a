// `analyze --passes`: several passes over one sweep taken as one body of evidence.
// On noisy single-pass data the noise-aware rule can flag in one pass a batch the
// next pass does not repeat (a disturbed measurement), or miss in each pass alone a
// cliff both passes show. Here a batch is anomalous when its drop holds across the
// passes: it lies below the bar in every pass, and the passes' drops together exceed
// the noise. Each pass's drop below its own level (noise_aware_rule.hpp) is weighted
// by the inverse of its variance (the passes are independent measurements); the
// weighted drop must exceed z times its uncertainty, z being the largest of the
// passes' own. Every pass keeps its own reference window, and a batch flagged here
// leaves all of them. Runs and continued runs as in the single-pass rule, over the
// batches below the bar in every pass.
//
// Passes: told apart by a `pass` column, or one file each (the same N and K), over
// the M every pass measured. A `profile --repeat` file instead holds per M the
// median of its R passes, whose ci95 already spans them, and the fastest pass's
// time: there a batch holds when the single-pass rule flags the median and even the
// fastest pass lies below the bar of the fastest passes around it.
//
// Per anomaly (every M flagged here or by any pass alone) the report gives each
// pass's MFU, its drop below that pass's level, and whether the pass alone flagged it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/noise_aware_rule.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct PassReading {
  double utils = 0;
  double level = 0;  // that pass's level; 0 before it has a reference
  bool below_bar = false;
  bool flagged_alone = false;  // the single-pass rule flags it in this pass
  double drop() const { return level > 0 ? 1 - utils / level : 0; }
};

struct PassAnomaly {
  int64_t m = 0;
  bool holds = false;  // flagged on the passes' joint evidence
  std::vector<PassReading> passes;
};

struct PassAgreement {
  std::vector<std::string> labels;  // per pass
  std::size_t batches = 0;          // M every pass measured
  std::vector<PassAnomaly> anomalies;  // every M that holds or that a pass alone flags, ascending
  std::vector<int64_t> holding() const;
};

// Two or more passes of one sweep; throws UserError for fewer, or for series of another shape.
PassAgreement pass_agreement(const std::vector<Series>& passes, const NoiseAwareOptions& options);
// One profile whose rows aggregate passes (profile --repeat); throws UserError when no row does.
PassAgreement repeat_agreement(const Series& repeat, const NoiseAwareOptions& options);

// Passes read from `paths` (a `pass` column gives one per pass; a single repeat profile
// gives its median and fastest pass) and judged together.
PassAgreement pass_agreement_of_files(const std::vector<std::string>& paths, const ReadOptions& read,
                                      const NoiseAwareOptions& options);

std::string format_pass_agreement(const PassAgreement& agreement, std::size_t list_limit);

}  // namespace shapescope::analyze
