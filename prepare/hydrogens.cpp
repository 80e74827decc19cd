// Missing hydrogens, following OpenMM 7.7's Modeller.addHydrogens (app/modeller.py) for every decision: which
// variant a residue takes, which hydrogens that variant has at the pH and chain position, which existing
// hydrogens are kept. Positions differ: Modeller drops each hydrogen near its parent at random and minimises;
// here each one starts at its ideal geometry (bond length by element pair, tetrahedral / trigonal / bent by
// the parent's bonded count), then only the added atoms are minimised with the force field (L-BFGS, every
// other atom fixed, nonbonded cut off at 1 nm without a periodic box, as Modeller's CutoffNonPeriodic).
#include "prepare/hydrogens.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <numbers>
#include <set>
#include <unordered_map>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "io/forcefield_xml.hpp"
#include "model/forcefield.hpp"
#include "model/forcefield_generators.hpp"
#include "prepare/data_files.hpp"
#include "prepare/residue_problems.hpp"

namespace mdsim {
namespace {

using ffgen::AtomGraph;
using ffgen::residue_label;
using ffgen::residue_line;

constexpr double kDeg = std::numbers::pi / 180.0;

// The optimisation of the added atoms stops when the largest force on one is below kForceTolerance
// (kJ/mol/nm) or after kMaxIterations L-BFGS iterations: twice Modeller's 50, as water orientations converge
// slowly.
constexpr double kForceTolerance = 10.0;
constexpr int kMaxIterations = 100;

// ---------------------------------------------------------------- vector helpers

Vec3d unit(const Vec3d& v) {
  const double n = norm(v);
  return n > 0.0 ? v / n : Vec3d{1.0, 0.0, 0.0};
}

// Any unit vector perpendicular to v.
Vec3d perpendicular(const Vec3d& v) {
  const Vec3d trial = std::abs(v.x) < 0.9 ? Vec3d{1.0, 0.0, 0.0} : Vec3d{0.0, 1.0, 0.0};
  return unit(cross(v, trial));
}

// The point D with |PD| = bond, angle A-P-D = angle and dihedral R-A-P-D = dihedral (natural extension
// reference frame). When R, A, P are collinear the dihedral's zero is an arbitrary perpendicular.
Vec3d place(const Vec3d& r, const Vec3d& a, const Vec3d& p, double bond, double angle, double dihedral) {
  const Vec3d bc = unit(p - a);
  Vec3d n = cross(a - r, bc);
  n = norm(n) > 1e-8 ? unit(n) : perpendicular(bc);
  const Vec3d m = cross(n, bc);
  return p + bc * (-bond * std::cos(angle)) + m * (bond * std::sin(angle) * std::cos(dihedral)) +
         n * (bond * std::sin(angle) * std::sin(dihedral));
}

// ---------------------------------------------------------------- geometry of a parent's new hydrogens

double bond_length(const std::string& parent_element, bool water) {
  if (water) return 0.09572;  // TIP3P's O-H
  if (parent_element == "N") return 0.101;
  if (parent_element == "C") return 0.109;
  if (parent_element == "O") return 0.096;
  if (parent_element == "S") return 0.134;
  return 0.100;
}

// A neighbour of `a` other than `not_this` to fix dihedrals against: the first heavy one, else any.
int reference_neighbour(const AtomGraph& g, int a, int not_this) {
  int any = -1;
  for (int r : g.bonded_to[static_cast<std::size_t>(a)]) {
    if (r == not_this) continue;
    if (g.element[static_cast<std::size_t>(r)] != "H") return r;
    if (any < 0) any = r;
  }
  return any;
}

// Positions for the hydrogens `added` of `parent`, from the atoms bonded to it that are already placed.
// The parent's geometry follows from its bonded count in the final topology and its element: 4 bonds sp3
// (methyl and ammonium staggered against a heavy neighbour of the bonded atom), 3 bonds sp2 planar (a
// nitrogen with 3 bonds is planar when conjugated, i.e. bonded to an atom with at most 3 bonds, else
// pyramidal), 2 bonds on O or S bent (hydroxyl/thiol anti to a heavy atom, carboxylic OH syn, phenol OH
// in the ring plane).
void place_hydrogens(const AtomGraph& g, int parent, const std::vector<int>& added, bool water,
                     std::vector<Vec3d>& pos) {
  const auto P = static_cast<std::size_t>(parent);
  const Vec3d p = pos[P];
  std::vector<int> known;
  for (int b : g.bonded_to[P])
    if (std::find(added.begin(), added.end(), b) == added.end()) known.push_back(b);
  const std::string& el = g.element[P];
  const int total = static_cast<int>(g.bonded_to[P].size());
  const double bond = bond_length(el, water);
  std::vector<Vec3d> dirs;  // unit directions, first added.size() used

  auto u = [&](int k) { return unit(pos[static_cast<std::size_t>(k)] - p); };
  bool tetrahedral = total >= 4;
  if (total == 3 && el == "N") {
    tetrahedral = true;  // pyramidal unless conjugated
    for (int b : g.bonded_to[P])
      if (g.element[static_cast<std::size_t>(b)] != "H" && g.bonded_to[static_cast<std::size_t>(b)].size() <= 3)
        tetrahedral = false;
  }
  const bool bent = total == 2 && (el == "O" || el == "S");

  if (known.empty()) {
    if (bent || (water && added.size() == 2)) {
      const double half = (water ? 104.52 : 109.47) * kDeg / 2.0;
      dirs = {Vec3d{std::sin(half), 0.0, std::cos(half)}, Vec3d{-std::sin(half), 0.0, std::cos(half)}};
    } else {
      const double s = 1.0 / std::sqrt(3.0);
      dirs = {Vec3d{s, s, s}, Vec3d{s, -s, -s}, Vec3d{-s, s, -s}, Vec3d{-s, -s, s}};
    }
    for (std::size_t i = 0; i < added.size(); ++i) pos[static_cast<std::size_t>(added[i])] = p + dirs[i % dirs.size()] * bond;
    return;
  }
  if (known.size() == 1) {
    const int a = known[0];
    const Vec3d pa = pos[static_cast<std::size_t>(a)];
    const int r = reference_neighbour(g, a, parent);
    // Without a reference atom any point off the A-P axis fixes the dihedrals' zero.
    const Vec3d pr = r >= 0 ? pos[static_cast<std::size_t>(r)] : pa + perpendicular(p - pa);
    std::vector<std::pair<double, double>> angle_dihedral;
    if (bent) {
      const double angle = water ? 104.52 : (el == "S" ? 96.0 : 108.5);
      const bool a_planar = g.bonded_to[static_cast<std::size_t>(a)].size() == 3;
      const bool syn = a_planar && r >= 0 && g.element[static_cast<std::size_t>(r)] == "O";  // COOH syn
      angle_dihedral = {{angle, syn ? 0.0 : 180.0}};
    } else if (tetrahedral) {
      angle_dihedral = {{109.47, 180.0}, {109.47, 60.0}, {109.47, -60.0}};
    } else {
      angle_dihedral = {{120.0, 180.0}, {120.0, 0.0}};
    }
    for (std::size_t i = 0; i < added.size(); ++i) {
      const auto& [angle, dihedral] = angle_dihedral[i % angle_dihedral.size()];
      pos[static_cast<std::size_t>(added[i])] = place(pr, pa, p, bond, angle * kDeg, dihedral * kDeg);
    }
    return;
  }
  Vec3d sum{0.0, 0.0, 0.0};
  for (int k : known) sum += u(k);
  if (known.size() == 2 && tetrahedral) {
    // Two free tetrahedral directions around the bisector, out of the plane of the two bonded atoms.
    const Vec3d b = unit(-sum);
    Vec3d n = cross(u(known[0]), u(known[1]));
    n = norm(n) > 1e-8 ? unit(n) : perpendicular(b);
    const double half = 109.47 * kDeg / 2.0;
    dirs = {b * std::cos(half) + n * std::sin(half), b * std::cos(half) - n * std::sin(half)};
  } else {
    dirs = {unit(-sum)};  // planar (bisector, anti to both) or the last tetrahedral position
  }
  for (std::size_t i = 0; i < added.size(); ++i) pos[static_cast<std::size_t>(added[i])] = p + dirs[i % dirs.size()] * bond;
}

// Hydrogen-bond acceptors (O, and N with at most 2 bonds) in cells of 0.35 nm, for orienting waters.
class AcceptorGrid {
 public:
  AcceptorGrid(const AtomGraph& g, const std::vector<Vec3d>& pos) : pos_(pos) {
    for (std::size_t a = 0; a < g.element.size(); ++a)
      if (g.element[a] == "O" || (g.element[a] == "N" && g.bonded_to[a].size() <= 2))
        cells_[key(cell(pos[a]))].push_back(static_cast<int>(a));
  }
  // Acceptors within `radius` (<= 0.35 nm) of p, nearest first.
  std::vector<std::pair<double, int>> near(const Vec3d& p, double radius) const {
    std::vector<std::pair<double, int>> found;
    const auto c = cell(p);
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dz = -1; dz <= 1; ++dz) {
          auto it = cells_.find(key({c[0] + dx, c[1] + dy, c[2] + dz}));
          if (it == cells_.end()) continue;
          for (int a : it->second) {
            const double d = norm(pos_[static_cast<std::size_t>(a)] - p);
            if (d <= radius) found.emplace_back(d, a);
          }
        }
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  static std::array<long, 3> cell(const Vec3d& p) {
    return {static_cast<long>(std::floor(p.x / 0.35)), static_cast<long>(std::floor(p.y / 0.35)),
            static_cast<long>(std::floor(p.z / 0.35))};
  }
  static long long key(const std::array<long, 3>& c) { return (c[0] * 1000003LL + c[1]) * 1000033LL + c[2]; }
  const std::vector<Vec3d>& pos_;
  std::unordered_map<long long, std::vector<int>> cells_;
};

// A water oxygen without hydrogens: H1 toward the nearest acceptor 0.24-0.35 nm away that does not already
// donate a hydrogen to this oxygen, H2 at 104.52 degrees from H1 in the plane toward the next such acceptor
// (70-150 degrees away). A hydrogen-bonded start saves the minimiser most of its work on water.
void orient_water(const AtomGraph& g, const AcceptorGrid& grid, int oxygen, const std::vector<int>& hs,
                  const std::vector<bool>& placed, std::vector<Vec3d>& pos) {
  const Vec3d o = pos[static_cast<std::size_t>(oxygen)];
  std::vector<Vec3d> toward;
  for (const auto& [d, a] : grid.near(o, 0.35)) {
    if (a == oxygen || d < 0.24) continue;
    bool donates_to_us = false;  // a placed hydrogen of the acceptor already points at this oxygen
    for (int h : g.bonded_to[static_cast<std::size_t>(a)])
      if (g.element[static_cast<std::size_t>(h)] == "H" && placed[static_cast<std::size_t>(h)] &&
          norm(pos[static_cast<std::size_t>(h)] - o) < 0.25)
        donates_to_us = true;
    if (donates_to_us) continue;
    const Vec3d u = unit(pos[static_cast<std::size_t>(a)] - o);
    if (toward.empty()) {
      toward.push_back(u);
    } else {
      const double angle = std::acos(std::clamp(dot(toward[0], u), -1.0, 1.0)) / kDeg;
      if (angle > 70.0 && angle < 150.0) {
        toward.push_back(u);
        break;
      }
    }
  }
  const double bond = 0.09572, angle = 104.52 * kDeg;
  const Vec3d u1 = toward.empty() ? Vec3d{0.0, 0.0, 1.0} : toward[0];
  const Vec3d w = toward.size() > 1 ? unit(toward[1] - u1 * dot(u1, toward[1])) : perpendicular(u1);
  const Vec3d dirs[2] = {u1, u1 * std::cos(angle) + w * std::sin(angle)};
  for (std::size_t i = 0; i < hs.size() && i < 2; ++i) pos[static_cast<std::size_t>(hs[i])] = o + dirs[i] * bond;
}

// The water orientations that add_hydrogens searches: 24 directions of H1 (a Fibonacci sphere) times 6 turns
// of H2 about H1, as offsets from the oxygen (TIP3P geometry).
std::vector<std::array<Vec3d, 2>> water_orientations() {
  std::vector<std::array<Vec3d, 2>> out;
  const int directions = 24, turns = 6;
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  const double bond = 0.09572, angle = 104.52 * kDeg;
  for (int i = 0; i < directions; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / directions, r = std::sqrt(1.0 - z * z);
    const Vec3d d{r * std::cos(golden * i), r * std::sin(golden * i), z};
    const Vec3d e1 = perpendicular(d), e2 = cross(d, e1);
    for (int k = 0; k < turns; ++k) {
      const double psi = 2.0 * std::numbers::pi * k / turns;
      const Vec3d w = e1 * std::cos(psi) + e2 * std::sin(psi);
      out.push_back({d * bond, (d * std::cos(angle) + w * std::sin(angle)) * bond});
    }
  }
  return out;
}

// Each bare water (oxygen, H1, H2) turned to the searched orientation, or kept as placed, whose hydrogens
// have the lowest Coulomb energy (charges of the System, cut off at 0.5 nm) with the other atoms, with a
// steep penalty for a hydrogen closer than 0.15 nm to any of them. Two sweeps, so that each water also sees
// the orientation of those after it. Rotations are what the minimiser finds hardest on water; a start near
// the hydrogen-bond network leaves it the fine work.
void search_water_orientations(const std::vector<std::array<int, 3>>& waters, const std::vector<double>& charge,
                               std::vector<Vec3d>& pos) {
  constexpr double kCut = 0.5, kCoulomb = 138.935456;
  // Atoms near each water (within kCut + 0.1 nm of its oxygen), by a grid of kCut-sized cells.
  std::unordered_map<long long, std::vector<int>> cells;
  auto cell_of = [&](const Vec3d& p) {
    return std::array<long, 3>{static_cast<long>(std::floor(p.x / kCut)), static_cast<long>(std::floor(p.y / kCut)),
                               static_cast<long>(std::floor(p.z / kCut))};
  };
  auto key = [](long x, long y, long z) { return (x * 1000003LL + y) * 1000033LL + z; };
  for (std::size_t a = 0; a < pos.size(); ++a) {
    const auto c = cell_of(pos[a]);
    cells[key(c[0], c[1], c[2])].push_back(static_cast<int>(a));
  }
  const auto orientations = water_orientations();
  for (int sweep = 0; sweep < 2; ++sweep) {
    for (const auto& w : waters) {
      const Vec3d o = pos[static_cast<std::size_t>(w[0])];
      std::vector<int> near;
      const auto c = cell_of(o);
      for (long dx = -1; dx <= 1; ++dx)
        for (long dy = -1; dy <= 1; ++dy)
          for (long dz = -1; dz <= 1; ++dz) {
            auto it = cells.find(key(c[0] + dx, c[1] + dy, c[2] + dz));
            if (it == cells.end()) continue;
            for (int a : it->second)
              if (a != w[0] && a != w[1] && a != w[2] && norm(pos[static_cast<std::size_t>(a)] - o) < kCut + 0.1)
                near.push_back(a);
          }
      const double qh1 = charge[static_cast<std::size_t>(w[1])], qh2 = charge[static_cast<std::size_t>(w[2])];
      auto energy = [&](const Vec3d& h1, const Vec3d& h2) {
        double e = 0.0;
        for (int a : near) {
          const Vec3d pa = pos[static_cast<std::size_t>(a)];
          const double qa = charge[static_cast<std::size_t>(a)];
          for (int k = 0; k < 2; ++k) {
            const double r = norm((k == 0 ? h1 : h2) - pa);
            if (r < 0.15) e += 1e4 * (0.15 - r);
            if (r < kCut) e += kCoulomb * (k == 0 ? qh1 : qh2) * qa * (1.0 / r - 1.0 / kCut);
          }
        }
        return e;
      };
      Vec3d best1 = pos[static_cast<std::size_t>(w[1])], best2 = pos[static_cast<std::size_t>(w[2])];
      double best = energy(best1, best2);
      for (const auto& [d1, d2] : orientations) {
        const double e = energy(o + d1, o + d2);
        if (e < best) {
          best = e;
          best1 = o + d1;
          best2 = o + d2;
        }
      }
      pos[static_cast<std::size_t>(w[1])] = best1;
      pos[static_cast<std::size_t>(w[2])] = best2;
    }
  }
}

// ---------------------------------------------------------------- building the new topology

// One atom of the output: copied from the input (source >= 0) or new.
struct NewAtom {
  int source = -1;
  std::string name, element;
  int parent = -1;  // new atoms: output index of the atom it is bonded to (set once indices are known)
  Vec3d position{0.0, 0.0, 0.0};
};

// The output topology from per-residue atom lists (residues in input order): chains, residues, box and
// source kept, CONECT pairs mapped to the new indices, bonds created again (standard bonds, disulfides,
// CONECT) plus each new atom's bond to its parent where the standard tables do not already give it.
Topology assemble(const Topology& input, const std::vector<std::vector<NewAtom>>& residues,
                  const StandardResidueData& standard, std::vector<int>* new_atoms) {
  Topology out;
  out.source = input.source;
  out.box = input.box;
  out.chains = input.chains;
  out.residues = input.residues;
  std::vector<int> mapped(input.atoms.size(), -1);
  std::vector<std::pair<int, int>> parent_bonds;
  for (std::size_t r = 0; r < residues.size(); ++r) {
    auto& res = out.residues[r];
    res.atoms.clear();
    std::unordered_map<int, int> local;  // position in residues[r] -> output index
    for (std::size_t i = 0; i < residues[r].size(); ++i) {
      const NewAtom& a = residues[r][i];
      const int index = out.num_atoms();
      TopologyAtom atom;
      if (a.source >= 0) {
        atom = input.atoms[static_cast<std::size_t>(a.source)];
        mapped[static_cast<std::size_t>(a.source)] = index;
      } else {
        atom.name = a.name;
        atom.element = a.element;
        atom.line = res.line;
        if (new_atoms) new_atoms->push_back(index);
      }
      atom.residue = static_cast<int>(r);
      out.atoms.push_back(atom);
      out.positions_nm.push_back(a.position);
      res.atoms.push_back(index);
      local[static_cast<int>(i)] = index;
    }
    for (std::size_t i = 0; i < residues[r].size(); ++i)
      if (residues[r][i].source < 0) parent_bonds.emplace_back(local.at(residues[r][i].parent), local.at(static_cast<int>(i)));
  }
  for (const auto& [a, b] : input.conect) {
    const int x = mapped[static_cast<std::size_t>(a)], y = mapped[static_cast<std::size_t>(b)];
    if (x >= 0 && y >= 0) out.conect.emplace_back(std::min(x, y), std::max(x, y));
  }
  create_topology_bonds(out, standard);
  std::set<std::pair<int, int>> have;
  for (const auto& [a, b] : out.bonds) have.insert(ffgen::ordered(a, b));
  for (const auto& [a, b] : parent_bonds)
    if (have.insert(ffgen::ordered(a, b)).second) out.bonds.emplace_back(a, b);
  // Bonds of the input between atoms that are kept (a hand-made or ligand bond the tables do not know).
  for (const auto& [a, b] : input.bonds) {
    const int x = mapped[static_cast<std::size_t>(a)], y = mapped[static_cast<std::size_t>(b)];
    if (x >= 0 && y >= 0 && have.insert(ffgen::ordered(x, y)).second) out.bonds.emplace_back(x, y);
  }
  return out;
}

// ---------------------------------------------------------------- residue classification

// A peptide-linked residue: residues.xml bonds its N to the previous residue's C.
bool is_peptide(const StandardResidueData& standard, const std::string& name) {
  auto it = standard.bonds.find(name);
  if (it == standard.bonds.end()) return false;
  for (const auto& [from, to] : it->second)
    if ((from == "-C" && to == "N") || (from == "N" && to == "-C")) return true;
  return false;
}

// The heavy atoms residues.xml gives a peptide residue (names not starting with H), OXT left out.
std::vector<std::string> peptide_heavy_atoms(const StandardResidueData& standard, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& [from, to] : standard.bonds.at(name))
    for (const std::string& n : {from, to})
      if (!n.empty() && n[0] != '-' && n[0] != '+' && n[0] != 'H' && n != "OXT" &&
          std::find(names.begin(), names.end(), n) == names.end())
        names.push_back(n);
  return names;
}

bool has_residue_bond(const StandardResidueData& standard, const std::string& name, const std::string& a,
                      const std::string& b) {
  auto it = standard.bonds.find(name);
  if (it == standard.bonds.end()) return false;
  for (const auto& [from, to] : it->second)
    if ((from == a && to == b) || (from == b && to == a)) return true;
  return false;
}

// Modeller's isHbond: donor-acceptor within 0.35 nm and the D-H, H-A directions within 50 degrees.
bool is_hbond(const Vec3d& d, const Vec3d& h, const Vec3d& a) {
  if (norm(d - a) > 0.35) return false;
  const double c = dot(unit(h - d), unit(a - h));
  return std::acos(std::clamp(c, -1.0, 1.0)) < 50.0 * kDeg;
}

std::string chain_id(const Topology& top, int residue) {
  const int c = top.residues[static_cast<std::size_t>(residue)].chain;
  return c >= 0 ? top.chains[static_cast<std::size_t>(c)].id : std::string();
}

std::string short_label(const Topology& top, int residue) {
  const auto& res = top.residues[static_cast<std::size_t>(residue)];
  std::string label = fmt::format("{} {}", res.name, res.number);
  if (res.insertion_code != ' ') label += res.insertion_code;
  const std::string chain = chain_id(top, residue);
  if (!chain.empty() && chain != " ") label += fmt::format(" (chain {})", chain);
  return label;
}

// ---------------------------------------------------------------- minimisation of the added atoms

struct Minimised {
  double max_force_before = 0.0, max_force_after = 0.0;
  int iterations = 0;
};

double max_force_on(const std::vector<Vec3d>& f, const std::vector<int>& atoms) {
  double m = 0.0;
  for (int a : atoms) m = std::max(m, norm(f[static_cast<std::size_t>(a)]));
  return m;
}

// Largest per-atom norm of a vector holding 3 coordinates for each of `atoms` atoms.
double max_per_atom(const std::vector<double>& v, std::size_t atoms) {
  double m = 0.0;
  for (std::size_t i = 0; i < atoms; ++i)
    m = std::max(m, std::sqrt(v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]));
  return m;
}

double inner(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// L-BFGS (memory 10) over the coordinates of the mobile atoms (3 per atom), everything else fixed, with a
// backtracking line search (Armijo) and a step limited to 0.02 nm per atom.
class MobileLbfgs {
 public:
  MobileLbfgs(ForceEvaluator& evaluator, std::vector<Vec3d>& pos, const std::vector<int>& mobile)
      : evaluator_(evaluator), pos_(pos), mobile_(mobile), n_(mobile.size() * 3), forces_(pos.size()), d_(n_),
        trial_(pos) {}

  // Energy and gradient at the current positions; forces() then holds every atom's force.
  void start() { e_ = evaluate(pos_, g_); }
  const std::vector<Vec3d>& forces() const { return forces_; }
  double max_mobile_force() const { return max_per_atom(g_, mobile_.size()); }
  // Forces at the current positions, evaluated again (after the last iteration).
  const std::vector<Vec3d>& final_forces() {
    evaluator_.compute(pos_, &forces_);
    return forces_;
  }

  // One iteration: false when no step along the search direction lowers the energy.
  bool iterate() {
    two_loop_direction();
    double slope = inner(g_, d_);
    if (slope >= 0.0) {  // not a descent direction: restart from steepest descent
      history_.clear();
      steepest_descent();
      slope = inner(g_, d_);
    }
    // Limit the largest per-atom displacement to 0.02 nm.
    const double longest = max_per_atom(d_, mobile_.size());
    double step = longest > 0.02 ? 0.02 / longest : 1.0;
    double e_new = e_;
    if (!line_search(slope, step, e_new)) return false;
    take_step(step, e_new);
    return true;
  }

 private:
  struct Pair {
    std::vector<double> s, y;
    double rho;
  };

  double evaluate(const std::vector<Vec3d>& x, std::vector<double>& grad) {
    const double e = evaluator_.compute(x, &forces_).total;
    grad.resize(n_);
    for (std::size_t i = 0; i < mobile_.size(); ++i)
      for (int k = 0; k < 3; ++k) grad[3 * i + std::size_t(k)] = -forces_[static_cast<std::size_t>(mobile_[i])][k];
    return e;
  }

  // 0.01 nm along the steepest descent for the atom with the largest force.
  void steepest_descent() {
    const double scale = 0.01 / std::max(max_mobile_force(), 1e-12);
    for (std::size_t i = 0; i < n_; ++i) d_[i] = -g_[i] * scale;
  }

  // Two-loop recursion: d = -H g; the first step (no history) is the steepest descent.
  void two_loop_direction() {
    if (history_.empty()) {
      steepest_descent();
      return;
    }
    for (std::size_t i = 0; i < n_; ++i) d_[i] = -g_[i];
    std::vector<double> alphas(history_.size());
    for (std::size_t k = history_.size(); k-- > 0;) {
      const double a = inner(history_[k].s, d_) * history_[k].rho;
      alphas[k] = a;
      for (std::size_t i = 0; i < n_; ++i) d_[i] -= a * history_[k].y[i];
    }
    const auto& last = history_.back();
    const double gamma = 1.0 / (last.rho * inner(last.y, last.y));
    for (std::size_t i = 0; i < n_; ++i) d_[i] *= gamma;
    for (std::size_t k = 0; k < history_.size(); ++k) {
      const double b = inner(history_[k].y, d_) * history_[k].rho;
      for (std::size_t i = 0; i < n_; ++i) d_[i] += history_[k].s[i] * (alphas[k] - b);
    }
  }

  // Backtracking along d: the step halves until the energy falls by at least 1e-4 * step * slope (20 tries).
  // On success the trial positions, g_new_ and e_new hold the accepted point.
  bool line_search(double slope, double& step, double& e_new) {
    for (int tries = 0; tries < 20; ++tries) {
      for (std::size_t i = 0; i < mobile_.size(); ++i) {
        const auto a = static_cast<std::size_t>(mobile_[i]);
        trial_[a] = pos_[a] + Vec3d{d_[3 * i], d_[3 * i + 1], d_[3 * i + 2]} * step;
      }
      e_new = evaluate(trial_, g_new_);
      if (e_new <= e_ + 1e-4 * step * slope) return true;
      step *= 0.5;
    }
    return false;
  }

  // Moves to the accepted point and stores the (s, y) pair when the curvature is positive.
  void take_step(double step, double e_new) {
    Pair pair{std::vector<double>(n_), std::vector<double>(n_), 0.0};
    double sy = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      pair.s[i] = d_[i] * step;
      pair.y[i] = g_new_[i] - g_[i];
      sy += pair.s[i] * pair.y[i];
    }
    for (int a : mobile_) pos_[static_cast<std::size_t>(a)] = trial_[static_cast<std::size_t>(a)];
    g_.swap(g_new_);
    e_ = e_new;
    if (sy > 1e-12) {
      pair.rho = 1.0 / sy;
      history_.push_back(std::move(pair));
      if (history_.size() > 10) history_.pop_front();
    }
  }

  ForceEvaluator& evaluator_;
  std::vector<Vec3d>& pos_;
  const std::vector<int>& mobile_;
  std::size_t n_;
  std::vector<Vec3d> forces_;
  std::deque<Pair> history_;
  std::vector<double> g_, g_new_, d_;
  std::vector<Vec3d> trial_;
  double e_ = 0.0;
};

// Minimises over the coordinates of `mobile` (MobileLbfgs). Stops when the largest force on a mobile atom is
// below `tolerance`, after `max_iterations`, or when no step lowers the energy.
Minimised minimise_atoms(ForceEvaluator& evaluator, std::vector<Vec3d>& pos, const std::vector<int>& mobile,
                         const std::vector<int>& report_atoms, double tolerance, int max_iterations) {
  MobileLbfgs lbfgs(evaluator, pos, mobile);
  Minimised result;
  lbfgs.start();
  result.max_force_before = max_force_on(lbfgs.forces(), report_atoms);
  result.max_force_after = result.max_force_before;
  if (mobile.empty()) return result;
  for (int it = 0; it < max_iterations; ++it) {
    if (lbfgs.max_mobile_force() < tolerance) break;
    const bool accepted = lbfgs.iterate();
    result.iterations = it + 1;
    if (!accepted) break;
  }
  result.max_force_after = max_force_on(lbfgs.final_forces(), report_atoms);
  return result;
}

// ---------------------------------------------------------------- the stages of add_hydrogens

// The input the rules read: bonds (disulfides, hydrogens already present) created in `with_bonds` when the
// caller made none; every atom needs a position.
const Topology& bonded_input(const Topology& structure, const StandardResidueData& standard, Topology& with_bonds) {
  if (structure.bonds.empty() && structure.num_atoms() > 1) {
    with_bonds = structure;
    create_topology_bonds(with_bonds, standard);
  }
  const Topology& input = with_bonds.atoms.empty() ? structure : with_bonds;
  if (input.positions_nm.size() != input.atoms.size())
    throw InputError(located(input.source, 0, 0,
                             fmt::format("{} atoms but {} positions; every atom needs a position to add hydrogens",
                                         input.atoms.size(), input.positions_nm.size())));
  return input;
}

// Hydrogens on the atoms named `parent_name` among `atoms`.
int hydrogens_on(const std::vector<int>& atoms, const AtomGraph& g, const ffgen::NormalisedNames& names,
                 const std::string& parent_name) {
  int count = 0;
  for (int a : atoms) {
    const auto A = static_cast<std::size_t>(a);
    if (g.element[A] == "H" || names.atom[A] != parent_name) continue;
    for (int b : g.bonded_to[A])
      if (g.element[static_cast<std::size_t>(b)] == "H") ++count;
  }
  return count;
}

// The new atoms of the output and how their hydrogens are placed.
struct NewAtoms {
  std::vector<int> atoms;                                            // every new atom: the minimiser moves these
  std::vector<int> hydrogens;                                        // the new hydrogens: their forces are reported
  std::map<int, std::vector<int>> by_parent;                         // parent -> its new hydrogens
  std::vector<std::pair<int, const std::vector<int>*>> bare_waters;  // water oxygen, its hydrogens in by_parent
};

// add_hydrogens for one input: the residues' variants and atoms (Modeller's decisions), then the output's new
// atoms placed and optimised, and the report.
class HydrogenAdder {
 public:
  HydrogenAdder(const Topology& input, const StandardResidueData& standard, const HydrogenDefinitions& definitions,
                const HydrogenOptions& options)
      : input_(input), standard_(standard), definitions_(definitions), options_(options),
        names_(ffgen::normalise_names(input, standard)), graph_(ffgen::make_atom_graph(input)),
        pos_(input.positions_nm), ph_(options.ph) {
    for (const auto& [r, variant] : options.variants)
      if (r < 0 || r >= static_cast<int>(input.residues.size()))
        throw InputError(fmt::format("a variant ({}) is given for residue index {}, but the structure has {} residues",
                                     variant, r, input.residues.size()));
    // Oxygens and nitrogens of the input: the acceptors Modeller's HIS rule looks at.
    for (int a = 0; a < input.num_atoms(); ++a)
      if (graph_.element[static_cast<std::size_t>(a)] == "O" || graph_.element[static_cast<std::size_t>(a)] == "N")
        acceptors_.push_back(a);
    const std::size_t nr = input.residues.size();
    out_residues_.resize(nr);
    reason_of_.resize(nr);
    is_n_term_.assign(nr, false);
    is_c_term_.assign(nr, false);
    added_oxt_.assign(nr, false);
    for (const auto& chain : input.chains)
      if (!chain.residues.empty()) {
        is_n_term_[static_cast<std::size_t>(chain.residues.front())] = true;
        is_c_term_[static_cast<std::size_t>(chain.residues.back())] = true;
      }
  }

  // The atoms of every residue (existing ones kept or removed, missing hydrogens and OXT added), input order.
  const std::vector<std::vector<NewAtom>>& build_residues() {
    check_heavy_atoms();
    for (std::size_t ri = 0; ri < input_.residues.size(); ++ri) build_residue(ri);
    return out_residues_;
  }

  void place_new_hydrogens(Topology& result, const AtomGraph& out_graph, NewAtoms& added) const;
  void optimise(Topology& result, const ForceFieldData& forcefield, const NewAtoms& added);
  void record_choices(const Topology& result, const AtomGraph& out_graph);
  HydrogenReport& report() { return report_; }

 private:
  void build_residue(std::size_t ri);
  void check_heavy_atoms() const;
  void check_disulfide_partner(int r) const;
  void choose_variant(int r, const std::string& rname, std::string& variant, std::string& reason) const;
  void cys_disulfide(int r, std::string& variant, std::string& reason) const;
  void his_variant(int r, std::string& variant, std::string& reason) const;
  void his_by_hbond_partner(int r, int nd1, int ne2, std::string& variant, std::string& reason) const;
  void check_variant_allowed(int r, const ResidueHydrogens& spec, const std::string& variant) const;
  std::vector<const HydrogenDefinition*> wanted_hydrogens(std::size_t ri, const ResidueHydrogens& spec,
                                                          const std::string& variant) const;
  void add_atoms(std::size_t ri, const std::vector<const HydrogenDefinition*>& wanted, const std::string& variant,
                 bool remove_extra);
  std::vector<const HydrogenDefinition*> missing_hydrogens(int a,
                                                           const std::vector<const HydrogenDefinition*>& wanted) const;
  void add_missing_oxt(std::size_t ri, const std::string& rname);
  void record_choices_of(std::size_t ri, const Topology& result, const AtomGraph& out_graph,
                         const ffgen::NormalisedNames& out_names);

  int atom_named(std::size_t ri, const std::string& n) const {
    for (int a : input_.residues[ri].atoms)
      if (names_.atom[static_cast<std::size_t>(a)] == n) return a;
    return -1;
  }
  NewAtom copy_atom(int a) const {
    NewAtom na;
    na.source = a;
    na.position = pos_[static_cast<std::size_t>(a)];
    return na;
  }

  const Topology& input_;
  const StandardResidueData& standard_;
  const HydrogenDefinitions& definitions_;
  const HydrogenOptions& options_;
  const ffgen::NormalisedNames names_;
  const AtomGraph graph_;
  const std::vector<Vec3d>& pos_;
  const double ph_;
  std::vector<int> acceptors_;
  HydrogenReport report_;
  std::vector<std::vector<NewAtom>> out_residues_;
  std::vector<std::string> reason_of_;  // why the residue has its variant ("" = by pH alone)
  std::vector<bool> is_n_term_, is_c_term_, added_oxt_;
};

void HydrogenAdder::build_residue(std::size_t ri) {
  const int r = static_cast<int>(ri);
  const std::string& rname = names_.residue[ri];
  const auto spec_it = definitions_.residues.find(rname);
  auto given = options_.variants.find(r);
  if (spec_it == definitions_.residues.end()) {
    if (given != options_.variants.end())
      throw InputError(located(input_.source, residue_line(input_, r), 0,
                               fmt::format("variant {} given for {}, which has no hydrogen definitions; variants exist "
                                           "for HIS, ASP, GLU, LYS and CYS",
                                           given->second, residue_label(input_, r))));
    for (int a : input_.residues[ri].atoms) out_residues_[ri].push_back(copy_atom(a));  // copied as is (ions, ligands)
    return;
  }
  const ResidueHydrogens& spec = spec_it->second;

  // The variant, as Modeller chooses it.
  std::string variant = given != options_.variants.end() ? given->second : "";
  std::string reason = given != options_.variants.end() ? "given" : "";
  choose_variant(r, rname, variant, reason);
  check_variant_allowed(r, spec, variant);
  if (given != options_.variants.end() && variant == "CYX" && rname == "CYS") check_disulfide_partner(r);
  reason_of_[ri] = reason;
  const bool remove_extra = given != options_.variants.end();

  add_atoms(ri, wanted_hydrogens(ri, spec, variant), variant, remove_extra);
  add_missing_oxt(ri, rname);
}

// Heavy atoms: every peptide residue with hydrogen definitions must have all of them (OXT is added at a C
// terminus); one error lists every residue that lacks some.
void HydrogenAdder::check_heavy_atoms() const {
  std::vector<std::string> incomplete, first_missing;
  int first = -1;
  for (std::size_t ri = 0; ri < input_.residues.size(); ++ri) {
    const std::string& rname = names_.residue[ri];
    if (!definitions_.residues.count(rname) || !is_peptide(standard_, rname)) continue;
    std::vector<std::string> missing;
    for (const auto& n : peptide_heavy_atoms(standard_, rname))
      if (atom_named(ri, n) < 0) missing.push_back(n);
    if (missing.empty()) continue;
    const int r = static_cast<int>(ri);
    if (first < 0) first = r, first_missing = missing;
    incomplete.push_back(fmt::format("{} lacks [{}]", residue_with_line(input_, r), ffgen::join(missing)));
  }
  if (incomplete.empty()) return;
  const std::string fix = "add the missing atoms with PDBFixer or model them";
  if (incomplete.size() == 1)
    throw InputError(located(input_.source, residue_line(input_, first), 0,
                             fmt::format("{} lacks heavy atoms [{}]; hydrogens need the complete residue: {}",
                                         residue_label(input_, first), ffgen::join(first_missing), fix)));
  throw InputError(located(input_.source, residue_line(input_, first), 0,
                           fmt::format("{} residues lack heavy atoms: {}; hydrogens need complete residues: {}",
                                       incomplete.size(), listed(incomplete, "; "), fix)));
}

// A given CYX needs a disulfide: another cysteine's SG within kDisulfideNm of its SG (the distance at which
// create_topology_bonds bonds them, as OpenMM's Topology.createDisulfideBonds), or its SG bonded to another residue
// already (CONECT, as for the CYX chosen without a variant); otherwise the residue would be a thiolate without a
// partner, charged -1 e.
void HydrogenAdder::check_disulfide_partner(int r) const {
  constexpr double kDisulfideNm = 0.3;
  const int sg = atom_named(static_cast<std::size_t>(r), "SG");
  if (sg < 0) return;  // check_heavy_atoms has refused it
  for (int b : graph_.bonded_to[static_cast<std::size_t>(sg)])
    if (input_.atoms[static_cast<std::size_t>(b)].residue != r) return;
  double nearest = -1.0;
  int nearest_residue = -1;
  for (std::size_t ri = 0; ri < input_.residues.size(); ++ri) {
    if (static_cast<int>(ri) == r || names_.residue[ri] != "CYS") continue;
    const int other = atom_named(ri, "SG");
    if (other < 0) continue;
    const double d = norm(pos_[static_cast<std::size_t>(other)] - pos_[static_cast<std::size_t>(sg)]);
    if (nearest < 0.0 || d < nearest) nearest = d, nearest_residue = static_cast<int>(ri);
  }
  if (nearest >= 0.0 && nearest <= kDisulfideNm) return;
  const std::string closest =
      nearest_residue < 0
          ? "the structure has no other cysteine"
          : fmt::format("the nearest SG, of {}, is {:.3f} nm away", short_label(input_, nearest_residue), nearest);
  throw InputError(located(input_.source, residue_line(input_, r), 0,
                           fmt::format("variant CYX given for {}, but its SG has no disulfide partner: CYX needs its SG "
                                       "bonded to another cysteine's SG, within {} nm ({}); give CYS (or no variant) "
                                       "for this residue, or check the partner's coordinates",
                                       residue_label(input_, r), quoted_number(kDisulfideNm), closest)));
}

// The variant of a residue none was given for: CYX for a disulfide, HIS by its hydrogens or hydrogen bonds
// above pH 6.5 and HIP below; "" leaves it to the pH (hydrogens.xml's maxph).
void HydrogenAdder::choose_variant(int r, const std::string& rname, std::string& variant, std::string& reason) const {
  if (variant.empty() && rname == "CYS") cys_disulfide(r, variant, reason);
  if (variant.empty() && rname == "HIS" && ph_ > 6.5) {
    his_variant(r, variant, reason);
  } else if (variant.empty() && rname == "HIS") {
    variant = "HIP", reason = fmt::format("pH {} <= 6.5", quoted_number(ph_));
  }
}

// CYX when the residue's only sulfur is bonded to another residue.
void HydrogenAdder::cys_disulfide(int r, std::string& variant, std::string& reason) const {
  int sulfur = -1, count = 0;
  for (int a : input_.residues[static_cast<std::size_t>(r)].atoms)
    if (graph_.element[static_cast<std::size_t>(a)] == "S") {
      sulfur = a;
      ++count;
    }
  if (count == 1)
    for (int b : graph_.bonded_to[static_cast<std::size_t>(sulfur)])
      if (input_.atoms[static_cast<std::size_t>(b)].residue != r) {
        variant = "CYX";
        reason = fmt::format("disulfide: SG bonded to {}",
                             short_label(input_, input_.atoms[static_cast<std::size_t>(b)].residue));
        break;
      }
}

// HIS above pH 6.5: the hydrogens on ND1 and NE2 the input has, else the hydrogen-bond partners.
void HydrogenAdder::his_variant(int r, std::string& variant, std::string& reason) const {
  const int nd1 = atom_named(static_cast<std::size_t>(r), "ND1"), ne2 = atom_named(static_cast<std::size_t>(r), "NE2");
  if (nd1 < 0 || ne2 < 0)  // unreachable for a complete residue; kept for non-peptide HIS names
    throw InputError(located(input_.source, residue_line(input_, r), 0,
                             fmt::format("{} lacks ND1 or NE2: add the missing atoms with PDBFixer or model them",
                                         residue_label(input_, r))));
  auto has_h = [&](int n) {
    for (int b : graph_.bonded_to[static_cast<std::size_t>(n)])
      if (graph_.element[static_cast<std::size_t>(b)] == "H") return true;
    return false;
  };
  const bool hd1 = has_h(nd1), he2 = has_h(ne2);
  if (hd1 && he2) {
    variant = "HIP", reason = "hydrogens on ND1 and NE2 present";
  } else if (hd1) {
    variant = "HID", reason = "hydrogen on ND1 present";
  } else if (he2) {
    variant = "HIE", reason = "hydrogen on NE2 present";
  } else {
    his_by_hbond_partner(r, nd1, ne2, variant, reason);
  }
}

// Estimated hydrogens 0.1 nm from each nitrogen, away from its bonded atoms; which forms a hydrogen bond with an
// acceptor of another residue? HID when neither does, as Modeller.
void HydrogenAdder::his_by_hbond_partner(int r, int nd1, int ne2, std::string& variant, std::string& reason) const {
  auto estimate = [&](int n) {
    Vec3d delta{0.0, 0.0, 0.0};
    for (int b : graph_.bonded_to[static_cast<std::size_t>(n)])
      delta += pos_[static_cast<std::size_t>(n)] - pos_[static_cast<std::size_t>(b)];
    return pos_[static_cast<std::size_t>(n)] + unit(delta) * 0.1;
  };
  const Vec3d h1 = estimate(nd1), h2 = estimate(ne2);
  int nd1_partner = -1, ne2_partner = -1;
  for (int acc : acceptors_) {
    if (input_.atoms[static_cast<std::size_t>(acc)].residue == r) continue;
    const Vec3d& pa = pos_[static_cast<std::size_t>(acc)];
    if (is_hbond(pos_[static_cast<std::size_t>(nd1)], h1, pa)) {
      nd1_partner = acc;
      break;
    }
    if (ne2_partner < 0 && is_hbond(pos_[static_cast<std::size_t>(ne2)], h2, pa)) ne2_partner = acc;
  }
  auto partner = [&](int acc) {
    return fmt::format("{} of {}", input_.atoms[static_cast<std::size_t>(acc)].name,
                       short_label(input_, input_.atoms[static_cast<std::size_t>(acc)].residue));
  };
  if (ne2_partner >= 0 && nd1_partner < 0) {
    variant = "HIE";
    reason = fmt::format("pH {} > 6.5; NE2-H hydrogen-bonds {}", quoted_number(ph_), partner(ne2_partner));
  } else if (nd1_partner >= 0) {
    variant = "HID";
    reason = fmt::format("pH {} > 6.5; ND1-H hydrogen-bonds {}", quoted_number(ph_), partner(nd1_partner));
  } else {
    variant = "HID";
    reason = fmt::format("pH {} > 6.5; no hydrogen-bond partner for ND1-H or NE2-H (HID, as Modeller)",
                         quoted_number(ph_));
  }
}

void HydrogenAdder::check_variant_allowed(int r, const ResidueHydrogens& spec, const std::string& variant) const {
  if (!variant.empty() && std::find(spec.variants.begin(), spec.variants.end(), variant) == spec.variants.end()) {
    std::string allowed = ffgen::join(spec.variants);
    throw InputError(located(input_.source, residue_line(input_, r), 0,
                             fmt::format("variant {} is not one {} can take; expected one of [{}]", variant,
                                         residue_label(input_, r), allowed.empty() ? "none" : allowed)));
  }
}

// The hydrogens this residue should have (Modeller's three filters: pH/variant, chain position, parent).
std::vector<const HydrogenDefinition*> HydrogenAdder::wanted_hydrogens(std::size_t ri, const ResidueHydrogens& spec,
                                                                       const std::string& variant) const {
  std::vector<const HydrogenDefinition*> wanted;
  for (const auto& h : spec.hydrogens) {
    auto listed = [&] { return std::find(h.variants.begin(), h.variants.end(), variant) != h.variants.end(); };
    const bool by_variant = h.variants.empty() ? ph_ <= h.max_ph : (variant.empty() ? ph_ <= h.max_ph : listed());
    if (!by_variant) continue;
    if (!h.terminal.empty()) {
      const bool n = is_n_term_[ri], c = is_c_term_[ri];
      const bool ok = (n && h.terminal.find('N') != std::string::npos) ||
                      (c && h.terminal.find('C') != std::string::npos) ||
                      (!n && !c && h.terminal.find('-') != std::string::npos);
      if (!ok) continue;
    }
    if (atom_named(ri, h.parent) < 0) continue;
    wanted.push_back(&h);
  }
  return wanted;
}

// The atoms: input order, each heavy atom followed by its missing hydrogens; with a given variant, existing
// hydrogens it lacks are removed.
void HydrogenAdder::add_atoms(std::size_t ri, const std::vector<const HydrogenDefinition*>& wanted,
                              const std::string& variant, bool remove_extra) {
  const int r = static_cast<int>(ri);
  const auto& res = input_.residues[ri];
  auto& out = out_residues_[ri];
  for (int a : res.atoms) {
    const auto A = static_cast<std::size_t>(a);
    const bool is_h = graph_.element[A] == "H";
    auto named_as_a = [&](const HydrogenDefinition* h) { return h->name == names_.atom[A]; };
    if (is_h && remove_extra && std::none_of(wanted.begin(), wanted.end(), named_as_a)) {
      report_.notes.push_back(fmt::format("{}: hydrogen {} removed (variant {} given)", short_label(input_, r),
                                          input_.atoms[A].name, variant));
      continue;
    }
    out.push_back(copy_atom(a));
    if (is_h) continue;
    const int parent_local = static_cast<int>(out.size()) - 1;
    for (const auto* h : missing_hydrogens(a, wanted)) {
      out.push_back(NewAtom{-1, h->name, std::string(1, 'H'), parent_local, Vec3d{0.0, 0.0, 0.0}});
      ++report_.added;
      ++report_.added_per_residue_name[res.name];
    }
  }
}

// The wanted hydrogens of heavy atom `a` that it lacks: existing hydrogens take the expected ones of their
// name, the others the last remaining ones.
std::vector<const HydrogenDefinition*> HydrogenAdder::missing_hydrogens(
    int a, const std::vector<const HydrogenDefinition*>& wanted) const {
  const auto A = static_cast<std::size_t>(a);
  std::vector<int> existing;
  for (int b : graph_.bonded_to[A])
    if (graph_.element[static_cast<std::size_t>(b)] == "H") existing.push_back(b);
  std::vector<const HydrogenDefinition*> expected;
  for (const auto* h : wanted)
    if (h->parent == names_.atom[A]) expected.push_back(h);
  if (existing.size() >= expected.size()) return {};
  std::size_t unmatched = 0;
  for (int e : existing) {
    auto named_as_e = [&](const HydrogenDefinition* h) { return h->name == names_.atom[static_cast<std::size_t>(e)]; };
    auto it = std::find_if(expected.begin(), expected.end(), named_as_e);
    if (it != expected.end())
      expected.erase(it);
    else
      ++unmatched;
  }
  for (std::size_t k = 0; k < unmatched; ++k) expected.pop_back();
  return expected;
}

// A C-terminal peptide residue without OXT gets one, as PDBFixer adds it: in the plane of CA, C and O, at
// 120 degrees from both (trigonal carboxylate carbon), 0.125 nm from C.
void HydrogenAdder::add_missing_oxt(std::size_t ri, const std::string& rname) {
  if (!(is_c_term_[ri] && is_peptide(standard_, rname) && has_residue_bond(standard_, rname, "C", "OXT") &&
        atom_named(ri, "OXT") < 0))
    return;
  const int c = atom_named(ri, "C"), ca = atom_named(ri, "CA"), o = atom_named(ri, "O");
  if (c < 0 || ca < 0 || o < 0) return;
  auto& out = out_residues_[ri];
  const Vec3d pc = pos_[static_cast<std::size_t>(c)];
  const Vec3d dir =
      unit(-(unit(pos_[static_cast<std::size_t>(ca)] - pc) + unit(pos_[static_cast<std::size_t>(o)] - pc)));
  NewAtom na;
  na.name = "OXT";
  na.element = "O";
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k].source == c) na.parent = static_cast<int>(k);
  na.position = pc + dir * 0.125;
  out.push_back(na);
  added_oxt_[ri] = true;
  report_.notes.push_back(fmt::format("{}: C-terminal OXT added (missing in the input), in the carboxylate plane "
                                      "as PDBFixer adds it",
                                      short_label(input_, static_cast<int>(ri))));
}

// Positions of the new hydrogens: per parent, all at once, from the parent's placed neighbours. Waters without
// hydrogens last, oriented toward acceptors (including the protein's, now complete).
void HydrogenAdder::place_new_hydrogens(Topology& result, const AtomGraph& out_graph, NewAtoms& added) const {
  for (int a : added.atoms) {
    if (out_graph.element[static_cast<std::size_t>(a)] != "H") continue;
    added.hydrogens.push_back(a);
    for (int b : out_graph.bonded_to[static_cast<std::size_t>(a)]) added.by_parent[b].push_back(a);
  }
  std::vector<bool> placed(result.atoms.size(), true);
  for (int a : added.atoms) placed[static_cast<std::size_t>(a)] = false;
  for (const auto& [parent, hs] : added.by_parent) {
    const int residue = result.atoms[static_cast<std::size_t>(parent)].residue;
    const bool water = names_.residue[static_cast<std::size_t>(residue)] == "HOH";
    if (water && hs.size() == 2 && out_graph.bonded_to[static_cast<std::size_t>(parent)].size() == 2) {
      added.bare_waters.emplace_back(parent, &hs);
      continue;
    }
    place_hydrogens(out_graph, parent, hs, water, result.positions_nm);
    for (int h : hs) placed[static_cast<std::size_t>(h)] = true;
  }
  if (!added.bare_waters.empty()) {
    const AcceptorGrid grid(out_graph, result.positions_nm);
    for (const auto& [oxygen, hs] : added.bare_waters) {
      orient_water(out_graph, grid, oxygen, *hs, placed, result.positions_nm);
      for (int h : *hs) placed[static_cast<std::size_t>(h)] = true;
    }
  }
}

// Optimise the added atoms with the force field, everything else fixed (as Modeller: CutoffNonPeriodic,
// flexible water, no constraints); bare waters are first turned to their best searched orientation.
void HydrogenAdder::optimise(Topology& result, const ForceFieldData& forcefield, const NewAtoms& added) {
  ForceFieldOptions ffo;
  ffo.constraints = ConstraintMode::None;
  ffo.rigid_water = false;
  ffo.nonbonded.method = NonbondedMethod::CutoffNonPeriodic;
  ffo.nonbonded.cutoff_nm = 1.0;
  ffo.nonbonded.dispersion_correction = false;
  System system;
  try {
    system = build_system(result, forcefield, ffo);
  } catch (const InputError& e) {
    check_residue_templates(result, forcefield);  // every residue that matches no template, in one message
    throw InputError(fmt::format("{} (while optimising the added hydrogens with the force field; "
                                 "a residue the force field does not know needs its own template)",
                                 e.what()));
  }
  system.box.reset();
  std::vector<std::array<int, 3>> waters;
  for (const auto& [oxygen, hs] : added.bare_waters) waters.push_back({oxygen, (*hs)[0], (*hs)[1]});
  search_water_orientations(waters, system.charge_e, result.positions_nm);
  PlatformChoice cpu;
  cpu.kind = PlatformKind::Cpu;
  PlatformConfig settings;
  settings.name = "cpu";
  settings.precision = Precision::Double;
  auto evaluator = make_evaluator(system, cpu, settings);
  const Minimised m =
      minimise_atoms(*evaluator, result.positions_nm, added.atoms, added.hydrogens, kForceTolerance, kMaxIterations);
  report_.max_force_before = m.max_force_before;
  report_.max_force_after = m.max_force_after;
  report_.iterations = m.iterations;
}

// Protonation choices: titratable residues and chain ends, read from the hydrogens the output has.
void HydrogenAdder::record_choices(const Topology& result, const AtomGraph& out_graph) {
  const ffgen::NormalisedNames out_names = ffgen::normalise_names(result, standard_);
  for (std::size_t ri = 0; ri < result.residues.size(); ++ri) record_choices_of(ri, result, out_graph, out_names);
}

void HydrogenAdder::record_choices_of(std::size_t ri, const Topology& result, const AtomGraph& out_graph,
                                      const ffgen::NormalisedNames& out_names) {
  const int r = static_cast<int>(ri);
  const std::string& rname = names_.residue[ri];
  const auto& res = result.residues[ri];
  auto h_on = [&](const std::string& parent_name) {
    return hydrogens_on(res.atoms, out_graph, out_names, parent_name);
  };
  ProtonationChoice choice;
  choice.residue = r;
  choice.residue_name = input_.residues[ri].name;
  choice.chain = chain_id(input_, r);
  choice.number = res.number;
  choice.icode = res.insertion_code;
  auto push = [&](const std::string& variant, const std::string& reason) {
    choice.variant = variant;
    choice.reason = reason;
    report_.choices.push_back(choice);
  };
  const std::string& why = reason_of_[ri];
  const std::string by_ph = fmt::format("pH {}", quoted_number(ph_));
  // hydrogens.xml's maxph of the titratable hydrogen: present at pH <= maxph.
  auto by_pka = [&](double max_ph) {
    return fmt::format("{} {} {} (maxph of its titratable hydrogen)", by_ph, ph_ <= max_ph ? "<=" : ">",
                       quoted_number(max_ph));
  };
  if (rname == "HIS") {
    const int d = h_on("ND1"), e = h_on("NE2");
    const std::string form = d && e ? "HIP" : d ? "HID" : e ? "HIE" : "HIN";
    std::string reason = why.empty() ? by_ph : why;
    // A histidine named HID/HIE/HIP in the input: the name does not choose the form (as in OpenMM); say so when
    // the form differs.
    const std::string& named = choice.residue_name;
    if ((named == "HID" || named == "HIE" || named == "HIP") && named != form && why != "given")
      reason += fmt::format("; named {} in the input, but a name does not choose the form (as in OpenMM): --variant "
                            "{}:{}{}={} does",
                            named, choice.chain == " " ? "" : choice.chain, choice.number,
                            choice.icode == ' ' ? "" : std::string(1, choice.icode), named);
    push(form, reason);
  } else if (rname == "ASP") {
    push(h_on("OD1") + h_on("OD2") ? "ASH" : "ASP", why.empty() ? by_pka(4.4) : why);
  } else if (rname == "GLU") {
    push(h_on("OE1") + h_on("OE2") ? "GLH" : "GLU", why.empty() ? by_pka(4.4) : why);
  } else if (rname == "LYS") {
    push(h_on("NZ") >= 3 ? "LYS" : "LYN", why.empty() ? by_pka(10.0) : why);
  } else if (rname == "CYS") {
    push(h_on("SG") ? "CYS" : "CYX", why.empty() ? by_pka(8.5) : why);
  }
  if (!is_peptide(standard_, rname) || !definitions_.residues.count(rname)) return;
  if (is_n_term_[ri]) {
    const int nh = h_on("N");
    push(rname == "PRO" ? (nh >= 2 ? "N-terminal NH2+" : fmt::format("N-terminal, {} H on N", nh))
                        : (nh >= 3 ? "N-terminal NH3+" : fmt::format("N-terminal, {} H on N", nh)),
         "first residue of its chain");
  }
  if (is_c_term_[ri]) {
    bool oxt = false;
    for (int a : res.atoms) oxt = oxt || out_names.atom[static_cast<std::size_t>(a)] == "OXT";
    push(oxt ? "C-terminal COO-" : "C-terminal, no OXT",
         added_oxt_[ri] ? "last residue of its chain; OXT added" : "last residue of its chain");
  }
}

}  // namespace

// ---------------------------------------------------------------- data folders

HydrogenDefinitions load_default_hydrogen_definitions() {
  return load_hydrogen_definitions(find_data_file("hydrogens.xml"));
}

// ---------------------------------------------------------------- add_hydrogens

Topology add_hydrogens(const Topology& structure, const ForceFieldData& forcefield, const StandardResidueData& standard,
                       const HydrogenDefinitions& definitions, const HydrogenOptions& options,
                       HydrogenReport* report_out) {
  ffgen::check_topology(structure);
  Topology with_bonds;
  const Topology& input = bonded_input(structure, standard, with_bonds);
  if (!std::isfinite(options.ph) || options.ph < 0.0 || options.ph > 14.0)
    throw InputError(fmt::format("pH {} is out of range; expected a number from 0 to 14 (default 7.0)",
                                 quoted_number(options.ph)));
  HydrogenAdder adder(input, standard, definitions, options);
  const auto& out_residues = adder.build_residues();

  NewAtoms added;
  Topology result = assemble(input, out_residues, standard, &added.atoms);
  const AtomGraph out_graph = ffgen::make_atom_graph(result);
  adder.place_new_hydrogens(result, out_graph, added);
  if (options.optimize && !added.atoms.empty()) adder.optimise(result, forcefield, added);
  adder.record_choices(result, out_graph);
  if (report_out) *report_out = std::move(adder.report());
  return result;
}

}  // namespace mdsim
