// The serialized OpenMM Systems of tests/data (make_system_xml_reference.py: OpenMM 7.7's createSystem with amber14 +
// TIP3P on the shared PDBs) and the configs that load them: through system.topology, and through the template path
// with the same settings (the same physics).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "support/reference_data.hpp"

namespace mdsim_test {

inline std::string system_xml_data() { return std::string(MDSIM_SOURCE_DIR) + "/tests/data/"; }

struct SystemXmlCase {
  std::string name;      // the key in system_xml_reference.json
  std::string file;      // tests/data/<file>
  std::string pdb;       // the shared structure
  std::string settings;  // the template path's `system:` lines with the same physics
};

inline const std::vector<SystemXmlCase>& system_xml_cases() {
  static const std::vector<SystemXmlCase> cases = {
      {"ala2_vacuum", "system_xml_ala2_vacuum.system.xml", "ala2_vacuum",
       "  nonbonded_method: no_cutoff\n  constraints: none\n"},
      {"water_pme", "system_xml_water_pme.system.xml.gz", "ala2_water",
       "  nonbonded_method: pme\n  cutoff: 1.0 nm\n  ewald_tolerance: 5e-4\n  constraints: hbonds\n  rigid_water: "
       "true\n"},
      {"water_cutoff", "system_xml_water_cutoff.system.xml.gz", "ala2_water",
       "  nonbonded_method: cutoff_periodic\n  cutoff: 0.9 nm\n  switch_distance: 0.8 nm\n  constraints: hbonds\n"
       "  rigid_water: true\n"},
  };
  return cases;
}

inline std::string shared_pdb(const SystemXmlCase& c) {
  return std::string(MDSIM_TEST_DATA_DIR) + "/systems/" + c.pdb + ".pdb";
}

// `system:` with topology and coordinates (the case's PDB unless `coordinates` is given), and `extra` lines.
inline std::string system_xml_config(const SystemXmlCase& c, const std::string& extra = "",
                                     const std::string& coordinates = "") {
  return "system:\n  topology: " + system_xml_data() + c.file +
         "\n  coordinates: " + (coordinates.empty() ? shared_pdb(c) : coordinates) + "\n" + extra;
}

// The same physics through the structure and amber14 + TIP3P.
inline std::string template_config(const SystemXmlCase& c) {
  return "system:\n  structure: " + shared_pdb(c) + "\n  forcefield: [amber14-all.xml, amber14/tip3p.xml]\n" +
         c.settings;
}

inline const SystemXmlCase& xml_case(const std::string& name) {
  for (const SystemXmlCase& c : system_xml_cases())
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

inline const Json& system_xml_reference(const std::string& name) {
  static const Json reference = read_json(system_xml_data() + "system_xml_reference.json");
  return reference["systems"][name];
}

}  // namespace mdsim_test
