// The steps of io/amber_prmtop's reader, shared by its two source files (not a public interface).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/amber_prmtop_sections.hpp"
#include "io/topology_file.hpp"

namespace mdsim::amber {

struct Pointers {  // the %FLAG POINTERS values the reader uses (AMBER's names)
  long natom = 0, ntypes = 0, nbonh = 0, mbona = 0, ntheth = 0, mtheta = 0, nphih = 0, mphia = 0, next = 0, nres = 0;
  long numbnd = 0, numang = 0, nptra = 0, nphb = 0, ifpert = 0, ifbox = 0, ifcap = 0;
};

struct Build {  // what the steps fill
  System system;
  Topology topology;
  std::vector<std::string> notes;
  std::vector<int> type;  // per atom, 0-based LJ type
  std::vector<double> rvdw_nm, epsilon_kj;  // per atom: rMin/2 and epsilon of its type (combining-rule case)
  bool nbfix = false;
  long num_types = 0;
  std::vector<long> pair_index;         // NONBONDED_PARM_INDEX
  std::vector<double> pair_a, pair_b;   // LENNARD_JONES_ACOEF/BCOEF, kcal/mol Å^12 and Å^6
};

Pointers read_pointers(const PrmtopSections& p);
void check_supported(const PrmtopSections& p, const Pointers& ptr);
void read_particles(const PrmtopSections& p, const Pointers& ptr, Build& b);
void read_box(const PrmtopSections& p, const Pointers& ptr, const TopologyFileOptions& options, Build& b);
void read_topology(const PrmtopSections& p, const Pointers& ptr, Build& b);
void read_lennard_jones(const PrmtopSections& p, const Pointers& ptr, Build& b);
// (rMin in nm, epsilon in kJ/mol) of the 1-4 pair i, l before scaling; rMin < 0: no pair (a 10-12 type pair).
std::pair<double, double> one_four_lj(const Build& b, int i, int l);
void read_bonded_terms(const PrmtopSections& p, const Pointers& ptr, Build& b);  // bonds, angles, torsions
void read_exceptions(const PrmtopSections& p, const Pointers& ptr, Build& b);    // 1-4 pairs, then exclusions
void read_cmap(const PrmtopSections& p, const Pointers& ptr, Build& b);
void read_extra_points(const PrmtopSections& p, Build& b);  // water EP/LP atoms as virtual sites

}  // namespace mdsim::amber
