// io/config with `system.topology` (a serialized OpenMM System) and `system.coordinates`: the System's settings
// become the config's (nonbonded, constraints, rigid water, centre-of-mass motion, barostat), a written key that
// contradicts them is refused naming both values, and keys that do not go with a System are refused.
#include <string>

#include "common/errors.hpp"
#include "io/config.hpp"
#include "support/catch.hpp"
#include "support/system_xml_cases.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using mdsim_test::SystemXmlCase;
using mdsim_test::xml_case;

namespace {

RunConfig parse(const std::string& text) { return parse_config(text, "x.yaml", "/"); }

std::string error(const std::string& text) {
  return mdsim_test::input_error_of([&] { parse(text); });
}

std::string file(const std::string& name) { return mdsim_test::system_xml_data() + xml_case(name).file; }

// The refusal of `key` (config value `config`) against the System's `system` value.
std::string contradiction(const std::string& at, const std::string& key, const std::string& config,
                          const std::string& case_name, const std::string& system) {
  return "x.yaml:" + at + ": '" + key + "' is " + config + ", but the System in " + file(case_name) + " has " + system +
         ": a serialized System's own settings hold; remove '" + key + "' or make it agree";
}

}  // namespace

TEST_CASE("a serialized System's settings become the config's") {
  const RunConfig vacuum = parse(mdsim_test::system_xml_config(xml_case("ala2_vacuum")));
  CHECK(vacuum.system.topology == file("ala2_vacuum"));
  CHECK(vacuum.system.pdb == mdsim_test::shared_pdb(xml_case("ala2_vacuum")));
  CHECK(vacuum.system.forcefield.empty());
  CHECK(vacuum.system.nonbonded.method == NonbondedMethod::NoCutoff);
  CHECK(vacuum.system.constraints == ConstraintMode::None);
  CHECK(vacuum.system.rigid_water);  // no water to make flexible
  CHECK(vacuum.system.remove_cm_motion);
  CHECK(vacuum.system.remove_cm_motion_interval == 1);  // its CMMotionRemover's frequency
  CHECK_FALSE(vacuum.barostat.has_value());

  const RunConfig pme = parse(mdsim_test::system_xml_config(xml_case("water_pme"), "  pme_grid: fft_friendly\n"));
  CHECK(pme.system.nonbonded.method == NonbondedMethod::PME);
  CHECK(pme.system.nonbonded.cutoff_nm == 1.0);
  CHECK(pme.system.nonbonded.ewald_tolerance == 5e-4);
  CHECK(pme.system.nonbonded.dispersion_correction);
  CHECK(pme.system.nonbonded.pme_grid == PmeGridSizes::FftFriendly);  // the config's: not a System setting
  CHECK(pme.system.constraints == ConstraintMode::HBonds);
  CHECK(pme.system.rigid_water);
  CHECK_FALSE(pme.barostat.has_value());

  const RunConfig cutoff = parse(mdsim_test::system_xml_config(xml_case("water_cutoff")));
  CHECK(cutoff.system.nonbonded.method == NonbondedMethod::CutoffPeriodic);
  CHECK(cutoff.system.nonbonded.cutoff_nm == 0.9);
  REQUIRE(cutoff.system.nonbonded.switch_distance_nm.has_value());
  CHECK(*cutoff.system.nonbonded.switch_distance_nm == 0.8);
  REQUIRE(cutoff.barostat.has_value());  // the System's MonteCarloBarostat
  CHECK(cutoff.barostat->pressure_bar == 1.0);
  CHECK(cutoff.barostat->temperature_k == 300.0);
  CHECK(cutoff.barostat->interval_steps == 25);
}

TEST_CASE("keys that agree with the System are accepted; the System's barostat keeps its temperature in stages") {
  const RunConfig c = parse(mdsim_test::system_xml_config(
      xml_case("water_cutoff"),
      "  nonbonded_method: cutoff_periodic\n  cutoff: 9 Å\n  switch_distance: 0.8 nm\n  constraints: hbonds\n"
      "  rigid_water: true\n  remove_cm_motion: true\n  dispersion_correction: true\nintegrator:\n  temperature: 310 "
      "K\n"
      "barostat:\n  pressure: 1 bar\n  interval: 25\nstages:\n  - {name: a, steps: 10}\n"));
  REQUIRE(c.barostat.has_value());
  CHECK(c.barostat->temperature_k == 300.0);
  REQUIRE(c.stages.size() == 1);
  REQUIRE(c.stages[0].barostat.has_value());
  CHECK(c.stages[0].barostat->temperature_k == 300.0);
  CHECK(c.stages[0].integrator.temperature_k == 310.0);
}

TEST_CASE("a key that contradicts the serialized System is refused, naming both values") {
  const std::string nonbonded_vacuum = "force 2, NonbondedForce, line 99";
  CHECK(error(mdsim_test::system_xml_config(xml_case("ala2_vacuum"), "  nonbonded_method: pme\n")) ==
        contradiction("4:21", "nonbonded_method", "pme", "ala2_vacuum", "no_cutoff (" + nonbonded_vacuum + ")"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_pme"), "  cutoff: 1.2 nm\n")) ==
        contradiction("4:11", "cutoff", "1.2 nm", "water_pme", "1 nm (force 2, NonbondedForce, line 4594)"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_pme"), "  ewald_tolerance: 1e-5\n")) ==
        contradiction("4:20", "ewald_tolerance", "1e-05", "water_pme", "0.0005 (force 2, NonbondedForce, line 4594)"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_pme"), "  dispersion_correction: false\n")) ==
        contradiction("4:26", "dispersion_correction", "false", "water_pme",
                      "true (force 2, NonbondedForce, line 4594)"));
  CHECK(
      error(mdsim_test::system_xml_config(xml_case("water_cutoff"), "  switch_distance: null\n")) ==
      contradiction("4:20", "switch_distance", "none", "water_cutoff", "0.8 nm (force 2, NonbondedForce, line 4594)"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_pme"), "  constraints: allbonds\n")) ==
        contradiction("4:16", "constraints", "allbonds", "water_pme",
                      "12 constraints besides its 749 rigid waters, which match hbonds (e.g. particles 1 and 0)"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("ala2_vacuum"), "  constraints: hbonds\n")) ==
        contradiction("4:16", "constraints", "hbonds", "ala2_vacuum", "no constraints, which match none"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_pme"), "  rigid_water: false\n")) ==
        contradiction("4:16", "rigid_water", "false", "water_pme",
                      "749 rigid waters (their three distances constrained)"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("ala2_vacuum"), "  remove_cm_motion: false\n")) ==
        contradiction("4:21", "remove_cm_motion", "false", "ala2_vacuum", "a CMMotionRemover"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("ala2_vacuum"), "  remove_cm_motion_interval: 100\n")) ==
        contradiction("4:30", "remove_cm_motion_interval", "100", "ala2_vacuum", "a CMMotionRemover of frequency 1"));
  CHECK(error(mdsim_test::system_xml_config(xml_case("water_cutoff"), "barostat:\n  pressure: 2 bar\n")) ==
        contradiction("5:13", "pressure", "2 bar", "water_cutoff", "1 bar (force 5, MonteCarloBarostat, line 9264)"));
  CHECK(
      error(mdsim_test::system_xml_config(xml_case("water_cutoff"), "barostat:\n  temperature: 310 K\n")) ==
      contradiction("5:16", "temperature", "310 K", "water_cutoff", "300 K (force 5, MonteCarloBarostat, line 9264)"));
}

TEST_CASE("keys that do not go with a serialized System are refused") {
  const SystemXmlCase& c = xml_case("ala2_vacuum");
  const std::string base = mdsim_test::system_xml_config(c);
  CHECK(error(base + "  forcefield: [amber14-all.xml]\n") ==
        "x.yaml:4:15: 'forcefield' does not go with 'topology': a serialized OpenMM System carries its own "
        "parameters; remove 'forcefield'");
  CHECK(error(base + "  structure: a.pdb\n") ==
        "x.yaml:4:14: 'structure' does not go with 'topology': name the coordinates with 'coordinates' (a PDB or "
        "PDBx/mmCIF file, or a serialized OpenMM State (.xml))");
  CHECK(error(base + "  hydrogen_mass: 1.5\n") ==
        "x.yaml:4:18: 'hydrogen_mass' does not go with a serialized System: the System's masses hold (repartition "
        "them when "
        "creating the System: createSystem(..., hydrogenMass=...))");
  CHECK(error("system:\n  structure: " + mdsim_test::shared_pdb(c) + "\n  coordinates: a.pdb\n") ==
        "x.yaml:3:16: 'coordinates' goes with 'topology' (a serialized OpenMM System, an AMBER prmtop or a GROMACS "
        "top); with force fields, name the "
        "structure file with 'structure'");
  CHECK(error("system:\n  topology: " + file("ala2_vacuum") + "\n") ==
        "x.yaml:2:3: 'system' with 'topology' needs 'coordinates': a PDB or PDBx/mmCIF file, or a serialized OpenMM "
        "State (.xml)");
  CHECK(error("system:\n  topology: /a/system.mol2\n  coordinates: /a/b.pdb\n") ==
        "x.yaml:2:13: 'topology': /a/system.mol2: unknown format; expected a serialized OpenMM System (.xml, .xml.gz), "
        "an AMBER prmtop (.prmtop, .parm7), a GROMACS top (.top) or a CHARMM psf (.psf)");
  CHECK(error("system:\n  topology: /a/system.psf\n  coordinates: /a/b.pdb\n") ==
        "x.yaml:2:3: a CHARMM psf needs its parameter files: add 'parameters' (a list of .prm, .rtf and .str files, "
        "e.g. [par_all36m_prot.prm, toppar_water_ions.str])");
  CHECK(error("system:\n  topology: /nonexistent/system.xml\n  coordinates: " + mdsim_test::shared_pdb(c) + "\n") ==
        "x.yaml:2:13: 'topology': file not found: /nonexistent/system.xml");
  // A State named as the topology: the reader says what it is.
  const std::string state = mdsim_test::system_xml_data() + "system_xml_ala2_vacuum.state.xml";
  CHECK(error("system:\n  topology: " + state + "\n  coordinates: " + mdsim_test::shared_pdb(c) + "\n") ==
        state +
            ":2: expected a serialized OpenMM System (root element <System>, from XmlSerializer.serialize(system)), "
            "found <State>; this is a serialized State: name it as system.coordinates");
}
