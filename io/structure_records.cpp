#include "io/structure_records.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace mdsim {

bool is_polymer_residue(std::string_view name) {
  static constexpr std::array<std::string_view, 30> kNames = {
      "ALA", "ASN", "CYS", "GLU", "HIS", "LEU", "MET", "PRO", "THR", "TYR", "ARG", "ASP", "GLN", "GLY", "ILE",
      "LYS", "PHE", "SER", "TRP", "VAL", "A",   "G",   "C",   "U",   "I",   "DA",  "DG",  "DC",  "DT",  "DI"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

bool is_standard_residue(std::string_view name) { return name == "HOH" || is_polymer_residue(name); }

CellParameters cell_parameters(const Boxd& box) {
  constexpr double kPi = 3.141592653589793;
  const Vec3d &a = box.a, &b = box.b, &c = box.c;
  const double la = norm(a), lb = norm(b), lc = norm(c);
  const double to_degrees = 180 / kPi;
  return {la * 10,
          lb * 10,
          lc * 10,
          std::acos(dot(b, c) / (lb * lc)) * to_degrees,
          std::acos(dot(c, a) / (lc * la)) * to_degrees,
          std::acos(dot(a, b) / (la * lb)) * to_degrees};
}

std::vector<std::pair<int, int>> listed_bonds(const Topology& topology, const char* writer) {
  const int n = topology.num_atoms();
  const auto& bonds = topology.bonds.empty() ? topology.conect : topology.bonds;
  std::vector<std::pair<int, int>> listed;
  for (const auto& [i, j] : bonds) {
    if (i < 0 || j < 0 || i >= n || j >= n)
      throw std::invalid_argument(fmt::format("{}: bond ({}, {}) refers to a missing atom", writer, i, j));
    const TopologyAtom& ai = topology.atoms[static_cast<std::size_t>(i)];
    const TopologyAtom& aj = topology.atoms[static_cast<std::size_t>(j)];
    const std::string& ri = topology.residues.at(static_cast<std::size_t>(ai.residue)).name;
    const std::string& rj = topology.residues.at(static_cast<std::size_t>(aj.residue)).name;
    const bool disulfide = ai.name == "SG" && aj.name == "SG" && ri == "CYS" && rj == "CYS";
    if (!is_standard_residue(ri) || !is_standard_residue(rj) || disulfide) listed.emplace_back(i, j);
  }
  return listed;
}

}  // namespace mdsim
