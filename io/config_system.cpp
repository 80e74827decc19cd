#include "io/config_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/errors.hpp"
#include "io/charmm_parameters.hpp"
#include "io/file_names.hpp"
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
  if (n["remove_cm_motion_interval"] &&
      (!sx.cm_motion_remover || s.remove_cm_motion_interval != sx.cm_motion_interval))
    contradiction(r, n["remove_cm_motion_interval"], "remove_cm_motion_interval",
                  std::to_string(s.remove_cm_motion_interval),
                  sx.cm_motion_remover ? fmt::format("a CMMotionRemover of frequency {}", sx.cm_motion_interval)
                                       : std::string("no CMMotionRemover"),
                  sx.source, "");
}

}  // namespace

namespace {

const char* format_name(TopologyFormat f) {
  switch (f) {
    case TopologyFormat::SystemXml: return "a serialized OpenMM System";
    case TopologyFormat::AmberPrmtop: return "an AMBER prmtop";
    case TopologyFormat::GromacsTop: return "a GROMACS top";
    case TopologyFormat::CharmmPsf: return "a CHARMM psf";
    case TopologyFormat::Unknown: break;
  }
  return "this topology";
}

// What `coordinates` may name beside a topology of this format.
const char* coordinate_kinds(TopologyFormat f) {
  switch (f) {
    case TopologyFormat::AmberPrmtop: return "an AMBER inpcrd/rst7 file, or a PDB or PDBx/mmCIF file";
    case TopologyFormat::GromacsTop: return "a GROMACS .gro file, or a PDB or PDBx/mmCIF file";
    case TopologyFormat::CharmmPsf: return "a CHARMM .crd/.cor file, or a PDB or PDBx/mmCIF file";
    default: return "a PDB or PDBx/mmCIF file, or a serialized OpenMM State (.xml)";
  }
}

// The keys that go with one format only, refused beside another.
void check_format_keys(const ConfigReader& r, const YAML::Node& n, TopologyFormat f) {
  for (const char* key : {"structure", "pdb"})
    if (n[key])
      r.fail(n[key], fmt::format("'{}' does not go with 'topology': name the coordinates with 'coordinates' ({})", key,
                                 coordinate_kinds(f)));
  if (n["forcefield"])
    r.fail(n["forcefield"], fmt::format("'forcefield' does not go with 'topology': {} carries its own parameters; "
                                        "remove 'forcefield'",
                                        format_name(f)));
  if (f == TopologyFormat::SystemXml && n["hydrogen_mass"])
    r.fail(n["hydrogen_mass"],
           "'hydrogen_mass' does not go with a serialized System: the System's masses hold (repartition them when "
           "creating the System: createSystem(..., hydrogenMass=...))");
  const std::pair<const char*, TopologyFormat> only[] = {{"include_dirs", TopologyFormat::GromacsTop},
                                                         {"defines", TopologyFormat::GromacsTop},
                                                         {"parameters", TopologyFormat::CharmmPsf}};
  for (const auto& [key, owner] : only)
    if (n[key] && f != owner)
      r.fail(n[key], fmt::format("'{}' goes with {} topology, not with {}", key, format_name(owner), format_name(f)));
  if (n["box"] && f == TopologyFormat::SystemXml)
    r.fail(n["box"], "'box' does not go with a serialized System: its own box vectors hold (or the State's)");
}

// `defines`: a list of NAME or NAME=VALUE (GROMACS's -D), or a map NAME: VALUE.
std::vector<std::pair<std::string, std::string>> parse_defines(const ConfigReader& r, const YAML::Node& d) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto add = [&](const YAML::Node& at, std::string name, std::string value) {
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!ok) r.fail(at, fmt::format("'defines': '{}' is not a macro name (letters, digits, underscores)", name));
    out.emplace_back(std::move(name), std::move(value));
  };
  if (d.IsMap()) {
    for (const auto& kv : d) add(kv.first, kv.first.Scalar(), kv.second.IsNull() ? "" : kv.second.Scalar());
  } else if (d.IsSequence()) {
    for (const auto& item : d) {
      std::string text = r.str(item, "defines");
      if (text.rfind("-D", 0) == 0) text = text.substr(2);
      const std::size_t eq = text.find('=');
      add(item, text.substr(0, eq), eq == std::string::npos ? "" : text.substr(eq + 1));
    }
  } else {
    r.fail(d, "'defines' must be a list such as [POSRES, FLEXIBLE] or [\"NAME=VALUE\"] (GROMACS's -D)");
  }
  return out;
}

// A list of files or folders (one name alone is a list of one), resolved against the config's folder.
std::vector<std::string> path_list(const ConfigReader& r, const YAML::Node& n, const char* key, bool folders,
                                   bool check_files) {
  std::vector<std::string> out;
  const auto add = [&](const YAML::Node& item) {
    out.push_back(r.path(r.str(item, key)));
    if (!check_files) return;
    std::error_code ec;
    const bool ok = folders ? fs::is_directory(out.back(), ec) : fs::is_regular_file(out.back(), ec);
    if (!ok) r.fail(item, fmt::format("'{}': {} is not {}", key, out.back(), folders ? "a folder" : "a regular file"));
  };
  if (n.IsScalar()) {
    add(n);
  } else if (n.IsSequence()) {
    for (const auto& item : n) add(item);
  } else {
    r.fail(n, fmt::format("'{}' must be a list of {}", key, folders ? "folders" : "files"));
  }
  return out;
}

// `box`: three edge lengths (a rectangular box) or three vectors (rows a, b, c, in the reduced form a along x and b
// in the xy plane), lengths with units or in nm.
Boxd parse_box(const ConfigReader& r, const YAML::Node& b) {
  const char* expected = "'box' must be three edge lengths such as [3.2 nm, 3.2 nm, 3.2 nm] or three vectors "
                         "[[ax, 0, 0], [bx, by, 0], [cx, cy, cz]] (nm)";
  if (!b.IsSequence() || b.size() != 3) r.fail(b, expected);
  Boxd box{};
  Vec3d* rows[3] = {&box.a, &box.b, &box.c};
  if (b[0].IsScalar()) {
    for (int i = 0; i < 3; ++i) {
      if (!b[i].IsScalar()) r.fail(b, expected);
      const double edge = r.positive(b[i], Dimension::Length, "box");
      (*rows[i])[i] = edge;
    }
    return box;
  }
  for (int i = 0; i < 3; ++i) {
    if (!b[i].IsSequence() || b[i].size() != 3) r.fail(b, expected);
    for (int k = 0; k < 3; ++k) (*rows[i])[k] = r.quantity(b[i][k], Dimension::Length, "box");
  }
  const bool reduced = box.a.y == 0 && box.a.z == 0 && box.b.z == 0 && box.a.x > 0 && box.b.y > 0 && box.c.z > 0 &&
                       std::fabs(box.b.x) <= 0.5 * box.a.x + 1e-9 && std::fabs(box.c.x) <= 0.5 * box.a.x + 1e-9 &&
                       std::fabs(box.c.y) <= 0.5 * box.b.y + 1e-9;
  if (!reduced)
    r.fail(b, "'box' vectors must be in OpenMM's reduced form: a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz) with "
              "ax, by, cz > 0, |bx| and |cx| at most ax/2, |cy| at most by/2");
  return box;
}

}  // namespace

void parse_topology_keys(const ConfigReader& r, const YAML::Node& n, SystemConfig& s, bool check_files) {
  const YAML::Node t = n["topology"];
  s.topology = r.path(r.str(t, "topology"));
  const TopologyFormat format = topology_format(s.topology);
  if (format == TopologyFormat::Unknown)
    r.fail(t, fmt::format("'topology': {}: unknown format; expected a serialized OpenMM System (.xml, .xml.gz), an "
                          "AMBER prmtop (.prmtop, .parm7), a GROMACS top (.top) or a CHARMM psf (.psf)",
                          s.topology));
  check_format_keys(r, n, format);
  const YAML::Node c = n["coordinates"];
  if (!c) r.fail(n, fmt::format("'system' with 'topology' needs 'coordinates': {}", coordinate_kinds(format)));
  s.pdb = r.path(r.str(c, "coordinates"));
  s.forcefield.clear();
  if (const auto d = n["include_dirs"]) s.include_dirs = path_list(r, d, "include_dirs", true, check_files);
  if (const auto d = n["defines"]) s.defines = parse_defines(r, d);
  if (const auto p = n["parameters"]) s.parameters = path_list(r, p, "parameters", false, check_files);
  if (const auto b = n["box"]) s.box = parse_box(r, b);
  for (const std::string& file : s.parameters) {
    try {
      (void)charmm_file_kind(file);
    } catch (const InputError&) {
      r.fail(n["parameters"], fmt::format("'parameters': {}: not a CHARMM parameter file name: expected .prm or .par "
                                          "(parameters), .rtf or .top (topology), .str (stream), or .inp with 'par' "
                                          "or 'top' in its name",
                                          file));
    }
  }
  if (format == TopologyFormat::CharmmPsf && s.parameters.empty())
    r.fail(n, "a CHARMM psf needs its parameter files: add 'parameters' (a list of .prm, .rtf and .str files, e.g. "
              "[par_all36m_prot.prm, toppar_water_ions.str])");
  if (check_files) {
    check_input_file(r, t, "topology", s.topology, fmt::format("{} file", format_name(format)).c_str());
    check_input_file(r, c, "coordinates", s.pdb, "the coordinates file");
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
  s.remove_cm_motion_interval = sx.cm_motion_interval;
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
