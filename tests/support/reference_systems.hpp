// The shared test systems (tests/data/shared/systems) as models: with OpenMM's reference settings
// (tests/data/shared/reference/README.md): amber14-all + amber14/tip3p, PME 1.0 nm / tolerance 5e-4 for boxed
// systems, NoCutoff for vacuum, no constraints, flexible water, dispersion correction on; `dhfr_bench` is dhfr.pdb
// with amber99sb + tip3p and a 0.9 nm cutoff (OpenMM's benchmark force field). Or with the config's defaults and
// a few settings of the test's own (system_model).
#pragma once

#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/config.hpp"

namespace mdsim::test {

inline std::string data_dir() { return MDSIM_TEST_DATA_DIR; }

inline const std::vector<std::string>& reference_system_names() {
  static const std::vector<std::string> names{"ala2_vacuum", "ala2_water", "villin_water", "dhfr", "dhfr_bench"};
  return names;
}

inline RunConfig reference_config(const std::string& name) {
  const bool bench = name == "dhfr_bench";
  const bool vacuum = name == "ala2_vacuum";
  const std::string pdb = data_dir() + "/systems/" + (bench ? std::string("dhfr") : name) + ".pdb";
  std::string text = "system:\n  pdb: " + pdb + "\n";
  text += bench ? "  forcefield: [amber99sb.xml, tip3p.xml]\n  cutoff: 0.9 nm\n"
                : "  forcefield: [amber14-all.xml, amber14/tip3p.xml]\n  cutoff: 1.0 nm\n";
  text += vacuum ? "  nonbonded_method: no_cutoff\n" : "  nonbonded_method: pme\n  ewald_tolerance: 5.0e-4\n";
  text += "  constraints: none\n  rigid_water: false\n  dispersion_correction: true\n";
  return parse_config(text, name + ".yaml", data_dir());
}

inline Model reference_model(const std::string& name) { return build_model(reference_config(name)); }

// A shared system with its own settings but for the lines `extra` under `system:`; ala2_vacuum, which has no box,
// without a cutoff.
inline Model system_model(const std::string& name, const std::string& extra) {
  const std::string dir = data_dir();
  std::string text = "system:\n  pdb: " + dir + "/systems/" + name + ".pdb\n";
  if (name == "ala2_vacuum") text += "  nonbonded_method: no_cutoff\n";
  text += extra;
  return build_model(parse_config(text, name + ".yaml", dir));
}

// ala2_vacuum with the constraints `constraints` (none, hbonds, allbonds, hangles).
inline Model vacuum_model(const std::string& constraints) {
  return system_model("ala2_vacuum", "  constraints: " + constraints + "\n");
}

}  // namespace mdsim::test
