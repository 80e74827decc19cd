#include "engine/stop_signals.hpp"

#include <csignal>

#include "common/stop_request.hpp"

namespace mdsim {

namespace {

extern "C" void on_stop_signal(int) { StopSignals::requested().store(true); }

// Catches `signal` unless the process ignores it; returns the handler to restore.
void (*catch_signal(int signal))(int) {
  void (*previous)(int) = std::signal(signal, on_stop_signal);
  if (previous == SIG_IGN) std::signal(signal, SIG_IGN);
  return previous == SIG_ERR ? SIG_DFL : previous;
}

}  // namespace

std::atomic<bool>& StopSignals::requested() { return stop_requested(); }

StopSignals::StopSignals(bool sigterm_too) : sigterm_too_(sigterm_too), previous_int_(catch_signal(SIGINT)) {
  if (sigterm_too_) previous_term_ = catch_signal(SIGTERM);
}

StopSignals::~StopSignals() {
  std::signal(SIGINT, previous_int_);
  if (sigterm_too_) std::signal(SIGTERM, previous_term_);
}

}  // namespace mdsim
