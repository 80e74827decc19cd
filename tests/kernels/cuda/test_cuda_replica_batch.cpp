// The CUDA force evaluator's replica batch (CudaOptions::replicas): K copies of a System evaluated together, each
// with its own positions, against the same System evaluated alone at each copy's positions. Forces: bit for bit
// without PME (same blocks, same tiles, fixed-point sums; bonded terms, exceptions, virtual sites, the NBFIX table,
// restraints); with PME within the batched FFT's rounding (its printed difference). Energies per replica and per
// term within 1e-9 relative (a warp's energy sum may group terms of two replicas differently). Mixed and double
// precision; the all-pairs search and the column search; periodic and non-periodic systems. And a stepped batch
// (make_cuda_replica_batch): each replica's trajectory equals the replica's alone bit for bit in mixed precision; a
// ladder's exchanges decided on the device equal the host's rule (decisions, energies and trajectories bit for bit).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "io/charmm_crd.hpp"
#include "io/charmm_psf.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "platform/replica_exchange.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_systems.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;

namespace {

constexpr int kReplicas = 3;

// Copy r's positions: the system's, every atom moved by up to 0.01 nm (a different draw per copy; copy 0 unmoved),
// so that no two replicas' forces are the same.
std::vector<Vec3d> replica_positions(const std::vector<Vec3d>& x, int r) {
  std::vector<Vec3d> out = x;
  if (r == 0) return out;
  std::mt19937_64 rng(1234 + r);
  std::uniform_real_distribution<double> u(-0.01 / std::sqrt(3.0), 0.01 / std::sqrt(3.0));
  for (Vec3d& p : out) p += Vec3d(u(rng), u(rng), u(rng));
  return out;
}

double relative_rms(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += norm2(a[i] - b[i]);
    den += norm2(b[i]);
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// Rows of a and b equal bit for bit.
std::size_t identical_rows(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i].x == b[i].x && a[i].y == b[i].y && a[i].z == b[i].z;
  return same;
}

void check_energy(const char* term, double batch, double alone) {
  INFO(term << ": batch " << batch << ", alone " << alone);
  CHECK(std::fabs(batch - alone) <= 1e-9 * std::max(1.0, std::fabs(alone)));
}

// Positions with restraints on every tenth atom of each copy (their own reference points) when `restrain`.
void compare(const std::string& name, const System& s, const std::vector<Vec3d>& x, CudaOptions options,
             bool restrain = false) {
  const bool pme = s.nonbonded.method == NonbondedMethod::PME;
  const int n = s.num_particles();
  for (const bool double_precision : {false, true}) {
    INFO(name << ", " << (double_precision ? "double" : "mixed") << " precision");
    options.double_precision = double_precision;
    options.replicas = 1;
    CudaForceEvaluator alone(s, options);
    CudaOptions batch_options = options;
    batch_options.replicas = kReplicas;
    CudaForceEvaluator batch(s, batch_options);
    REQUIRE(batch.replicas() == kReplicas);
    std::vector<Vec3d> all;
    PositionRestraints batch_restraints;
    for (int r = 0; r < kReplicas; ++r) {
      const std::vector<Vec3d> xr = replica_positions(x, r);
      all.insert(all.end(), xr.begin(), xr.end());
    }
    if (restrain) {
      for (int r = 0; r < kReplicas; ++r)
        for (int i = 0; i < n; i += 10) {
          batch_restraints.atoms.push_back(r * n + i);
          batch_restraints.reference_nm.push_back(x[static_cast<std::size_t>(i)] + Vec3d(0.02, 0.0, -0.01));
          batch_restraints.k_kj_per_mol_nm2.push_back(Vec3d(1000.0, 500.0, 2000.0));
        }
      batch.set_position_restraints(batch_restraints);
    }
    batch.set_positions(all);
    batch.compute(true);
    const std::vector<Vec3d> batch_forces = batch.forces();
    const std::vector<EnergyTerms> batch_energies = batch.replica_energies();
    REQUIRE(batch_energies.size() == static_cast<std::size_t>(kReplicas));
    for (int r = 0; r < kReplicas; ++r) {
      INFO("replica " << r);
      if (restrain) {
        PositionRestraints own;
        for (std::size_t e = 0; e < batch_restraints.atoms.size(); ++e)
          if (batch_restraints.atoms[e] / n == r) {
            own.atoms.push_back(batch_restraints.atoms[e] - r * n);
            own.reference_nm.push_back(batch_restraints.reference_nm[e]);
            own.k_kj_per_mol_nm2.push_back(batch_restraints.k_kj_per_mol_nm2[e]);
          }
        alone.set_position_restraints(own);
      }
      std::vector<Vec3d> f;
      const EnergyTerms e = alone.compute(replica_positions(x, r), &f);
      const std::vector<Vec3d> fb(batch_forces.begin() + static_cast<long>(r) * n,
                                  batch_forces.begin() + static_cast<long>(r + 1) * n);
      const EnergyTerms& eb = batch_energies[static_cast<std::size_t>(r)];
      const double rms = relative_rms(fb, f);
      const std::size_t identical = identical_rows(fb, f);
      std::printf("%-14s %-6s replica %d: %zu of %d atoms' forces identical, relative RMS difference %.2e; total "
                  "energy batch %.9f alone %.9f kJ/mol\n",
                  name.c_str(), double_precision ? "double" : "mixed", r, identical, n, rms, eb.total, e.total);
      if (pme) CHECK(rms <= (double_precision ? 1e-12 : 1e-7));
      else CHECK(identical == static_cast<std::size_t>(n));
      check_energy("bonded", eb.bonded_sum(), e.bonded_sum());
      check_energy("cmap", eb.cmap, e.cmap);
      check_energy("nonbonded_direct", eb.nonbonded_direct, e.nonbonded_direct);
      check_energy("nonbonded_reciprocal", eb.nonbonded_reciprocal, e.nonbonded_reciprocal);
      check_energy("restraint", eb.restraint, e.restraint);
      check_energy("total", eb.total, e.total);
    }
  }
}

}  // namespace

TEST_CASE("a replica batch of alanine dipeptide in water (PME) equals each replica evaluated alone") {
  const Model m = test::reference_model("ala2_water");
  compare("ala2_water", m.system, m.positions_nm, CudaOptions{}, true);
  CudaOptions columns;
  columns.column_search_min_blocks = 0;  // the column search, replica by replica
  compare("ala2_water/col", m.system, m.positions_nm, columns);
}

TEST_CASE("a replica batch without a box (no cutoff) and with a cutoff but no PME equals each replica alone") {
  const Model vacuum = test::reference_model("ala2_vacuum");
  compare("ala2_vacuum", vacuum.system, vacuum.positions_nm, CudaOptions{}, true);
  const Model rf = test::system_model("ala2_water", "  nonbonded_method: cutoff_periodic\n  constraints: none\n"
                                                    "  rigid_water: false\n");
  compare("ala2_water/rf", rf.system, rf.positions_nm, CudaOptions{});
}

TEST_CASE("a replica batch with virtual sites (TIP4P-Ew) and a CHARMM psf (NBFIX table, CMAP, Urey-Bradley)") {
  const System tip4p = mdsim_test::tip4pew_system();
  compare("tip4pew_ala2", tip4p, mdsim_test::with_sites_displaced(tip4p, mdsim_test::tip4pew_positions()),
          CudaOptions{});
  CudaOptions columns;  // the column search over the class-sorted list's sub-columns, replica by replica
  columns.column_search_min_blocks = 0;
  compare("tip4pew_ala2/col", tip4p, mdsim_test::tip4pew_positions(), columns);
  const std::string shared = std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/inputs/";
  TopologyFileOptions o = mdsim_test::flexible_topology_options(NonbondedMethod::CutoffPeriodic, 1.0, false);
  o.parameters = {shared + "par_all36_prot.prm", shared + "toppar_water_ions.str"};
  o.box = Boxd{{3.271195, 0, 0}, {0, 3.299596, 0}, {0, 0, 3.300715}};
  const TopologyFileModel ala3 = read_charmm_psf(shared + "ala3_solv.psf", o);
  REQUIRE(ala3.system.lj_types.has_value());
  REQUIRE(!ala3.system.cmap_torsions.empty());
  compare("charmm_ala3", ala3.system, read_charmm_crd(shared + "ala3_solv.crd", 2776).positions_nm, CudaOptions{});
}

namespace {

// Replica r of the trajectory test: its own temperature and seed.
DynamicsSettings replica_settings(int r) {
  DynamicsSettings s = mdsim_test::langevin(1000 + static_cast<std::uint64_t>(r));
  s.integrator.temperature_k = 300.0 + 15.0 * r;
  return s;
}

// The start of replica r in `c`: its positions, constrained, minimised (a few iterations), velocities drawn.
void start_replica(Context& c, const std::vector<Vec3d>& x, int r) {
  c.set_positions(replica_positions(x, r));
  c.apply_constraints(1e-6);
  c.minimize(10.0, 20);
  c.set_velocities_to_temperature(replica_settings(r).integrator.temperature_k, 0);
}

}  // namespace

TEST_CASE("each replica of a stepped batch follows its trajectory alone bit for bit (mixed precision)") {
  const Model m = test::system_model("ala2_water", "  constraints: hbonds\n  rigid_water: true\n");
  const System& s = m.system;
  const std::size_t n = static_cast<std::size_t>(s.num_particles());
  std::vector<DynamicsSettings> settings;
  for (int r = 0; r < kReplicas; ++r) settings.push_back(replica_settings(r));
  // Mixed precision, the default buffer: each replica's list is rebuilt when its own atoms have moved half the
  // buffer, as alone (the rebuilds printed below come at different steps for different replicas).
  CudaOptions options;
  std::vector<std::unique_ptr<Context>> batch = make_cuda_replica_batch(s, settings, options);
  REQUIRE(batch.size() == static_cast<std::size_t>(kReplicas));
  std::vector<std::unique_ptr<Context>> alone;
  for (int r = 0; r < kReplicas; ++r) {
    alone.push_back(make_cuda_context(s, settings[static_cast<std::size_t>(r)], options));
    start_replica(*alone.back(), m.positions_nm, r);
    start_replica(*batch[static_cast<std::size_t>(r)], m.positions_nm, r);
    CHECK(batch[static_cast<std::size_t>(r)]->seed() == alone.back()->seed());
  }
  // Every context's first step from forces evaluated with energies (a replica alone has them from its minimisation;
  // the pair kernel with energies may round a force differently from the one without).
  StateRequest energy;
  energy.energy = true;
  for (auto& c : alone) c->state(energy);
  for (auto& c : batch) c->state(energy);
  std::vector<int> builds_before;
  for (auto& c : alone) builds_before.push_back(cuda_list_builds(*c));
  // 250 steps in chunks (past the restart points at 100 and 200), replica 1's bath moved to 350 K at step 60.
  // Positions and velocities are compared bit for bit.
  for (const int chunk : {1, 59, 90, 100}) {
    for (auto& c : batch) c->step(chunk);
    for (auto& c : alone) c->step(chunk);
    StateRequest v;
    v.velocities = true;
    const SimulationState b0 = batch[0]->state(v), a0 = alone[0]->state(v);
    std::printf("replica 0 at step %lld: %zu positions, %zu velocities identical\n", static_cast<long long>(b0.step),
                identical_rows(b0.positions_nm, a0.positions_nm),
                identical_rows(b0.velocities_nm_per_ps, a0.velocities_nm_per_ps));
    if (chunk == 59) {
      batch[1]->set_temperature(350.0);
      alone[1]->set_temperature(350.0);
    }
  }
  StateRequest all;
  all.velocities = all.energy = all.forces = true;
  for (int r = 0; r < kReplicas; ++r) {
    INFO("replica " << r);
    const SimulationState b = batch[static_cast<std::size_t>(r)]->state(all);
    const SimulationState a = alone[static_cast<std::size_t>(r)]->state(all);
    REQUIRE(b.step == 250);
    REQUIRE(a.step == 250);
    const std::size_t same_x = identical_rows(b.positions_nm, a.positions_nm);
    const std::size_t same_v = identical_rows(b.velocities_nm_per_ps, a.velocities_nm_per_ps);
    std::printf("replica %d after 250 steps at %.0f K: %zu of %zu positions and %zu velocities identical; potential "
                "batch %.9f alone %.9f kJ/mol, temperature %.3f K\n",
                r, b.temperature_k > 0 ? settings[static_cast<std::size_t>(r)].integrator.temperature_k : 0.0, same_x,
                n, same_v, b.potential.total, a.potential.total, b.temperature_k);
    std::printf("replica %d alone: %d list builds in the 250 steps\n", r,
                cuda_list_builds(*alone[static_cast<std::size_t>(r)]) - builds_before[static_cast<std::size_t>(r)]);
    CHECK(same_x == n);
    CHECK(same_v == n);
    // The energies' warp sums may group a replica's terms differently in the batch (see compare()).
    CHECK(std::fabs(b.potential.total - a.potential.total) <= 1e-9 * std::fabs(a.potential.total));
    CHECK(b.kinetic_kj_per_mol == a.kinetic_kj_per_mol);
    CHECK(b.degrees_of_freedom == a.degrees_of_freedom);
  }
  // A replica behind the batch is refused.
  batch[0]->step(10);
  CHECK_THROWS_AS(batch[1]->state(all), RuntimeError);
}

TEST_CASE("a ladder's exchanges decided on the device equal the host's rule: decisions, energies, trajectories") {
  // Two identical batches of three replicas (300, 315, 330 K): one exchanges on the device (Context::ladder_exchanger),
  // the other by ReplicaExchange on the host with set_temperature and scale_velocities, every 10 steps for 30 rounds.
  const Model m = test::system_model("ala2_water", "  constraints: hbonds\n  rigid_water: true\n");
  const System& s = m.system;
  std::vector<DynamicsSettings> settings;
  std::vector<double> temperatures;
  for (int r = 0; r < kReplicas; ++r) {
    settings.push_back(replica_settings(r));
    temperatures.push_back(settings.back().integrator.temperature_k);
  }
  std::vector<std::unique_ptr<Context>> device = make_cuda_replica_batch(s, settings, CudaOptions{});
  std::vector<std::unique_ptr<Context>> host = make_cuda_replica_batch(s, settings, CudaOptions{});
  for (int r = 0; r < kReplicas; ++r) {
    start_replica(*device[static_cast<std::size_t>(r)], m.positions_nm, r);
    start_replica(*host[static_cast<std::size_t>(r)], m.positions_nm, r);
  }
  constexpr std::uint64_t kSeed = 77;
  ReplicaExchange device_rule(temperatures, kSeed), host_rule(temperatures, kSeed);
  const std::vector<int> identity{0, 1, 2};
  std::unique_ptr<LadderExchanger> exchanger = device[0]->ladder_exchanger(temperatures, identity, kSeed);
  REQUIRE(exchanger != nullptr);
  CHECK(device[1]->ladder_exchanger(temperatures, identity, kSeed) == nullptr);  // asked of the first replica only
  int accepted = 0;
  StateRequest energy;
  energy.positions = false;
  energy.energy = true;
  for (int round = 0; round < 30; ++round) {
    for (auto& c : device) c->step(10);
    for (auto& c : host) c->step(10);
    REQUIRE(exchanger->start_round(device_rule.rounds()));
    std::vector<double> energies;
    for (auto& c : host) energies.push_back(c->state(energy).potential.total);
    const std::vector<ExchangeAttempt> expected = host_rule.exchange(energies);
    for (const ExchangeAttempt& a : expected) {
      if (!a.accepted) continue;
      for (const auto& [replica, scale] : {std::pair{a.replica_lower, a.velocity_scale_lower},
                                           std::pair{a.replica_upper, a.velocity_scale_upper}}) {
        host[static_cast<std::size_t>(replica)]->set_temperature(host_rule.temperature_of(replica));
        host[static_cast<std::size_t>(replica)]->scale_velocities(scale);
      }
    }
    const LadderRound got = exchanger->finish_round();
    INFO("round " << round);
    CHECK(!got.skipped);
    CHECK(got.energies_kj_per_mol == energies);  // bit for bit: the same sums in the same order
    const std::vector<ExchangeAttempt> applied = device_rule.apply(got.energies_kj_per_mol, got.accepted);
    REQUIRE(applied.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(applied[i].accepted == expected[i].accepted);
      CHECK(applied[i].probability == expected[i].probability);
      accepted += expected[i].accepted ? 1 : 0;
    }
  }
  std::printf("device exchanges: %d of %lld attempts accepted in 30 rounds, the same as the host's rule\n", accepted,
              static_cast<long long>(host_rule.attempts(0) + host_rule.attempts(1)));
  CHECK(accepted > 0);
  for (int r = 0; r < kReplicas; ++r) CHECK(device_rule.temperature_of(r) == host_rule.temperature_of(r));
  StateRequest all;
  all.velocities = true;
  for (auto& c : device) c->step(5);  // the device's bath coefficients drive the steps after the last round
  for (auto& c : host) c->step(5);
  for (int r = 0; r < kReplicas; ++r) {
    INFO("replica " << r);
    const SimulationState d = device[static_cast<std::size_t>(r)]->state(all);
    const SimulationState h = host[static_cast<std::size_t>(r)]->state(all);
    CHECK(identical_rows(d.positions_nm, h.positions_nm) == d.positions_nm.size());
    CHECK(identical_rows(d.velocities_nm_per_ps, h.velocities_nm_per_ps) == d.velocities_nm_per_ps.size());
  }
}
