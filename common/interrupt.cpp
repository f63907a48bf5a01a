#include "common/interrupt.hpp"

#include <signal.h>

namespace shapescope {

namespace {
volatile sig_atomic_t requested = 0;
extern "C" void on_signal(int) { requested = 1; }
}  // namespace

void install_interrupt_handlers() {
  requested = 0;  // a run in a process that outlives it (the Python entry point) starts uninterrupted
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return requested != 0; }

void set_interrupt_requested(bool value) { requested = value ? 1 : 0; }

}  // namespace shapescope
