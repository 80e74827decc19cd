// Temperature replica exchange's rule and bookkeeping (platform/replica_exchange):
//  - the geometric ladder (ends exact, constant ratio) and its refusals;
//  - a ladder that does not increase is refused;
//  - rounds alternate even and odd neighbour pairs;
//  - the Metropolis probability min(1, exp[(b_k - b_k+1)(U_k - U_k+1)]) and its sign; accepted swaps
//    exchange the two replicas' temperatures and give the velocity scales sqrt(T_new / T_old);
//  - acceptance frequency over 40,000 attempts with fixed energies matches the probability (4 sigma);
//  - the same seed gives the same decisions in separate instances (what lets MPI ranks and the
//    in-process runner agree), another seed other ones;
//  - round trips (lowest -> highest -> lowest) counted on a two-temperature ladder that always swaps;
//  - state() / set_state() continue exactly, and a state of another ladder or a broken map is refused;
//  - apply(): a round with its decisions given (a CUDA batch decides on the device) plays as exchange(), and
//    play_ladder_round (the device's round over plain arrays) makes the same decisions, maps and velocity scales.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "physics/integrator_steps.hpp"
#include "physics/replica_exchange.hpp"
#include "platform/replica_exchange.hpp"
#include "support/catch.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using mdsim_test::message_of;

namespace {

double beta(double t) { return 1.0 / (kBoltzmannKjPerMolK * t); }

}  // namespace

TEST_CASE("geometric temperature ladder") {
  const std::vector<double> t = geometric_temperature_ladder(300.0, 450.0, 8);
  REQUIRE(t.size() == 8);
  CHECK(t.front() == 300.0);
  CHECK(t.back() == 450.0);
  for (std::size_t k = 1; k + 1 < t.size(); ++k)
    CHECK(t[k + 1] / t[k] == Catch::Approx(t[1] / t[0]).epsilon(1e-12));
  CHECK(t[1] / t[0] == Catch::Approx(std::pow(1.5, 1.0 / 7.0)).epsilon(1e-12));
  CHECK(message_of([] { geometric_temperature_ladder(300.0, 450.0, 1); }).find("at least 2") != std::string::npos);
  CHECK(message_of([] { geometric_temperature_ladder(300.0, 300.0, 4); }).find("0 < min < max") != std::string::npos);
  CHECK(message_of([] { geometric_temperature_ladder(-1.0, 300.0, 4); }).find("0 < min < max") != std::string::npos);
}

TEST_CASE("a replica exchange ladder must increase") {
  CHECK(message_of([] { ReplicaExchange({300.0}, 1); }).find("at least 2") != std::string::npos);
  const std::string flat = message_of([] { ReplicaExchange({300.0, 320.0, 320.0}, 1); });
  CHECK(flat.find("must increase: temperature 3 (320 K) is not above temperature 2 (320 K)") != std::string::npos);
  CHECK(message_of([] { ReplicaExchange({300.0, NAN}, 1); }).find("positive temperature") != std::string::npos);
  CHECK(message_of([] { ReplicaExchange({300.0, 310.0}, 1).exchange({1.0}); }).find("1 energies for 2") !=
        std::string::npos);
  CHECK(message_of([] { ReplicaExchange({300.0, 310.0}, 1).exchange({1.0, INFINITY}); }).find("non-finite") !=
        std::string::npos);
}

TEST_CASE("rounds alternate even and odd neighbour pairs") {
  ReplicaExchange rex(geometric_temperature_ladder(300.0, 400.0, 5), 7);
  const std::vector<double> e(5, 0.0);
  const auto even = rex.exchange(e);
  REQUIRE(even.size() == 2);
  CHECK(even[0].lower == 0);
  CHECK(even[1].lower == 2);
  const auto odd = rex.exchange(e);
  REQUIRE(odd.size() == 2);
  CHECK(odd[0].lower == 1);
  CHECK(odd[1].lower == 3);
  CHECK(rex.rounds() == 2);
  CHECK(rex.attempts(0) == 1);
  CHECK(rex.attempts(1) == 1);
}

TEST_CASE("the Metropolis rule, the swap and the velocity scales") {
  const std::vector<double> t{300.0, 330.0};
  SECTION("the colder replica's energy higher: always accepted") {
    ReplicaExchange rex(t, 3);
    const auto a = rex.exchange({-100.0, -110.0});
    REQUIRE(a.size() == 1);
    CHECK(a[0].probability == 1.0);
    CHECK(a[0].accepted);
    CHECK(rex.temperature_index_of(0) == 1);
    CHECK(rex.temperature_index_of(1) == 0);
    CHECK(rex.replica_at(0) == 1);
    CHECK(rex.temperature_of(0) == 330.0);
    CHECK(a[0].velocity_scale_lower == Catch::Approx(std::sqrt(330.0 / 300.0)).epsilon(1e-15));
    CHECK(a[0].velocity_scale_upper == Catch::Approx(std::sqrt(300.0 / 330.0)).epsilon(1e-15));
    CHECK(rex.acceptances(0) == 1);
  }
  SECTION("the colder replica's energy lower: probability exp(...), frequency to it") {
    const double du = 12.0;  // kJ/mol: the cold replica 12 lower than the hot one
    const double p = std::exp((beta(300.0) - beta(330.0)) * (-du));
    ReplicaExchange rex(t, 11);
    int accepted = 0, attempts = 0;
    for (int round = 0; round < 80000; ++round) {
      // the replica at the lower temperature has the lower energy, whichever replica that is
      std::vector<double> e(2);
      e[static_cast<std::size_t>(rex.replica_at(0))] = 0.0;
      e[static_cast<std::size_t>(rex.replica_at(1))] = du;
      for (const ExchangeAttempt& a : rex.exchange(e)) {
        CHECK(a.probability == Catch::Approx(p).epsilon(1e-14));
        if (!a.accepted) {
          CHECK(a.velocity_scale_lower == 1.0);
          CHECK(a.velocity_scale_upper == 1.0);
        }
        accepted += a.accepted;
        ++attempts;
      }
    }
    const double f = static_cast<double>(accepted) / attempts;
    const double sigma = std::sqrt(p * (1 - p) / attempts);
    std::printf("[figure] replica exchange acceptance %.4f over %d attempts, Metropolis probability %.4f (sigma %.4f)\n",
                f, attempts, p, sigma);
    CHECK(attempts == 40000);
    CHECK(std::fabs(f - p) < 4 * sigma);
  }
}

TEST_CASE("the same seed makes the same decisions, another seed other ones") {
  const std::vector<double> t = geometric_temperature_ladder(300.0, 400.0, 6);
  ReplicaExchange a(t, 2026), b(t, 2026), c(t, 2027);
  int differ = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<double> e(6);
    for (int r = 0; r < 6; ++r) e[static_cast<std::size_t>(r)] = 5.0 * std::sin(round * 0.7 + r);  // kJ/mol
    const auto x = a.exchange(e), y = b.exchange(e), z = c.exchange(e);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i].accepted == y[i].accepted);
      differ += x[i].accepted != z[i].accepted;
    }
  }
  for (int r = 0; r < 6; ++r) CHECK(a.temperature_index_of(r) == b.temperature_index_of(r));
  CHECK(differ > 0);
}

TEST_CASE("round trips: lowest to highest and back") {
  ReplicaExchange rex({300.0, 310.0}, 5);
  // The cold replica's energy higher every round: every attempt (even rounds only: a 2-temperature
  // ladder has no odd pair) swaps.
  auto round = [&] {
    std::vector<double> e(2);
    e[static_cast<std::size_t>(rex.replica_at(0))] = 10.0;
    e[static_cast<std::size_t>(rex.replica_at(1))] = 0.0;
    return rex.exchange(e);
  };
  round();  // round 0: swap; replica 0 at the top, replica 1 at the bottom
  CHECK(rex.temperature_index_of(0) == 1);
  CHECK(rex.round_trips(0) == 0);
  CHECK(round().empty());  // round 1: no odd pair
  round();                 // round 2: swap back: replica 0 completed lowest -> highest -> lowest
  CHECK(rex.round_trips(0) == 1);
  CHECK(rex.round_trips(1) == 0);  // replica 1 started at the top: top -> bottom -> top is no round trip yet
  round();
  round();
  round();  // round 4 (swap) and 5 (none)
  CHECK(rex.round_trips(1) == 1);
  CHECK(rex.total_round_trips() == 2);
}

TEST_CASE("replica exchange state continues exactly") {
  const std::vector<double> t = geometric_temperature_ladder(300.0, 400.0, 4);
  auto energies = [](int round) {
    std::vector<double> e(4);
    for (int r = 0; r < 4; ++r) e[static_cast<std::size_t>(r)] = 3.0 * std::cos(round * 1.3 + 2 * r);
    return e;
  };
  ReplicaExchange whole(t, 99);
  for (int round = 0; round < 50; ++round) whole.exchange(energies(round));
  const std::vector<double> saved = whole.state();
  ReplicaExchange resumed(t, 99);
  resumed.set_state(saved);
  for (int round = 50; round < 120; ++round) {
    const auto x = whole.exchange(energies(round)), y = resumed.exchange(energies(round));
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i].accepted == y[i].accepted);
  }
  CHECK(whole.state() == resumed.state());
  CHECK(whole.rounds() == 120);
  ReplicaExchange other(geometric_temperature_ladder(300.0, 400.0, 5), 99);
  CHECK(message_of([&] { other.set_state(saved); }).find("another ladder") != std::string::npos);
  std::vector<double> broken = saved;
  broken[2] = broken[5];  // two replicas at one temperature
  CHECK(message_of([&] { resumed.set_state(broken); }).find("not a permutation") != std::string::npos);
}

TEST_CASE("a round decided elsewhere (apply) plays as exchange() with the same decisions") {
  const std::vector<double> temperatures{300.0, 310.0, 320.0, 330.0, 340.0};
  ReplicaExchange ruled(temperatures, 99), applied(temperatures, 99), forced(temperatures, 99);
  std::vector<double> energies{-1000.0, -998.0, -1003.0, -990.0, -1001.0};
  for (int round = 0; round < 40; ++round) {
    INFO("round " << round);
    energies[static_cast<std::size_t>(round % 5)] += 1.5;  // varied energies: some accepted, some not
    const std::vector<ExchangeAttempt> a = ruled.exchange(energies);
    std::vector<std::uint8_t> decisions;
    for (const ExchangeAttempt& x : a) decisions.push_back(x.accepted ? 1 : 0);
    CHECK(static_cast<int>(decisions.size()) == applied.attempts_in_next_round());
    const std::vector<ExchangeAttempt> b = applied.apply(energies, decisions);
    REQUIRE(b.size() == a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(b[i].lower == a[i].lower);
      CHECK(b[i].replica_lower == a[i].replica_lower);
      CHECK(b[i].probability == a[i].probability);
      CHECK(b[i].accepted == a[i].accepted);
      CHECK(b[i].velocity_scale_lower == a[i].velocity_scale_lower);
    }
    CHECK(applied.state() == ruled.state());
  }
  // Decisions given override the rule's (the device's, should it ever round an exponential differently): an
  // always-accept round swaps every pair it attempts.
  const std::vector<ExchangeAttempt> all = forced.apply(energies, std::vector<std::uint8_t>(2, 1));
  for (const ExchangeAttempt& x : all) CHECK(x.accepted);
  CHECK(forced.replica_at(0) == 1);
  CHECK(forced.replica_at(1) == 0);
  CHECK(forced.acceptances(0) == 1);
  CHECK(message_of([&] { forced.apply(energies, std::vector<std::uint8_t>(3, 0)); })
            .find("3 decisions for round 1's 2 attempts") != std::string::npos);
}

TEST_CASE("play_ladder_round (a CUDA batch's round, one thread) plays as ReplicaExchange") {
  const std::vector<double> t{300.0, 306.0, 312.0, 318.0, 324.0, 330.0};
  const int n = static_cast<int>(t.size());
  ReplicaExchange rule(t, 4242);
  std::vector<double> up, down;
  for (int k = 0; k + 1 < n; ++k) {
    up.push_back(std::sqrt(t[static_cast<std::size_t>(k) + 1] / t[static_cast<std::size_t>(k)]));
    down.push_back(std::sqrt(t[static_cast<std::size_t>(k)] / t[static_cast<std::size_t>(k) + 1]));
  }
  std::vector<int> replica_at{0, 1, 2, 3, 4, 5}, temperature_of{0, 1, 2, 3, 4, 5};
  std::vector<unsigned char> accepted(static_cast<std::size_t>(n));
  std::vector<double> factor(static_cast<std::size_t>(n));
  std::vector<double> energies{-500.0, -497.0, -499.5, -495.0, -496.0, -490.0};
  int total = 0;
  for (std::int64_t round = 0; round < 60; ++round) {
    INFO("round " << round);
    energies[static_cast<std::size_t>(round % n)] += (round % 3 == 0) ? 2.0 : -1.0;
    play_ladder_round(n, round, 4242, t.data(), energies.data(), up.data(), down.data(), false, replica_at.data(),
                      temperature_of.data(), accepted.data(), factor.data());
    const std::vector<ExchangeAttempt> expected = rule.exchange(energies);
    std::vector<double> expected_factor(static_cast<std::size_t>(n), 1.0);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const ExchangeAttempt& a = expected[i];
      CHECK((accepted[i] != 0) == a.accepted);
      total += a.accepted ? 1 : 0;
      if (!a.accepted) continue;
      expected_factor[static_cast<std::size_t>(a.replica_lower)] = a.velocity_scale_lower;
      expected_factor[static_cast<std::size_t>(a.replica_upper)] = a.velocity_scale_upper;
    }
    CHECK(factor == expected_factor);  // bit for bit: the same square roots
    for (int k = 0; k < n; ++k) CHECK(replica_at[static_cast<std::size_t>(k)] == rule.replica_at(k));
    for (int r = 0; r < n; ++r) CHECK(temperature_of[static_cast<std::size_t>(r)] == rule.temperature_index_of(r));
  }
  CHECK(total > 10);
  // skip: every attempt rejected, nothing moves.
  const std::vector<int> before = replica_at;
  play_ladder_round(n, 60, 4242, t.data(), energies.data(), up.data(), down.data(), true, replica_at.data(),
                    temperature_of.data(), accepted.data(), factor.data());
  CHECK(replica_at == before);
  for (int i = 0; i < n / 2; ++i) CHECK(accepted[static_cast<std::size_t>(i)] == 0);
  CHECK(factor == std::vector<double>(static_cast<std::size_t>(n), 1.0));
}
