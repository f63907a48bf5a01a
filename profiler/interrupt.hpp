// SIGINT/SIGTERM turn into a flag the sweep checks between points, so it can
// write what it measured before exiting with status 130.
#pragma once

namespace shapescope::profiler {

void install_interrupt_handlers();
bool interrupt_requested();
// For tests: pretend a signal arrived (or clear it).
void set_interrupt_requested(bool requested);

}  // namespace shapescope::profiler
