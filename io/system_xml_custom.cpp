#include "io/system_xml_custom.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "common/errors.hpp"

namespace mdsim::system_xml {

namespace {

constexpr double kPi = 3.14159265358979323846;

// An expression without blanks and without trailing semicolons, for comparison with the known forms.
std::string normalized(std::string_view e) {
  std::string out;
  for (const char c : e)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
  while (!out.empty() && out.back() == ';') out.pop_back();
  return out;
}

// The tabulated LJ as CharmmPsfFile, AmberPrmtopFile and GromacsTopFile write it (acoef = sqrt(c12)) and as
// ForceField's LennardJonesForce writes it (acoef = c12); bcoef = c6 in both.
constexpr const char* kLjSqrtForm = "(a/r6)^2-b/r6;r6=r^6;a=acoef(type1,type2);b=bcoef(type1,type2)";
constexpr const char* kLjPlainForm = "acoef(type1,type2)/r^12-bcoef(type1,type2)/r^6";
// CHARMM's harmonic improper as CharmmPsfFile writes it (pi given to 6 decimals), and as charmm36.xml writes it.
constexpr const char* kImproperWrappedPrefix = "k*min(dtheta,2*pi-dtheta)^2;dtheta=abs(theta-theta0);pi=";
constexpr const char* kImproperPlainForm = "k*(theta-theta0)^2";
// The 1-4 LJ pairs ForceField's LennardJonesForce writes as a CustomBondForce (their NonbondedForce exceptions
// then carry epsilon 0).
constexpr const char* kLjPairForm = "4*epsilon*((sigma/r)^12-(sigma/r)^6)";

std::pair<int, int> ordered(int a, int b) { return {std::min(a, b), std::max(a, b)}; }

}  // namespace

bool CustomForces::begin(const xml::Element& f, std::string_view type, int index, int line) {
  kind_ = Kind::None;
  index_ = index;
  section_.clear();
  if (type == "CMAPTorsionForce") {
    if (f.flag_or("usesPeriodic", false))
      f.fail("periodic boundary conditions for CMAP torsions are not supported: mdsim evaluates bonded terms "
             "without the minimum image");
    kind_ = Kind::Cmap;
    return true;
  }
  if (type != "CustomNonbondedForce" && type != "CustomTorsionForce" && type != "CustomBondForce") return false;
  const std::string expression = normalized(f.required("energy"));
  if (type == "CustomBondForce" && expression == kLjPairForm) {
    if (f.flag_or("usesPeriodic", false))
      f.fail("periodic boundary conditions for bonded terms (setUsesPeriodicBoundaryConditions) are not supported: "
             "mdsim evaluates exceptions without the minimum image");
    if (lj_pairs_index_ >= 0)
      f.fail(fmt::format("a second 1-4 Lennard-Jones CustomBondForce (the first is force {}) is not supported",
                         lj_pairs_index_));
    kind_ = Kind::LjPairs;
    lj_pairs_index_ = index;
    return true;
  }
  if (type == "CustomNonbondedForce" && (expression == kLjSqrtForm || expression == kLjPlainForm)) {
    begin_lj(f, expression, index, line);
    return true;
  }
  if (type == "CustomTorsionForce" &&
      (expression.rfind(kImproperWrappedPrefix, 0) == 0 || expression == kImproperPlainForm)) {
    begin_improper(f, expression);
    return true;
  }
  return false;
}

void CustomForces::begin_lj(const xml::Element& f, const std::string& expression, int index, int line) {
  if (lj_.index >= 0)
    f.fail(fmt::format("a second tabulated Lennard-Jones CustomNonbondedForce (the first is force {}) is not "
                       "supported: mdsim has one LJ type table",
                       lj_.index));
  kind_ = Kind::LjTable;
  lj_.index = index;
  lj_.line = line;
  lj_.sqrt_form = expression == kLjSqrtForm;
  lj_.method = static_cast<int>(f.integer("method"));
  if (lj_.method < 0 || lj_.method > 2)
    f.fail(fmt::format("unknown CustomNonbondedForce method {} (OpenMM's are 0, 1, 2)", lj_.method));
  lj_.cutoff_nm = f.number("cutoff");
  if (f.flag_or("useSwitchingFunction", false)) lj_.switch_nm = f.number("switchingDistance");
  lj_.long_range_correction = f.flag_or("useLongRangeCorrection", false);
}

void CustomForces::begin_improper(const xml::Element& f, const std::string& expression) {
  if (f.flag_or("usesPeriodic", false))
    f.fail("periodic boundary conditions for bonded terms (setUsesPeriodicBoundaryConditions) are not supported: "
           "mdsim evaluates bonded terms without the minimum image");
  kind_ = Kind::Improper;
  improper_wrapped_ = expression != kImproperPlainForm;
  k_param_ = theta0_param_ = -1;
  torsion_params_ = 0;
  if (improper_wrapped_) {
    // pi = <number>: CharmmPsfFile writes '%f', 3.141593; the wrap at 3.141593 instead of pi moves no energy by
    // more than k (7e-7 rad)^2.
    const std::string pi_text = expression.substr(std::string(kImproperWrappedPrefix).size());
    char* end = nullptr;
    const double pi = std::strtod(pi_text.c_str(), &end);
    if (end == pi_text.c_str() || *end != '\0' || std::fabs(pi - kPi) > 1e-5)
      f.fail(fmt::format("the harmonic improper's expression sets pi = {}; mdsim's improper wraps at pi "
                         "(3.14159...): write pi to at least 5 decimals",
                         pi_text));
  }
}

void CustomForces::section(const xml::Element& f) {
  static const std::vector<std::pair<Kind, std::string_view>> kSections = {
      {Kind::LjTable, "PerParticleParameters"}, {Kind::LjTable, "GlobalParameters"},
      {Kind::LjTable, "EnergyParameterDerivatives"}, {Kind::LjTable, "Particles"},
      {Kind::LjTable, "Exclusions"},            {Kind::LjTable, "Functions"},
      {Kind::LjTable, "InteractionGroups"},     {Kind::LjTable, "ComputedValues"},
      {Kind::Improper, "PerTorsionParameters"}, {Kind::Improper, "GlobalParameters"},
      {Kind::Improper, "EnergyParameterDerivatives"}, {Kind::Improper, "Torsions"},
      {Kind::Cmap, "Maps"},                     {Kind::Cmap, "Torsions"},
      {Kind::LjPairs, "PerBondParameters"},     {Kind::LjPairs, "GlobalParameters"},
      {Kind::LjPairs, "EnergyParameterDerivatives"}, {Kind::LjPairs, "Bonds"}};
  for (const auto& [kind, name] : kSections)
    if (kind == kind_ && name == f.tag) {
      section_ = f.tag;
      return;
    }
  f.fail(fmt::format("unexpected <{}> (written by another version of OpenMM?)", f.tag));
}

void CustomForces::entry(const xml::Element& f, std::string_view section, System& s) {
  if (section == "GlobalParameters" || section == "EnergyParameterDerivatives" || section == "InteractionGroups" ||
      section == "ComputedValues")
    f.fail(fmt::format("<{}> in <{}> is not supported: mdsim maps this force only without global parameters, "
                       "parameter derivatives, interaction groups or computed values",
                       f.tag, section));
  if (kind_ == Kind::LjTable) return lj_entry(f, section);
  if (kind_ == Kind::Improper) return improper_entry(f, section, s);
  if (kind_ == Kind::LjPairs) return lj_pair_entry(f, section);
  cmap_entry(f, section, s);
}

void CustomForces::lj_pair_entry(const xml::Element& f, std::string_view section) {
  if (section == "PerBondParameters" && f.tag == "Parameter") {
    const std::string name = f.required("name");
    if (name != (lj_pair_params_ == 0 ? "sigma" : "epsilon") || lj_pair_params_ > 1)
      f.fail(fmt::format("per-bond parameter '{}': the 1-4 LJ force must have 'sigma' then 'epsilon'", name));
    ++lj_pair_params_;
  } else if (section == "Bonds" && f.tag == "Bond") {
    if (lj_pair_params_ != 2) f.fail("a <Bond> before the per-bond parameters sigma and epsilon");
    lj_pairs_.push_back({static_cast<int>(f.integer("p1")), static_cast<int>(f.integer("p2")), f.number("param1"),
                         f.number("param2"), f.line});
  } else {
    f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
  }
}

void CustomForces::lj_entry(const xml::Element& f, std::string_view section) {
  if (section == "PerParticleParameters" && f.tag == "Parameter") {
    const std::string name = f.required("name");
    if (name != "type" || lj_.parameters++ > 0)
      f.fail(fmt::format("per-particle parameter '{}': the tabulated LJ force must have exactly one, 'type'", name));
  } else if (section == "Particles" && f.tag == "Particle") {
    lj_.type.push_back(f.number("param1"));
  } else if (section == "Exclusions" && f.tag == "Exclusion") {
    lj_.exclusions.push_back(ordered(static_cast<int>(f.integer("p1")), static_cast<int>(f.integer("p2"))));
  } else if (section == "Functions" && f.tag == "Function") {
    const std::string name = f.required("name"), type = f.required("type");
    if ((name != "acoef" && name != "bcoef") || type != "Discrete2DFunction")
      f.fail(fmt::format("tabulated function '{}' of type {}: the LJ table needs acoef and bcoef, each a "
                         "Discrete2DFunction",
                         name, type));
    for (const Table& t : lj_.tables)
      if (t.name == name) f.fail(fmt::format("tabulated function '{}' is given twice", name));
    lj_.tables.push_back({name, static_cast<int>(f.integer("xsize")), static_cast<int>(f.integer("ysize")), {}});
  } else {
    f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
  }
}

void CustomForces::improper_entry(const xml::Element& f, std::string_view section, System& s) {
  const int n = s.num_particles();
  if (section == "PerTorsionParameters" && f.tag == "Parameter") {
    const std::string name = f.required("name");
    if (name == "k" && k_param_ < 0) k_param_ = torsion_params_;
    else if (name == "theta0" && theta0_param_ < 0) theta0_param_ = torsion_params_;
    else f.fail(fmt::format("per-torsion parameter '{}': the harmonic improper has k and theta0", name));
    ++torsion_params_;
  } else if (section == "Torsions" && f.tag == "Torsion") {
    if (k_param_ < 0 || theta0_param_ < 0)
      f.fail("the harmonic improper's per-torsion parameters k and theta0 are not both declared");
    const double k = f.number(fmt::format("param{}", k_param_ + 1));
    const double theta0 = f.number(fmt::format("param{}", theta0_param_ + 1));
    // Without the wrap the two forms agree only while |theta - theta0| <= pi, that is for theta0 = 0.
    if (!improper_wrapped_ && theta0 != 0.0)
      f.fail(fmt::format("an improper with theta0 = {} rad in k*(theta-theta0)^2 (no wrap): mdsim's harmonic "
                         "improper takes the difference the short way round, which equals it only for theta0 = 0",
                         theta0));
    s.impropers.push_back({f.particle("p1", n), f.particle("p2", n), f.particle("p3", n), f.particle("p4", n),
                           theta0, k});
  } else {
    f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
  }
}

void CustomForces::cmap_entry(const xml::Element& f, std::string_view section, System& s) {
  const int n = s.num_particles();
  if (section == "Maps" && f.tag == "Map") {
    const long long size = f.integer("size");
    if (size < 2) f.fail(fmt::format("CMAP map {} has size {}; at least 2 is needed", s.cmap_maps.size(), size));
    CmapMap map;
    map.size = static_cast<int>(size);
    s.cmap_maps.push_back(std::move(map));
  } else if (section == "Torsions" && f.tag == "Torsion") {
    CmapTorsionTerm t{};
    static const char* kKeys[8] = {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"};
    for (int k = 0; k < 8; ++k) t.atom[static_cast<std::size_t>(k)] = f.particle(kKeys[k], n);
    t.map = static_cast<int>(f.integer("map"));
    if (t.map < 0 || static_cast<std::size_t>(t.map) >= s.cmap_maps.size())
      f.fail(fmt::format("CMAP torsion {} refers to map {}, but {} maps are listed", s.cmap_torsions.size(), t.map,
                         s.cmap_maps.size()));
    s.cmap_torsions.push_back(t);
  } else {
    f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
  }
}

void CustomForces::nested(const xml::Element& f, std::string_view parent, System& s) {
  if (kind_ == Kind::Cmap && parent == "Map" && f.tag == "Energy")
    return s.cmap_maps.back().energy_kj_per_mol.push_back(f.number("e"));
  if (kind_ == Kind::LjTable && parent == "Function" && f.tag == "Values") return;
  if (kind_ == Kind::LjTable && parent == "Values" && f.tag == "Value")
    return lj_.tables.back().values.push_back(f.number("v"));
  f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, parent));
}

void CustomForces::end_force() { kind_ = Kind::None; }

// acoef/bcoef as c12/c6 per type pair, the particles' types checked (whole numbers within the tables).
LjTypeTable CustomForces::lj_table(const std::function<void(const std::string&)>& fail) const {
  const Table* a = nullptr;
  const Table* b = nullptr;
  for (const Table& t : lj_.tables) (t.name == "acoef" ? a : b) = &t;
  if (a == nullptr || b == nullptr) fail("it needs both tabulated functions acoef and bcoef");
  const int nt = a->xsize;
  if (nt <= 0 || a->ysize != nt || b->xsize != nt || b->ysize != nt)
    fail(fmt::format("acoef is {} x {} and bcoef {} x {}; both must be the same square table (types x types)",
                     a->xsize, a->ysize, b->xsize, b->ysize));
  const std::size_t size = static_cast<std::size_t>(nt) * static_cast<std::size_t>(nt);
  if (a->values.size() != size || b->values.size() != size)
    fail(fmt::format("acoef lists {} values and bcoef {}; {} x {} = {} expected", a->values.size(), b->values.size(),
                     nt, nt, size));
  LjTypeTable t;
  t.num_types = nt;
  t.c12_kj_per_mol_nm12.resize(size);
  t.c6_kj_per_mol_nm6.resize(size);
  for (std::size_t k = 0; k < size; ++k) {
    t.c12_kj_per_mol_nm12[k] = lj_.sqrt_form ? a->values[k] * a->values[k] : a->values[k];
    t.c6_kj_per_mol_nm6[k] = b->values[k];
  }
  const std::size_t n = static_cast<std::size_t>(nt);
  for (std::size_t x = 0; x < n; ++x)
    for (std::size_t y = 0; y < x; ++y)
      if (t.c12_kj_per_mol_nm12[x + n * y] != t.c12_kj_per_mol_nm12[y + n * x] ||
          t.c6_kj_per_mol_nm6[x + n * y] != t.c6_kj_per_mol_nm6[y + n * x])
        fail(fmt::format("acoef/bcoef differ for types ({}, {}) and ({}, {}); a pair's LJ must not depend on the "
                         "order of its particles",
                         x, y, y, x));
  for (std::size_t i = 0; i < lj_.type.size(); ++i) {
    const double v = lj_.type[i];
    if (!(v >= 0.0 && v < nt && v == std::floor(v)))
      fail(fmt::format("particle {} has type {}; types are whole numbers 0 .. {}", i, v, nt - 1));
    t.particle_type.push_back(static_cast<int>(v));
  }
  return t;
}

// A second HarmonicBondForce whose every pair is a 1-3 pair (two bonds apart) of the first's bonds is CHARMM's
// Urey-Bradley force (CharmmPsfFile puts it there, in its own force group): its terms move from System::bonds to
// System::urey_bradleys (their own energy term, as OpenMM's force group; not chemical bonds), said in a note.
void CustomForces::finish_urey_bradley(System& s, std::vector<std::string>& notes) {
  if (bond_forces_.size() != 2) return;
  const std::size_t first_end = bond_forces_[1].first_bond;
  std::vector<std::vector<int>> partners(static_cast<std::size_t>(s.num_particles()));
  std::set<std::pair<int, int>> bonded;
  for (std::size_t k = 0; k < first_end; ++k) {
    const HarmonicBondTerm& b = s.bonds[k];
    partners[static_cast<std::size_t>(b.i)].push_back(b.j);
    partners[static_cast<std::size_t>(b.j)].push_back(b.i);
    bonded.insert(ordered(b.i, b.j));
  }
  const auto one_three = [&](int i, int j) {
    if (bonded.count(ordered(i, j)) != 0) return false;
    for (const int m : partners[static_cast<std::size_t>(i)])
      for (const int o : partners[static_cast<std::size_t>(m)])
        if (o == j) return true;
    return false;
  };
  if (first_end == s.bonds.size()) return;
  for (std::size_t k = first_end; k < s.bonds.size(); ++k)
    if (!one_three(s.bonds[k].i, s.bonds[k].j)) return;
  for (std::size_t k = first_end; k < s.bonds.size(); ++k)
    s.urey_bradleys.push_back({s.bonds[k].i, s.bonds[k].j, s.bonds[k].length_nm, s.bonds[k].k_kj_per_mol_nm2});
  s.bonds.resize(first_end);
  notes.push_back(fmt::format("force {} (HarmonicBondForce): its {} terms are 1-3 pairs of force {}'s bonds (CHARMM's "
                              "Urey-Bradley terms); their energy is reported in the urey_bradley term",
                              bond_forces_[1].index, s.urey_bradleys.size(), bond_forces_[0].index));
}

void CustomForces::finish(System& s, const std::string& file, int nonbonded_index, int nonbonded_line,
                          std::vector<std::string>& notes) {
  for (std::size_t m = 0; m < s.cmap_maps.size(); ++m) {
    const CmapMap& map = s.cmap_maps[m];
    if (map.energy_kj_per_mol.size() != static_cast<std::size_t>(map.size) * static_cast<std::size_t>(map.size))
      throw InputError(located(file, 0, 0,
                               fmt::format("CMAP map {} of size {} lists {} energies, not {}", m, map.size,
                                           map.energy_kj_per_mol.size(), map.size * map.size)));
  }
  if (lj_.index >= 0) finish_lj(s, file, nonbonded_index, nonbonded_line, notes);
  if (lj_pairs_index_ >= 0) {
    finish_lj_pairs(s, file);
    notes.push_back(fmt::format("force {} (CustomBondForce, 1-4 Lennard-Jones): {} pairs into the exceptions",
                                lj_pairs_index_, lj_pairs_.size()));
  }
  finish_urey_bradley(s, notes);
}

// The 1-4 LJ pairs into the NonbondedForce's exceptions of the same pairs, whose own LJ must be off (epsilon 0).
void CustomForces::finish_lj_pairs(System& s, const std::string& file) {
  std::map<std::pair<int, int>, std::size_t> exception_of;
  for (std::size_t e = 0; e < s.exceptions.size(); ++e) exception_of[ordered(s.exceptions[e].i, s.exceptions[e].j)] = e;
  for (const LjPair& p : lj_pairs_) {
    const auto fail = [&](const std::string& m) {
      throw InputError(located(file, p.line, 0,
                               fmt::format("force {} (CustomBondForce, 1-4 LJ), pair {}-{}: {}", lj_pairs_index_, p.i,
                                           p.j, m)));
    };
    const auto it = exception_of.find(ordered(p.i, p.j));
    if (it == exception_of.end())
      fail("the NonbondedForce has no exception for this pair; mdsim adds 1-4 LJ pairs to the exceptions, as "
           "ForceField's LennardJonesForce pairs them");
    NonbondedException& e = s.exceptions[it->second];
    if (e.epsilon_kj_per_mol != 0.0)
      fail(fmt::format("the NonbondedForce's exception has its own LJ (epsilon {} kJ/mol): the pair's LJ would count "
                       "twice",
                       e.epsilon_kj_per_mol));
    if (!(p.sigma_nm >= 0.0) || !(p.epsilon_kj_per_mol >= 0.0))
      fail(fmt::format("sigma {} nm and epsilon {} kJ/mol must not be negative", p.sigma_nm, p.epsilon_kj_per_mol));
    e.sigma_nm = p.sigma_nm;
    e.epsilon_kj_per_mol = p.epsilon_kj_per_mol;
  }
}

// The type table from acoef/bcoef, after the checks that the CustomNonbondedForce is the NonbondedForce's LJ part.
void CustomForces::finish_lj(System& s, const std::string& file, int nonbonded_index, int nonbonded_line,
                             std::vector<std::string>& notes) {
  const std::string force = fmt::format("force {} (CustomNonbondedForce, tabulated LJ)", lj_.index);
  const auto fail = [&](const std::string& m) { throw InputError(located(file, lj_.line, 0, force + ": " + m)); };
  if (nonbonded_index < 0) fail("it needs a NonbondedForce beside it (for charges and exceptions); there is none");
  const std::string nb = fmt::format("the NonbondedForce (force {}, line {})", nonbonded_index, nonbonded_line);
  const NonbondedSettings& set = s.nonbonded;
  const int n = s.num_particles();
  if (static_cast<int>(lj_.type.size()) != n)
    fail(fmt::format("it lists {} particles, the System {}", lj_.type.size(), n));
  const int method = set.method == NonbondedMethod::NoCutoff ? 0 : set.method == NonbondedMethod::CutoffNonPeriodic ? 1 : 2;
  if (lj_.method != method)
    fail(fmt::format("its method {} does not match {}'s (CustomNonbondedForce method {} expected)", lj_.method, nb,
                     method));
  if (method != 0 && lj_.cutoff_nm != set.cutoff_nm)
    fail(fmt::format("its cutoff {} nm differs from {}'s {} nm", lj_.cutoff_nm, nb, set.cutoff_nm));
  if (method != 0 && (lj_.switch_nm >= 0.0) != set.switch_distance_nm.has_value())
    fail(fmt::format("it {} a switching function and {} {}", lj_.switch_nm >= 0.0 ? "uses" : "does not use", nb,
                     set.switch_distance_nm ? "does" : "does not"));
  if (method != 0 && set.switch_distance_nm && lj_.switch_nm != *set.switch_distance_nm)
    fail(fmt::format("its switching distance {} nm differs from {}'s {} nm", lj_.switch_nm, nb,
                     *set.switch_distance_nm));
  if (method == 2 && lj_.long_range_correction != set.dispersion_correction)
    fail(fmt::format("its useLongRangeCorrection ({}) differs from the dispersionCorrection ({}) of {}; mdsim has "
                     "one dispersion correction: set both alike",
                     int(lj_.long_range_correction), int(set.dispersion_correction), nb));
  for (int i = 0; i < n; ++i)
    if (s.epsilon_kj_per_mol[static_cast<std::size_t>(i)] != 0.0)
      fail(fmt::format("particle {} has epsilon {} kJ/mol in {}; with a tabulated LJ force every particle's own LJ "
                       "must be off (epsilon 0), as the writers of this form set it",
                       i, s.epsilon_kj_per_mol[static_cast<std::size_t>(i)], nb));
  std::set<std::pair<int, int>> exceptions, exclusions(lj_.exclusions.begin(), lj_.exclusions.end());
  for (const NonbondedException& e : s.exceptions) exceptions.insert(ordered(e.i, e.j));
  if (exclusions != exceptions || exclusions.size() != lj_.exclusions.size())
    fail(fmt::format("its {} exclusions are not the {} exception pairs of {}; mdsim excludes exactly the exception "
                     "pairs from the LJ table",
                     lj_.exclusions.size(), s.exceptions.size(), nb));
  s.lj_types = lj_table(fail);
  notes.push_back(fmt::format("{}: pair-specific LJ from a table of {} types", force, s.lj_types->num_types));
}

}  // namespace mdsim::system_xml
