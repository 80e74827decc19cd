// Topology bonds as OpenMM 7.7 creates them when it reads a PDB file: Topology.createStandardBonds (residues.xml
// by atom name, after pdbNames.xml), Topology.createDisulfideBonds, then PDBFile's CONECT handling.
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/forcefield_generators.hpp"

namespace mdsim {
namespace {

using ffgen::NormalisedNames;
using ffgen::ordered;

// Metals whose CONECT bonds to standard residues OpenMM's PDBFile ignores.
bool is_conect_metal(const std::string& el) {
  static const std::unordered_set<std::string> metals{"Al", "As", "Ba", "Ca", "Cd", "Ce", "Co", "Cs", "Cu",
                                                      "Dy", "Fe", "Gd", "Hg", "Ho", "In", "Ir", "K",  "Li",
                                                      "Mg", "Mn", "Mo", "Na", "Ni", "Pb", "Pd", "Pt", "Rb",
                                                      "Rh", "Sm", "Sr", "Te", "Tl", "V",  "W",  "Yb", "Zn"};
  return metals.count(el) > 0;
}

bool is_pdb_standard_residue(const std::string& name) {
  static const std::unordered_set<std::string> standard{"ALA", "ASN", "CYS", "GLU", "HIS", "LEU", "MET", "PRO",
                                                        "THR", "TYR", "ARG", "ASP", "GLN", "GLY", "ILE", "LYS",
                                                        "PHE", "SER", "TRP", "VAL", "A",   "G",   "C",   "U",
                                                        "I",   "DA",  "DG",  "DC",  "DT",  "DI",  "HOH"};
  return standard.count(name) > 0;
}

// Topology::bonds being filled, with the pairs already present.
class BondList {
 public:
  explicit BondList(Topology& top) : top_(top) { top_.bonds.clear(); }
  void add(int a, int b) {
    if (a == b) return;
    top_.bonds.emplace_back(a, b);
    existing_.insert(ordered(a, b));
  }
  bool has(int a, int b) const { return existing_.count(ordered(a, b)) > 0; }

 private:
  Topology& top_;
  std::set<std::pair<int, int>> existing_;
};

// Residue `i` of a chain's residue list, and atom name, of a residues.xml bond end: "-X"/"+X" name atom X of the
// previous/next residue when there is one.
void locate_bond_end(const std::string& spec, int i, int n, int& residue, std::string& atom) {
  if (!spec.empty() && spec[0] == '-' && i > 0) {
    residue = i - 1;
    atom = spec.substr(1);
  } else if (!spec.empty() && spec[0] == '+' && i + 1 < n) {
    residue = i + 1;
    atom = spec.substr(1);
  } else {
    residue = i;
    atom = spec;
  }
}

// Standard bonds per chain (Topology.createStandardBonds).
void add_standard_bonds(const Topology& top, const StandardResidueData& standard, const NormalisedNames& names,
                        BondList& bonds) {
  for (const auto& chain : top.chains) {
    const int n = static_cast<int>(chain.residues.size());
    std::vector<std::unordered_map<std::string, int>> atom_maps(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int a : top.residues[static_cast<std::size_t>(chain.residues[static_cast<std::size_t>(i)])].atoms)
        atom_maps[static_cast<std::size_t>(i)][names.atom[static_cast<std::size_t>(a)]] = a;
    for (int i = 0; i < n; ++i) {
      const int r = chain.residues[static_cast<std::size_t>(i)];
      auto defs = standard.bonds.find(names.residue[static_cast<std::size_t>(r)]);
      if (defs == standard.bonds.end()) continue;
      for (const auto& [from, to] : defs->second) {
        int r1 = 0, r2 = 0;
        std::string a1, a2;
        locate_bond_end(from, i, n, r1, a1);
        locate_bond_end(to, i, n, r2, a2);
        const auto& m1 = atom_maps[static_cast<std::size_t>(r1)];
        const auto& m2 = atom_maps[static_cast<std::size_t>(r2)];
        auto i1 = m1.find(a1);
        auto i2 = m2.find(a2);
        if (i1 != m1.end() && i2 != m2.end()) bonds.add(i1->second, i2->second);
      }
    }
  }
}

// Disulfides (Topology.createDisulfideBonds): CYS without HG, SG-SG closer than 0.3 nm, nearest earlier one.
void add_disulfide_bonds(const Topology& top, const NormalisedNames& names, BondList& bonds) {
  std::vector<int> cyx_sg;
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    if (names.residue[r] != "CYS") continue;
    int sg = -1;
    bool has_hg = false;
    for (int a : top.residues[r].atoms) {
      const std::string& nm = names.atom[static_cast<std::size_t>(a)];
      if (nm == "SG" && sg < 0) sg = a;
      if (nm == "HG") has_hg = true;
    }
    if (sg >= 0 && !has_hg) cyx_sg.push_back(sg);
  }
  std::unordered_set<int> disulfide_bonded;
  for (std::size_t i = 0; i < cyx_sg.size(); ++i) {
    const Vec3d p1 = top.positions_nm[static_cast<std::size_t>(cyx_sg[i])];
    double best = 0.3;
    int partner = -1;
    for (std::size_t j = 0; j < i; ++j) {
      const Vec3d p2 = top.positions_nm[static_cast<std::size_t>(cyx_sg[j])];
      const double dx = p1.x - p2.x, dy = p1.y - p2.y, dz = p1.z - p2.z;
      const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (d < best && !disulfide_bonded.count(cyx_sg[j])) {
        best = d;
        partner = cyx_sg[j];
      }
    }
    if (partner >= 0) {
      bonds.add(cyx_sg[i], partner);
      disulfide_bonded.insert(cyx_sg[i]);
      disulfide_bonded.insert(partner);
    }
  }
}

// CONECT records (PDBFile): metal rules, then only bonds not already present.
void add_conect_bonds(const Topology& top, const NormalisedNames& names, BondList& bonds) {
  auto residue_name = [&](int atom) -> const std::string& {
    return names.residue[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(atom)].residue)];
  };
  for (const auto& [i, j] : top.conect) {
    if (i < 0 || j < 0 || i >= top.num_atoms() || j >= top.num_atoms()) continue;
    const std::string ei = ffgen::normalise_element(top.atoms[static_cast<std::size_t>(i)].element);
    const std::string ej = ffgen::normalise_element(top.atoms[static_cast<std::size_t>(j)].element);
    bool keep = true;
    if (!ei.empty() && !ej.empty()) {
      if (!is_conect_metal(ei) && !is_conect_metal(ej)) keep = true;
      else if (is_conect_metal(ei) && !is_pdb_standard_residue(residue_name(j))) keep = true;
      else if (is_conect_metal(ej) && !is_pdb_standard_residue(residue_name(i))) keep = true;
      else keep = false;
    }
    if (keep && !bonds.has(i, j)) bonds.add(i, j);
  }
}

}  // namespace

void create_topology_bonds(Topology& topology, const StandardResidueData& standard) {
  ffgen::check_topology(topology);
  const NormalisedNames names = ffgen::normalise_names(topology, standard);
  BondList bonds(topology);
  add_standard_bonds(topology, standard, names, bonds);
  add_disulfide_bonds(topology, names, bonds);
  add_conect_bonds(topology, names, bonds);
}

}  // namespace mdsim
