// io/amber_prmtop: the prmtop's sections (io/amber_prmtop_sections) turned into a System as OpenMM 7.7's
// app/internal/amber_file_parser.readAmberSystem does (same term order, same conversions); the bonded lists and
// extra points are in amber_prmtop_terms.cpp.
#include "io/amber_prmtop.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/errors.hpp"
#include "io/text_input.hpp"
#include "io/amber_prmtop_internal.hpp"
#include "io/pdb_reader.hpp"
#include "model/elements.hpp"

namespace mdsim::amber {
namespace {

std::size_t at(long i) { return static_cast<std::size_t>(i); }

}  // namespace

Pointers read_pointers(const PrmtopSections& p) {
  const std::vector<long> v = p.ints("POINTERS", -1, "");
  if (v.size() < 30)
    p.fail(p.require("POINTERS"), -1, fmt::format("has {} values, expected at least 30 (NATOM ... IFCAP)", v.size()));
  Pointers ptr;
  ptr.natom = v[0], ptr.ntypes = v[1], ptr.nbonh = v[2], ptr.mbona = v[3], ptr.ntheth = v[4], ptr.mtheta = v[5];
  ptr.nphih = v[6], ptr.mphia = v[7], ptr.next = v[10], ptr.nres = v[11], ptr.numbnd = v[15], ptr.numang = v[16];
  ptr.nptra = v[17], ptr.nphb = v[19], ptr.ifpert = v[20], ptr.ifbox = v[27], ptr.ifcap = v[29];
  // A count over 10^9 would need a file of gigabytes; refusing it here keeps NTYPES^2 and 5 x NPHIH in range.
  constexpr long kMaxCount = 1000000000L;
  for (std::size_t k : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 10u, 11u, 15u, 16u, 17u, 19u}) {
    if (v[k] < 0) p.fail(p.require("POINTERS"), static_cast<long>(k), fmt::format("value {} is negative", k + 1));
    if (v[k] > kMaxCount)
      p.fail(p.require("POINTERS"), static_cast<long>(k),
             fmt::format("value {} is {}, more than any prmtop holds (at most {}): the file is damaged", k + 1, v[k],
                         kMaxCount));
  }
  if (ptr.natom == 0) p.fail(p.require("POINTERS"), 0, "NATOM is 0: the prmtop has no atoms");
  return ptr;
}

void check_supported(const PrmtopSections& p, const Pointers& ptr) {
  const Section& pointers = p.require("POINTERS");
  if (ptr.ifpert > 0) p.fail(pointers, 20, "IFPERT is set: perturbation data (AMBER 6 free energy) is not supported");
  if (ptr.ifcap > 0) p.fail(pointers, 29, "IFCAP is set: the CAP option (a solvent cap) is not supported");
  if (const Section* c = p.find("LENNARD_JONES_CCOEF"))
    p.fail(*c, -1,
           "the 12-6-4 Lennard-Jones C coefficients (ion models of Li/Merz) are not supported yet: build the system "
           "without them or use OpenMM");
  if (p.find("IPOL") != nullptr) {
    const std::vector<long> ipol = p.ints("IPOL", 1, "one IPOL value");
    if (ipol[0] != 0) p.fail(p.require("IPOL"), 0, "IPOL is not 0: polarisable prmtops are not supported");
  }
  for (const char* flag : {"HBOND_ACOEF", "HBOND_BCOEF"}) {
    if (p.find(flag) == nullptr) continue;
    const std::vector<double> c = p.reals(flag, ptr.nphb, "NPHB of %FLAG POINTERS");
    for (std::size_t k = 0; k < c.size(); ++k)
      if (c[k] != 0.0)
        p.fail(p.require(flag), static_cast<long>(k),
               fmt::format("10-12 hydrogen-bond coefficient {} is {}: 10-12 terms are not supported", k + 1,
                           quoted_number(c[k])));
  }
}

void read_particles(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  const std::vector<double> mass = p.reals("MASS", ptr.natom, "NATOM of %FLAG POINTERS");
  const std::vector<double> charge = p.reals("CHARGE", ptr.natom, "NATOM of %FLAG POINTERS");
  for (std::size_t k = 0; k < mass.size(); ++k)
    if (!(mass[k] >= 0.0)) p.fail(p.require("MASS"), static_cast<long>(k), fmt::format("atom {} has a negative mass", k + 1));
  b.system.mass_amu = mass;
  b.system.charge_e.resize(charge.size());
  for (std::size_t k = 0; k < charge.size(); ++k) b.system.charge_e[k] = charge[k] / 18.2223;
  const std::vector<long> types = p.ints("ATOM_TYPE_INDEX", ptr.natom, "NATOM of %FLAG POINTERS");
  for (std::size_t k = 0; k < types.size(); ++k)
    if (types[k] < 1 || types[k] > ptr.ntypes)
      p.fail(p.require("ATOM_TYPE_INDEX"), static_cast<long>(k),
             fmt::format("atom {} has type {}, expected 1 to NTYPES = {}", k + 1, types[k], ptr.ntypes));
  b.type.resize(types.size());
  for (std::size_t k = 0; k < types.size(); ++k) b.type[k] = static_cast<int>(types[k] - 1);
}

namespace {

// The LJ A/B tables and their index, checked against NTYPES.
struct LjTables {
  std::vector<long> index;  // NONBONDED_PARM_INDEX: ntypes^2, 1-based into A/B; <= 0 = 10-12 pair
  std::vector<double> a, b;
};

LjTables read_lj_tables(const PrmtopSections& p, const Pointers& ptr) {
  LjTables t;
  const long n = ptr.ntypes;
  t.index = p.ints("NONBONDED_PARM_INDEX", n * n, "NTYPES^2 of %FLAG POINTERS");
  t.a = p.reals("LENNARD_JONES_ACOEF", n * (n + 1) / 2, "NTYPES (NTYPES + 1) / 2 of %FLAG POINTERS");
  t.b = p.reals("LENNARD_JONES_BCOEF", n * (n + 1) / 2, "NTYPES (NTYPES + 1) / 2 of %FLAG POINTERS");
  for (std::size_t k = 0; k < t.index.size(); ++k)
    if (t.index[k] > static_cast<long>(t.a.size()))
      p.fail(p.require("NONBONDED_PARM_INDEX"), static_cast<long>(k),
             fmt::format("index {} is beyond the {} LENNARD_JONES_ACOEF values", t.index[k], t.a.size()));
  return t;
}

// (rMin/2 in Å, epsilon in kcal/mol) of a type pair's A, B as OpenMM derives them; (1/2, 0) where A or B is 0.
std::pair<double, double> half_rmin_and_epsilon(double a, double b) {
  if (a == 0.0 || b == 0.0) return {0.5, 0.0};
  return {std::pow(2.0 * a / b, 1.0 / 6.0) / 2.0, 0.25 * b * b / a};
}

// OpenMM's test: does every type pair's A/B equal the combining rule of the per-type parameters (within 1e-6)?
bool follows_combining_rule(const LjTables& t, long n, const std::vector<std::pair<double, double>>& type_params) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const long index = t.index[at(n * i + j)] - 1;
      if (index < 0) continue;
      const double rij = type_params[at(i)].first + type_params[at(j)].first;
      const double wdij = std::sqrt(type_params[at(i)].second * type_params[at(j)].second);
      const double a = t.a[at(index)], b = t.b[at(index)];
      if (a == 0.0 || b == 0.0) {
        if (a != 0.0 || b != 0.0 || (wdij != 0.0 && rij != 0.0)) return false;
      } else if (std::fabs((a - wdij * std::pow(rij, 12)) / a) > 1e-6 ||
                 std::fabs((b - 2.0 * wdij * std::pow(rij, 6)) / b) > 1e-6) {
        return false;
      }
    }
  return true;
}

}  // namespace

void read_lennard_jones(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  const LjTables t = read_lj_tables(p, ptr);
  const long n = ptr.ntypes;
  std::vector<std::pair<double, double>> type_params(at(n), {0.0, 0.0});
  const std::size_t natom = b.type.size();
  std::vector<std::pair<double, double>> atom_params(natom);
  for (std::size_t k = 0; k < natom; ++k) {
    const long index = t.index[at((n + 1) * b.type[k])] - 1;
    if (index < 0)
      p.fail(p.require("NONBONDED_PARM_INDEX"), (n + 1) * b.type[k],
             fmt::format("atom {}'s type {} has a 10-12 (H-bond) self interaction: 10-12 terms are not supported",
                         k + 1, b.type[k] + 1));
    atom_params[k] = half_rmin_and_epsilon(t.a[at(index)], t.b[at(index)]);
    if (!std::isfinite(atom_params[k].first) || !std::isfinite(atom_params[k].second))
      p.fail(p.require("LENNARD_JONES_ACOEF"), index,
             fmt::format("type {}'s A = {} and B = {} give no finite Lennard-Jones radius and depth", b.type[k] + 1,
                         quoted_number(t.a[at(index)]), quoted_number(t.b[at(index)])));
    type_params[at(b.type[k])] = atom_params[k];
  }
  b.rvdw_nm.resize(natom);
  b.epsilon_kj.resize(natom);
  for (std::size_t k = 0; k < natom; ++k) {
    b.rvdw_nm[k] = atom_params[k].first * 0.1;
    b.epsilon_kj[k] = atom_params[k].second * 4.184;
  }
  b.nbfix = !follows_combining_rule(t, n, type_params);
  b.pair_a = t.a, b.pair_b = t.b, b.pair_index = t.index, b.num_types = n;
  System& sys = b.system;
  if (!b.nbfix) {
    const double sigma_scale = std::pow(2.0, -1.0 / 6.0) * 2.0;
    for (std::size_t k = 0; k < natom; ++k) {
      sys.sigma_nm.push_back(b.rvdw_nm[k] * sigma_scale);
      sys.epsilon_kj_per_mol.push_back(b.epsilon_kj[k]);
    }
    return;
  }
  sys.sigma_nm.assign(natom, 1.0);
  sys.epsilon_kj_per_mol.assign(natom, 0.0);
  LjTypeTable table;
  table.num_types = static_cast<int>(n);
  table.particle_type = b.type;
  table.c12_kj_per_mol_nm12.assign(at(n * n), 0.0);
  table.c6_kj_per_mol_nm6.assign(at(n * n), 0.0);
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const long index = t.index[at(n * i + j)] - 1;
      if (index < 0) continue;
      table.c12_kj_per_mol_nm12[at(i * n + j)] = t.a[at(index)] * 4.184 * 1e-12;
      table.c6_kj_per_mol_nm6[at(i * n + j)] = t.b[at(index)] * 4.184 * 1e-6;
    }
  sys.lj_types = std::move(table);
  b.notes.push_back(fmt::format(
      "the Lennard-Jones A/B tables break the combining rule for some of the {} atom types: pair-specific LJ by type "
      "(as OpenMM's CustomNonbondedForce)",
      n));
}

std::pair<double, double> one_four_lj(const Build& b, int i, int l) {
  if (!b.nbfix) return {b.rvdw_nm[at(i)] + b.rvdw_nm[at(l)], std::sqrt(b.epsilon_kj[at(i)] * b.epsilon_kj[at(l)])};
  const long index = b.pair_index[at(b.num_types * b.type[at(i)] + b.type[at(l)])] - 1;
  if (index < 0) return {-1.0, 0.0};  // OpenMM adds no 1-4 exception for a 10-12 pair
  const double a = b.pair_a[at(index)], bb = b.pair_b[at(index)];
  if (a == 0.0 || bb == 0.0) return {1.0, 0.0};
  return {std::pow(2.0 * a / bb, 1.0 / 6.0) * 0.1, bb * bb / (4.0 * a) * 4.184};
}

void read_box(const PrmtopSections& p, const Pointers& ptr, const TopologyFileOptions& options, Build& b) {
  if (ptr.ifbox > 0) {
    const std::vector<double> dims = p.reals("BOX_DIMENSIONS", 4, "beta and the three box lengths");
    const double cell[6] = {dims[1], dims[2], dims[3], dims[0], dims[0], dims[0]};
    std::string problem;
    int field = 0;
    const std::optional<Boxd> box = reduced_box_from_cell(cell, problem, field);
    if (!box) p.fail(p.require("BOX_DIMENSIONS"), 0, fmt::format("the box {}", problem));
    b.system.box = box;
  } else {
    b.system.box = options.box;
  }
  b.system.nonbonded = options.nonbonded;
  if (is_periodic(options.nonbonded.method) && !b.system.box)
    p.fail(p.require("POINTERS"), 27,
           "IFBOX is 0 (the prmtop has no periodic box) and no box is given, but the nonbonded method is periodic "
           "(CutoffPeriodic or PME): use NoCutoff or CutoffNonPeriodic, or give coordinates with a box");
}

namespace {

// OpenMM 7.7's element of an atom name when the prmtop has no ATOMIC_NUMBER.
std::string element_from_name(const std::string& name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* two : {"CL", "NA", "MG", "ZN"})
    if (upper.rfind(two, 0) == 0) return normalise_element_symbol(two);
  if (name.empty()) return "";
  const Element* e = find_element(std::string(1, name[0]));
  return e != nullptr ? e->symbol : "";
}

}  // namespace

void read_topology(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  Topology& top = b.topology;
  top.source = p.source();
  const std::vector<std::string> names = p.strings("ATOM_NAME", ptr.natom, "NATOM of %FLAG POINTERS");
  const std::vector<std::string> labels = p.strings("RESIDUE_LABEL", ptr.nres, "NRES of %FLAG POINTERS");
  const std::vector<long> first = p.ints("RESIDUE_POINTER", ptr.nres, "NRES of %FLAG POINTERS");
  std::vector<long> atomic_number;
  if (p.find("ATOMIC_NUMBER") != nullptr)
    atomic_number = p.ints("ATOMIC_NUMBER", ptr.natom, "NATOM of %FLAG POINTERS");
  for (std::size_t r = 0; r < first.size(); ++r)
    if (first[r] < 1 || first[r] > ptr.natom || (r == 0 && first[r] != 1) || (r > 0 && first[r] <= first[r - 1]))
      p.fail(p.require("RESIDUE_POINTER"), static_cast<long>(r),
             fmt::format("residue {} starts at atom {}: expected increasing atom numbers from 1 to NATOM = {}", r + 1,
                         first[r], ptr.natom));
  top.chains.push_back({"A", {}});
  const Section& name_section = p.require("ATOM_NAME");
  for (std::size_t r = 0; r < first.size(); ++r) {
    TopologyResidue res;
    res.name = labels[r];
    res.chain = 0;
    res.number = static_cast<int>(r + 1);
    const long end = r + 1 < first.size() ? first[r + 1] - 1 : ptr.natom;
    for (long a = first[r] - 1; a < end; ++a) res.atoms.push_back(static_cast<int>(a));
    res.line = name_section.item_line[at(first[r] - 1)];
    top.chains[0].residues.push_back(static_cast<int>(r));
    top.residues.push_back(std::move(res));
  }
  top.atoms.resize(names.size());
  for (std::size_t r = 0; r < top.residues.size(); ++r)
    for (int a : top.residues[r].atoms) {
      TopologyAtom& atom = top.atoms[at(a)];
      atom.name = names[at(a)];
      atom.residue = static_cast<int>(r);
      atom.serial = a + 1;
      atom.line = name_section.item_line[at(a)];
      if (atomic_number.empty()) {
        atom.element = element_from_name(atom.name);
      } else {
        const Element* e = element_by_atomic_number(static_cast<int>(atomic_number[at(a)]));
        atom.element = e != nullptr ? e->symbol : "";
      }
    }
  top.box = b.system.box;
}

}  // namespace mdsim::amber

namespace mdsim {

TopologyFileModel read_amber_prmtop_text(const std::string& text, const std::string& source,
                                         const TopologyFileOptions& options) {
  using namespace amber;
  const PrmtopSections p(text, source);
  const Pointers ptr = read_pointers(p);
  check_supported(p, ptr);
  Build b;
  read_particles(p, ptr, b);
  read_box(p, ptr, options, b);
  read_topology(p, ptr, b);
  read_lennard_jones(p, ptr, b);
  read_bonded_terms(p, ptr, b);
  read_exceptions(p, ptr, b);
  read_cmap(p, ptr, b);
  read_extra_points(p, b);
  TopologyFileModel model;
  model.system = std::move(b.system);
  model.topology = std::move(b.topology);
  model.notes = std::move(b.notes);
  return model;
}

TopologyFileModel read_amber_prmtop(const std::string& path, const TopologyFileOptions& options) {
  return read_amber_prmtop_text(read_text_file(path, "AMBER prmtop file"), path, options);
}

}  // namespace mdsim
