// A stop request from the terminal or the system. While a StopSignals lives, SIGINT (and, when asked, SIGTERM) set
// one process-wide flag instead of ending the process; a run's loops read it between steps (RunRequest::stop) and
// stop at their next restart point with every output whole. The handlers before it come back when it ends; a
// signal the process ignored stays ignored.
#pragma once

#include <atomic>

namespace mdsim {

class StopSignals {
 public:
  explicit StopSignals(bool sigterm_too);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Set by a caught signal; cleared only by whoever acts on it. The flag is common/stop_request's, so the
  // minimiser sees it too.
  static std::atomic<bool>& requested();

 private:
  using Handler = void (*)(int);
  bool sigterm_too_;
  Handler previous_int_;
  Handler previous_term_ = nullptr;
};

}  // namespace mdsim
