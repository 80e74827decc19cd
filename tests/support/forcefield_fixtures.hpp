// Force-field test fixtures shared by test_forcefield.cpp and test_forcefield_generators.cpp: the hand-built
// topology for tests/data/ff_tiny.xml and OpenMM's term lists (tests/data/ff_*_openmm_terms.txt, written by
// tests/data/ff_dump_openmm_terms.py).
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/forcefield_xml.hpp"
#include "model/topology.hpp"
#include "support/catch.hpp"
#include "support/tiny_topology.hpp"

namespace mdsim_test {

inline const std::string kSystems = std::string(MDSIM_TEST_DATA_DIR) + "/systems/";
inline const std::string kReference = std::string(MDSIM_TEST_DATA_DIR) + "/reference/";
inline const std::string kData = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";

// The bundled force fields, loaded once per test program.
inline const mdsim::ForceFieldData& amber14() {
  static const mdsim::ForceFieldData ff = mdsim::load_forcefields({"amber14-all.xml", "amber14/tip3p.xml"}, "");
  return ff;
}

inline const mdsim::ForceFieldData& amber99sb() {
  static const mdsim::ForceFieldData ff = mdsim::load_forcefields({"amber99sb.xml", "tip3p.xml"}, "");
  return ff;
}

// One OpenMM System as ff_dump_openmm_terms.py lists it; each term a row of numbers as in the file.
struct OpenMMTerms {
  int topology_bonds = 0;
  std::vector<std::vector<double>> particles, bonds, angles, torsions, exceptions;
  std::vector<std::string> templates;
};

inline OpenMMTerms read_terms(const std::string& path) {
  OpenMMTerms t;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string tag;
    s >> tag;
    if (tag == "topbonds") {
      s >> t.topology_bonds;
      continue;
    }
    if (tag == "R") {
      int index;
      std::string name;
      s >> index >> name;
      t.templates.push_back(name);
      continue;
    }
    std::vector<double> v;
    double x;
    while (s >> x) v.push_back(x);
    if (tag == "P") t.particles.push_back(v);
    else if (tag == "B") t.bonds.push_back(v);
    else if (tag == "A") t.angles.push_back(v);
    else if (tag == "T") t.torsions.push_back(v);
    else if (tag == "E") t.exceptions.push_back(v);
  }
  return t;
}

// Equal to the 10 significant digits the term lists store.
inline void check_close(const std::vector<double>& ours, const std::vector<double>& ref) {
  REQUIRE(ours.size() == ref.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    CAPTURE(i, ours[i], ref[i]);
    CHECK(std::fabs(ours[i] - ref[i]) <= 1e-9 * std::max(1.0, std::fabs(ref[i])));
  }
}

}  // namespace mdsim_test
