// Replica ensembles on the CUDA platform: set_temperature moves the GPU context's heat bath (its step
// graphs are captured again), and a 4-replica ladder on alanine dipeptide in water (mixed precision, its replicas in
// one batch) runs, exchanges, resumes from its checkpoint bit for bit as the uninterrupted run, and ends in the state
// the same ladder run replica by replica reaches; independent copies from frames of a trajectory do the same. Exits
// 77 (CTest: skipped) without a GPU.
#include "support/catch.hpp"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/replicas.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/config.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "platform/context.hpp"
#include "support/checkpoints.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim_test::differing_vectors;
using mdsim_test::scratch;

namespace {

const std::string kWater = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";

// The ladder, or the `replicas` mapping's other keys (`replicas` = "exchange: none, count: 3").
RunConfig config(const fs::path& dir, const std::string& out, int steps, bool batch = true,
                 const std::string& replicas = {}) {
  std::ostringstream c;
  c << "system: {structure: " << kWater << ", cutoff: 1.0 nm, constraints: hbonds}\n"
    << "platform: {name: cuda, precision: mixed}\n"
    << "integrator: {friction: 1/ps, timestep: 2 fs, seed: 11}\n"
    << "replicas: {"
    << (replicas.empty() ? "exchange: temperature, temperatures: {min: 300 K, max: 312 K, count: 4}, exchange_interval: 0.1 ps"
                         : replicas)
    << ", batch: " << (batch ? "true" : "false") << "}\n"
    << "run: {steps: " << steps << "}\n"
    << "output: {directory: " << out << ", trajectory: {interval: 100}, state: {interval: 50}, "
    << "checkpoint: {interval: 200}, progress: false}\n";
  return parse_config(c.str(), (dir / "rex.yaml").string(), dir.string());
}

}  // namespace

TEST_CASE("CUDA: set_temperature moves the heat bath") {
  const fs::path dir = scratch("bath");
  RunConfig c = config(dir, "out", 100);
  c.replicas.reset();
  c.integrator.temperature_k = 300.0;
  c.integrator.friction_per_ps = 10.0;
  const Model model = build_model(c);
  PlatformChoice cuda;
  cuda.kind = PlatformKind::Cuda;
  auto context = make_context(model.system, dynamics_settings(c), cuda, c.platform);
  context->set_positions(model.positions_nm);
  context->apply_constraints(1e-6);
  context->set_velocities_to_temperature(300.0, 0);
  const auto mean_temperature = [&] {
    StateRequest energy;
    energy.positions = false;
    energy.energy = true;
    double sum = 0;
    for (int i = 0; i < 50; ++i) {
      context->step(20);
      sum += context->state(energy).temperature_k;
    }
    return sum / 50;
  };
  context->step(200);
  const double before = mean_temperature();
  context->set_temperature(450.0);
  context->step(1000);
  const double after = mean_temperature();
  // ~4,600 degrees of freedom: the mean temperature is within a few K of the bath.
  CHECK(before == Catch::Approx(300.0).margin(8.0));
  CHECK(after == Catch::Approx(450.0).margin(12.0));
  fs::remove_all(dir);
}

TEST_CASE("CUDA: a replica ladder runs, exchanges and resumes bit for bit") {
  const fs::path dir = scratch("ladder");
  SingleProcess alone;
  RunRequest request;
  const EnsembleSummary full = run_ensemble(config(dir, "full", 600), request, alone);
  CHECK(full.platform == "cuda (mixed precision), 4 replicas a batch");
  std::int64_t accepted = 0;
  for (const ReplicaPairStatistics& p : full.pairs) accepted += p.accepted;
  CHECK(accepted > 0);
  run_ensemble(config(dir, "resumed", 400), request, alone);
  RunRequest resume;
  resume.resume = true;
  run_ensemble(config(dir, "resumed", 600), resume, alone);
  CHECK(mdsim_test::read_text((dir / "resumed" / "exchange.csv").string()) ==
        mdsim_test::read_text((dir / "full" / "exchange.csv").string()));
  const SystemFingerprint fingerprint = system_fingerprint(build_model(config(dir, "full", 600)).system);
  const EnsembleCheckpoint a = read_ensemble_checkpoint((dir / "full" / "checkpoint.h5").string(), fingerprint);
  const EnsembleCheckpoint b = read_ensemble_checkpoint((dir / "resumed" / "checkpoint.h5").string(), fingerprint);
  REQUIRE(a.replicas.size() == b.replicas.size());
  for (std::size_t k = 0; k < a.replicas.size(); ++k) {
    CHECK(differing_vectors(a.replicas[k].positions_nm, b.replicas[k].positions_nm) == 0);
    CHECK(differing_vectors(a.replicas[k].velocities_nm_per_ps, b.replicas[k].velocities_nm_per_ps) == 0);
  }
  CHECK(a.exchange_state == b.exchange_state);
  // The same ensemble with its replicas one by one (replicas.batch: false): a replica of the batch follows its own
  // trajectory bit for bit (kernels/cuda/cuda_context.hpp), so the exchanges and the final states are the same.
  const EnsembleSummary in_turn = run_ensemble(config(dir, "in_turn", 600, false), request, alone);
  CHECK(in_turn.platform == "cuda (mixed precision)");
  const EnsembleCheckpoint c = read_ensemble_checkpoint((dir / "in_turn" / "checkpoint.h5").string(), fingerprint);
  for (std::size_t k = 0; k < a.replicas.size(); ++k) {
    INFO("replica " << k << ", batched against one by one");
    CHECK(differing_vectors(a.replicas[k].positions_nm, c.replicas[k].positions_nm) == 0);
    CHECK(differing_vectors(a.replicas[k].velocities_nm_per_ps, c.replicas[k].velocities_nm_per_ps) == 0);
  }
  CHECK(a.exchange_state == c.exchange_state);
  for (std::size_t p = 0; p < full.pairs.size(); ++p) CHECK(full.pairs[p].accepted == in_turn.pairs[p].accepted);

  // Independent copies from frames 0, 2 and 4 of a replica's trajectory (replicas.coordinates), batched and one by
  // one: each replica starts from its own frame and both end in the same states.
  const std::string copies = "exchange: none, count: 3, coordinates: " + (dir / "full" / "replica_00" / "trajectory.h5").string();
  const EnsembleSummary batched_copies = run_ensemble(config(dir, "copies", 200, true, copies), request, alone);
  CHECK(batched_copies.platform == "cuda (mixed precision), 3 replicas a batch");
  run_ensemble(config(dir, "copies_in_turn", 200, false, copies), request, alone);
  const EnsembleCheckpoint d = read_ensemble_checkpoint((dir / "copies" / "checkpoint.h5").string(), fingerprint);
  const EnsembleCheckpoint e = read_ensemble_checkpoint((dir / "copies_in_turn" / "checkpoint.h5").string(), fingerprint);
  REQUIRE(d.replicas.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    INFO("copy " << k << ", batched against one by one");
    CHECK(differing_vectors(d.replicas[k].positions_nm, e.replicas[k].positions_nm) == 0);
    CHECK(differing_vectors(d.replicas[k].velocities_nm_per_ps, e.replicas[k].velocities_nm_per_ps) == 0);
  }
  CHECK(differing_vectors(d.replicas[0].positions_nm, d.replicas[1].positions_nm) > 1000);  // different starts
  fs::remove_all(dir);
}
