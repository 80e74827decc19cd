#include "io/exchange_log.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace mdsim {

namespace {

std::string number(double v) { return fmt::format("{:.10g}", v); }

constexpr int kMapColumn = 14;  // the first replica_at_ column (0-based)

}  // namespace

std::string exchange_log_header(int replicas) {
  std::string h =
      "step,time_ps,round,pair,temperature_lower_k,temperature_upper_k,replica_lower,replica_upper,"
      "potential_lower_kj_per_mol,potential_upper_kj_per_mol,volume_lower_nm3,volume_upper_nm3,probability,accepted";
  for (int t = 0; t < replicas; ++t) h += fmt::format(",replica_at_{}", t);
  return h;
}

ExchangeLog::ExchangeLog(const std::string& path, int replicas, std::optional<std::int64_t> append_after_step)
    : log_(path, exchange_log_header(replicas), append_after_step, "exchange log"), replicas_(replicas) {}

void ExchangeLog::write(const ExchangeLogRow& r) {
  if (static_cast<int>(r.replica_at.size()) != replicas_)
    throw RuntimeError(fmt::format("{}: a map of {} replicas in a log of {}", log_.path(), r.replica_at.size(), replicas_));
  std::string line = fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}", r.step, number(r.time_ps), r.round, r.pair,
                                 number(r.temperature_lower_k), number(r.temperature_upper_k), r.replica_lower,
                                 r.replica_upper, number(r.potential_lower_kj_per_mol),
                                 number(r.potential_upper_kj_per_mol),
                                 r.volume_lower_nm3 ? number(*r.volume_lower_nm3) : std::string(),
                                 r.volume_upper_nm3 ? number(*r.volume_upper_nm3) : std::string(), number(r.probability),
                                 r.accepted ? 1 : 0);
  for (const int k : r.replica_at) line += fmt::format(",{}", k);
  log_.write_line(line, r.step);
}

namespace {

// A row's pair of temperatures against the ladder it should come from.
void check_ladder_pair(const std::string& path, int line, const std::vector<std::string>& cells,
                       const std::vector<double>& ladder_k) {
  const auto value = [&](std::size_t column) {
    char* end = nullptr;
    const double v = std::strtod(cells[column].c_str(), &end);
    return end != cells[column].c_str() && *end == '\0' ? v : std::nan("");
  };
  const double pair = value(3), lower = value(4), upper = value(5);
  // Not numbers (a line cut short, a second header where two logs were joined): a damaged line, not a ladder that
  // changed.
  if (!std::isfinite(pair) || !std::isfinite(lower) || !std::isfinite(upper) || pair < 0 || pair != std::floor(pair))
    throw InputError(fmt::format("{}:{}: pair '{}' between '{}' K and '{}' K: expected a pair number (0, 1, ...) and "
                                 "two temperatures (a damaged exchange log?)",
                                 path, line, cells[3], cells[4], cells[5]));
  const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  const bool in_ladder = pair + 1 < static_cast<double>(ladder_k.size());
  if (!in_ladder || !close(lower, ladder_k[static_cast<std::size_t>(pair)]) ||
      !close(upper, ladder_k[static_cast<std::size_t>(pair) + 1]))
    throw InputError(fmt::format(
        "{}:{}: pair {} was run at {} K <-> {} K, but the config's ladder has {}: the config's replicas.temperatures "
        "changed since the run, and the demultiplexed files would carry the wrong temperatures; restore the ladder "
        "the run used",
        path, line, cells[3], cells[4], cells[5],
        in_ladder ? fmt::format("{} K <-> {} K there", ladder_k[static_cast<std::size_t>(pair)],
                                ladder_k[static_cast<std::size_t>(pair) + 1])
                  : fmt::format("{} temperatures", ladder_k.size())));
}

}  // namespace

std::vector<ExchangeMapPoint> read_exchange_map(const std::string& path, int replicas,
                                                const std::vector<double>* ladder_k) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the exchange log", path));
  std::string line;
  const std::string header = exchange_log_header(replicas);
  if (!std::getline(in, line) || line != header) {
    const std::size_t columns = static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
    throw InputError(fmt::format("{}:1: not the exchange log of {} replicas (its header has {} columns, expected {}: "
                                 "\"{}...\")",
                                 path, replicas, columns, kMapColumn + replicas, header.substr(0, 40)));
  }
  std::vector<ExchangeMapPoint> out;
  for (int number_of_line = 2; std::getline(in, line); ++number_of_line) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    const auto integer = [&](const std::string& text, const char* what) {
      long long v = 0;
      const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size())
        throw InputError(fmt::format("{}:{}: {} '{}' is not a whole number (a damaged exchange log?)", path,
                                     number_of_line, what, text));
      return v;
    };
    if (cells.size() != static_cast<std::size_t>(kMapColumn + replicas))
      throw InputError(fmt::format("{}:{}: {} columns, expected {} (a damaged exchange log?)", path, number_of_line,
                                   cells.size(), kMapColumn + replicas));
    if (ladder_k) check_ladder_pair(path, number_of_line, cells, *ladder_k);
    ExchangeMapPoint point;
    point.step = integer(cells[0], "the step");
    std::vector<bool> seen(static_cast<std::size_t>(replicas), false);
    for (int t = 0; t < replicas; ++t) {
      const long long k = integer(cells[static_cast<std::size_t>(kMapColumn + t)], "a replica index");
      if (k < 0 || k >= replicas || seen[static_cast<std::size_t>(k)])
        throw InputError(fmt::format("{}:{}: replica_at_{} is {}: the map must hold each replica 0..{} once", path,
                                     number_of_line, t, k, replicas - 1));
      seen[static_cast<std::size_t>(k)] = true;
      point.replica_at.push_back(static_cast<int>(k));
    }
    if (!out.empty() && point.step < out.back().step)
      throw InputError(fmt::format("{}:{}: step {} after step {}: the exchange log's steps must not decrease", path,
                                   number_of_line, point.step, out.back().step));
    if (!out.empty() && point.step == out.back().step) {
      if (point.replica_at != out.back().replica_at)
        throw InputError(fmt::format("{}:{}: two maps for the round of step {} (a damaged exchange log?)", path,
                                     number_of_line, point.step));
      continue;
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace mdsim
