// Internal to io/config: a `system:` section with `topology:` (a serialized OpenMM System, io/system_xml) and
// `coordinates:` instead of `structure:` + `forcefield:`. The System's own settings hold: io/config reads the System
// once, makes the config's system settings (nonbonded method, cutoff, Ewald tolerance, switching, dispersion
// correction, constraints, rigid water, centre-of-mass motion removal) and its barostat the System's, and refuses a
// written key that contradicts them, naming both values (docs/config.md, "A serialized OpenMM System").
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>

#include "io/system_xml.hpp"
#include "io/yaml_reader.hpp"
#include "model/run_config.hpp"

namespace mdsim {

// `topology` and `coordinates` of `system` (node n) into s.topology and s.pdb (resolved; with check_files, both
// must be regular files): refuses `forcefield`, `structure`/`pdb` and `hydrogen_mass` beside `topology`, a topology
// that is not a serialized System (.xml, .xml.gz), and a missing `coordinates`. Empties s.forcefield.
void parse_topology_keys(const ConfigReader& r, const YAML::Node& n, SystemConfig& s, bool check_files);

// After the other keys of `system` are parsed: reads the System (InputError located in it for what it cannot hold),
// refuses a key n writes that contradicts it, and sets s's settings from it (s.nonbonded.pme_grid stays the
// config's). Returns the System's MonteCarloBarostat, for apply_system_barostat.
std::optional<SystemXmlBarostat> apply_system_settings(const ConfigReader& r, const YAML::Node& n, SystemConfig& s);

// The System's MonteCarloBarostat as the run's barostat (after the top-level `barostat:` is parsed, before the
// stages): its pressure, temperature and interval; a written barostat key that contradicts it is refused. Records
// barostat.temperature as written (at system.topology), so the stages keep the System's temperature.
void apply_system_barostat(const ConfigReader& r, const YAML::Node& root, const SystemXmlBarostat& barostat,
                           RunConfig& cfg);

}  // namespace mdsim
