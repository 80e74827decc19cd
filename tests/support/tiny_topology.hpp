// The hand-built topology that tests/data/ff_tiny.xml describes, shared by the tests and the force-field
// fuzz target (fuzz/forcefield_xml.cpp); needs only the model layer.
#pragma once

#include "model/topology.hpp"

namespace mdsim_test {

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

}  // namespace mdsim_test
