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

// Hand-built topology for ff_tiny.xml: HPX (H1 O1 O2 H2) and FRM with its atoms in another order and with other
// names than its template (O, H, C, H), bonded through CONECT pairs. Atom i is on line i + 1.
inline mdsim::Topology tiny_topology() {
  mdsim::Topology t;
  t.source = "tiny.pdb";
  t.chains.push_back({"A", {0, 1}});
  t.residues.push_back({"HPX", 0, 1, ' ', {0, 1, 2, 3}, 1});
  t.residues.push_back({"FRM", 0, 2, ' ', {4, 5, 6, 7}, 5});
  const char* names[8] = {"H1", "O1", "O2", "H2", "OX1", "HA", "CX1", "HB"};
  const char* elements[8] = {"H", "O", "O", "H", "O", "H", "C", "H"};
  for (int i = 0; i < 8; ++i) {
    t.atoms.push_back({names[i], elements[i], i < 4 ? 0 : 1, i + 1, i + 1});
    t.positions_nm.push_back({0.1 * i, 0.0, 0.0});
  }
  t.conect = {{0, 1}, {1, 2}, {2, 3}, {4, 6}, {5, 6}, {6, 7}};
  return t;
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
