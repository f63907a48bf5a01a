// The git commit the binaries were built from (the sidecar's provenance); a device
// machine runs carried binaries without a checkout, so it is fixed at build time.
#pragma once

namespace shapescope::profiler {

extern const char* const kBuildCommit;

}  // namespace shapescope::profiler
