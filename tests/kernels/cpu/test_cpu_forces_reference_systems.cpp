// CPU reference platform on the real systems of shared/systems, built with the PDB reader and the
// force-field System builder, against OpenMM 7.7's Reference platform (shared/reference): every
// energy term within 1e-6 relative of <name>.json and the per-term and total forces within 1e-6
// relative RMS of <name>.h5; dhfr_bench (amber99sb + tip3p, cutoff 0.9 nm) energies only; and the
// FFT-friendly PME grid (system.pme_grid) against the exact one on ala2_water.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "physics/nonbonded.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;

struct Built {
  System system;
  Json reference;
};

// The System with the reference's settings: no constraints, flexible water, the JSON's nonbonded
// method, cutoff, tolerance and dispersion correction.
Built build_reference_system(const std::string& name, const std::string& pdb_name) {
  Built b;
  b.reference = mdsim_test::read_json(kShared + "/reference/" + name + ".json");
  const Json& settings = b.reference["settings"];
  std::vector<std::string> ff_names;
  for (const Json& f : b.reference["forcefield"].array) ff_names.push_back(f.string);
  const ForceFieldData ff = load_forcefields(ff_names, kShared + "/forcefields");
  Topology top = read_pdb(kShared + "/systems/" + pdb_name + ".pdb");
  create_topology_bonds(top, ff.standard);
  ForceFieldOptions options;
  options.constraints = ConstraintMode::None;
  options.rigid_water = false;
  const std::string method = settings["nonbonded_method"].string;
  options.nonbonded.method = method == "PME" ? NonbondedMethod::PME : NonbondedMethod::NoCutoff;
  if (!settings["cutoff_nm"].is_null()) options.nonbonded.cutoff_nm = settings["cutoff_nm"].num();
  if (!settings["ewald_error_tolerance"].is_null()) options.nonbonded.ewald_tolerance = settings["ewald_error_tolerance"].num();
  options.nonbonded.dispersion_correction = settings["dispersion_correction"].boolean;
  REQUIRE_FALSE(settings["switching"].boolean);
  b.system = build_system(top, ff, options);
  return b;
}

double term_energy(const EnergyTerms& e, const std::string& term) {
  if (term == "bond") return e.bond;
  if (term == "angle") return e.angle;
  if (term == "torsion") return e.torsion;
  if (term == "nonbonded_direct") return e.nonbonded_direct;
  if (term == "nonbonded_reciprocal") return e.nonbonded_reciprocal;
  if (term == "dispersion_correction") return e.dispersion_correction;
  if (term == "nonbonded") return e.nonbonded;
  return e.total;
}

void compare_energies(const EnergyTerms& e, const Json& ref_energies) {
  for (const auto& [term, value] : ref_energies.object) {
    INFO("energy term " << term << ": ours " << term_energy(e, term) << " OpenMM " << value.num() << " relative difference "
                        << mdsim_test::relative_difference(term_energy(e, term), value.num()));
    // A term that is exactly zero (vacuum reciprocal) must be zero here too.
    CHECK(term_energy(e, term) == Catch::Approx(value.num()).epsilon(1e-6).margin(1e-9));
  }
}

void check_system(const std::string& name, const std::string& pdb_name) {
  INFO("system " << name);
  Built b = build_reference_system(name, pdb_name);
  const std::string h5 = kShared + "/reference/" + name + ".h5";
  const std::vector<Vec3d> x = mdsim_test::read_h5_vec3(h5, "/positions_nm");
  REQUIRE(int(x.size()) == b.system.num_particles());
  CpuForceEvaluator ev(b.system);

  std::vector<Vec3d> f;
  const auto t0 = std::chrono::steady_clock::now();
  const EnergyTerms all = ev.compute(x, &f);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("one energy + forces evaluation: " << seconds << " s");
  compare_energies(all, b.reference["energies_kj_per_mol"]);
  const double total_err = mdsim_test::relative_rms_difference(f, mdsim_test::read_h5_vec3(h5, "/forces_kj_per_mol_nm/total"));
  INFO("total force relative RMS difference " << total_err);
  CHECK(total_err < 1e-6);

  const struct {
    const char* name;
    unsigned mask;
  } terms[] = {{"bond", kTermBond}, {"angle", kTermAngle}, {"torsion", kTermTorsion},
               {"nonbonded_direct", kTermNonbondedDirect}, {"nonbonded_reciprocal", kTermNonbondedReciprocal}};
  for (const auto& t : terms) {
    std::vector<Vec3d> ft;
    ev.compute(x, &ft, t.mask);
    const std::vector<Vec3d> ref = mdsim_test::read_h5_vec3(h5, std::string("/forces_kj_per_mol_nm/") + t.name);
    double ref_norm = 0;
    for (const Vec3d& v : ref) ref_norm += norm2(v);
    const double err = mdsim_test::relative_rms_difference(ft, ref);
    INFO("force term " << t.name << " relative RMS difference " << err);
    if (ref_norm == 0.0)
      CHECK(mdsim_test::max_abs_difference(ft, ref) == 0.0);
    else
      CHECK(err < 1e-6);
  }
}

}  // namespace

TEST_CASE("alanine dipeptide in vacuum matches OpenMM (NoCutoff)", "[cpu][reference]") {
  check_system("ala2_vacuum", "ala2_vacuum");
}

TEST_CASE("alanine dipeptide in water matches OpenMM (PME)", "[cpu][reference]") {
  check_system("ala2_water", "ala2_water");
}

TEST_CASE("villin in water matches OpenMM (PME)", "[cpu][reference]") {
  check_system("villin_water", "villin_water");
}

TEST_CASE("DHFR matches OpenMM (PME)", "[cpu][reference]") {
  check_system("dhfr", "dhfr");
}

TEST_CASE("DHFR with amber99sb/tip3p and a 0.9 nm cutoff matches OpenMM's benchmark energies", "[cpu][reference]") {
  Built b = build_reference_system("dhfr_bench", "dhfr");
  // same coordinates as dhfr (there is no dhfr_bench.h5)
  const std::vector<Vec3d> x = mdsim_test::read_h5_vec3(kShared + "/reference/dhfr.h5", "/positions_nm");
  CpuForceEvaluator ev(b.system);
  CHECK(ev.pme_parameters().grid[0] == 56);
  const EnergyTerms e = ev.compute(x, nullptr);
  compare_energies(e, b.reference["energies_kj_per_mol"]);
}

TEST_CASE("FFT-friendly PME grid on alanine dipeptide in water gets 27x27x27 and the same reciprocal energy to the tolerance",
          "[cpu][reference][pme]") {
  Built exact = build_reference_system("ala2_water", "ala2_water");
  REQUIRE(exact.system.nonbonded.pme_grid == PmeGridSizes::Exact);
  System friendly = exact.system;
  friendly.nonbonded.pme_grid = PmeGridSizes::FftFriendly;
  const std::vector<Vec3d> x = mdsim_test::read_h5_vec3(kShared + "/reference/ala2_water.h5", "/positions_nm");
  CpuForceEvaluator ev_exact(exact.system), ev_friendly(friendly);
  const PmeParameters& pe = ev_exact.pme_parameters();
  const PmeParameters& pf = ev_friendly.pme_parameters();
  CHECK(pe.grid[0] == 27);
  CHECK(pe.grid[1] == 27);
  CHECK(pe.grid[2] == 26);  // 2 * 13
  CHECK(pf.grid[0] == 27);
  CHECK(pf.grid[1] == 27);
  CHECK(pf.grid[2] == 27);
  CHECK(pf.alpha_per_nm == pe.alpha_per_nm);

  std::vector<Vec3d> fe, ff;
  const EnergyTerms ee = ev_exact.compute(x, &fe, kTermNonbondedReciprocal);
  const EnergyTerms ef = ev_friendly.compute(x, &ff, kTermNonbondedReciprocal);
  double self = 0.0;
  for (double q : exact.system.charge_e) self += ewald_self_energy(q, pe.alpha_per_nm);
  const double rel = mdsim_test::relative_difference(ef.nonbonded_reciprocal, ee.nonbonded_reciprocal);
  const double rel_sum = mdsim_test::relative_difference(ef.nonbonded_reciprocal - self, ee.nonbonded_reciprocal - self);
  const double rel_f = mdsim_test::relative_rms_difference(ff, fe);
  INFO("reciprocal energy: exact grid " << ee.nonbonded_reciprocal << ", 27^3 " << ef.nonbonded_reciprocal
                                        << " kJ/mol, relative difference " << rel << " (PME sum without the self energy: "
                                        << rel_sum << "); reciprocal forces relative RMS difference " << rel_f);
  // Measured: 2.4e-7 (the self energy dominates), 7.4e-5 for the PME sum alone, 4.9e-4 for the forces.
  CHECK(rel < 1e-4);
  CHECK(rel_sum < 5e-4);  // the Ewald tolerance
  CHECK(rel_f < 5e-3);
  // The finer grid is no further from OpenMM's (exact-grid) reference than the tolerance allows.
  CHECK(ef.nonbonded_reciprocal ==
        Catch::Approx(exact.reference["energies_kj_per_mol"]["nonbonded_reciprocal"].num()).epsilon(1e-4));
}
