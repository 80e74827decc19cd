// Replica ensembles on the CPU platform (engine/replicas, in one process): the replicas: config and its
// errors, Context::set_temperature, a temperature ladder's exchange log and outputs, a resume that ends bit
// for bit where the uninterrupted run ends, the ensemble checkpoint's checks, independent copies, and demux.
// The same ensemble over MPI ranks: tests/python/check_replicas_mpi.py.
#include "support/catch.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/demux.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/replica_starts.hpp"
#include "engine/replicas.hpp"
#include "engine/resources.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/config.hpp"
#include "io/exchange_log.hpp"
#include "io/pdb_reader.hpp"
#include "io/pdb_writer.hpp"
#include "io/trajectory_reader.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "platform/context.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;
using namespace mdsim;
using mdsim_test::message_of;

namespace {

const std::string kVacuum = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_vacuum.pdb";

// A 4-replica ladder 300-400 K on alanine dipeptide in vacuum (exchange every 50 steps), or other replicas.
std::string ladder_config(const std::string& out, int steps, const std::string& replicas = {}) {
  std::ostringstream c;
  c << "system: {structure: " << kVacuum << ", forcefield: [amber14-all.xml], nonbonded_method: no_cutoff}\n"
    << "platform: cpu\n"
    << "integrator: {friction: 1/ps, timestep: 2 fs, seed: 7}\n"
    << (replicas.empty() ? "replicas: {exchange: temperature, temperatures: {min: 300 K, max: 400 K, count: 4}, "
                           "exchange_interval: 0.1 ps}\n"
                         : replicas)
    << "run: {steps: " << steps << "}\n"
    << "output: {directory: " << out << ", trajectory: {interval: 100}, state: {interval: 25}, "
    << "checkpoint: {interval: 200}, progress: false}\n";
  return c.str();
}

RunConfig parse(const std::string& text, const fs::path& dir) { return parse_config(text, (dir / "rex.yaml").string(), dir.string()); }

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "rex.yaml", ".", false);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::istringstream in(mdsim_test::read_text(p.string()));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Whether `text` contains every one of `parts`.
bool has(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (text.find(p) == std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("replicas: the config section and its errors") {
  const fs::path dir = scratch("config");
  const RunConfig c = parse(ladder_config("out", 100), dir);
  REQUIRE(c.replicas);
  CHECK(c.replicas->count == 4);
  CHECK(c.replicas->exchange_interval_steps == 50);
  CHECK(c.replicas->temperatures_k.front() == 300.0);
  CHECK(c.replicas->temperatures_k.back() == 400.0);
  CHECK(c.replicas->temperatures_k[1] == Catch::Approx(300.0 * std::pow(400.0 / 300.0, 1.0 / 3.0)).epsilon(1e-14));
  const RunConfig list = parse(ladder_config("out", 100, "replicas: {exchange: temperature, temperatures: [300 K, 305 kelvin, "
                                                        "310 K], exchange_interval: 200 fs}\n"),
                               dir);
  CHECK(list.replicas->count == 3);
  CHECK(list.replicas->temperatures_k[1] == 305.0);
  const RunConfig copies = parse(ladder_config("out", 100, "replicas: {exchange: none, count: 3}\n"), dir);
  CHECK(copies.replicas->exchange == ReplicaExchangeKind::None);
  CHECK(copies.replicas->count == 3);
  CHECK(copies.replicas->batch);  // a rank's replicas as one batch on the CUDA platform, by default
  CHECK_FALSE(parse(ladder_config("out", 100, "replicas: {exchange: none, count: 3, batch: false}\n"), dir).replicas->batch);
  // The physics settings a resume compares name the ladder, not the integrator's temperature.
  bool ladder = false, integrator_temperature = false;
  for (const auto& [key, value] : physics_settings(c)) {
    ladder |= key == "replicas.temperatures";
    integrator_temperature |= key == "integrator.temperature";
  }
  CHECK(ladder);
  CHECK_FALSE(integrator_temperature);

  const auto with = [&](const std::string& replicas, const std::string& extra = {}) {
    return error_of(ladder_config("out", 100, replicas) + extra);
  };
  CHECK(has(with("replicas: {exchange: temperature, temperatures: [300 K, 350 K, 340 K], exchange_interval: 1 ps}\n"), {"rex.yaml:4:", "'temperatures' must increase: 340 K is not above the temperature before it (350 K)"}));
  CHECK(has(with("replicas: {exchange: temperature, temperatures: [300 K, 350 K], exchange_interval: 3 fs}\n"), {"'exchange_interval' (0.003 ps) is not a whole number of time steps (0.002 ps): e.g. 0.004 ps"}));
  CHECK(has(with("replicas: {exchange: temperature, temperatures: [300 K], exchange_interval: 1 ps}\n"), {"at least 2 temperatures"}));
  CHECK(has(with("replicas: {exchange: temperature, temperatures: {min: 300 K, max: 290 K, count: 4}, exchange_interval: 1 ps}\n"), {"'max' (290 K) must be above 'min' (300 K)"}));
  CHECK(has(with("replicas: {exchange: temperature, temperatures: [300 K, 310 K]}\n"), {"needs 'exchange_interval'"}));
  CHECK(has(with("replicas: {exchange: none, count: 1}\n"), {"'count' must be at least 2"}));
  CHECK(has(with("replicas: {exchange: none, count: 4, temperatures: [300 K, 310 K]}\n"), {"'replicas.temperatures' belongs to temperature exchange"}));
  CHECK(has(with("replicas: {exchange: swap, count: 4}\n"), {"'exchange'"}));
  CHECK(has(with("replicas: {exchange: none, count: 4, batch: sometimes}\n"), {"rex.yaml:4:", "batch"}));
  CHECK(has(error_of("system: {structure: " + kVacuum + ", nonbonded_method: no_cutoff}\n"
                      "integrator: {type: verlet, timestep: 2 fs}\n"
                      "replicas: {exchange: temperature, temperatures: [300 K, 310 K], exchange_interval: 1 ps}\n"), {"rex.yaml:3:", "temperature exchange needs a heat bath"}));
  CHECK(has(error_of("system: {structure: " + kVacuum + ", nonbonded_method: no_cutoff}\n"
                      "integrator: {temperature: 310 K}\n"
                      "replicas: {exchange: temperature, temperatures: [300 K, 310 K], exchange_interval: 1 ps}\n"), {"rex.yaml:2:", "'integrator.temperature' does not apply"}));
  CHECK(has(error_of("system: {structure: " + kVacuum + ", nonbonded_method: no_cutoff}\n"
                      "replicas: {exchange: temperature, temperatures: [300 K, 310 K], exchange_interval: 1 ps}\n"
                      "output: {checkpoint: {interval: 750}}\n"),
            {"rex.yaml:3:", "output.checkpoint.interval (750 steps) must be a multiple of replicas.exchange_interval "
                            "(500 steps), e.g. 500"}));
  CHECK(has(error_of("system: {structure: " + kVacuum + ", nonbonded_method: no_cutoff}\n"
                     "replicas: {exchange: none, count: 2}\n"
                     "stages: [{name: nvt, steps: 10}]\n"),
            {"'replicas' and 'stages' cannot be combined"}));
  fs::remove_all(dir);
}

TEST_CASE("replicas: Context::set_temperature moves the heat bath") {
  const fs::path dir = scratch("bath");
  RunConfig c = parse(ladder_config("out", 100, "replicas: {exchange: none, count: 2}\n"), dir);
  c.replicas.reset();
  c.integrator.friction_per_ps = 10.0;
  const Model model = build_model(c);
  auto context = make_cpu_context(model.system, dynamics_settings(c));
  context->set_positions(model.positions_nm);
  context->apply_constraints(1e-6);
  context->set_velocities_to_temperature(300.0, 0);
  const auto mean_temperature = [&](int samples) {
    double sum = 0;
    StateRequest energy;
    energy.positions = false;
    energy.energy = true;
    for (int i = 0; i < samples; ++i) {
      context->step(20);
      sum += context->state(energy).temperature_k;
    }
    return sum / samples;
  };
  context->step(500);
  const double at_300 = mean_temperature(200);
  context->set_temperature(600.0);
  context->step(1000);  // 2 ps: twenty times the thermostat's 0.1 ps relaxation time
  const double at_600 = mean_temperature(200);
  // 51 degrees of freedom: the mean of 200 samples 40 fs apart is within ~10% of the bath.
  CHECK(at_300 == Catch::Approx(300.0).epsilon(0.12));
  CHECK(at_600 == Catch::Approx(600.0).epsilon(0.12));
  CHECK_THROWS_AS(context->set_temperature(-1.0), InputError);
  c.integrator.type = IntegratorType::Verlet;
  auto verlet = make_cpu_context(model.system, dynamics_settings(c));
  CHECK(has(message_of([&] { verlet->set_temperature(310.0); }), {"has no heat bath"}));
  fs::remove_all(dir);
}

TEST_CASE("replicas: a temperature ladder in one process, its log, resume and demux") {
  const fs::path dir = scratch("ladder");
  const RunConfig full = parse(ladder_config("full", 1000), dir);
  SingleProcess alone;
  RunRequest request;
  request.config_text = "test";
  const EnsembleSummary s = run_ensemble(full, request, alone);
  CHECK(s.replicas == 4);
  CHECK(s.last_step == 1000);
  CHECK(s.simulated_ps_per_replica == Catch::Approx(2.0));
  CHECK(s.ns_per_day_total == Catch::Approx(4 * s.ns_per_day_per_replica));
  REQUIRE(s.pairs.size() == 3);

  // The log: 20 rounds, pairs (0, 2) in even rounds and (1) in odd ones; every map a permutation, each
  // accepted attempt swapping its two replicas in the map; the counts those of the summary.
  const std::vector<std::string> log = lines_of(dir / "full" / "exchange.csv");
  REQUIRE(log.size() == 1 + 10 * 2 + 10 * 1);
  CHECK(log[0] == exchange_log_header(4));
  std::vector<std::int64_t> attempts(3), accepted(3);
  std::vector<int> at{0, 1, 2, 3};
  for (std::size_t i = 1; i < log.size(); ++i) {
    std::vector<std::string> cell;
    std::stringstream ss(log[i]);
    for (std::string x; std::getline(ss, x, ',');) cell.push_back(x);
    REQUIRE(cell.size() == 18);
    const int pair = std::stoi(cell[3]);
    const long long round = std::stoll(cell[2]);
    CHECK(std::stoll(cell[0]) == 50 * (round + 1));
    CHECK(pair % 2 == round % 2);
    CHECK(cell[10].empty());  // no box, no volume
    CHECK(std::stoi(cell[6]) == at[pair]);
    CHECK(std::stoi(cell[7]) == at[pair + 1]);
    const double p = std::stod(cell[12]);
    CHECK((p > 0.0 && p <= 1.0));
    ++attempts[pair];
    if (cell[13] == "1") {
      ++accepted[pair];
      std::swap(at[pair], at[pair + 1]);
    }
    // The map after the round: equal to `at` once the round's last attempt is applied.
    const bool last_of_round = i + 1 == log.size() || lines_of(dir / "full" / "exchange.csv")[i + 1].rfind(cell[0] + ",", 0) != 0;
    if (last_of_round)
      for (int t = 0; t < 4; ++t) CHECK(std::stoi(cell[14 + t]) == at[t]);
  }
  for (int k = 0; k < 3; ++k) {
    CHECK(s.pairs[k].attempts == attempts[k]);
    CHECK(s.pairs[k].accepted == accepted[k]);
  }
  CHECK(accepted[0] + accepted[1] + accepted[2] > 0);  // 300-400 K over 4 replicas of 22 atoms exchange often

  // Each replica's outputs, and the ensemble's checkpoint at the last step.
  for (int k = 0; k < 4; ++k) {
    const fs::path r = dir / "full" / replica_directory_name(k, 4);
    CHECK(fs::exists(r / "trajectory.h5"));
    CHECK(lines_of(r / "state.csv").size() == 1 + 40);
    CHECK(fs::exists(r / "final.pdb"));
  }
  const Model model = build_model(full);
  const EnsembleCheckpoint e = read_ensemble_checkpoint((dir / "full" / "checkpoint.h5").string(), system_fingerprint(model.system));
  CHECK(e.step == 1000);
  REQUIRE(e.replicas.size() == 4);
  std::set<std::uint64_t> seeds;
  for (int k = 0; k < 4; ++k) seeds.insert(e.replicas[k].seed);
  CHECK(seeds.size() == 4);
  CHECK(e.replicas[2].seed == replica_seed(7, 2));

  // Half the run, then --resume to the end: the same log, state logs and final positions, bit for bit.
  const RunConfig half = parse(ladder_config("resumed", 400), dir);
  run_ensemble(half, request, alone);
  const RunConfig rest = parse(ladder_config("resumed", 1000), dir);
  RunRequest resume = request;
  resume.resume = true;
  const EnsembleSummary r = run_ensemble(rest, resume, alone);
  CHECK(r.first_step == 400);
  CHECK(mdsim_test::read_text((dir / "resumed" / "exchange.csv").string()) ==
        mdsim_test::read_text((dir / "full" / "exchange.csv").string()));
  const auto without_speed = [](std::vector<std::string> lines) {
    for (std::string& l : lines) l = l.substr(0, l.rfind(','));  // speed_ns_per_day is the last column
    return lines;
  };
  for (int k = 0; k < 4; ++k) {
    const std::string name = replica_directory_name(k, 4);
    CHECK(without_speed(lines_of(dir / "resumed" / name / "state.csv")) == without_speed(lines_of(dir / "full" / name / "state.csv")));
    CHECK(mdsim_test::read_text((dir / "resumed" / name / "final.pdb").string()) ==
          mdsim_test::read_text((dir / "full" / name / "final.pdb").string()));
  }

  // A checkpoint of another ensemble, or of a single run, is refused.
  const RunConfig other = parse(ladder_config("resumed", 1200, "replicas: {exchange: temperature, temperatures: {min: 300 K, "
                                                               "max: 450 K, count: 4}, exchange_interval: 0.1 ps}\n"),
                                dir);
  CHECK(has(message_of([&] { run_ensemble(other, resume, alone); }), {"changes its physics", "replicas.temperatures"}));
  const RunConfig fewer = parse(ladder_config("resumed", 1200, "replicas: {exchange: temperature, temperatures: {min: 300 K, "
                                                               "max: 400 K, count: 3}, exchange_interval: 0.1 ps}\n"),
                                dir);
  CHECK(has(message_of([&] { run_ensemble(fewer, resume, alone); }), {"holds an ensemble of 4 replicas"}));
  CHECK(has(message_of([&] { read_checkpoint((dir / "full" / "checkpoint.h5").string(), system_fingerprint(model.system)); }), {"the checkpoint of a replica ensemble"}));

  // demux: each temperature's state log holds, at every step, the line of the replica the map puts there.
  const DemuxSummary d = demux_ensemble(full);
  CHECK(d.frames == 10);
  CHECK(d.state_lines == 40);
  const std::vector<ExchangeMapPoint> maps = read_exchange_map((dir / "full" / "exchange.csv").string(), 4);
  for (int t = 0; t < 4; ++t) {
    char name[64];
    std::snprintf(name, sizeof name, "temperature_%02d_%.2fK.csv", t, full.replicas->temperatures_k[t]);
    const std::vector<std::string> sorted = lines_of(dir / "full" / "demux" / name);
    REQUIRE(sorted.size() == 41);
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      const std::int64_t step = std::stoll(sorted[i]);
      const int replica = replicas_by_temperature_at(maps, step, 4)[t];
      CHECK(sorted[i] == lines_of(dir / "full" / replica_directory_name(replica, 4) / "state.csv")[i]);
    }
  }
  CHECK(replicas_by_temperature_at(maps, 50, 4) == std::vector<int>{0, 1, 2, 3});  // before the first round's swaps
  fs::remove_all(dir);
}

TEST_CASE("replicas: the notice for GPUs an ensemble leaves idle") {
  // One process on a host of 2 GPUs: 8 replicas would run on both with 2 ranks.
  CHECK(idle_devices_notice(1, 2, 8) ==
        "notice: 2 CUDA devices visible; the ensemble runs on 1 (1 rank, one device each): mpirun -n 2 spreads its 8 "
        "replicas over 2 devices");
  // 2 ranks, 4 GPUs, 3 replicas: a third rank is the most that has work.
  CHECK(idle_devices_notice(2, 4, 3) ==
        "notice: 4 CUDA devices visible; the ensemble runs on 2 (2 ranks, one device each): mpirun -n 3 spreads its 3 "
        "replicas over 3 devices");
  CHECK(idle_devices_notice(2, 2, 8).empty());  // every GPU has a rank
  CHECK(idle_devices_notice(4, 2, 8).empty());  // two ranks a GPU
  CHECK(idle_devices_notice(2, 4, 2).empty());  // no replica left for a third rank
  CHECK(idle_devices_notice(1, 1, 8).empty());
}

TEST_CASE("replicas: independent copies and the ranks' checks") {
  const fs::path dir = scratch("copies");
  const RunConfig c = parse(ladder_config("copies", 200, "replicas: {exchange: none, count: 3}\n"), dir);
  SingleProcess alone;
  RunRequest request;
  const EnsembleSummary s = run_ensemble(c, request, alone);
  CHECK(s.pairs.empty());
  CHECK_FALSE(fs::exists(dir / "copies" / "exchange.csv"));
  const std::vector<std::string> a = lines_of(dir / "copies" / "replica_00" / "state.csv");
  const std::vector<std::string> b = lines_of(dir / "copies" / "replica_01" / "state.csv");
  REQUIRE(a.size() == b.size());
  CHECK(a.back() != b.back());  // distinct seeds: distinct trajectories

  // More ranks than replicas: refused at the replicas section.
  struct FourRanks final : EnsembleComm {
    int rank() const override { return 0; }
    int size() const override { return 4; }
    int local_rank() const override { return 0; }
    std::string name() const override { return "four"; }
    std::vector<double> all_gather(const std::vector<double>& mine) override { return mine; }
    std::vector<double> gather(const std::vector<double>& mine) override { return mine; }
    int all_max(int value) override { return value; }
    std::uint64_t broadcast(std::uint64_t value) override { return value; }
  } four;
  CHECK(has(message_of([&] { run_ensemble(c, request, four); }), {"rex.yaml:4:", "4 MPI ranks for 3 replicas would leave ranks without work"}));
  // A Simulation (what the Python package drives) is one simulation: an ensemble's config is refused.
  CHECK(has(message_of([&] { Simulation(c, RunRequest{}); }), {"rex.yaml:4:", "describes an ensemble of replicas"}));
  // Replicas that do not fit one rank's memory together: the error asks for more ranks.
  const Model model = build_model(c);
  PlatformChoice cpu;
  CHECK(has(message_of([&] { check_platform_memory(c, model.system, cpu, 2000000000); }),
            {"rex.yaml:4:", "replicas: 2000000000 replicas in one process need about", "spread them over more devices"}));
  CHECK(has(message_of([&] { demux_ensemble(c); }), {"demux sorts a temperature ladder's outputs"}));
  fs::remove_all(dir);
}

namespace {

// Two replicas of alanine dipeptide in vacuum without constraints (so a start's positions are those the checkpoint
// holds after 0 steps), from `coordinates`, with `velocities` as run.initial_velocities.
std::string starts_config(const std::string& out, const std::string& coordinates, int steps,
                          const std::string& velocities = "temperature", int count = 2) {
  std::ostringstream c;
  c << "system: {structure: " << kVacuum << ", forcefield: [amber14-all.xml], nonbonded_method: no_cutoff, "
    << "constraints: none}\n"
    << "platform: cpu\n"
    << "integrator: {friction: 1/ps, timestep: 1 fs, seed: 5}\n"
    << "replicas: {exchange: none, count: " << count << ", coordinates: " << coordinates << "}\n"
    << "run: {steps: " << steps << ", initial_velocities: " << velocities << "}\n"
    << "output: {directory: " << out << ", trajectory: {interval: 25, velocities: true}, state: {interval: 25}, "
    << "progress: false}\n";
  return c.str();
}

std::vector<Vec3d> vectors(const std::vector<float>& v) {
  std::vector<Vec3d> out;
  for (std::size_t i = 0; i + 2 < v.size(); i += 3) out.emplace_back(v[i], v[i + 1], v[i + 2]);
  return out;
}

double largest_difference(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  double worst = a.size() == b.size() ? 0.0 : 1e300;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) worst = std::max(worst, norm(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("replicas: each replica from coordinates of its own") {
  const fs::path dir = scratch("starts");
  const Model model = build_model(parse_config(starts_config("unused", "[a.pdb, b.pdb]", 0), (dir / "rex.yaml").string(),
                                               dir.string(), false));
  const SystemFingerprint fingerprint = system_fingerprint(model.system);
  // Start b: every atom moved by a few hundredths of a nm (a different structure, no overlaps).
  std::vector<Vec3d> moved = model.positions_nm;
  for (std::size_t i = 0; i < moved.size(); ++i)
    moved[i] += Vec3d(0.02 * std::sin(1.0 + i), 0.02 * std::cos(2.0 * i), 0.01 * std::sin(0.5 * i));
  write_pdb((dir / "a.pdb").string(), model.topology, model.positions_nm, std::nullopt);
  write_pdb((dir / "b.pdb").string(), model.topology, moved, std::nullopt);
  SingleProcess alone;
  RunRequest request;
  // After 0 steps each replica is at its own file's positions.
  run_ensemble(parse(starts_config("files", "[a.pdb, b.pdb]", 0), dir), request, alone);
  const EnsembleCheckpoint files = read_ensemble_checkpoint((dir / "files" / "checkpoint.h5").string(), fingerprint);
  CHECK(largest_difference(files.replicas[0].positions_nm, read_pdb((dir / "a.pdb").string()).positions_nm) == 0.0);
  CHECK(largest_difference(files.replicas[1].positions_nm, read_pdb((dir / "b.pdb").string()).positions_nm) == 0.0);
  CHECK(largest_difference(files.replicas[0].positions_nm, files.replicas[1].positions_nm) > 0.01);

  // The frames of one trajectory (2 frames: steps 25 and 50): replica k starts from frame floor(2 k / 2) = k, with
  // that frame's velocities.
  CHECK(replica_frame(0, 2, 2) == 0);
  CHECK(replica_frame(1, 3, 7) == 2);
  CHECK(replica_frame(63, 64, 1000) == 984);
  run_ensemble(parse(starts_config("source", "[a.pdb, b.pdb]", 50), dir), request, alone);
  const fs::path source = dir / "source" / "replica_01" / "trajectory.h5";
  run_ensemble(parse(starts_config("frames", source.string(), 0, "from_coordinates"), dir), request, alone);
  const EnsembleCheckpoint frames = read_ensemble_checkpoint((dir / "frames" / "checkpoint.h5").string(), fingerprint);
  const TrajectoryReader reader(source.string());
  REQUIRE(reader.frames() == 2);
  for (int k = 0; k < 2; ++k) {
    INFO("replica " << k);
    const TrajectoryFrame expected = reader.read(k);
    CHECK(largest_difference(frames.replicas[k].positions_nm, vectors(expected.positions_nm)) == 0.0);
    CHECK(largest_difference(frames.replicas[k].velocities_nm_per_ps, vectors(expected.velocities_nm_per_ps)) == 0.0);
  }

  // Located errors.
  const auto error = [&](const std::string& coordinates, const std::string& velocities = "temperature", int count = 2) {
    return message_of([&] { run_ensemble(parse(starts_config("bad", coordinates, 0, velocities, count), dir), request, alone); });
  };
  CHECK(has(error("[a.pdb]"), {"rex.yaml:4:", "'replicas.coordinates' lists 1 files for 2 replicas"}));
  CHECK(has(error("a.pdb"), {"rex.yaml:4:", "names one file", "give a list of 2 coordinate files"}));
  CHECK(has(error("[a.pdb, missing.pdb]"), {"rex.yaml:4:", "missing.pdb is not a file"}));
  CHECK(has(error("[a.pdb, " + std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb]"),
            {"rex.yaml:4:", "ala2_water.pdb has 2269 atoms, but the system has 22"}));
  Topology swapped = model.topology;  // atoms 1 and 2 (HH31, CH3) in each other's place
  std::swap(swapped.atoms[0], swapped.atoms[1]);
  write_pdb((dir / "swapped.pdb").string(), swapped, model.positions_nm, std::nullopt);
  CHECK(has(error("[a.pdb, swapped.pdb]"), {"rex.yaml:4:", "swapped.pdb line", "is C, but the system's atom 1",
                                            "must list the system's atoms in its order"}));
  CHECK(has(error(source.string(), "temperature", 3), {"holds 2 frames for 3 replicas"}));
  CHECK(has(error("[a.pdb, b.pdb]", "from_coordinates"), {"from_coordinates starts replica 0 from the velocities of",
                                                          "a.pdb, which holds none"}));
  fs::remove_all(dir);
}

TEST_CASE("replicas: an Ensemble stepped in parts ends where run_ensemble ends") {
  const fs::path dir = scratch("parts");
  SingleProcess alone;
  run_ensemble(parse(ladder_config("whole", 400), dir), RunRequest{}, alone);
  Ensemble parts(parse(ladder_config("parts", 400), dir), RunRequest{}, alone);
  CHECK(parts.replicas() == 4);
  CHECK(parts.first_replica() == 0);
  CHECK_FALSE(parts.batched());  // the CPU platform runs them in turn
  CHECK(parts.bath_temperature(3) == 400.0);
  for (const std::int64_t step : {30, 100, 275, 400}) {
    CHECK(parts.run_to(step));
    CHECK(parts.current_step() == step);
    CHECK(parts.replica(2).context().state(StateRequest{}).step == step);
  }
  CHECK(has(message_of([&] { parts.run_to(401); }), {"the ensemble ends at run.steps = 400: step 401 is past it"}));
  const EnsembleSummary s = parts.finish();
  CHECK(s.last_step == 400);
  CHECK(mdsim_test::read_text((dir / "parts" / "exchange.csv").string()) ==
        mdsim_test::read_text((dir / "whole" / "exchange.csv").string()));
  const SystemFingerprint fingerprint = system_fingerprint(parts.replica(0).model().system);
  const EnsembleCheckpoint a = read_ensemble_checkpoint((dir / "whole" / "checkpoint.h5").string(), fingerprint);
  const EnsembleCheckpoint b = read_ensemble_checkpoint((dir / "parts" / "checkpoint.h5").string(), fingerprint);
  for (std::size_t k = 0; k < 4; ++k) {
    INFO("replica " << k);
    CHECK(largest_difference(a.replicas[k].positions_nm, b.replicas[k].positions_nm) == 0.0);
    CHECK(largest_difference(a.replicas[k].velocities_nm_per_ps, b.replicas[k].velocities_nm_per_ps) == 0.0);
  }
  const std::string none = message_of([&] { Ensemble(parse(ladder_config("none", 10, "\n"), dir), RunRequest{}, alone); });
  INFO(none);
  CHECK(has(none, {"an Ensemble needs a config with 'replicas:'"}));
  fs::remove_all(dir);
}
