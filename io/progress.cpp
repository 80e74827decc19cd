#include "io/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mdsim {

namespace {

std::string speed_text(const std::optional<double>& v) {
  if (!v) return "-- ns/day";
  if (*v >= 100.0) return fmt::format("{:.1f} ns/day", *v);
  if (*v >= 1.0) return fmt::format("{:.2f} ns/day", *v);
  return fmt::format("{:.3g} ns/day", *v);
}

double percent(std::int64_t step, std::int64_t total) {
  if (total <= 0) return 100.0;
  return std::clamp(100.0 * static_cast<double>(step) / static_cast<double>(total), 0.0, 100.0);
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) return "--:--:--";
  const auto total = static_cast<std::int64_t>(std::llround(seconds));
  const std::int64_t days = total / 86400, h = (total / 3600) % 24, m = (total / 60) % 60, s = total % 60;
  if (days > 0) return fmt::format("{}d {:02}:{:02}:{:02}", days, h, m, s);
  return fmt::format("{}:{:02}:{:02}", h, m, s);
}

std::optional<double> ns_per_day(std::int64_t steps, double timestep_ps, double elapsed_s) {
  if (steps <= 0 || !(elapsed_s > 0.0)) return std::nullopt;
  // steps * dt [ps] * 1e-3 [ns/ps] per elapsed / 86400 [day]
  return static_cast<double>(steps) * timestep_ps * 1e-3 * 86400.0 / elapsed_s;
}

std::optional<double> remaining_seconds(std::int64_t step, std::int64_t total_steps, std::int64_t steps_done,
                                        double elapsed_s) {
  if (steps_done <= 0 || !(elapsed_s > 0.0)) return std::nullopt;
  const std::int64_t left = std::max<std::int64_t>(total_steps - step, 0);
  return static_cast<double>(left) * elapsed_s / static_cast<double>(steps_done);
}

std::string format_progress_bar(const ProgressState& s, int bar_width) {
  const double pct = percent(s.step, s.total_steps);
  const int filled = std::clamp(static_cast<int>(std::lround(pct / 100.0 * bar_width)), 0, bar_width);
  const auto remaining = remaining_seconds(s.step, s.total_steps, s.steps_done, s.elapsed_s);
  return fmt::format("[{}{}] {:5.1f}%  step {}/{}  {}  remaining {}", std::string(static_cast<std::size_t>(filled), '#'),
                     std::string(static_cast<std::size_t>(bar_width - filled), '.'), pct, s.step, s.total_steps,
                     speed_text(ns_per_day(s.steps_done, s.timestep_ps, s.elapsed_s)),
                     format_duration(remaining.value_or(-1.0)));
}

std::string format_progress_line(const ProgressState& s) {
  const auto remaining = remaining_seconds(s.step, s.total_steps, s.steps_done, s.elapsed_s);
  return fmt::format("progress: step {}/{} ({:.1f}%), {}, elapsed {}, remaining {}", s.step, s.total_steps,
                     percent(s.step, s.total_steps), speed_text(ns_per_day(s.steps_done, s.timestep_ps, s.elapsed_s)),
                     format_duration(s.elapsed_s), format_duration(remaining.value_or(-1.0)));
}

ProgressReporter::ProgressReporter(std::FILE* out, std::int64_t start_step, std::int64_t total_steps, double timestep_ps,
                                   ProgressOptions options)
    : out_(out),
      start_step_(start_step),
      total_steps_(total_steps),
      timestep_ps_(timestep_ps),
      options_(options),
      start_(std::chrono::steady_clock::now()) {
  tty_ = options_.tty.value_or(out_ && ::isatty(::fileno(out_)) == 1);
}

double ProgressReporter::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressReporter::update(std::int64_t step) { update_at(step, elapsed_s()); }

void ProgressReporter::update_at(std::int64_t step, double elapsed) {
  if (!out_) return;
  if (tty_) {
    if (last_print_s_ >= 0.0 && elapsed - last_print_s_ < options_.tty_interval_s) return;
  } else {
    const double since = last_print_s_ < 0.0 ? elapsed : elapsed - last_print_s_;
    if (since < options_.plain_interval_s) return;
  }
  print(step, elapsed, false);
}

void ProgressReporter::finish(std::int64_t step) { finish_at(step, elapsed_s()); }

void ProgressReporter::finish_at(std::int64_t step, double elapsed) {
  if (out_) print(step, elapsed, true);
}

std::optional<double> ProgressReporter::ns_per_day_at(std::int64_t step, double elapsed) const {
  return ns_per_day(step - start_step_, timestep_ps_, elapsed);
}

std::optional<double> ProgressReporter::current_ns_per_day(std::int64_t step) const {
  return ns_per_day_at(step, elapsed_s());
}

void ProgressReporter::print(std::int64_t step, double elapsed, bool final) {
  const ProgressState state{step, total_steps_, step - start_step_, elapsed, timestep_ps_};
  if (tty_) {
    std::string line = format_progress_bar(state);
    const std::size_t width = options_.label.size() + line.size();
    if (width < last_width_) line.append(last_width_ - width, ' ');  // clear the rest of the old line
    last_width_ = width;
    std::fprintf(out_, "\r%s%s%s", options_.label.c_str(), line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(out_, "%s%s\n", options_.label.c_str(), format_progress_line(state).c_str());
  }
  std::fflush(out_);
  last_print_s_ = elapsed;
}

}  // namespace mdsim
