#include "io/config_system.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/errors.hpp"
#include "model/system_analysis.hpp"

namespace fs = std::filesystem;

namespace mdsim {
namespace {

// An input file named at `key`: a regular file, else an error at its place in the config.
void check_input_file(const ConfigReader& r, const YAML::Node& at, const std::string& key, const std::string& file,
                      const char* what) {
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (fs::is_directory(st)) r.fail(at, fmt::format("'{}': {} is a directory; name {} in it", key, file, what));
  if (!fs::exists(st)) {
    const bool unusable = ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory;
    r.fail(at, fmt::format("'{}': file not found: {}{}", key, file, unusable ? " (" + ec.message() + ")" : ""));
  }
  if (!fs::is_regular_file(st))
    r.fail(at, fmt::format("'{}': {} is {}, not a regular file; name {}", key, file, file_kind(st), what));
}

bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

std::string nm(double v) { return quoted_number(v) + " nm"; }

// The refusal of a written key that contradicts the System.
[[noreturn]] void contradiction(const ConfigReader& r, const YAML::Node& at, const std::string& key,
                                const std::string& config_value, const std::string& system_value,
                                const std::string& file, const std::string& where) {
  r.fail(at, fmt::format("'{}' is {}, but the System in {} has {}{}: a serialized System's own settings hold; remove "
                         "'{}' or make it agree",
                         key, config_value, file, system_value, where.empty() ? "" : " (" + where + ")", key));
}

// The nonbonded keys the config writes against the System's NonbondedForce.
void check_nonbonded(const ConfigReader& r, const YAML::Node& n, const NonbondedSettings& config, const SystemXml& sx) {
  const NonbondedSettings& nb = sx.system.nonbonded;
  const std::string where =
      sx.nonbonded_index >= 0 ? fmt::format("force {}, NonbondedForce, line {}", sx.nonbonded_index, sx.nonbonded_line)
                              : "no NonbondedForce";
  auto fail = [&](const char* key, const std::string& a, const std::string& b) {
    contradiction(r, n[key], key, a, b, sx.source, where);
  };
  if (n["nonbonded_method"] && config.method != nb.method)
    fail("nonbonded_method", to_string(config.method), to_string(nb.method));
  if (n["cutoff"] && !same(config.cutoff_nm, nb.cutoff_nm)) fail("cutoff", nm(config.cutoff_nm), nm(nb.cutoff_nm));
  if (n["ewald_tolerance"] && !same(config.ewald_tolerance, nb.ewald_tolerance))
    fail("ewald_tolerance", quoted_number(config.ewald_tolerance), quoted_number(nb.ewald_tolerance));
  if (n["dispersion_correction"] && config.dispersion_correction != nb.dispersion_correction)
    fail("dispersion_correction", config.dispersion_correction ? "true" : "false",
         nb.dispersion_correction ? "true" : "false");
  const auto switching = [](const std::optional<double>& s) { return s ? nm(*s) : std::string("none"); };
  const bool switch_differs = config.switch_distance_nm.has_value() != nb.switch_distance_nm.has_value() ||
                              (nb.switch_distance_nm && !same(*config.switch_distance_nm, *nb.switch_distance_nm));
  if (n["switch_distance"] && switch_differs)
    fail("switch_distance", switching(config.switch_distance_nm), switching(nb.switch_distance_nm));
}

// `constraints`, `rigid_water` and `remove_cm_motion` against the System's constraints and CMMotionRemover.
void check_constraints(const ConfigReader& r, const YAML::Node& n, const SystemConfig& s, const SystemXml& sx,
                       const ConstraintSummary& summary) {
  if (n["constraints"] && !constraints_agree(summary, s.constraints)) {
    const auto [i, j] = summary.example;
    const std::string example = i >= 0 ? fmt::format(" (e.g. particles {} and {})", i, j) : std::string();
    contradiction(
        r, n["constraints"], "constraints", to_string(s.constraints),
        fmt::format("{} constraint{}{}, which match {}{}",
                    summary.constraints == 0 ? std::string("no") : std::to_string(summary.constraints),
                    summary.constraints == 1 ? "" : "s",
                    summary.rigid_waters > 0 ? fmt::format(" besides its {} rigid waters", summary.rigid_waters)
                                             : std::string(),
                    to_string(system_constraint_mode(summary)), example),
        sx.source, "");
  }
  if (n["rigid_water"] && !rigid_water_agrees(summary, s.rigid_water))
    contradiction(r, n["rigid_water"], "rigid_water", s.rigid_water ? "true" : "false",
                  s.rigid_water
                      ? fmt::format("{} flexible waters", summary.flexible_waters)
                      : fmt::format("{} rigid waters (their three distances constrained)", summary.rigid_waters),
                  sx.source, "");
  if (n["remove_cm_motion"] && s.remove_cm_motion != sx.cm_motion_remover)
    contradiction(r, n["remove_cm_motion"], "remove_cm_motion", s.remove_cm_motion ? "true" : "false",
                  sx.cm_motion_remover ? "a CMMotionRemover" : "no CMMotionRemover", sx.source, "");
}

}  // namespace

void parse_topology_keys(const ConfigReader& r, const YAML::Node& n, SystemConfig& s, bool check_files) {
  for (const char* key : {"structure", "pdb"})
    if (n[key])
      r.fail(n[key], fmt::format("'{}' does not go with 'topology': name the coordinates with 'coordinates' (a PDB or "
                                 "PDBx/mmCIF file, or a serialized OpenMM State)",
                                 key));
  if (n["forcefield"])
    r.fail(n["forcefield"],
           "'forcefield' does not go with 'topology': a serialized OpenMM System carries its own "
           "parameters; remove 'forcefield'");
  if (n["hydrogen_mass"])
    r.fail(n["hydrogen_mass"],
           "'hydrogen_mass' does not go with 'topology': the System's masses hold (repartition "
           "them when creating the System: createSystem(..., hydrogenMass=...))");
  const YAML::Node t = n["topology"];
  s.topology = r.path(r.str(t, "topology"));
  if (!is_openmm_xml_path(s.topology))
    r.fail(t,
           fmt::format("'topology': {}: expected a serialized OpenMM System (.xml or .xml.gz, from "
                       "XmlSerializer.serialize(system)); AMBER, GROMACS and CHARMM topologies are not supported yet",
                       s.topology));
  const YAML::Node c = n["coordinates"];
  if (!c)
    r.fail(n,
           "'system' with 'topology' needs 'coordinates': a PDB or PDBx/mmCIF file, or a serialized OpenMM State "
           "(.xml)");
  s.pdb = r.path(r.str(c, "coordinates"));
  s.forcefield.clear();
  if (check_files) {
    check_input_file(r, t, "topology", s.topology, "the serialized System (.xml)");
    check_input_file(r, c, "coordinates", s.pdb, "the coordinates (PDB, PDBx/mmCIF or a serialized State)");
  }
}

std::optional<SystemXmlBarostat> apply_system_settings(const ConfigReader& r, const YAML::Node& n, SystemConfig& s) {
  const SystemXml sx = read_system_xml(s.topology);
  const ConstraintSummary summary = summarize_constraints(sx.system);
  check_nonbonded(r, n, s.nonbonded, sx);
  check_constraints(r, n, s, sx, summary);
  const PmeGridSizes grid = s.nonbonded.pme_grid;
  s.nonbonded = sx.system.nonbonded;
  s.nonbonded.pme_grid = grid;
  s.constraints = system_constraint_mode(summary);
  s.rigid_water = summary.flexible_waters == 0;
  s.remove_cm_motion = sx.cm_motion_remover;
  if (sx.barostat && !is_periodic(s.nonbonded.method))
    throw InputError(located(sx.source, sx.barostat->line, 0,
                             fmt::format("force {} (MonteCarloBarostat) needs a periodic system, but the "
                                         "NonbondedForce uses {}",
                                         sx.barostat->index, to_string(s.nonbonded.method))));
  return sx.barostat;
}

void apply_system_barostat(const ConfigReader& r, const YAML::Node& root, const SystemXmlBarostat& b, RunConfig& cfg) {
  const std::string& file = cfg.system.topology;
  const std::string where = fmt::format("force {}, MonteCarloBarostat, line {}", b.index, b.line);
  const YAML::Node section = root["barostat"];
  if (section && section.IsMap()) {
    const BarostatConfig& c = *cfg.barostat;
    if (section["pressure"] && !same(c.pressure_bar, b.pressure_bar))
      contradiction(r, section["pressure"], "pressure", quoted_number(c.pressure_bar) + " bar",
                    quoted_number(b.pressure_bar) + " bar", file, where);
    if (section["temperature"] && !same(c.temperature_k, b.temperature_k))
      contradiction(r, section["temperature"], "temperature", quoted_number(c.temperature_k) + " K",
                    quoted_number(b.temperature_k) + " K", file, where);
    if (section["interval"] && c.interval_steps != b.frequency)
      contradiction(r, section["interval"], "interval", std::to_string(c.interval_steps) + " steps",
                    std::to_string(b.frequency) + " steps", file, where);
  }
  cfg.barostat = BarostatConfig{b.pressure_bar, b.temperature_k, b.frequency};
  const SourceLocation at =
      cfg.locations.count("system.topology") ? cfg.locations.at("system.topology") : SourceLocation{};
  cfg.locations.emplace("barostat", at);
  cfg.locations.emplace("barostat.temperature", at);
}

}  // namespace mdsim
