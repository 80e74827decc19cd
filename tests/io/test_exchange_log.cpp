// The replica-exchange log (io/exchange_log): what ExchangeLog writes read_exchange_map reads back, and a damaged or
// foreign log is a located error (fuzz_exchange_log fuzzes both, fuzz/exchange_log.cpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "io/exchange_log.hpp"
#include "model/run_config.hpp"
#include "support/catch.hpp"
#include "support/scratch.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

ExchangeLogRow row(std::int64_t step, int pair, const std::vector<double>& ladder, std::vector<int> after) {
  ExchangeLogRow r;
  r.step = step;
  r.time_ps = 0.002 * static_cast<double>(step);
  r.round = step / 100 - 1;
  r.pair = pair;
  r.temperature_lower_k = ladder[static_cast<std::size_t>(pair)];
  r.temperature_upper_k = ladder[static_cast<std::size_t>(pair) + 1];
  r.replica_lower = pair;
  r.replica_upper = pair + 1;
  r.probability = 0.5;
  r.accepted = after[static_cast<std::size_t>(pair)] != pair;
  r.replica_at = std::move(after);
  return r;
}

}  // namespace

TEST_CASE("exchange log: written, read back as the map of each round") {
  const std::vector<double> ladder = geometric_temperature_ladder(300.0, 400.0, 3);
  const std::string path = mdsim_test::scratch_folder().file("exchange.csv");
  {
    ExchangeLog log(path, 3);
    log.write(row(100, 0, ladder, {1, 0, 2}));
    log.write(row(200, 1, ladder, {1, 2, 0}));
    log.close();
  }
  const std::vector<ExchangeMapPoint> maps = read_exchange_map(path, 3, &ladder);
  REQUIRE(maps.size() == 2);
  CHECK(maps[0].step == 100);
  CHECK(maps[1].replica_at == std::vector<int>{1, 2, 0});
  CHECK(mdsim_test::input_error_of([&] { read_exchange_map(path, 4); })
            .rfind(path + ":1: not the exchange log of 4 replicas (its header has 17 columns, expected 18", 0) == 0);
}

// Found while reviewing fuzz_exchange_log's corpus: a line whose pair or temperatures are not numbers (two logs
// joined, so a header in the middle) was reported as a changed temperature ladder.
TEST_CASE("exchange log: a line whose pair is not a number is a damaged line, not a changed ladder") {
  const std::vector<double> ladder = geometric_temperature_ladder(300.0, 400.0, 2);
  const std::string header = exchange_log_header(2);
  const std::string path = mdsim_test::scratch_folder().write(
      "joined.csv", header + "\n100,0.2,0,0,300,400,0,1,-10,-11,,,0.5,1,1,0\n" + header + "\n");
  CHECK(mdsim_test::input_error_of([&] { read_exchange_map(path, 2, &ladder); }) ==
        path + ":3: pair 'pair' between 'temperature_lower_k' K and 'temperature_upper_k' K: expected a pair number "
               "(0, 1, ...) and two temperatures (a damaged exchange log?)");
  const std::string other = mdsim_test::scratch_folder().write(
      "other_ladder.csv", header + "\n100,0.2,0,0,300,410,0,1,-10,-11,,,0.5,1,1,0\n");
  CHECK(mdsim_test::input_error_of([&] { read_exchange_map(other, 2, &ladder); })
            .rfind(other + ":2: pair 0 was run at 300 K <-> 410 K, but the config's ladder has 300 K <-> 400 K there", 0) ==
        0);
}
