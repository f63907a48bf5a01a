// SIGINT/SIGTERM turn into a flag that long steps check (between sweep points,
// in the CPU's peak measurement, the GPU warm-up, between setup steps), so
// `profile` writes what it measured and exits with status 130. In common/ so the
// kernels' own long loops can check it too.
#pragma once

namespace shapescope {

// Installs the handlers and clears the flag; `profile` calls it first thing, before any signal could kill it.
void install_interrupt_handlers();
bool interrupt_requested();
// For tests: pretend a signal arrived (or clear it).
void set_interrupt_requested(bool requested);

}  // namespace shapescope
