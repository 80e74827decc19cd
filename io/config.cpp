#include "io/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/config_system.hpp"
#include "io/file_names.hpp"
#include "io/forcefield_xml.hpp"
#include "io/units.hpp"
#include "io/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace mdsim {

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  auto lower = [](std::string_view s) {
    std::string r(s);
    std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return r;
  };
  const std::string w = lower(word);
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& cand : candidates) {
    const std::string c = lower(cand);
    // Levenshtein distance with adjacent transpositions (optimal string alignment).
    std::vector<std::vector<std::size_t>> d(w.size() + 1, std::vector<std::size_t>(c.size() + 1));
    for (std::size_t i = 0; i <= w.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= c.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= w.size(); ++i) {
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t cost = w[i - 1] == c[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && w[i - 1] == c[j - 2] && w[i - 2] == c[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
    if (d[w.size()][c.size()] < best_d) {
      best_d = d[w.size()][c.size()];
      best = cand;
    }
  }
  // Plausible: at most a third of the longer word differs (and at least one edit is allowed).
  const std::size_t limit = std::max<std::size_t>(1, std::max(w.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

const char* file_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    default: return "of an unknown kind";
  }
}

namespace {

// Records where every key sits, so later checks (against the structure file) can point at it.
void record_locations(const YAML::Node& map, const std::string& prefix, std::map<std::string, SourceLocation>& out) {
  if (!map.IsMap()) return;
  for (const auto& kv : map) {
    const std::string key = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
    const YAML::Mark m = kv.first.Mark();
    if (!m.is_null()) out[key] = SourceLocation{m.line + 1, m.column + 1};
    record_locations(kv.second, key, out);
    if (kv.second.IsSequence()) {  // list items as "key.0", "key.1" (the stages)
      for (std::size_t i = 0; i < kv.second.size(); ++i) {
        const std::string item = key + "." + std::to_string(i);
        const YAML::Mark im = kv.second[i].Mark();
        if (!im.is_null()) out[item] = SourceLocation{im.line + 1, im.column + 1};
        record_locations(kv.second[i], item, out);
      }
    }
  }
}

// The structure file: `structure` (PDB or PDBx/mmCIF), or its older name `pdb`; not both.
std::string structure_file(const ConfigReader& r, const YAML::Node& n, bool check_files) {
  if (n["structure"] && n["pdb"]) {
    const bool pdb_later = n["pdb"].Mark().line > n["structure"].Mark().line ||
                           (n["pdb"].Mark().line == n["structure"].Mark().line &&
                            n["pdb"].Mark().column > n["structure"].Mark().column);
    r.fail(pdb_later ? n["pdb"] : n["structure"],
           "'structure' and 'pdb' both name the structure file; keep one ('structure' is the preferred name, 'pdb' "
           "its older one)");
  }
  const std::string key = n["pdb"] ? "pdb" : "structure";
  if (!n[key])
    r.fail(n, "'system' needs the key 'structure' (the structure file: PDB or PDBx/mmCIF, e.g. structure: "
              "protein.pdb)");
  const std::string file = r.path(r.str(n[key], key));
  if (check_files) {
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (fs::is_directory(st))
      r.fail(n[key], fmt::format("'{}': {} is a directory; name the structure file (PDB or PDBx/mmCIF) in it", key,
                                 file));
    if (!fs::exists(st)) r.fail(n[key], fmt::format("'{}': file not found: {}", key, file));
    if (!fs::is_regular_file(st))
      r.fail(n[key], fmt::format("'{}': {} is {}, not a regular file; name the structure file (PDB or PDBx/mmCIF)",
                                 key, file, file_kind(st)));
  }
  return file;
}

// `forcefield`: one file name or a list of them.
std::vector<std::string> forcefield_files(const ConfigReader& r, const YAML::Node& f, bool check_files) {
  std::vector<std::string> files;
  if (f.IsScalar()) {
    files.push_back(f.Scalar());
    if (check_files) r.check_forcefield_file(f, f.Scalar());
  } else if (f.IsSequence() && f.size() > 0) {
    for (const auto& item : f) {
      files.push_back(r.str(item, "forcefield"));
      if (check_files) r.check_forcefield_file(item, files.back());
    }
  } else {
    r.fail(f, "'forcefield' must be a file name or a list of them, e.g. [amber14-all.xml, amber14/tip3p.xml]");
  }
  return files;
}

// The nonbonded keys of `system`: method, cutoff, Ewald accuracy and PME grid, switching, dispersion correction.
void parse_nonbonded(const ConfigReader& r, const YAML::Node& n, NonbondedSettings& nb) {
  if (const auto m = n["nonbonded_method"])
    nb.method = r.choice<NonbondedMethod>(m, "nonbonded_method",
                                          {{"pme", NonbondedMethod::PME},
                                           {"cutoff_periodic", NonbondedMethod::CutoffPeriodic},
                                           {"cutoff_nonperiodic", NonbondedMethod::CutoffNonPeriodic},
                                           {"no_cutoff", NonbondedMethod::NoCutoff}});
  if (const auto c = n["cutoff"]) nb.cutoff_nm = r.positive(c, Dimension::Length, "cutoff");
  if (const auto t = n["ewald_tolerance"]) {
    nb.ewald_tolerance = r.number(t, "ewald_tolerance");
    if (!(nb.ewald_tolerance >= 1e-10 && nb.ewald_tolerance < 0.5))
      r.fail(t, fmt::format("'ewald_tolerance' must lie in [1e-10, 0.5) (typical: 5e-4; at 0.5 the Ewald splitting "
                            "vanishes, below 1e-10 the error bound is beyond double precision and the PME grid grows "
                            "without limit), got {}",
                            nb.ewald_tolerance));
  }
  if (const auto g = n["pme_grid"])
    nb.pme_grid = r.choice<PmeGridSizes>(g, "pme_grid",
                                         {{"exact", PmeGridSizes::Exact}, {"fft_friendly", PmeGridSizes::FftFriendly}});
  if (const auto sw = n["switch_distance"]; sw && !sw.IsNull()) {
    nb.switch_distance_nm = r.positive(sw, Dimension::Length, "switch_distance");
    if (*nb.switch_distance_nm >= nb.cutoff_nm)
      r.fail(sw, fmt::format("'switch_distance' ({} nm) must be shorter than 'cutoff' ({} nm)", *nb.switch_distance_nm,
                             nb.cutoff_nm));
  }
  if (const auto d = n["dispersion_correction"]) nb.dispersion_correction = r.boolean(d, "dispersion_correction");
}

// `system`; with `topology` (a serialized OpenMM System), the System's settings replace the keys' (config_system).
// Returns the System's barostat, if it has one.
std::optional<SystemXmlBarostat> parse_system(const ConfigReader& r, const YAML::Node& n, SystemConfig& s,
                                              bool check_files) {
  r.check_keys(n, {"structure", "pdb", "topology", "coordinates", "forcefield", "nonbonded_method", "cutoff",
                   "ewald_tolerance", "pme_grid", "switch_distance", "dispersion_correction", "constraints",
                   "rigid_water", "hydrogen_mass", "remove_cm_motion", "remove_cm_motion_interval", "replicate",
                   "include_dirs", "defines", "parameters", "box"},
               "system");
  if (n["topology"]) {
    parse_topology_keys(r, n, s, check_files);
  } else {
    for (const char* key : {"include_dirs", "defines", "parameters", "box"})
      if (n[key])
        r.fail(n[key], fmt::format("'{}' goes with 'topology' (a GROMACS top or an AMBER prmtop); a structure "
                                   "file with force fields takes its box from the structure",
                                   key));
    if (n["coordinates"])
      r.fail(n["coordinates"], "'coordinates' goes with 'topology' (a serialized OpenMM System, an AMBER prmtop or a "
                               "GROMACS top); with force fields, "
                               "name the structure file with 'structure'");
    s.pdb = structure_file(r, n, check_files);
  }
  if (const auto f = n["forcefield"]) s.forcefield = forcefield_files(r, f, check_files);
  parse_nonbonded(r, n, s.nonbonded);
  if (const auto c = n["constraints"]) {
    if (c.IsNull()) {
      s.constraints = ConstraintMode::None;
    } else {
      s.constraints = r.choice<ConstraintMode>(c, "constraints",
                                               {{"none", ConstraintMode::None},
                                                {"hbonds", ConstraintMode::HBonds},
                                                {"allbonds", ConstraintMode::AllBonds},
                                                {"hangles", ConstraintMode::HAngles}});
    }
  }
  if (const auto w = n["rigid_water"]) s.rigid_water = r.boolean(w, "rigid_water");
  if (const auto h = n["hydrogen_mass"]; h && !h.IsNull())
    s.hydrogen_mass_amu = r.positive(h, Dimension::Mass, "hydrogen_mass");
  if (const auto c = n["remove_cm_motion"]) s.remove_cm_motion = r.boolean(c, "remove_cm_motion");
  if (const auto c = n["remove_cm_motion_interval"]) {
    s.remove_cm_motion_interval = static_cast<int>(r.integer(c, "remove_cm_motion_interval", 1));
    if (!s.remove_cm_motion)
      r.fail(c, "'remove_cm_motion_interval' is set but 'remove_cm_motion' is false: remove one of them");
  }
  std::optional<SystemXmlBarostat> barostat;
  if (!s.topology.empty() && check_files && topology_format(s.topology) == TopologyFormat::SystemXml)
    barostat = apply_system_settings(r, n, s);
  if (const auto rep = n["replicate"]) {
    if (!rep.IsSequence() || rep.size() != 3) r.fail(rep, "'replicate' must be a list of three whole numbers, e.g. [2, 2, 2]");
    for (int i = 0; i < 3; ++i) s.replicate[i] = static_cast<int>(r.integer(rep[i], "replicate", 1));
    const bool tiled = s.replicate != std::array<int, 3>{1, 1, 1};
    const bool periodic = is_periodic(s.nonbonded.method);
    if (tiled && !periodic)
      r.fail(rep, "'replicate' tiles a periodic box: it needs nonbonded_method pme or cutoff_periodic");
  }
  return barostat;
}

void parse_platform(const ConfigReader& r, const YAML::Node& n, PlatformConfig& p) {
  const std::vector<std::pair<std::string, std::string>> names = {{"auto", "auto"}, {"cpu", "cpu"}, {"cuda", "cuda"}};
  if (n.IsScalar()) {  // platform: cuda
    p.name = r.choice<std::string>(n, "platform", names);
    return;
  }
  r.check_keys(n, {"name", "precision", "device", "deterministic", "neighbor_buffer"}, "platform");
  if (const auto v = n["name"]) p.name = r.choice<std::string>(v, "name", names);
  if (const auto v = n["precision"])
    p.precision = r.choice<Precision>(v, "precision", {{"mixed", Precision::Mixed}, {"double", Precision::Double}});
  if (const auto v = n["device"]) p.device = static_cast<int>(r.integer(v, "device", 0));
  if (const auto v = n["deterministic"]) p.deterministic = r.boolean(v, "deterministic");
  if (const auto v = n["neighbor_buffer"]) {
    p.neighbor_buffer_nm = r.positive(v, Dimension::Length, "neighbor_buffer");
    if (p.neighbor_buffer_nm > 0.5)
      r.fail(v, fmt::format("'neighbor_buffer' must be at most 0.5 nm (typical: 0.1 to 0.2 nm), got {:g} nm",
                            p.neighbor_buffer_nm));
  }
}

void parse_minimize(const ConfigReader& r, const YAML::Node& n, MinimizeConfig& m) {
  if (n.IsNull()) return;  // "minimize:" alone = defaults
  r.check_keys(n, {"tolerance", "max_iterations"}, "minimize");
  if (const auto v = n["tolerance"]) m.tolerance_kj_per_mol_nm = r.positive(v, Dimension::Force, "tolerance");
  if (const auto v = n["max_iterations"]) m.max_iterations = static_cast<int>(r.integer(v, "max_iterations", 0));
}

// Time steps, temperatures and pressures beyond these are input mistakes (a unit left out, an exponent
// mistyped), not simulations: 20 fs is several times the largest stable atomistic step, 1e5 K far beyond
// intact molecules, 1e5 bar (10 GPa) beyond what force fields fitted near 1 bar describe; the barostat
// would only crush the box.
constexpr double kMaxTimestepPs = 0.02;
constexpr double kMaxTemperatureK = 1e5;
constexpr double kMaxPressureBar = 1e5;

double temperature(const ConfigReader& r, const YAML::Node& v, const std::string& key) {
  const double t = r.positive(v, Dimension::Temperature, key);
  if (t > kMaxTemperatureK)
    r.fail(v, fmt::format("'{}' ({} K) is above {} K, far beyond the dynamics of intact molecules: check the value "
                          "and its unit",
                          key, quoted_number(t), quoted_number(kMaxTemperatureK)));
  return t;
}

void parse_integrator(const ConfigReader& r, const YAML::Node& n, IntegratorConfig& g) {
  r.check_keys(n, {"type", "temperature", "friction", "timestep", "seed", "constraint_tolerance"}, "integrator");
  if (const auto v = n["type"])
    g.type = r.choice<IntegratorType>(v, "type",
                                      {{"langevin_middle", IntegratorType::LangevinMiddle}, {"verlet", IntegratorType::Verlet}});
  if (const auto v = n["temperature"]) g.temperature_k = temperature(r, v, "temperature");
  if (const auto v = n["friction"]) g.friction_per_ps = r.positive(v, Dimension::Frequency, "friction", true);
  if (const auto v = n["timestep"]) {
    g.timestep_ps = r.positive(v, Dimension::Time, "timestep");
    if (g.timestep_ps > kMaxTimestepPs) {
      char* end = nullptr;
      std::strtod(v.Scalar().c_str(), &end);
      const bool bare = *end == '\0';  // no unit: ps
      r.fail(v, fmt::format("'timestep' ({} ps) is longer than {} fs, beyond any stable time step of atomistic "
                            "dynamics (typical: 2 fs; 4 fs with hydrogen_mass){}",
                            quoted_number(g.timestep_ps), quoted_number(kMaxTimestepPs * 1000.0),
                            bare ? fmt::format("; a bare number is in ps: did you mean '{} fs'?", v.Scalar()) : ""));
    }
  }
  if (const auto v = n["seed"]) g.seed = r.unsigned_integer(v, "seed");
  if (const auto v = n["constraint_tolerance"]) {
    g.constraint_tolerance = r.number(v, "constraint_tolerance");
    if (!(g.constraint_tolerance > 0 && g.constraint_tolerance < 1))
      r.fail(v, fmt::format("'constraint_tolerance' must lie between 0 and 1 (relative), got {}", g.constraint_tolerance));
  }
}

void parse_barostat(const ConfigReader& r, const YAML::Node& n, BarostatConfig& b, double default_temperature) {
  b.temperature_k = default_temperature;
  if (n.IsNull()) return;
  r.check_keys(n, {"pressure", "temperature", "interval"}, "barostat");
  if (const auto v = n["pressure"]) {
    b.pressure_bar = r.positive(v, Dimension::Pressure, "pressure");
    if (b.pressure_bar > kMaxPressureBar)
      r.fail(v, fmt::format("'pressure' ({} bar) is above {} bar (10 GPa), where the force field no longer "
                            "describes the system and the barostat would crush the box: check the value and its "
                            "unit (bar, atm, Pa)",
                            quoted_number(b.pressure_bar), quoted_number(kMaxPressureBar)));
  }
  if (const auto v = n["temperature"]) b.temperature_k = temperature(r, v, "temperature");
  if (const auto v = n["interval"]) b.interval_steps = static_cast<int>(r.integer(v, "interval", 1));
}

// Steps a run can count: step numbers are 64-bit integers, and times (steps x timestep) keep whole
// steps exact in double precision up to 2^53.
constexpr long long kMaxRunSteps = 1LL << 53;

// The length of `section` (the run, or a stage): `steps`, or `time` in whole time steps of `timestep_ps`.
// `steps` keeps its value when neither is given.
void parse_length(const ConfigReader& r, const YAML::Node& n, const std::string& section, double timestep_ps,
                  std::int64_t& steps) {
  if (n["steps"] && n["time"])
    r.fail(n["time"], fmt::format("give either 'steps' or 'time' in '{}', not both", section));
  if (const auto v = n["steps"]) {
    steps = r.integer(v, "steps", 0, std::numeric_limits<long long>::max());
    if (steps > kMaxRunSteps)
      r.fail(v, fmt::format("'steps' ({}) is more than the {:.3g} a run can count", steps,
                            static_cast<double>(kMaxRunSteps)));
  }
  if (const auto v = n["time"]) {
    const double t = r.positive(v, Dimension::Time, "time", true);
    const double count = t / timestep_ps;
    if (std::abs(count - std::round(count)) > 1e-6 * std::max(1.0, count))
      r.fail(v, fmt::format("'time' ({} ps) is not a whole number of time steps ({} ps)", t, timestep_ps));
    if (!(count <= kMaxRunSteps))
      r.fail(v, fmt::format("'time' ({} ps) is {:.3g} time steps of {} ps, more than the {:.3g} a run can count",
                            t, count, timestep_ps, static_cast<double>(kMaxRunSteps)));
    steps = std::llround(count);
  }
}

void parse_run(const ConfigReader& r, const YAML::Node& n, RunSection& s, double timestep_ps) {
  r.check_keys(n, {"steps", "time", "initial_velocities"}, "run");
  parse_length(r, n, "run", timestep_ps, s.steps);
  if (const auto v = n["initial_velocities"])
    s.initial_velocities = r.choice<InitialVelocities>(v, "initial_velocities",
                                                       {{"temperature", InitialVelocities::Temperature},
                                                        {"zero", InitialVelocities::Zero},
                                                        {"from_checkpoint", InitialVelocities::FromCheckpoint},
                                                        {"from_coordinates", InitialVelocities::FromCoordinates}});
}

// "all", "protein", "not water", "water", or a list of indices and ranges "0-21,30".
void check_atom_selection(const ConfigReader& r, const YAML::Node& n, const std::string& sel) {
  if (sel == "all" || sel == "protein" || sel == "not water" || sel == "water" || sel == "heavy") return;
  std::stringstream ss(sel);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, ',')) {
    part.erase(std::remove_if(part.begin(), part.end(), [](unsigned char c) { return std::isspace(c); }), part.end());
    const auto dash = part.find('-');
    auto is_index = [](const std::string& t) { return !t.empty() && std::all_of(t.begin(), t.end(), ::isdigit); };
    // first <= last as whole numbers of any length (an index past the atom count is select_atoms' error,
    // named there with the count; std::stoll would throw out_of_range here).
    auto not_after = [](std::string first, std::string last) {
      first.erase(0, std::min(first.find_first_not_of('0'), first.size()));
      last.erase(0, std::min(last.find_first_not_of('0'), last.size()));
      return first.size() != last.size() ? first.size() < last.size() : first <= last;
    };
    const bool ok = dash == std::string::npos ? is_index(part)
                                              : is_index(part.substr(0, dash)) && is_index(part.substr(dash + 1)) &&
                                                    not_after(part.substr(0, dash), part.substr(dash + 1));
    if (!ok) break;
    any = true;
    if (ss.eof()) return;
  }
  if (any && ss.eof()) return;
  r.fail(n, fmt::format("'atoms' must be all | protein | water | not water | heavy | an index list such as \"0-21,30\", got '{}'",
                        sel));
}

// The atom indices of a YAML list as the index list of an atom selection ("0,5,7").
std::string index_list(const ConfigReader& r, const YAML::Node& list) {
  std::string text;
  std::set<long long> seen;
  for (const auto& i : list) {
    const auto index = r.integer(i, "atoms", 0);
    if (!seen.insert(index).second) r.fail(i, fmt::format("'atoms' lists atom {} twice: give each atom once", index));
    if (!text.empty()) text += ',';
    text += std::to_string(index);
  }
  return text;
}

// `output.trajectory`: off (null, false or off), or its file, intervals, contents and atoms.
void parse_trajectory_output(const ConfigReader& r, const YAML::Node& t, TrajectoryOutput& o) {
  if (t.IsNull() || (t.IsScalar() && (t.Scalar() == "false" || t.Scalar() == "off"))) {
    o.interval_steps = 0;
    o.file.clear();
    return;
  }
  r.check_keys(t, {"file", "interval", "velocities", "forces", "atoms", "flush_interval"}, "output.trajectory");
  if (const auto v = t["file"]) o.file = r.file_name(v, "file", "trajectory: null");
  if (const auto v = t["interval"]) o.interval_steps = static_cast<int>(r.integer(v, "interval", 0));
  if (const auto v = t["flush_interval"]) o.flush_interval_s = r.wall_seconds(v, "flush_interval");
  if (const auto v = t["velocities"]) o.velocities = r.boolean(v, "velocities");
  if (const auto v = t["forces"]) o.forces = r.boolean(v, "forces");
  if (const auto v = t["atoms"]) {
    o.atoms = v.IsSequence() ? index_list(r, v) : r.str(v, "atoms");
    check_atom_selection(r, v, o.atoms);
  }
}

// `output.state` and `output.checkpoint` (`name`): off (null), or a file written every `interval` steps.
template <typename Output>
void parse_file_output(const ConfigReader& r, const YAML::Node& n, const std::string& name, Output& o) {
  if (n.IsNull()) {
    o.interval_steps = 0;
    o.file.clear();
    return;
  }
  r.check_keys(n, {"file", "interval"}, "output." + name);
  if (const auto v = n["file"]) o.file = r.file_name(v, "file", name + ": null");
  if (const auto v = n["interval"]) o.interval_steps = static_cast<int>(r.integer(v, "interval", 0));
}

void parse_output(const ConfigReader& r, const YAML::Node& n, OutputConfig& o) {
  r.check_keys(n, {"directory", "trajectory", "state", "checkpoint", "final_pdb", "progress"}, "output");
  if (const auto v = n["directory"]) {
    o.directory = r.str(v, "directory");
    if (o.directory.empty()) r.fail(v, "'directory' is empty: give a folder ('.' for the config's folder)");
  }
  if (const auto t = n["trajectory"]) parse_trajectory_output(r, t, o.trajectory);
  if (const auto s = n["state"]) parse_file_output(r, s, "state", o.state);
  if (const auto c = n["checkpoint"]) parse_file_output(r, c, "checkpoint", o.checkpoint);
  if (const auto v = n["final_pdb"]) o.final_pdb = v.IsNull() ? std::string() : r.file_name(v, "final_pdb", "final_pdb: null");
  if (const auto v = n["progress"]) o.progress = r.boolean(v, "progress");
}

// `map[key]`, or an undefined node where `map` is absent or not a mapping.
YAML::Node entry(const YAML::Node& map, const char* key) {
  return map && map.IsMap() ? map[key] : YAML::Node(YAML::NodeType::Undefined);
}

// What `stages:` asks of the rest of the config: a list of stages, and no run length or minimisation at the
// top level (the stages set those).
void check_stages_top_level(const ConfigReader& r, const YAML::Node& root, const RunConfig& cfg) {
  const YAML::Node list = root["stages"];
  if (!list.IsSequence())
    r.fail(list, "'stages' must be a list of stages, each a mapping such as {name: nvt, time: 10 ps}");
  if (list.size() == 0)
    r.fail(list, "'stages' is empty: give at least one stage (or remove 'stages' for a single run)");
  if (const YAML::Node run = root["run"]) {
    for (const char* key : {"steps", "time"})
      if (const YAML::Node v = entry(run, key))
        r.fail(v, fmt::format("'run.{}' and 'stages' both set the run's length: with 'stages' each stage sets its "
                              "own ('steps' or 'time'); remove 'run.{}'",
                              key, key));
    if (cfg.run.initial_velocities == InitialVelocities::FromCheckpoint)
      r.fail(run["initial_velocities"], "'run.initial_velocities: from_checkpoint' cannot start a staged protocol: "
                                        "use temperature or zero (continue a staged run with --resume)");
  }
  if (const YAML::Node m = root["minimize"])
    r.fail(m, "'minimize' and 'stages' both present: with 'stages' a minimisation is a stage; move it into the "
              "first stage (stages: [{name: minimize, minimize: {tolerance: 10 kJ/mol/nm}}, ...])");
}

// A stage's `name`: a word (it is the state log's stage column), unlike the names of the stages before it.
std::string stage_name(const ConfigReader& r, const YAML::Node& v, const std::vector<StageConfig>& before) {
  const std::string name = r.str(v, "name");
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
  if (!ok)
    r.fail(v, fmt::format("'name' ('{}') must be letters, digits, '_', '-' or '.' (it is the state log's stage "
                          "column)",
                          name));
  for (std::size_t j = 0; j < before.size(); ++j)
    if (before[j].name == name)
      r.fail(v, fmt::format("stage name '{}' is used twice (also stage {}): give each stage its own name", name,
                            j + 1));
  return name;
}

// A stage's barostat: the top level's unless the stage names its own or none (null). Its temperature follows
// the stage's integrator unless a barostat temperature is written (at the top level or in the stage).
std::optional<BarostatConfig> stage_barostat(const ConfigReader& r, const YAML::Node& n, const RunConfig& cfg,
                                             double stage_temperature) {
  const bool top_barostat_temperature = cfg.locations.count("barostat.temperature") > 0;
  if (const auto v = n["barostat"]) {
    if (v.IsNull()) return std::nullopt;
    BarostatConfig b = cfg.barostat.value_or(BarostatConfig{});
    const double default_temperature = top_barostat_temperature ? b.temperature_k : stage_temperature;
    parse_barostat(r, v, b, default_temperature);
    if (!is_periodic(cfg.system.nonbonded.method))
      r.fail(v, fmt::format("'barostat' needs a periodic system (nonbonded_method pme or cutoff_periodic; this "
                            "config's is {})",
                            to_string(cfg.system.nonbonded.method)));
    return b;
  }
  if (!cfg.barostat) return std::nullopt;
  BarostatConfig b = *cfg.barostat;
  if (!top_barostat_temperature) b.temperature_k = stage_temperature;
  return b;
}

// A stage's `restraints`: the restrained atoms, the spring constant and the reference positions.
RestraintConfig parse_restraints(const ConfigReader& r, const YAML::Node& v, const std::string& section,
                                 bool check_files) {
  r.check_keys(v, {"atoms", "k", "reference"}, section + ".restraints");
  RestraintConfig rc;
  if (!v["atoms"]) r.fail(v, "'restraints' needs 'atoms' (an atom selection such as \"protein and heavy\")");
  if (!v["k"]) r.fail(v, "'restraints' needs 'k' (the spring constant, such as 1000 kJ/mol/nm^2)");
  const YAML::Node atoms = v["atoms"];
  if (atoms.IsSequence()) {
    rc.atoms = index_list(r, atoms);
    if (rc.atoms.empty()) r.fail(atoms, "'atoms' is an empty list: give atom indices or a selection");
  } else {
    rc.atoms = r.str(atoms, "atoms");
    if (rc.atoms.find_first_not_of(" \t") == std::string::npos)
      r.fail(atoms, "'atoms' is empty: give an atom selection such as \"protein and heavy\"");
  }
  rc.k_kj_per_mol_nm2 = r.positive(v["k"], Dimension::ForceConstant, "k");
  if (const auto ref = v["reference"]) {
    const std::string text = r.str(ref, "reference");
    if (text == "initial") {
      rc.reference = RestraintReference::Initial;
    } else if (text == "start") {
      rc.reference = RestraintReference::Start;
    } else {
      if (text.empty()) r.fail(ref, "'reference' is empty: give initial, start or a PDB file with the same atoms");
      rc.reference = RestraintReference::File;
      rc.reference_file = r.path(text);
      // The error_code form: a name the system cannot look up (a component over NAME_MAX bytes) is refused here
      // too, not thrown as a std::filesystem::filesystem_error.
      std::error_code ec;
      if (check_files && !fs::is_regular_file(rc.reference_file, ec)) {
        const bool unusable = ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory;
        r.fail(ref, fmt::format("'reference': {} is not a file{}; give initial (the structure as read), start (the "
                                "positions at the stage's start) or a PDB file with the same atoms",
                                rc.reference_file, unusable ? fmt::format(" ({})", ec.message()) : std::string()));
      }
    }
  }
  return rc;
}

// A stage's output intervals: the top level's unless the stage's `output` changes them. A stage only changes
// an interval; it cannot turn on an output the top level does not write.
void parse_stage_output(const ConfigReader& r, const YAML::Node& n, const std::string& section,
                        const OutputConfig& out, StageConfig& st) {
  st.trajectory_interval_steps = out.trajectory.interval_steps;
  st.state_interval_steps = out.state.interval_steps;
  st.checkpoint_interval_steps = out.checkpoint.interval_steps;
  const YAML::Node o = n["output"];
  if (!o) return;
  r.check_keys(o, {"trajectory", "state", "checkpoint"}, section + ".output");
  struct Override {
    const char* key;
    int* interval;
    bool on;  // the top level writes this output
    const char* how;
  };
  const Override overrides[] = {
      {"trajectory", &st.trajectory_interval_steps, out.trajectory.interval_steps > 0 && !out.trajectory.file.empty(),
       "output.trajectory.interval"},
      {"state", &st.state_interval_steps, out.state.interval_steps > 0 && !out.state.file.empty(),
       "output.state.interval"},
      {"checkpoint", &st.checkpoint_interval_steps, !out.checkpoint.file.empty(), "output.checkpoint.file"}};
  for (const Override& ov : overrides) {
    const YAML::Node sub = o[ov.key];
    if (!sub) continue;
    r.check_keys(sub, {"interval"}, fmt::format("{}.output.{}", section, ov.key));
    if (!sub["interval"]) continue;
    *ov.interval = static_cast<int>(r.integer(sub["interval"], "interval", 0));
    if (*ov.interval > 0 && !ov.on)
      r.fail(sub["interval"], fmt::format("the top level writes no {0} ({1} is off): a stage only changes the "
                                          "interval; turn the {0} on at the top level (and set interval 0 in the "
                                          "stages that should write none)",
                                          ov.key, ov.how));
  }
}

// Stage i (from 0) of `stages:`, after the stages before it (cfg.stages). `total_steps` adds up the stages'
// steps, this one's included.
StageConfig parse_stage(const ConfigReader& r, const YAML::Node& n, std::size_t i, const RunConfig& cfg,
                        bool check_files, std::int64_t& total_steps) {
  const std::string section = fmt::format("stages[{}]", i + 1);
  if (!n.IsMap())
    r.fail(n, fmt::format("'{}' must be a mapping (name, minimize, steps or time, integrator, ...)", section));
  r.check_keys(n, {"name", "minimize", "steps", "time", "integrator", "barostat", "restraints", "initial_velocities",
                   "output"},
               section);
  StageConfig st;
  st.name = fmt::format("stage{}", i + 1);
  if (const auto v = n["name"]) st.name = stage_name(r, v, cfg.stages);
  if (const auto v = n["minimize"]) {
    st.minimize.emplace();
    parse_minimize(r, v, *st.minimize);
  }
  st.integrator = cfg.integrator;
  if (const auto v = n["integrator"]) {
    if (v.IsMap() && v["seed"])
      r.fail(v["seed"], "'seed' belongs to the whole run: set integrator.seed at the top level, not in a stage");
    parse_integrator(r, v, st.integrator);
  }
  parse_length(r, n, section, st.integrator.timestep_ps, st.steps);
  if (st.steps == 0 && !st.minimize)
    r.fail(n, fmt::format("stage '{}' does nothing: give it 'steps' or 'time' (dynamics), 'minimize', or both",
                          st.name));
  total_steps += st.steps;
  if (total_steps > kMaxRunSteps)
    r.fail(n, fmt::format("the stages up to '{}' take {} steps, more than the {:.3g} a run can count", st.name,
                          total_steps, static_cast<double>(kMaxRunSteps)));
  if (st.steps == 0)
    for (const char* key : {"barostat", "initial_velocities", "output"})
      if (n[key])
        r.fail(n[key], fmt::format("'{}' has no effect in stage '{}', which only minimises (no 'steps' or 'time')",
                                   key, st.name));
  st.barostat = stage_barostat(r, n, cfg, st.integrator.temperature_k);
  if (const auto v = n["restraints"]; v && !v.IsNull()) st.restraints = parse_restraints(r, v, section, check_files);
  if (const auto v = n["initial_velocities"])
    st.initial_velocities = r.choice<InitialVelocities>(
        v, "initial_velocities", {{"temperature", InitialVelocities::Temperature}, {"zero", InitialVelocities::Zero}});
  parse_stage_output(r, n, section, cfg.output, st);
  return st;
}

// The `stages:` list (docs/config.md, "Staged protocols"): each stage overrides the top-level integrator,
// barostat and output intervals; the top level's run length and minimisation give way to the stages'.
void parse_stages(const ConfigReader& r, const YAML::Node& root, RunConfig& cfg, bool check_files) {
  check_stages_top_level(r, root, cfg);
  const YAML::Node list = root["stages"];
  std::int64_t total_steps = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    StageConfig st = parse_stage(r, list[i], i, cfg, check_files, total_steps);
    cfg.stages.push_back(std::move(st));
  }
  cfg.run.steps = total_steps;
}

constexpr long long kMaxReplicas = 4096;

// `exchange: none`: the number of independent copies, `count`; the keys of temperature exchange do not apply.
int independent_copies(const ConfigReader& r, const YAML::Node& n) {
  for (const char* key : {"temperatures", "exchange_interval", "log"})
    if (n[key])
      r.fail(n[key], fmt::format("'replicas.{}' belongs to temperature exchange; 'exchange: none' runs independent "
                                 "copies at integrator.temperature",
                                 key));
  if (!n["count"]) r.fail(n, "'replicas' with 'exchange: none' needs 'count', the number of independent copies");
  return static_cast<int>(r.integer(n["count"], "count", 2, kMaxReplicas));
}

// `temperatures`: the ladder as an increasing list, or geometric from {min, max, count}.
std::vector<double> temperature_ladder(const ConfigReader& r, const YAML::Node& n) {
  const YAML::Node t = n["temperatures"];
  if (!t)
    r.fail(n, "'replicas' with 'exchange: temperature' needs 'temperatures': a list [300 K, 320 K, ...] or a "
              "geometric ladder {min: 300 K, max: 400 K, count: 8}");
  if (t.IsSequence()) {
    if (n["count"])
      r.fail(n["count"], "'replicas.count' is the length of the 'temperatures' list: remove it (or give "
                         "temperatures as {min, max, count})");
    std::vector<double> ladder;
    for (std::size_t k = 0; k < t.size(); ++k) {
      const double value = temperature(r, t[k], "temperatures");
      if (!ladder.empty() && !(value > ladder.back()))
        r.fail(t[k], fmt::format("'temperatures' must increase: {} K is not above the temperature before it ({} K)",
                                 quoted_number(value), quoted_number(ladder.back())));
      ladder.push_back(value);
    }
    if (ladder.size() < 2) r.fail(t, "'temperatures' needs at least 2 temperatures for an exchange");
    if (ladder.size() > static_cast<std::size_t>(kMaxReplicas))
      r.fail(t, fmt::format("'temperatures' lists {} temperatures, more than the {} replicas mdsim runs",
                            ladder.size(), kMaxReplicas));
    return ladder;
  }
  if (!t.IsMap())
    r.fail(t, "'temperatures' must be a list [300 K, 320 K, ...] or a ladder {min: 300 K, max: 400 K, count: 8}");
  r.check_keys(t, {"min", "max", "count"}, "replicas.temperatures");
  for (const char* key : {"min", "max", "count"})
    if (!t[key]) r.fail(t, fmt::format("'replicas.temperatures' needs min, max and count; '{}' is missing", key));
  const double lo = temperature(r, t["min"], "min"), hi = temperature(r, t["max"], "max");
  if (!(hi > lo))
    r.fail(t["max"], fmt::format("'max' ({} K) must be above 'min' ({} K)", quoted_number(hi), quoted_number(lo)));
  if (n["count"]) r.fail(n["count"], "give the ladder's length as 'replicas.temperatures.count', not 'replicas.count'");
  return geometric_temperature_ladder(lo, hi, static_cast<int>(r.integer(t["count"], "count", 2, kMaxReplicas)));
}

// `exchange_interval`: a time in whole time steps of `timestep_ps`, as steps.
std::int64_t exchange_interval_steps(const ConfigReader& r, const YAML::Node& n, double timestep_ps) {
  const YAML::Node every = n["exchange_interval"];
  if (!every) r.fail(n, "'replicas' with 'exchange: temperature' needs 'exchange_interval' (a time, e.g. 2 ps)");
  const double interval_ps = r.positive(every, Dimension::Time, "exchange_interval");
  const double steps = interval_ps / timestep_ps;
  if (std::abs(steps - std::round(steps)) > 1e-6 * std::max(1.0, steps) || std::round(steps) < 1)
    r.fail(every, fmt::format("'exchange_interval' ({} ps) is not a whole number of time steps ({} ps): e.g. {} ps",
                              quoted_number(interval_ps), quoted_number(timestep_ps),
                              quoted_number(std::max(1.0, std::round(steps)) * timestep_ps)));
  if (!(steps <= static_cast<double>(std::numeric_limits<int>::max())))
    r.fail(every, fmt::format("'exchange_interval' ({} ps) is more steps than a run can count between exchanges",
                              quoted_number(interval_ps)));
  return std::llround(steps);
}

// `log`: the exchange log's file, which no other output may name.
std::string exchange_log(const ConfigReader& r, const YAML::Node& v, const OutputConfig& output) {
  const std::string log = r.str(v, "log");
  if (log.empty()) r.fail(v, "'log' is empty: name the exchange log's file (default exchange.csv)");
  for (const OutputFile& f : output_files(output))
    if (fs::path(f.file).lexically_normal() == fs::path(log).lexically_normal())
      r.fail(v, fmt::format("'replicas.log' and '{}' both name the file '{}': give them different names", f.key, log));
  return log;
}

// Temperature exchange against the other sections: a heat bath whose temperature each replica sets, and
// checkpoints between exchange rounds.
void check_exchange_context(const ConfigReader& r, const YAML::Node& root, const RunConfig& cfg,
                            std::int64_t interval_steps) {
  const YAML::Node n = root["replicas"];
  if (cfg.integrator.type != IntegratorType::LangevinMiddle)
    r.fail(n["exchange"], fmt::format("temperature exchange needs a heat bath: integrator.type is {}; use "
                                      "langevin_middle (or exchange: none)",
                                      to_string(cfg.integrator.type)));
  // Each replica's bath follows its ladder temperature.
  if (const YAML::Node v = entry(root["integrator"], "temperature"))
    r.fail(v, "'integrator.temperature' does not apply with temperature exchange: the replicas' temperatures come "
              "from replicas.temperatures; remove it");
  if (const YAML::Node v = entry(root["barostat"], "temperature"))
    r.fail(v, "'barostat.temperature' does not apply with temperature exchange: each replica's barostat runs at its "
              "replica's temperature; remove it");
  const int checkpoint_every = cfg.output.checkpoint.interval_steps;
  if (!cfg.output.checkpoint.file.empty() && checkpoint_every > 0 && checkpoint_every % interval_steps != 0) {
    const std::int64_t suggestion = std::max<std::int64_t>(1, checkpoint_every / interval_steps) * interval_steps;
    const YAML::Node written = entry(entry(root["output"], "checkpoint"), "interval");
    r.fail(written ? written : n["exchange_interval"],
           fmt::format("the ensemble's checkpoints are written after an exchange round: output.checkpoint.interval "
                       "({} steps) must be a multiple of replicas.exchange_interval ({} steps), e.g. {}",
                       checkpoint_every, interval_steps, suggestion));
  }
}

// `coordinates`: one coordinate file per replica (a list of `count`), or one mdsim trajectory (.h5) whose frames the
// replicas start from; resolved paths, checked to be files when `check_files`.
std::vector<std::string> replica_coordinates(const ConfigReader& r, const YAML::Node& v, int count, bool check_files) {
  std::vector<std::string> files;
  std::vector<YAML::Node> at;
  if (v.IsSequence()) {
    if (static_cast<int>(v.size()) != count)
      r.fail(v, fmt::format("'replicas.coordinates' lists {} files for {} replicas: give one per replica, or one "
                            "trajectory (.h5) whose frames they start from",
                            v.size(), count));
    for (std::size_t k = 0; k < v.size(); ++k) files.push_back(r.path(r.str(v[k], "coordinates"))), at.push_back(v[k]);
  } else {
    files.push_back(r.path(r.str(v, "coordinates")));
    at.push_back(v);
    if (!ends_with_ci(files.front(), ".h5"))
      r.fail(v, fmt::format("'replicas.coordinates' names one file, {}, for {} replicas: give a list of {} coordinate "
                            "files (one per replica), or one mdsim trajectory (.h5) whose frames they start from",
                            files.front(), count, count));
  }
  for (std::size_t k = 0; k < files.size() && check_files; ++k) {
    std::error_code ec;
    if (!fs::is_regular_file(files[k], ec))
      r.fail(at[k], fmt::format("'replicas.coordinates': {} is not a file", files[k]));
  }
  return files;
}

// The `replicas:` section (docs/replicas.md), after the integrator, run and output sections it is
// checked against.
void parse_replicas(const ConfigReader& r, const YAML::Node& root, RunConfig& cfg, bool check_files) {
  const YAML::Node n = root["replicas"];
  if (!n.IsMap())
    r.fail(n, "'replicas' must be a mapping, e.g. {exchange: temperature, temperatures: {min: 300 K, max: 400 K, "
              "count: 4}, exchange_interval: 2 ps} or {exchange: none, count: 8}");
  r.check_keys(n, {"exchange", "temperatures", "count", "exchange_interval", "seed", "log", "batch", "coordinates"},
               "replicas");
  ReplicaConfig rc;
  if (const auto v = n["exchange"])
    rc.exchange = r.choice<ReplicaExchangeKind>(v, "exchange", {{"temperature", ReplicaExchangeKind::Temperature},
                                                                {"none", ReplicaExchangeKind::None}});
  else
    r.fail(n, "'replicas' needs 'exchange': temperature (a temperature ladder with exchanges) or none (independent "
              "copies)");
  if (rc.exchange == ReplicaExchangeKind::None) {
    rc.count = independent_copies(r, n);
  } else {
    rc.temperatures_k = temperature_ladder(r, n);
    rc.count = static_cast<int>(rc.temperatures_k.size());
    rc.exchange_interval_steps = exchange_interval_steps(r, n, cfg.integrator.timestep_ps);
    if (const auto v = n["log"]) rc.log = exchange_log(r, v, cfg.output);
    check_exchange_context(r, root, cfg, rc.exchange_interval_steps);
  }
  if (const auto v = n["seed"]) {
    if (rc.exchange == ReplicaExchangeKind::None)
      r.fail(v, "'replicas.seed' seeds the exchange decisions; independent copies take their seeds from integrator.seed");
    rc.seed = r.unsigned_integer(v, "seed");
  }
  if (const auto v = n["batch"]) rc.batch = r.boolean(v, "batch");
  if (const auto v = n["coordinates"]) rc.coordinates = replica_coordinates(r, v, rc.count, check_files);
  if (root["stages"])
    r.fail(n, "'replicas' and 'stages' cannot be combined: equilibrate with a staged run first, then start the "
              "replicas from its final structure (system.structure)");
  if (cfg.run.initial_velocities == InitialVelocities::FromCheckpoint)
    r.fail(root["run"]["initial_velocities"],
           "'run.initial_velocities: from_checkpoint' cannot start replicas: use temperature or zero (continue an "
           "ensemble with --resume)");
  cfg.replicas = std::move(rc);
}

// Two outputs on one file would overwrite each other: refuse them, at the key written later (a default
// name has no location: then the other key is blamed).
void check_distinct_outputs(const ConfigReader& r, const YAML::Node& output, const OutputConfig& o) {
  // Where `key` ("output.final_pdb", "output.state.file") was written; an undefined node for a default.
  const auto written = [&output](const std::string& key) {
    const std::string rest = key.substr(key.find('.') + 1);  // below "output."
    const std::size_t dot = rest.find('.');
    const auto child = [](const YAML::Node& map, const std::string& name) {
      return map && map.IsMap() && map[name] && !map[name].IsNull() ? map[name] : YAML::Node(YAML::NodeType::Undefined);
    };
    if (dot == std::string::npos) return child(output, rest);
    const YAML::Node section = child(output, rest.substr(0, dot));
    return section.IsDefined() ? child(section, rest.substr(dot + 1)) : section;
  };
  const std::vector<OutputFile> files = output_files(o);
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      if (fs::path(files[i].file).lexically_normal() != fs::path(files[j].file).lexically_normal()) continue;
      const bool later_written = written(files[j].key).IsDefined();
      const OutputFile& blamed = later_written ? files[j] : files[i];
      const OutputFile& other = later_written ? files[i] : files[j];
      const std::string message = fmt::format("'{}' and '{}' both name the file '{}': one output would overwrite "
                                              "the other; give them different names",
                                              blamed.key, other.key, blamed.file);
      const YAML::Node at = written(blamed.key);
      if (at.IsDefined()) r.fail(at, message);
      throw InputError(located(r.source(), 0, 0, message));
    }
}

}  // namespace

namespace {

// A config is UTF-8 text: a NUL or other control byte (binary data) or a byte sequence that is not UTF-8 (a
// file saved as Latin-1) is refused at its line and column, before YAML reads it.
void check_text(const std::string& text, const std::string& source) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line, column = 1, ++i;
      continue;
    }
    if (c < 0x20 && c != '\t' && c != '\r')
      throw InputError(located(source, line, column,
                               fmt::format("the config is not a text file: byte 0x{:02x} (a YAML config is UTF-8 "
                                           "text)",
                                           c)));
    const std::size_t length = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                                             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!ok)
      throw InputError(located(source, line, column,
                               fmt::format("the config is not valid UTF-8: byte 0x{:02x} (saved in another encoding, "
                                           "such as Latin-1?); save it as UTF-8",
                                           c)));
    i += length;
    ++column;
  }
}

}  // namespace

RunConfig parse_config(const std::string& text, const std::string& source, const std::string& base_dir,
                       bool check_files) {
  check_text(text, source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(located(source, e.mark.line + 1, e.mark.column + 1, "YAML syntax error: " + e.msg));
  }
  const ConfigReader r(source, base_dir);
  if (!root.IsMap()) {
    const std::string message = "the config must be a YAML mapping with a 'system' section";
    if (root.IsDefined() && !root.IsNull()) r.fail(root, message);  // a scalar or a list: where it starts
    throw InputError(located(source, 0, 0, message));                // empty, or comments only
  }
  r.check_keys(root, {"system", "platform", "minimize", "integrator", "barostat", "run", "output", "stages", "replicas"},
               "");

  RunConfig cfg;
  cfg.source = source;
  record_locations(root, "", cfg.locations);
  if (!root["system"]) throw InputError(located(source, 1, 1, "missing section 'system' (with at least 'structure' (or its older name 'pdb'), the structure file, or 'topology' and 'coordinates')"));
  const std::optional<SystemXmlBarostat> system_barostat = parse_system(r, root["system"], cfg.system, check_files);
  if (const auto n = root["platform"]) parse_platform(r, n, cfg.platform);
  if (const auto n = root["integrator"]) parse_integrator(r, n, cfg.integrator);
  if (const auto n = root["minimize"]) {
    cfg.minimize.emplace();
    parse_minimize(r, n, *cfg.minimize);
  }
  if (const auto n = root["barostat"]) {
    cfg.barostat.emplace();
    parse_barostat(r, n, *cfg.barostat, cfg.integrator.temperature_k);
    if (!is_periodic(cfg.system.nonbonded.method)) {  // at the key: an empty 'barostat:' has no place of its own
      const SourceLocation at = cfg.locations.at("barostat");
      throw InputError(located(source, at.line, at.column,
                               fmt::format("'barostat' needs a periodic system (nonbonded_method pme or "
                                           "cutoff_periodic; this config's is {})",
                                           to_string(cfg.system.nonbonded.method))));
    }
  }
  if (system_barostat) apply_system_barostat(r, root, *system_barostat, cfg);
  if (const auto n = root["run"]) parse_run(r, n, cfg.run, cfg.integrator.timestep_ps);
  if (const auto n = root["output"]) parse_output(r, n, cfg.output);
  cfg.output.directory = r.path(cfg.output.directory);
  check_distinct_outputs(r, root["output"], cfg.output);
  if (root["stages"]) parse_stages(r, root, cfg, check_files);
  if (root["replicas"]) parse_replicas(r, root, cfg, check_files);
  return cfg;
}

RunConfig load_config(const std::string& path, std::string* text) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw InputError(fmt::format("{}: is a directory; name the config file (YAML) in it", path));
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw InputError(fmt::format("{}: the config is {}, not a regular file", path, file_kind(st)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the config file", path));
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string base = fs::path(path).parent_path().string();
  RunConfig config = parse_config(buf.str(), path, base.empty() ? "." : base);
  if (text) *text = buf.str();
  return config;
}

}  // namespace mdsim
