// libFuzzer target of the CSV logs a replica ensemble leaves for `mdsim demux` and `mdsim run --resume`: the input
// is the text of a log file, written to a scratch folder in /dev/shm (or $TMPDIR), since the readers take a path.
//   1. read_exchange_map (io/exchange_log.hpp), as demux reads exchange.csv: for as many replicas as the
//      header's replica_at_ columns say (2 when it has none), first without, then with a temperature ladder
//      (300 K to 400 K, geometric, as `replicas: {temperatures: {min: 300 K, max: 400 K, count: N}}` makes it);
//      an accepted map must be in order of step with each replica once per map.
//   2. The restart path of the same file (io/csv_log.hpp's CsvLog with append_after_step, which keeps the lines
//      up to the checkpoint's step): ExchangeLog, or StateLog when the first line is one of the state log's
//      headers (io/state_log.hpp), opened to append after a step, then one more line written and the file closed.
//      The rewritten file must be the header and lines up to that step, then the new line; and an exchange log
//      that read_exchange_map accepted must still be accepted after the restart.
// The readers document InputError for bad input; any other exception (a RuntimeError too: the scratch folder
// is writable), a sanitizer report, a crash or a timeout is a finding. (`mdsim demux` reads the replicas' state
// logs through engine/demux.cpp, outside the layers the fuzz build has.)
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/exchange_log.hpp"
#include "io/state_log.hpp"
#include "model/run_config.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_folder() {
  std::error_code ec;
  const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  return base / ("mdsim_fuzz_exchange_log_" + std::to_string(::getpid()));
}

// The log's path in a folder of this process's own (removed when the process exits normally).
const std::string& scratch_file() {
  static const std::string path = [] {
    fs::create_directories(scratch_folder());
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_folder(), ec);
    });
    return (scratch_folder() / "exchange.csv").string();
  }();
  return path;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::abort();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<mdsim::ExchangeMapPoint> checked_map(const std::vector<mdsim::ExchangeMapPoint>& maps, int replicas) {
  for (std::size_t i = 0; i < maps.size(); ++i) {
    if (i > 0 && !(maps[i].step > maps[i - 1].step)) std::abort();
    if (static_cast<int>(maps[i].replica_at.size()) != replicas) std::abort();
    std::vector<int> sorted = maps[i].replica_at;
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k < replicas; ++k)
      if (sorted[static_cast<std::size_t>(k)] != k) std::abort();
  }
  return maps;
}

// The file after a restart at `after_step` and one line at `new_step`: the header, lines with a step up to
// after_step, the new line last, each ended by a newline.
void check_restarted(const std::string& text, const std::string& header, std::int64_t after_step,
                     std::int64_t new_step) {
  if (text.empty() || text.back() != '\n') std::abort();
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  if (lines.size() < 2 || lines.front() != header) std::abort();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    char* end = nullptr;
    const long long step = std::strtoll(lines[i].c_str(), &end, 10);
    if (end == lines[i].c_str() || *end != ',') std::abort();
    if (i + 1 < lines.size() ? step > after_step : step != new_step) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string& path = scratch_file();
  const std::string first_line = text.substr(0, text.find('\n'));
  const long columns = static_cast<long>(std::count(first_line.begin(), first_line.end(), ',')) + 1;
  const int replicas = columns > 14 ? static_cast<int>(std::min<long>(columns - 14, 64)) : 2;
  const std::vector<double> ladder =
      replicas >= 2 ? mdsim::geometric_temperature_ladder(300.0, 400.0, replicas) : std::vector<double>{};

  // 1. The exchange map, as demux reads it.
  write_text(path, text);
  std::optional<std::vector<mdsim::ExchangeMapPoint>> maps;
  try {
    maps = checked_map(mdsim::read_exchange_map(path, replicas), replicas);
  } catch (const mdsim::InputError&) {
  }
  bool ladder_accepted = false;
  if (maps && !ladder.empty()) {
    try {
      if (checked_map(mdsim::read_exchange_map(path, replicas, &ladder), replicas).size() != maps->size()) std::abort();
      ladder_accepted = true;
    } catch (const mdsim::InputError&) {
    }
  }

  // 2. The restart path: keep the lines up to a step (the middle round's, or 5000), then append one line.
  const std::int64_t after_step = maps && !maps->empty() ? (*maps)[maps->size() / 2].step : 5000;
  if (after_step == INT64_MAX) return 0;
  const std::int64_t new_step = after_step + 1;
  std::optional<bool> state_external, state_stages;
  for (const bool external : {false, true})
    for (const bool stages : {false, true})
      if (first_line == mdsim::state_log_header(external, stages)) state_external = external, state_stages = stages;
  std::string header;
  try {
    if (state_external) {
      header = mdsim::state_log_header(*state_external, *state_stages);
      mdsim::StateLog log(path, 1000.0, after_step, *state_external, *state_stages);
      mdsim::StateSample sample;
      sample.step = new_step;
      sample.volume_nm3 = 27.0;
      if (*state_external) sample.external_kj_per_mol = 1.0;
      if (*state_stages) sample.stage = "nvt";
      log.write(sample);
      log.close();
    } else {
      header = mdsim::exchange_log_header(replicas);
      mdsim::ExchangeLog log(path, replicas, after_step);
      mdsim::ExchangeLogRow row;
      row.step = new_step;
      row.pair = 0;
      row.temperature_lower_k = ladder.empty() ? 300.0 : ladder[0];
      row.temperature_upper_k = ladder.empty() ? 300.0 : ladder[1];
      row.replica_lower = 0;
      row.replica_upper = replicas > 1 ? 1 : 0;
      for (int t = 0; t < replicas; ++t) row.replica_at.push_back(t);
      log.write(row);
      log.close();
    }
  } catch (const mdsim::InputError&) {
    return 0;  // a file with another header
  }
  check_restarted(read_text(path), header, after_step, new_step);
  if (maps && !state_external) {
    // What was accepted before is accepted after the restart (every kept line is one it accepted).
    checked_map(mdsim::read_exchange_map(path, replicas, ladder_accepted ? &ladder : nullptr), replicas);
  }
  return 0;
}
