// Which format a kernel runs a layer in: the layer's (or --operand-format's) where the kernel takes it, else
// the kernel's own (the first it lists): the bf16 baseline runs bf16 beside an FP4 layer, and in
// --grouped-preset nvfp4_targets the FP8 grouped kernel runs FP8 while the a16w4 one runs NVFP4.
#pragma once

#include <algorithm>

#include "common/block_format.hpp"

namespace shapescope::profiler {

template <class Entry>
bool takes_format(const Entry& entry, BlockFormatId format) {
  return std::find(entry.formats_taken.begin(), entry.formats_taken.end(), format) != entry.formats_taken.end();
}

template <class Entry>
BlockFormatId format_run_by(const Entry& entry, BlockFormatId layer_format) {
  if (entry.formats_taken.empty() || takes_format(entry, layer_format)) return layer_format;
  return entry.formats_taken.front();
}

}  // namespace shapescope::profiler
