#include "profiler/interrupt.hpp"

#include <csignal>

namespace shapescope::profiler {

namespace {
volatile std::sig_atomic_t requested = 0;
extern "C" void on_signal(int) { requested = 1; }
}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupt_requested() { return requested != 0; }

void set_interrupt_requested(bool value) { requested = value ? 1 : 0; }

}  // namespace shapescope::profiler
