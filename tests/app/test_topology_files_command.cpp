// `mdsim energy`, `mdsim check` and `mdsim run` on configs whose system is an AMBER prmtop, a GROMACS top or a
// CHARMM psf (with its parameter files) with its coordinates (system.topology, system.coordinates): OpenMM 7.7's energies by term and forces for the shared
// topology references (tests/data/shared/topologies), the config keys as createSystem's arguments, located
// errors, and a GROMACS top's [position_restraints] (defines: [POSRES]) with the .gro's velocities
// (run.initial_velocities: from_coordinates) through check, run and a bit-exact --resume.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/hdf5_arrays.hpp"
#include "support/catch.hpp"
#include "support/checkpoints.hpp"
#include "support/reference_data.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;

namespace {

std::string topologies() { return std::string(MDSIM_TEST_DATA_DIR) + "/topologies/"; }

struct TopologyCase {
  std::string name;        // reference/<name>.json, .h5
  std::string topology;    // in inputs/
  std::string coordinates; // in inputs/
  std::string settings;    // the system keys the reference was computed with
  std::vector<std::string> terms;
};

std::vector<TopologyCase> cases() {
  const std::string pme = "  nonbonded_method: pme\n  ewald_tolerance: 5e-4\n  dispersion_correction: true\n";
  const std::string flexible = "  constraints: none\n  rigid_water: false\n";
  return {
      {"amber_ala2_explicit", "alanine-dipeptide-explicit.prmtop", "alanine-dipeptide-explicit.inpcrd",
       pme + "  cutoff: 1.0 nm\n" + flexible, {"bond", "angle", "torsion", "total"}},
      {"amber_peptide_tip4p", "peptide_with_tip4p.prmtop", "peptide_with_tip4p.inpcrd",
       pme + "  cutoff: 0.5 nm\n" + flexible, {"bond", "angle", "torsion", "total"}},
      {"gmx_apgr_nonbfix_pairs_comb2", "apgr.nonbfix.pairs.comb2.top", "apgr.gro",
       "  nonbonded_method: no_cutoff\n" + flexible, {"bond", "angle", "torsion", "improper", "total"}},
      {"gmx_bnz_vsite2", "bnz.top", "bnz.gro", "  nonbonded_method: no_cutoff\n" + flexible, {"total"}},
      {"charmm_ala3_solv", "ala3_solv.psf", "ala3_solv.crd",
       "  nonbonded_method: pme\n  ewald_tolerance: 5e-4\n  cutoff: 1.0 nm\n  box: [3.271195 nm, 3.299596 nm, 3.300715 nm]\n"
       "  parameters: [" + topologies() + "inputs/par_all36_prot.prm, " + topologies() + "inputs/toppar_water_ions.str]\n" +
           flexible,
       {"angle", "urey_bradley", "torsion", "improper", "cmap", "total"}},
  };
}

std::string config_text(const TopologyCase& c, const std::string& tail = "") {
  return "system:\n  topology: " + topologies() + "inputs/" + c.topology + "\n  coordinates: " + topologies() +
         "inputs/" + c.coordinates + "\n" + c.settings + "platform: cpu\n" + tail;
}

}  // namespace

TEST_CASE("mdsim energy --json and --forces on AMBER, GROMACS and CHARMM topologies reproduce OpenMM's energies and forces") {
  for (const TopologyCase& c : cases()) {
    INFO(c.name);
    const fs::path dir = mdsim_test::scratch("energy_" + c.name);
    std::ofstream(dir / "config.yaml") << config_text(c);
    const fs::path forces_file = dir / "forces.h5";
    const auto r = mdsim::test::run_mdsim("energy --json --forces " + forces_file.string() + " " +
                                          (dir / "config.yaml").string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const mdsim_test::Json out = mdsim_test::JsonParser(r.out).parse();
    const mdsim_test::Json ref = mdsim_test::read_json(topologies() + "reference/" + c.name + ".json");
    for (const std::string& term : c.terms) {
      INFO(term);
      const double want = ref["energies_kj_per_mol"][term].num();
      // The references' bond sums every HarmonicBondForce, GROMACS's Urey-Bradley terms too (mdsim's urey_bradley).
      const double got = out["energies_kj_per_mol"][term].num() +
                         (term == "bond" ? out["energies_kj_per_mol"]["urey_bradley"].num() : 0.0);
      CHECK(std::fabs(got - want) <= std::max(1e-6, 1e-6 * std::fabs(want)));
    }
    // OpenMM's getState convention: parents carry the spread share, a site's row the force on the site itself.
    const auto forces = mdsim::read_vec3_dataset_h5(forces_file.string(), "forces");
    const auto want = mdsim_test::read_h5_vec3(topologies() + "reference/" + c.name + ".h5",
                                               "forces_kj_per_mol_nm/total");
    CHECK(mdsim_test::relative_rms_difference(forces, want) <= 1e-6);
  }
}

TEST_CASE("a prmtop runs with the default createSystem options (PME, hbonds, rigid water) and mdsim check shows it") {
  const TopologyCase c = cases()[0];
  const fs::path dir = mdsim_test::scratch("run_prmtop");
  std::ofstream(dir / "config.yaml")
      << "system:\n  topology: " << topologies() << "inputs/" << c.topology << "\n  coordinates: " << topologies()
      << "inputs/" << c.coordinates << "\n  cutoff: 0.9 nm\nplatform: cpu\nintegrator: {seed: 3}\nrun: {steps: 20}\n"
      << "output: {directory: out, progress: false, trajectory: {interval: 10}, state: {interval: 10}}\n";
  const auto check = mdsim::test::run_mdsim("check " + (dir / "config.yaml").string());
  INFO(check.all());
  REQUIRE(check.code == 0);
  CHECK(check.out.find("constraints:    hbonds, rigid water yes") != std::string::npos);
  // TIP4P: the extra points counted apart from the atoms.
  const fs::path tip4p = mdsim_test::scratch("check_tip4p");
  std::ofstream(tip4p / "config.yaml") << config_text(cases()[1]);
  const auto sites = mdsim::test::run_mdsim("check " + (tip4p / "config.yaml").string());
  INFO(sites.all());
  CHECK(sites.out.find("atoms:          70 in 17 residues, 1 chains; 15 waters; 15 virtual sites") != std::string::npos);
  // CHARMM: no dispersion correction unless the config asks (as CharmmPsfFile.createSystem), NBFIX as an LJ table.
  const fs::path psf = mdsim_test::scratch("check_psf");
  std::ofstream(psf / "config.yaml") << config_text(cases()[4]);
  const auto charmm = mdsim::test::run_mdsim("check " + (psf / "config.yaml").string());
  INFO(charmm.all());
  CHECK(charmm.code == 0);
  CHECK(charmm.out.find("atoms:          2776 in 944 residues, 4 chains; 901 waters") != std::string::npos);
  CHECK(charmm.out.find("no dispersion correction") != std::string::npos);
  const auto run = mdsim::test::run_mdsim("run " + (dir / "config.yaml").string());
  INFO(run.all());
  REQUIRE(run.code == 0);
  CHECK(run.out.find("ran steps 0 to 20") != std::string::npos);
  CHECK(fs::exists(dir / "out/trajectory.h5"));
}

TEST_CASE("topology-file configs: located errors for a count mismatch, a wrong extension and misplaced keys") {
  const fs::path dir = mdsim_test::scratch("errors");
  const auto energy = [&](const std::string& text) {
    std::ofstream(dir / "config.yaml") << text;
    return mdsim::test::run_mdsim("energy " + (dir / "config.yaml").string());
  };
  TopologyCase c = cases()[0];
  c.coordinates = "bnz.gro";
  auto r = energy(config_text(c));
  CHECK(r.code == 2);
  CHECK(r.err.find("bnz.gro has 26 atoms, but the System in") != std::string::npos);
  CHECK(r.err.find("2269 particles") != std::string::npos);

  r = energy("system:\n  topology: " + topologies() + "inputs/ala3_solv.crd\n  coordinates: x.pdb\n");
  CHECK(r.code == 2);
  CHECK(r.err.find("config.yaml:2:13: 'topology':") != std::string::npos);
  CHECK(r.err.find("unknown format") != std::string::npos);

  c = cases()[0];
  std::string text = config_text(c);
  text.insert(text.find("platform:"), "  include_dirs: [.]\n");
  r = energy(text);
  CHECK(r.code == 2);
  CHECK(r.err.find("'include_dirs' goes with a GROMACS top topology, not with an AMBER prmtop") != std::string::npos);

  text = config_text(cases()[4]);
  text.erase(text.find("  parameters:"), text.find("  constraints:") - text.find("  parameters:"));
  r = energy(text);
  CHECK(r.code == 2);
  CHECK(r.err.find("a CHARMM psf needs its parameter files: add 'parameters'") != std::string::npos);
  text = config_text(cases()[4]);
  text.replace(text.find("toppar_water_ions.str"), 21, "ala3_solv.crd");
  r = energy(text);
  CHECK(r.code == 2);
  CHECK(r.err.find("ala3_solv.crd: not a CHARMM parameter file name") != std::string::npos);

  text = config_text(cases()[2]);
  text.insert(text.find("platform:"), "  box: [3 nm, 3 nm]\n");
  r = energy(text);
  CHECK(r.code == 2);
  CHECK(r.err.find("'box' must be three edge lengths") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("charmm36.xml: the force field's useDispersionCorrection (False) holds unless the key is written") {
  const fs::path dir = mdsim_test::scratch("charmm36_dispersion");
  const std::string base = "system:\n  structure: " + std::string(MDSIM_SOURCE_DIR) +
                           "/tests/data/charmm36_ala3_water.pdb\n  forcefield: [charmm36.xml, charmm36/water.xml]\n"
                           "  nonbonded_method: pme\nplatform: cpu\n";
  std::ofstream(dir / "config.yaml") << base;
  auto r = mdsim::test::run_mdsim("energy --json " + (dir / "config.yaml").string());
  INFO(r.all());
  REQUIRE(r.code == 0);
  const mdsim_test::Json out = mdsim_test::JsonParser(r.out).parse();
  CHECK(out["included_kj_per_mol"]["dispersion_correction"].num() == 0.0);
  std::string text = base;
  text.insert(text.find("platform:"), "  dispersion_correction: true\n");
  std::ofstream(dir / "config.yaml") << text;
  r = mdsim::test::run_mdsim("energy " + (dir / "config.yaml").string());
  CHECK(r.code == 2);
  CHECK(r.err.find("config.yaml:5:3: 'dispersion_correction' is true, but the force field says "
                   "useDispersionCorrection=\"False\"") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a GROMACS top under POSRES started from its .gro's velocities: check and run say so, resume is bit-exact") {
  // tests/data/gromacs/posres.top: [position_restraints] under #ifdef POSRES; posres.gro has velocities.
  const std::string gmx = std::string(MDSIM_SOURCE_DIR) + "/tests/data/gromacs/";
  const auto write = [&](const fs::path& dir, int steps, const std::string& defines,
                         const std::string& velocities = "from_coordinates") {
    std::ofstream(dir / "config.yaml")
        << "system:\n  topology: " << gmx << "posres.top\n  coordinates: " << gmx << "posres.gro\n"
        << "  nonbonded_method: cutoff_periodic\n  cutoff: 1.0 nm\n" << defines << "platform: cpu\n"
        << "integrator: {seed: 5, timestep: 1 fs}\nrun: {steps: " << steps << ", initial_velocities: " << velocities
        << "}\noutput: {directory: out, progress: false, trajectory: {interval: 10}, state: {interval: 10}, "
        << "checkpoint: {interval: 20}}\n";
    return (dir / "config.yaml").string();
  };
  const fs::path whole = mdsim_test::scratch("posres_whole"), parts = mdsim_test::scratch("posres_parts");
  const std::string posres = "  defines: [POSRES]\n";
  const auto check = mdsim::test::run_mdsim("check " + write(whole, 40, posres));
  INFO(check.all());
  REQUIRE(check.code == 0);
  CHECK(check.err.find("posres.top: its 9 [position_restraints] (under POSRES) are applied for the whole run, "
                       "about the starting coordinates of") != std::string::npos);
  CHECK(check.out.find("restrained:     9 atoms by the topology's [position_restraints]") != std::string::npos);
  CHECK(check.err.find("velocities are not used") == std::string::npos);  // the run starts from them

  const auto run = mdsim::test::run_mdsim("run " + write(whole, 40, posres));
  INFO(run.all());
  REQUIRE(run.code == 0);
  const std::string log = mdsim_test::read_text((whole / "out/state.csv").string());
  const std::string header = log.substr(0, log.find('\n'));
  CHECK(header.substr(header.size() - 21) == ",restraint_kj_per_mol");
  const std::string last = log.substr(log.rfind('\n', log.size() - 2) + 1);
  CHECK(std::stod(last.substr(last.rfind(',') + 1)) > 0.0);  // the restraints hold the atoms near their start

  // 20 steps, then --resume to 40: the uninterrupted run's end, bit for bit.
  REQUIRE(mdsim::test::run_mdsim("run " + write(parts, 20, posres)).code == 0);
  const auto resumed = mdsim::test::run_mdsim("run --resume " + write(parts, 40, posres));
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);
  mdsim_test::check_same_final_state(whole, parts);
  const std::string resumed_log = mdsim_test::read_text((parts / "out/state.csv").string());
  CHECK(resumed_log.substr(resumed_log.rfind(',')) == last.substr(last.rfind(',')));  // the same restraint energy

  // Without the define the restraints are gone: a resume is refused, naming the setting.
  const auto changed = mdsim::test::run_mdsim("run --resume " + write(parts, 60, ""));
  CHECK(changed.code == 2);
  CHECK(changed.err.find("system.defines: checkpoint POSRES, config none") != std::string::npos);

  // Velocities the run does not start from: the notice says how to use them.
  const auto notice = mdsim::test::run_mdsim("check " + write(whole, 40, posres, "temperature"));
  CHECK(notice.err.find("posres.gro: its velocities are not used: run.initial_velocities sets the starting "
                        "velocities ('initial_velocities: from_coordinates' starts from these)") != std::string::npos);
  fs::remove_all(whole);
  fs::remove_all(parts);
}
