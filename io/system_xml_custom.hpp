// The System XML reader's part for the forces beyond OpenMM's standard ones whose expressions mdsim knows (internal
// to io/system_xml.cpp): the tabulated Lennard-Jones CustomNonbondedForce of CHARMM's NBFIX, AMBER's and GROMACS's
// LJ tables and ForceField's LennardJonesForce (into System::lj_types), CHARMM's harmonic improper
// CustomTorsionForce (HarmonicImproperTerm), CMAPTorsionForce (CMAP terms and maps), and a second HarmonicBondForce
// made of 1-3 pairs of the first (CHARMM's Urey-Bradley terms), and the 1-4 Lennard-Jones CustomBondForce
// ForceField's LennardJonesForce writes beside its table (into the NonbondedForce's exceptions). Any other custom expression is refused by the caller.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "io/xml_stream.hpp"
#include "model/system.hpp"

namespace mdsim::system_xml {

class CustomForces {
 public:
  // At a <Force>: whether its type is one of those above with a known expression (an InputError for a known type
  // with another expression, naming the force and the expression).
  bool begin(const xml::Element& f, std::string_view type, int index, int line);
  // The force's sections (depth 3), entries (depth 4) and their contents (depth 5 and 6) while one is open.
  void section(const xml::Element& f);
  void entry(const xml::Element& f, std::string_view section, System& s);
  void nested(const xml::Element& f, std::string_view parent, System& s);
  void end_force();
  // A HarmonicBondForce begins; its bonds are appended to System::bonds from here on.
  void harmonic_bond_force(int index, std::size_t first_bond) { bond_forces_.push_back({index, first_bond}); }

  // After the whole file: checks the CustomNonbondedForce against the NonbondedForce (its index and line given)
  // and fills System::lj_types; moves Urey-Bradley terms from bonds to urey_bradleys; appends notes.
  void finish(System& s, const std::string& file, int nonbonded_index, int nonbonded_line,
              std::vector<std::string>& notes);

 private:
  enum class Kind { None, LjTable, Improper, Cmap, LjPairs };
  struct Table {  // a Discrete2DFunction
    std::string name;
    int xsize = 0, ysize = 0;
    std::vector<double> values;
  };
  struct LjForce {
    int index = -1, line = 0;
    bool sqrt_form = false;  // acoef = sqrt(c12) ((a/r6)^2 - b/r6), else acoef = c12
    int method = 0;
    double cutoff_nm = 0;
    double switch_nm = -1;  // -1: no switching function
    bool long_range_correction = false;
    std::vector<double> type;  // per particle
    std::vector<std::pair<int, int>> exclusions;
    std::vector<Table> tables;
    int parameters = 0;
  };
  struct BondForce {
    int index;
    std::size_t first_bond;
  };
  Kind kind_ = Kind::None;
  int index_ = -1;
  std::string section_;
  LjForce lj_;
  bool improper_wrapped_ = true;  // k min(dtheta, 2 pi - dtheta)^2; false: k (theta - theta0)^2
  int k_param_ = -1, theta0_param_ = -1, torsion_params_ = 0;
  std::vector<BondForce> bond_forces_;
  struct LjPair {  // a 1-4 pair of the LJ CustomBondForce
    int i, j;
    double sigma_nm, epsilon_kj_per_mol;
    int line;
  };
  std::vector<LjPair> lj_pairs_;
  int lj_pairs_index_ = -1, lj_pair_params_ = 0;

  void begin_lj(const xml::Element& f, const std::string& expression, int index, int line);
  void begin_improper(const xml::Element& f, const std::string& expression);
  void lj_entry(const xml::Element& f, std::string_view section);
  void improper_entry(const xml::Element& f, std::string_view section, System& s);
  void cmap_entry(const xml::Element& f, std::string_view section, System& s);
  void lj_pair_entry(const xml::Element& f, std::string_view section);
  void finish_lj_pairs(System& s, const std::string& file);
  void finish_lj(System& s, const std::string& file, int nonbonded_index, int nonbonded_line,
                 std::vector<std::string>& notes);
  void finish_urey_bradley(System& s, std::vector<std::string>& notes);
  LjTypeTable lj_table(const std::function<void(const std::string&)>& fail) const;
};

}  // namespace mdsim::system_xml
