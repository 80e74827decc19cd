// `mdsim energy`, `mdsim check` and `mdsim run` on configs whose system is a serialized OpenMM System
// (system.topology) with coordinates (a PDB or a serialized State): OpenMM 7.7's energies by term and forces, the
// same run as the template path's for the same physics, and located errors.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/hdf5_arrays.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/system_xml_cases.hpp"

namespace fs = std::filesystem;
using mdsim_test::SystemXmlCase;
using mdsim_test::xml_case;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The state log without its speed column (wall-clock dependent).
std::string state_log_without_speed(const fs::path& p) {
  std::istringstream in(slurp(p));
  std::string out, line;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

const std::string kRun =
    "platform: cpu\nintegrator: {seed: 11}\nrun: {steps: 30}\n"
    "output: {directory: out, progress: false, trajectory: {interval: 10}, state: {interval: 10}, checkpoint: null}\n";

}  // namespace

TEST_CASE("mdsim energy --json and --forces on a serialized System reproduce OpenMM's energies and forces") {
  for (const SystemXmlCase& c : mdsim_test::system_xml_cases()) {
    INFO(c.name);
    const fs::path dir = mdsim_test::scratch("energy_" + c.name);
    std::ofstream(dir / "config.yaml") << mdsim_test::system_xml_config(c);
    const fs::path forces_file = dir / "forces.h5";
    const auto r = mdsim::test::run_mdsim("energy --json --platform cpu --forces " + forces_file.string() + " " +
                                          (dir / "config.yaml").string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const mdsim_test::Json out = mdsim_test::JsonParser(r.out).parse();
    const mdsim_test::Json& want = mdsim_test::system_xml_reference(c.name)["energies_kj_per_mol"];
    for (const char* term : {"bond", "angle", "torsion", "nonbonded_direct", "nonbonded_reciprocal", "total"}) {
      INFO(term);
      const double got = out["energies_kj_per_mol"][term].num();
      CHECK(std::fabs(got - want[term].num()) <= 1e-6 * std::max(1.0, std::fabs(want[term].num())));
    }
    CHECK(out["counts"]["constraints"].num() ==
          mdsim_test::system_xml_reference(c.name)["counts"]["constraints"].num());
    const auto forces = mdsim::read_vec3_dataset_h5(forces_file.string(), "forces");
    const auto ref = mdsim_test::read_h5_vec3(mdsim_test::system_xml_data() + "system_xml_reference.h5",
                                              c.name + "/forces_kj_per_mol_nm");
    CHECK(mdsim_test::relative_rms_difference(forces, ref) <= 1e-6);
  }
}

TEST_CASE("mdsim check summarises a serialized System; a State as coordinates gets a notice") {
  const fs::path dir = mdsim_test::scratch("check");
  const SystemXmlCase& c = xml_case("ala2_vacuum");
  const std::string state = mdsim_test::system_xml_data() + "system_xml_ala2_vacuum.state.xml";
  std::ofstream(dir / "config.yaml") << mdsim_test::system_xml_config(c, "", state);
  const auto r = mdsim::test::run_mdsim("check " + (dir / "config.yaml").string());
  INFO(r.all());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("  topology:       " + mdsim_test::system_xml_data() + c.file) != std::string::npos);
  CHECK(r.out.find("  constraints:    none, rigid water yes") != std::string::npos);
  CHECK(r.out.find("config OK") != std::string::npos);
  CHECK(r.err.find("notice: " + state + ": a serialized State holds no topology") != std::string::npos);
}

TEST_CASE("mdsim run on a serialized System runs as the template path does for the same physics") {
  for (const std::string name : {"ala2_vacuum", "water_cutoff"}) {
    INFO(name);
    const SystemXmlCase& c = xml_case(name);
    const fs::path xml = mdsim_test::scratch("run_xml_" + name), tmpl = mdsim_test::scratch("run_template_" + name);
    // water_cutoff's System has a MonteCarloBarostat: the template path's config names the same one.
    const std::string barostat = name == "water_cutoff" ? "barostat: {pressure: 1 bar, interval: 25}\n" : "";
    std::ofstream(xml / "config.yaml") << mdsim_test::system_xml_config(c) + kRun;
    std::ofstream(tmpl / "config.yaml") << mdsim_test::template_config(c) + kRun + barostat;
    const auto a = mdsim::test::run_mdsim("run " + (xml / "config.yaml").string());
    const auto b = mdsim::test::run_mdsim("run " + (tmpl / "config.yaml").string());
    INFO(a.all() << b.all());
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    const std::string log = state_log_without_speed(xml / "out/state.csv");
    CHECK(std::count(log.begin(), log.end(), '\n') == 4);  // header and steps 10, 20, 30
    CHECK(log == state_log_without_speed(tmpl / "out/state.csv"));
  }
}

TEST_CASE("mdsim check refuses coordinates that do not match the System and a contradicting key") {
  const fs::path dir = mdsim_test::scratch("errors");
  const SystemXmlCase& c = xml_case("ala2_vacuum");
  const std::string water = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";
  std::ofstream(dir / "mismatch.yaml") << mdsim_test::system_xml_config(c, "", water);
  const auto r = mdsim::test::run_mdsim("check " + (dir / "mismatch.yaml").string());
  CHECK(r.code == 2);
  CHECK(r.err == "error: " + (dir / "mismatch.yaml").string() + ":3:3: " + water +
                     " has 2269 atoms, but the System in " + mdsim_test::system_xml_data() + c.file +
                     " has 22 particles: the coordinates and the System must describe the same atoms in the same "
                     "order\n");
  std::ofstream(dir / "cutoff.yaml") << mdsim_test::system_xml_config(c, "  nonbonded_method: pme\n");
  const auto e = mdsim::test::run_mdsim("energy " + (dir / "cutoff.yaml").string());
  CHECK(e.code == 2);
  CHECK(e.err.find(":4:21: 'nonbonded_method' is pme, but the System in ") != std::string::npos);
}
