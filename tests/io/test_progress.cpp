// Progress reporting (io/progress): pure formatting functions and the reporter's timing rules,
// driven with given elapsed times (no sleeping).
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "io/progress.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// Everything written to a temporary FILE*.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

}  // namespace

TEST_CASE("durations") {
  CHECK(format_duration(0.0) == "0:00:00");
  CHECK(format_duration(192.4) == "0:03:12");
  CHECK(format_duration(192.6) == "0:03:13");
  CHECK(format_duration(43205.0) == "12:00:05");
  CHECK(format_duration(3 * 86400.0 + 4 * 3600 + 5 * 60 + 6) == "3d 04:05:06");
  CHECK(format_duration(-1.0) == "--:--:--");
  CHECK(format_duration(std::numeric_limits<double>::quiet_NaN()) == "--:--:--");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "--:--:--");
}

TEST_CASE("speed and remaining time") {
  // 50000 steps of 2 fs = 0.1 ns in 100 s -> 0.1 ns * 864 = 86.4 ns/day.
  REQUIRE(ns_per_day(50000, 0.002, 100.0));
  CHECK(*ns_per_day(50000, 0.002, 100.0) == Catch::Approx(86.4).epsilon(1e-12));
  CHECK(*ns_per_day(1, 0.004, 86400.0) == Catch::Approx(4e-6).epsilon(1e-12));
  CHECK(!ns_per_day(0, 0.002, 10.0));
  CHECK(!ns_per_day(10, 0.002, 0.0));
  REQUIRE(remaining_seconds(50000, 100000, 50000, 100.0));
  CHECK(*remaining_seconds(50000, 100000, 50000, 100.0) == Catch::Approx(100.0));
  // A restart at step 40000: 10000 steps measured in 20 s, 50000 left -> 100 s.
  CHECK(*remaining_seconds(50000, 100000, 10000, 20.0) == Catch::Approx(100.0));
  CHECK(*remaining_seconds(120000, 100000, 10, 1.0) == 0.0);
  CHECK(!remaining_seconds(0, 100, 0, 5.0));
}

TEST_CASE("progress bar and plain line") {
  const ProgressState half{50000, 100000, 50000, 100.0, 0.002};
  CHECK(format_progress_bar(half) ==
        "[##########..........]  50.0%  step 50000/100000  86.40 ns/day  remaining 0:01:40");
  CHECK(format_progress_line(half) ==
        "progress: step 50000/100000 (50.0%), 86.40 ns/day, elapsed 0:01:40, remaining 0:01:40");
  const ProgressState start{0, 100000, 0, 0.0, 0.002};
  CHECK(format_progress_bar(start, 10) == "[..........]   0.0%  step 0/100000  -- ns/day  remaining --:--:--");
  const ProgressState done{100000, 100000, 100000, 3600.0, 0.004};
  CHECK(format_progress_bar(done, 4) == "[####] 100.0%  step 100000/100000  9.60 ns/day  remaining 0:00:00");
  const ProgressState fast{1000000, 2000000, 1000000, 60.0, 0.004};  // 4 ns per minute
  CHECK(format_progress_line(fast) ==
        "progress: step 1000000/2000000 (50.0%), 5760.0 ns/day, elapsed 0:01:00, remaining 0:01:00");
  const ProgressState slow{10, 1000, 10, 100.0, 0.002};
  CHECK(format_progress_line(slow).find("0.0173 ns/day") != std::string::npos);
}

TEST_CASE("plain reporter: one line every interval, then a final line") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  ProgressOptions o;
  o.tty = false;
  o.plain_interval_s = 10.0;
  ProgressReporter p(f, 0, 1000, 0.002, o);
  CHECK(!p.tty());
  p.update_at(0, 0.0);
  p.update_at(100, 5.0);
  p.update_at(199, 9.9);
  p.update_at(200, 10.0);  // first line
  p.update_at(300, 15.0);
  p.update_at(410, 20.5);  // second line
  p.update_at(420, 21.0);
  p.finish_at(1000, 50.0);
  CHECK(contents(f) ==
        "progress: step 200/1000 (20.0%), 3.46 ns/day, elapsed 0:00:10, remaining 0:00:40\n"
        "progress: step 410/1000 (41.0%), 3.46 ns/day, elapsed 0:00:21, remaining 0:00:30\n"
        "progress: step 1000/1000 (100.0%), 3.46 ns/day, elapsed 0:00:50, remaining 0:00:00\n");
  std::fclose(f);
}

TEST_CASE("TTY reporter: redraws one line at most every 0.25 s") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  ProgressOptions o;
  o.tty = true;
  ProgressReporter p(f, 0, 100, 0.002, o);
  p.update_at(0, 0.0);     // drawn at once
  p.update_at(1, 0.1);     // too soon
  p.update_at(10, 0.3);    // drawn
  p.update_at(11, 0.5);    // too soon
  p.finish_at(100, 1.0);   // always drawn, then a newline
  const std::string bar0 = format_progress_bar({0, 100, 0, 0.0, 0.002});
  const std::string bar1 = format_progress_bar({10, 100, 10, 0.3, 0.002});
  std::string bar2 = format_progress_bar({100, 100, 100, 1.0, 0.002});
  // A shorter line is padded with blanks to wipe the rest of the longer one.
  if (bar2.size() < bar1.size()) bar2.append(bar1.size() - bar2.size(), ' ');
  CHECK(contents(f) == "\r" + bar0 + "\r" + bar1 + "\r" + bar2 + "\n");
  std::fclose(f);
}

TEST_CASE("reporter speed is measured from its start step (restart)") {
  ProgressOptions o;
  o.tty = false;
  ProgressReporter p(nullptr, 40000, 100000, 0.002, o);
  REQUIRE(p.ns_per_day_at(50000, 100.0));
  CHECK(*p.ns_per_day_at(50000, 100.0) == Catch::Approx(17.28));  // 10000 steps * 2 fs in 100 s
  CHECK(!p.ns_per_day_at(40000, 1.0));
  p.update_at(50000, 100.0);  // no output stream: nothing happens
  p.finish_at(50000, 100.0);
}
