// Progress of a run on the terminal.
//  - On a TTY: one line redrawn with '\r' at most every `tty_interval_s` (default 0.25 s):
//      [##########..........]  50.0%  step 50000/100000  123.4 ns/day  remaining 0:03:12
//  - Otherwise (log file, CI): one plain line every `plain_interval_s` (default 10 s):
//      progress: step 50000/100000 (50.0%), 123.4 ns/day, remaining 0:03:12
// Speed is measured from the first update (after minimisation / setup), so startup costs do not
// count. The formatting functions are pure and unit-tested; ProgressReporter adds the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace mdsim {

// "0:03:12", "12:00:05", "3d 04:05:06"; "--:--:--" for unknown (negative / not finite).
std::string format_duration(double seconds);

// Simulated nanoseconds per wall-clock day for `steps` steps of `timestep_ps` in `elapsed_s`;
// none when nothing has been measured yet (no steps or no time).
std::optional<double> ns_per_day(std::int64_t steps, double timestep_ps, double elapsed_s);

// Remaining wall time at the measured rate: (total - step) * elapsed / steps_done; none if unknown.
std::optional<double> remaining_seconds(std::int64_t step, std::int64_t total_steps, std::int64_t steps_done,
                                        double elapsed_s);

struct ProgressState {
  std::int64_t step = 0;          // current step
  std::int64_t total_steps = 0;   // last step of the run
  std::int64_t steps_done = 0;    // steps since measuring started
  double elapsed_s = 0.0;         // wall time since measuring started
  double timestep_ps = 0.0;
};

// The TTY line (without '\r'), `bar_width` characters of bar.
std::string format_progress_bar(const ProgressState& state, int bar_width = 20);
// The plain line (without newline).
std::string format_progress_line(const ProgressState& state);

struct ProgressOptions {
  std::optional<bool> tty;        // default: isatty(fileno(out))
  double tty_interval_s = 0.25;
  double plain_interval_s = 10.0;
  std::string label;              // printed before each line ("stage nvt: "), e.g. a staged run's stage
};

class ProgressReporter {
 public:
  // Reports on `out` (not owned) for a run ending at `total_steps`; measuring starts at `start_step`
  // (a restart continues from its checkpoint step).
  ProgressReporter(std::FILE* out, std::int64_t start_step, std::int64_t total_steps, double timestep_ps,
                   ProgressOptions options = {});

  // Cheap when nothing is due (one clock read). Prints when the interval has passed.
  void update(std::int64_t step);
  // The same with the elapsed wall time given (tests).
  void update_at(std::int64_t step, double elapsed_s);
  // Final line (and newline on a TTY).
  void finish(std::int64_t step);
  void finish_at(std::int64_t step, double elapsed_s);

  // Measured speed so far (for the state log); none before the first step.
  std::optional<double> ns_per_day_at(std::int64_t step, double elapsed_s) const;
  std::optional<double> current_ns_per_day(std::int64_t step) const;
  double elapsed_s() const;
  bool tty() const { return tty_; }

 private:
  void print(std::int64_t step, double elapsed_s, bool final);

  std::FILE* out_;
  std::int64_t start_step_, total_steps_;
  double timestep_ps_;
  ProgressOptions options_;
  bool tty_ = false;
  std::chrono::steady_clock::time_point start_;
  double last_print_s_ = -1.0;
  std::size_t last_width_ = 0;
};

}  // namespace mdsim
