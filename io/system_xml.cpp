// Serialized OpenMM Systems and States, read as a stream (io/xml_stream: a System XML of a million atoms is hundreds
// of MB, so no element tree is kept): each reader sees every element with its depth and parent and fills the model's
// types as it goes.
#include "io/system_xml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"
#include "io/file_names.hpp"
#include "io/system_xml_custom.hpp"
#include "io/xml_stream.hpp"
#include "model/system_analysis.hpp"

namespace mdsim {

using xml::Element;
using xml::XmlReader;

bool is_openmm_xml_path(const std::string& path) {
  return ends_with_ci(path, ".xml") || ends_with_ci(path, ".xml.gz");
}

// ---------------------------------------------------------------- State

namespace {

class StateReader : public XmlReader {
 public:
  using XmlReader::XmlReader;
  StateXml out;
  xml::BoxReader box;
  bool positions = false;

  void start(const Element& e, int depth, std::string_view parent) override {
    if (depth == 0) {
      if (e.tag != "State")
        e.fail(
            fmt::format("expected a serialized OpenMM State (root element <State>, from "
                        "XmlSerializer.serialize(state)), found <{}>{}",
                        e.tag, e.tag == "System" ? "; this is a serialized System: name it as system.topology" : ""));
      out.time_ps = e.number_or("time", 0.0);
    } else if (depth == 1 && e.tag == "PeriodicBoxVectors") {
      box.line = e.line;
    } else if (depth == 1 && e.tag == "Positions") {
      positions = true;
    } else if (depth == 2 && parent == "PeriodicBoxVectors") {
      box.vector(e);
    } else if (depth == 2 && parent == "Positions") {
      if (e.tag != "Position") e.fail(fmt::format("unexpected <{}> in <Positions>", e.tag));
      out.positions_nm.emplace_back(e.number("x"), e.number("y"), e.number("z"));
    } else if (depth == 2 && parent == "Velocities") {
      if (e.tag != "Velocity") e.fail(fmt::format("unexpected <{}> in <Velocities>", e.tag));
      out.velocities_nm_per_ps.emplace_back(e.number("x"), e.number("y"), e.number("z"));
    }
    // Anything else (energies, forces, parameters) is not needed.
  }

  void finish() {
    auto fail = [&](const std::string& m) { throw InputError(located(file(), root_line, 0, m)); };
    if (!positions || out.positions_nm.empty())
      fail("the State holds no positions: serialize a State taken with getState(getPositions=True)");
    if (!out.velocities_nm_per_ps.empty() && out.velocities_nm_per_ps.size() != out.positions_nm.size())
      fail(fmt::format("the State holds {} velocities for {} positions", out.velocities_nm_per_ps.size(),
                       out.positions_nm.size()));
    out.box = box.box(file());
  }
};

}  // namespace

StateXml read_state_xml(const std::string& path) {
  StateReader reader(path);
  reader.out.source = path;
  xml::parse_file(reader, path, "State XML file");
  reader.finish();
  return std::move(reader.out);
}

StateXml parse_state_xml(const std::string& text, const std::string& source) {
  StateReader reader(source);
  reader.out.source = source;
  xml::parse_text(reader, text);
  reader.finish();
  return std::move(reader.out);
}

// ---------------------------------------------------------------- System

namespace {

constexpr const char* kSupported =
    "mdsim reads HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, RBTorsionForce, NonbondedForce, "
    "CMMotionRemover and MonteCarloBarostat";

// RBTorsionForce's coefficient attributes, C0 .. C5 (kJ/mol).
constexpr const char* kRbCoefficients[6] = {"c0", "c1", "c2", "c3", "c4", "c5"};

// Why a force type is refused, beyond "not supported yet".
std::string unsupported_reason(std::string_view type, const Element& e) {
  if (type == "CMAPTorsionForce") return "CMAP torsion corrections (CHARMM36, ff19SB) are planned";
  if (type == "AndersenThermostat")
    return "the thermostat is the config's integrator (integrator.type langevin_middle); remove the "
           "AndersenThermostat from the System";
  if (type == "MonteCarloAnisotropicBarostat" || type == "MonteCarloMembraneBarostat" ||
      type == "MonteCarloFlexibleBarostat")
    return "mdsim's barostat is isotropic (MonteCarloBarostat)";
  if (type.rfind("Custom", 0) == 0) {
    const char* energy = e.optional("energy");
    return energy != nullptr ? fmt::format("mdsim does not evaluate custom expressions (energy \"{}\")", energy)
                             : std::string("mdsim does not evaluate custom expressions");
  }
  return "";
}

// What a NonbondedForce's settings map to, or why they are refused.
NonbondedSettings nonbonded_settings(const Element& e) {
  NonbondedSettings nb;
  const long long method = e.integer("method");
  switch (method) {
    case 0:
      nb.method = NonbondedMethod::NoCutoff;
      break;
    case 1:
      nb.method = NonbondedMethod::CutoffNonPeriodic;
      break;
    case 2:
      nb.method = NonbondedMethod::CutoffPeriodic;
      break;
    case 4:
      nb.method = NonbondedMethod::PME;
      break;
    case 3:
      e.fail(
          "Ewald summation (method 3) is not supported: create the System with nonbondedMethod=PME, the same "
          "physics within ewaldErrorTolerance");
    case 5:
      e.fail("LJPME (method 5: Lennard-Jones by particle-mesh Ewald) is not supported yet");
    default:
      e.fail(fmt::format("unknown nonbonded method {} (OpenMM's are 0 to 5)", method));
  }
  nb.cutoff_nm = e.number("cutoff");
  if (!(nb.cutoff_nm > 0.0)) e.fail(fmt::format("the cutoff {} nm must be positive", nb.cutoff_nm));
  nb.ewald_tolerance = e.number_or("ewaldTolerance", 5e-4);
  if (!(nb.ewald_tolerance > 0.0 && nb.ewald_tolerance < 0.5))
    e.fail(fmt::format("ewaldTolerance {} must lie in (0, 0.5)", nb.ewald_tolerance));
  nb.dispersion_correction = e.flag_or("dispersionCorrection", true);
  nb.reaction_field_dielectric = e.number_or("rfDielectric", 78.3);
  if (e.flag_or("useSwitchingFunction", false)) {
    const double s = e.number("switchingDistance");
    if (!(s >= 0.0 && s < nb.cutoff_nm))
      e.fail(fmt::format("the switching distance {} nm must lie in [0, cutoff {} nm)", s, nb.cutoff_nm));
    nb.switch_distance_nm = s;
  }
  const double alpha = e.number_or("alpha", 0.0);
  const long long nx = e.integer_or("nx", 0), ny = e.integer_or("ny", 0), nz = e.integer_or("nz", 0);
  if (nb.method == NonbondedMethod::PME && (alpha != 0.0 || nx != 0 || ny != 0 || nz != 0))
    e.fail(
        fmt::format("the PME parameters are set explicitly (alpha {} /nm, grid {} x {} x {}: "
                    "NonbondedForce.setPMEParameters), which mdsim does not support: it chooses them from the "
                    "cutoff and ewaldErrorTolerance as OpenMM does when they are 0; create the System without "
                    "setPMEParameters",
                    alpha, nx, ny, nz));
  if (e.flag_or("exceptionsUsePeriodic", false))
    e.fail(
        "exceptions with periodic boundary conditions (setExceptionsUsePeriodicBoundaryConditions) are not "
        "supported: mdsim evaluates exceptions without the minimum image, as OpenMM's default");
  if (!e.flag_or("includeDirectSpace", true))
    e.fail("a NonbondedForce without its direct-space part (includeDirectSpace=0) is not supported");
  return nb;
}

class SystemReader : public XmlReader {
 public:
  explicit SystemReader(const std::string& file) : XmlReader(file) { out.source = file; }
  SystemXml out;

  void start(const Element& e, int depth, std::string_view parent) override {
    if (depth == 0) return root(e);
    if (depth == 1) return section(e);
    if (depth == 2) return entry(e, parent);
    if (depth == 3 && parent == "Particle") return virtual_site(e);
    if (depth == 3 && parent == "Force" && custom_open_) return custom_.section(with_force(e));
    if (depth == 3 && parent == "Force") return force_section(with_force(e));
    if (depth == 4 && stack[2] == "Force" && custom_open_) return custom_.entry(with_force(e), parent, out.system);
    if (depth == 4 && stack[2] == "Force") return force_entry(with_force(e), parent);
    if (depth >= 5 && stack[2] == "Force" && custom_open_) return custom_.nested(with_force(e), parent, out.system);
    unexpected(e, parent);
  }

  void end(std::string_view tag, int depth) override {
    if (depth == 2 && tag == "Force") finish_force();
  }

  void finish();

 private:
  struct Force {
    int index = -1, line = 0;
    std::string type;
    std::string section;
  };
  Force force_;
  int forces_ = 0;
  bool particles_ = false;
  int nonbonded_particles_ = 0;
  int massless_ = 0;           // massless particles that are not virtual sites
  std::vector<int> site_lines_;  // the line of each virtual site's element
  bool force_groups_ = false;
  int cm_frequency_ = 1;
  xml::BoxReader box_;
  system_xml::CustomForces custom_;  // the custom forces of known form, CMAP, Urey-Bradley
  bool custom_open_ = false;         // the open force is custom_'s

  int n() const { return out.system.num_particles(); }

  [[noreturn]] static void unexpected(const Element& e, std::string_view parent) {
    e.fail(fmt::format("unexpected <{}> in <{}>{}", e.tag, parent,
                       parent == "System" ? " (a serialized OpenMM System has PeriodicBoxVectors, Particles, "
                                            "Constraints and Forces)"
                                          : ""));
  }

  Element with_force(const Element& e) const {
    Element f = e;
    f.what = fmt::format("force {} ({}): ", force_.index, force_.type);
    return f;
  }

  void root(const Element& e) {
    if (e.tag == "System") return;
    std::string hint;
    if (e.tag == "State") hint = "; this is a serialized State: name it as system.coordinates";
    if (e.tag == "ForceField")
      hint = "; this is a force field file: name it in system.forcefield, with system.structure";
    e.fail(
        fmt::format("expected a serialized OpenMM System (root element <System>, from "
                    "XmlSerializer.serialize(system)), found <{}>{}",
                    e.tag, hint));
  }

  void section(const Element& e) {
    if (e.tag == "PeriodicBoxVectors") {
      box_.line = e.line;
      return;
    }
    if (e.tag == "Particles") {
      particles_ = true;
      return;
    }
    if (e.tag != "Constraints" && e.tag != "Forces") unexpected(e, "System");
    if (!particles_) e.fail(fmt::format("<{}> comes before <Particles>: the particles must be listed first", e.tag));
  }

  void entry(const Element& e, std::string_view parent) {
    if (parent == "PeriodicBoxVectors") return box_.vector(e);
    if (parent == "Particles" && e.tag == "Particle") return particle(e);
    if (parent == "Constraints" && e.tag == "Constraint") return constraint(e);
    if (parent == "Forces" && e.tag == "Force") return begin_force(e);
    unexpected(e, parent);
  }

  void particle(const Element& e) {
    const double mass = e.number("mass");
    if (mass < 0.0) e.fail(fmt::format("particle {} has a negative mass ({} amu)", n(), mass));
    massless_ += mass == 0.0;
    out.system.mass_amu.push_back(mass);
  }

  // A <Particle>'s child: its virtual site, as OpenMM's SystemProxy writes it. Parents may come later in
  // <Particles>: their range is checked in finish().
  void virtual_site(const Element& e) {
    VirtualSite site;
    site.particle = n() - 1;
    const auto parent = [&](int k) {
      const long long p = e.integer(fmt::format("p{}", k + 1));
      if (p < 0) e.fail(fmt::format("virtual site {}: parent p{} is {}; indices start at 0", site.particle, k + 1, p));
      site.parents[static_cast<std::size_t>(k)] = static_cast<int>(p);
    };
    if (e.tag == "TwoParticleAverageSite" || e.tag == "ThreeParticleAverageSite") {
      site.type = e.tag == "TwoParticleAverageSite" ? VirtualSiteType::TwoParticleAverage
                                                     : VirtualSiteType::ThreeParticleAverage;
      site.num_parents = site.type == VirtualSiteType::TwoParticleAverage ? 2 : 3;
      for (int k = 0; k < site.num_parents; ++k) {
        parent(k);
        site.weights[static_cast<std::size_t>(k)] = e.number(fmt::format("w{}", k + 1));
      }
    } else if (e.tag == "OutOfPlaneSite") {
      site.type = VirtualSiteType::OutOfPlane;
      site.num_parents = 3;
      for (int k = 0; k < 3; ++k) parent(k);
      site.weights = {e.number("w12"), e.number("w13"), e.number("wc")};
    } else if (e.tag == "LocalCoordinatesSite") {
      local_coordinates_site(e, site, parent);
    } else {
      e.fail(fmt::format("particle {} is a virtual site of type {}, which mdsim does not support (it reads "
                         "TwoParticleAverageSite, ThreeParticleAverageSite, OutOfPlaneSite and LocalCoordinatesSite "
                         "with three parents)",
                         site.particle, e.tag));
    }
    if (out.system.mass_amu.back() != 0.0)
      e.fail(fmt::format("virtual site {} has mass {} amu; a virtual site must have mass 0", site.particle,
                         out.system.mass_amu.back()));
    --massless_;  // a site is no fixed particle
    out.system.virtual_sites.push_back(site);
    site_lines_.push_back(e.line);
  }

  template <typename Parent>
  static void local_coordinates_site(const Element& e, VirtualSite& site, const Parent& parent) {
    int count = 0;
    while (e.optional(fmt::format("p{}", count + 1)) != nullptr) ++count;
    if (count != 3)
      e.fail(fmt::format("virtual site {} (LocalCoordinatesSite) has {} parent particles; mdsim supports "
                         "LocalCoordinatesSite with exactly 3 (p1, p2, p3)",
                         site.particle, count));
    site.type = VirtualSiteType::LocalCoordinates;
    site.num_parents = 3;
    for (int k = 0; k < 3; ++k) {
      parent(k);
      const auto kk = static_cast<std::size_t>(k);
      site.origin_weights[kk] = e.number(fmt::format("wo{}", k + 1));
      site.x_weights[kk] = e.number(fmt::format("wx{}", k + 1));
      site.y_weights[kk] = e.number(fmt::format("wy{}", k + 1));
    }
    site.local_position_nm = Vec3d(e.number("pos1"), e.number("pos2"), e.number("pos3"));
  }

  // Every site's parents exist, are distinct and are no sites themselves.
  void check_virtual_site_parents() const {
    std::vector<char> is_site(static_cast<std::size_t>(n()), 0);
    for (const VirtualSite& s : out.system.virtual_sites) is_site[static_cast<std::size_t>(s.particle)] = 1;
    for (std::size_t v = 0; v < out.system.virtual_sites.size(); ++v) {
      const VirtualSite& s = out.system.virtual_sites[v];
      for (int k = 0; k < s.num_parents; ++k) {
        const int p = s.parents[static_cast<std::size_t>(k)];
        std::string why;
        if (p >= n()) why = fmt::format("is out of range (the System has {} particles)", n());
        else if (is_site[static_cast<std::size_t>(p)]) why = "is itself a virtual site; mdsim builds sites from atoms only";
        for (int l = 0; l < k && why.empty(); ++l)
          if (s.parents[static_cast<std::size_t>(l)] == p) why = "is given twice";
        if (!why.empty())
          throw InputError(located(file(), site_lines_[v], 0,
                                   fmt::format("virtual site {}: parent particle p{} = {} {}", s.particle, k + 1, p, why)));
      }
    }
  }

  void constraint(const Element& e) {
    const int i = e.particle("p1", n()), j = e.particle("p2", n());
    const double d = e.number("d");
    if (i == j) e.fail(fmt::format("constraint {} joins particle {} to itself", out.system.constraints.size(), i));
    if (!(d > 0.0))
      e.fail(fmt::format("constraint {} has distance {} nm; it must be positive", out.system.constraints.size(), d));
    out.system.constraints.push_back({i, j, d});
  }

  void begin_force(const Element& e) {
    force_ = Force{forces_++, e.line, e.required("type"), ""};
    const Element f = with_force(e);
    if (f.integer_or("forceGroup", 0) != 0) force_groups_ = true;
    const std::string& type = force_.type;
    if (type == "HarmonicBondForce") custom_.harmonic_bond_force(force_.index, out.system.bonds.size());
    if (type == "HarmonicBondForce" || type == "HarmonicAngleForce" || type == "PeriodicTorsionForce" ||
        type == "RBTorsionForce") {
      if (f.flag_or("usesPeriodic", false))
        f.fail(
            "periodic boundary conditions for bonded terms (setUsesPeriodicBoundaryConditions) are not "
            "supported: mdsim evaluates bonded terms without the minimum image");
    } else if (type == "NonbondedForce") {
      begin_nonbonded(f);
    } else if (type == "CMMotionRemover") {
      cm_frequency_ = static_cast<int>(f.integer_or("frequency", 1));
      if (cm_frequency_ > 0) {
        out.cm_motion_interval = out.cm_motion_remover ? std::min(out.cm_motion_interval, cm_frequency_) : cm_frequency_;
        out.cm_motion_remover = true;
      }
    } else if (type == "MonteCarloBarostat") {
      barostat(f);
    } else if (custom_.begin(f, type, force_.index, force_.line)) {
      custom_open_ = true;
    } else {
      const std::string reason = unsupported_reason(type, e);
      e.fail(fmt::format("force {} ({}) is not supported yet: {}{}", force_.index, type,
                         reason.empty() ? "" : reason + "; ", kSupported));
    }
  }

  void begin_nonbonded(const Element& f) {
    if (out.nonbonded_index >= 0)
      f.fail(fmt::format("a second NonbondedForce (the first is force {}, line {}) is not supported: mdsim has one",
                         out.nonbonded_index, out.nonbonded_line));
    out.system.nonbonded = nonbonded_settings(f);
    out.nonbonded_index = force_.index;
    out.nonbonded_line = force_.line;
    if (f.integer_or("recipForceGroup", -1) >= 0) force_groups_ = true;
    out.system.charge_e.assign(static_cast<std::size_t>(n()), 0.0);
    out.system.sigma_nm.assign(static_cast<std::size_t>(n()), 1.0);
    out.system.epsilon_kj_per_mol.assign(static_cast<std::size_t>(n()), 0.0);
  }

  void barostat(const Element& f) {
    if (out.barostat)
      f.fail(fmt::format("a second MonteCarloBarostat (the first is force {}) is not supported", out.barostat->index));
    SystemXmlBarostat b;
    b.pressure_bar = f.number("pressure");
    b.temperature_k = f.number("temperature");
    b.frequency = static_cast<int>(f.integer_or("frequency", 25));
    b.index = force_.index;
    b.line = force_.line;
    if (!(b.pressure_bar > 0.0)) f.fail(fmt::format("the pressure {} bar must be positive", b.pressure_bar));
    if (!(b.temperature_k > 0.0)) f.fail(fmt::format("the temperature {} K must be positive", b.temperature_k));
    if (b.frequency < 0) f.fail(fmt::format("the frequency {} must not be negative", b.frequency));
    if (b.frequency == 0) {
      out.notes.push_back(fmt::format("force {} (MonteCarloBarostat) has frequency 0: it is off", force_.index));
      return;
    }
    out.barostat = b;
  }

  void force_section(const Element& f) {
    static const std::vector<std::pair<std::string_view, std::string_view>> kSections = {
        {"HarmonicBondForce", "Bonds"},        {"HarmonicAngleForce", "Angles"},
        {"PeriodicTorsionForce", "Torsions"},  {"RBTorsionForce", "Torsions"},
        {"NonbondedForce", "Particles"},
        {"NonbondedForce", "Exceptions"},      {"NonbondedForce", "GlobalParameters"},
        {"NonbondedForce", "ParticleOffsets"}, {"NonbondedForce", "ExceptionOffsets"}};
    for (const auto& [type, section] : kSections)
      if (type == force_.type && section == f.tag) {
        force_.section = f.tag;
        return;
      }
    f.fail(fmt::format("unexpected <{}> (written by another version of OpenMM?)", f.tag));
  }

  void force_entry(const Element& f, std::string_view section) {
    const std::string& type = force_.type;
    if (type == "HarmonicBondForce" && f.tag == "Bond") {
      out.system.bonds.push_back({f.particle("p1", n()), f.particle("p2", n()), f.number("d"), f.number("k")});
    } else if (type == "HarmonicAngleForce" && f.tag == "Angle") {
      out.system.angles.push_back(
          {f.particle("p1", n()), f.particle("p2", n()), f.particle("p3", n()), f.number("a"), f.number("k")});
    } else if (type == "PeriodicTorsionForce" && f.tag == "Torsion") {
      const long long periodicity = f.integer("periodicity");
      if (periodicity < 0) f.fail(fmt::format("torsion periodicity {} must not be negative", periodicity));
      out.system.torsions.push_back({f.particle("p1", n()), f.particle("p2", n()), f.particle("p3", n()),
                                     f.particle("p4", n()), static_cast<int>(periodicity), f.number("phase"),
                                     f.number("k")});
    } else if (type == "RBTorsionForce" && f.tag == "Torsion") {
      RbTorsionTerm t{f.particle("p1", n()), f.particle("p2", n()), f.particle("p3", n()), f.particle("p4", n()), {}};
      for (int c = 0; c < 6; ++c) t.c_kj_per_mol[static_cast<std::size_t>(c)] = f.number(kRbCoefficients[c]);
      out.system.rb_torsions.push_back(t);
    } else if (type == "NonbondedForce") {
      nonbonded_entry(f, section);
    } else {
      f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
    }
  }

  void nonbonded_entry(const Element& f, std::string_view section) {
    if (section == "Particles" && f.tag == "Particle") {
      const int i = nonbonded_particles_++;
      if (i >= n()) f.fail(fmt::format("more nonbonded particles than the System's {}", n()));
      const double sigma = f.number("sig"), epsilon = f.number("eps");
      if (sigma < 0.0 || epsilon < 0.0)
        f.fail(fmt::format("particle {} has sigma {} nm and epsilon {} kJ/mol; neither may be negative", i, sigma,
                           epsilon));
      out.system.charge_e[static_cast<std::size_t>(i)] = f.number("q");
      out.system.sigma_nm[static_cast<std::size_t>(i)] = sigma;
      out.system.epsilon_kj_per_mol[static_cast<std::size_t>(i)] = epsilon;
    } else if (section == "Exceptions" && f.tag == "Exception") {
      const int i = f.particle("p1", n()), j = f.particle("p2", n());
      const double sigma = f.number("sig"), epsilon = f.number("eps");
      if (i == j) f.fail(fmt::format("an exception joins particle {} to itself", i));
      if (sigma < 0.0 || epsilon < 0.0)
        f.fail(
            fmt::format("the exception of particles {} and {} has sigma {} nm and epsilon {} kJ/mol; neither may "
                        "be negative",
                        i, j, sigma, epsilon));
      out.system.exceptions.push_back({i, j, f.number("q"), sigma, epsilon});
    } else if (section == "GlobalParameters") {
      f.fail(
          fmt::format("global parameter '{}' is not supported: parameter offsets (alchemical changes) are not "
                      "supported yet",
                      f.optional("name") != nullptr ? f.optional("name") : ""));
    } else if (section == "ParticleOffsets" || section == "ExceptionOffsets") {
      f.fail(fmt::format("parameter offsets (<{}>, for alchemical changes) are not supported yet", section));
    } else {
      f.fail(fmt::format("unexpected <{}> in <{}>", f.tag, section));
    }
  }

  void finish_force() {
    if (force_.type == "NonbondedForce" && nonbonded_particles_ != n())
      throw InputError(located(file(), force_.line, 0,
                               fmt::format("force {} (NonbondedForce) lists {} particles, the System {}", force_.index,
                                           nonbonded_particles_, n())));
    custom_.end_force();
    custom_open_ = false;
    force_ = Force{};
  }
};

void SystemReader::finish() {
  System& s = out.system;
  if (s.num_particles() == 0)
    throw InputError(located(file(), root_line, 0, "the System has no particles (no <Particle> in <Particles>)"));
  if (out.nonbonded_index < 0) {
    s.nonbonded.method = NonbondedMethod::NoCutoff;
    s.charge_e.assign(static_cast<std::size_t>(n()), 0.0);
    s.sigma_nm.assign(static_cast<std::size_t>(n()), 1.0);
    s.epsilon_kj_per_mol.assign(static_cast<std::size_t>(n()), 0.0);
    out.notes.push_back("the System has no NonbondedForce: no nonbonded interactions");
  }
  const std::optional<Boxd> box = box_.box(file());
  if (is_periodic(s.nonbonded.method)) {
    if (!box)
      throw InputError(located(file(), out.nonbonded_line, 0,
                               "a periodic NonbondedForce needs the System's <PeriodicBoxVectors>, which are missing"));
    s.box = box;
  }
  check_virtual_site_parents();
  custom_.finish(s, file(), out.nonbonded_index, out.nonbonded_line, out.notes);
  s.rigid_waters = find_rigid_waters(s);
  if (force_groups_)
    out.notes.push_back(
        "force groups are ignored: mdsim reports the energy by term (bond, angle, torsion, "
        "nonbonded)");
  if (massless_ > 0)
    out.notes.push_back(fmt::format("{} particle{} of mass 0 stay{} fixed, as in OpenMM", massless_,
                                    massless_ == 1 ? "" : "s", massless_ == 1 ? "s" : ""));
}

}  // namespace

SystemXml read_system_xml(const std::string& path) {
  SystemReader reader(path);
  xml::parse_file(reader, path, "System XML file");
  reader.finish();
  return std::move(reader.out);
}

SystemXml parse_system_xml(const std::string& text, const std::string& source) {
  SystemReader reader(source);
  xml::parse_text(reader, text);
  reader.finish();
  return std::move(reader.out);
}

}  // namespace mdsim
