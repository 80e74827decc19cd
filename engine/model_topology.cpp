// build_system_xml_model and build_topology_file_model (engine/model.hpp): a serialized OpenMM System, an AMBER prmtop
// or a GROMACS top, with its coordinates.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/amber_coordinates.hpp"
#include "io/amber_prmtop.hpp"
#include "io/charmm_crd.hpp"
#include "io/charmm_psf.hpp"
#include "io/file_names.hpp"
#include "io/gro_reader.hpp"
#include "io/gromacs_top.hpp"
#include "io/structure_reader.hpp"
#include "io/system_xml.hpp"
#include "model/creation_options.hpp"
#include "model/system_analysis.hpp"

namespace mdsim {
namespace {

void check_count(const RunConfig& config, std::size_t atoms, int particles) {
  if (static_cast<int>(atoms) == particles) return;
  const SystemConfig& sc = config.system;
  throw_config_error(config, "system.coordinates",
                     fmt::format("{} has {} atoms, but the System in {} has {} particles: the coordinates and the "
                                 "System must describe the same atoms in the same order",
                                 sc.pdb, atoms, sc.topology, particles));
}

std::string box_text(const Boxd& b) {
  return b.triclinic() ? fmt::format("a ({:.4f}, 0, 0), b ({:.4f}, {:.4f}, 0), c ({:.4f}, {:.4f}, {:.4f}) nm", b.a.x,
                                     b.b.x, b.b.y, b.c.x, b.c.y, b.c.z)
                       : fmt::format("{:.4f} x {:.4f} x {:.4f} nm", b.a.x, b.b.y, b.c.z);
}

// The notice for coordinates that carry velocities, unless the run starts from them.
void notice_velocities(const RunConfig& config, const std::vector<Vec3d>& velocities) {
  if (velocities.empty() || config.run.initial_velocities == InitialVelocities::FromCoordinates) return;
  print_notices(config.system.pdb, {"its velocities are not used: run.initial_velocities sets the starting velocities "
                                    "('initial_velocities: from_coordinates' starts from these)"});
}

// A serialized State: positions (and, for a periodic System, its box), with a topology made from the System; its
// velocities (if any) into `velocities`.
Topology state_topology(const RunConfig& config, System& system, std::vector<Vec3d>& velocities) {
  const SystemConfig& sc = config.system;
  StateXml state = read_state_xml(sc.pdb);
  check_count(config, state.positions_nm.size(), system.num_particles());
  if (system.box && state.box) system.box = state.box;  // as Context.setState sets the box
  print_notices(sc.pdb, {"a serialized State holds no topology: one residue per molecule of the System (HOH for "
                         "waters, MOL for the others, the element for single ions), elements from masses; selections "
                         "by residue or atom name (protein, backbone) match nothing; give a PDB or PDBx/mmCIF file as "
                         "coordinates for names"});
  notice_velocities(config, state.velocities_nm_per_ps);
  velocities = std::move(state.velocities_nm_per_ps);
  return topology_from_system(system, state.positions_nm, sc.pdb);
}

// A PDB or PDBx/mmCIF file: its atoms and positions; its bonds are the System's, its box the System's.
Topology structure_topology(const RunConfig& config, const System& system) {
  const SystemConfig& sc = config.system;
  std::vector<std::string> notes;
  Topology top = read_run_structure(sc.pdb, &notes);
  check_count(config, top.atoms.size(), system.num_particles());
  // CRYST1 keeps 3 decimals of Å: boxes within 1e-4 nm are the same box.
  if (system.box && top.box && !same_box(*system.box, *top.box, 1.5e-4))
    notes.push_back(fmt::format("its box ({}) differs from the System's ({}): the System's is used", box_text(*top.box),
                                box_text(*system.box)));
  print_notices(sc.pdb, notes);
  top.bonds = system_bonds(system);
  if (system.box) top.box = system.box;
  return top;
}

// The cutoff within half the smallest box height, as the template path checks it.
void check_cutoff(const RunConfig& config, const System& system) {
  if (!system.box || !is_periodic(system.nonbonded.method)) return;
  const double half = 0.5 * system.box->smallest_height();
  if (system.nonbonded.cutoff_nm > half)
    throw_config_error(config, "system.topology",
                       fmt::format("the System's cutoff {} nm (in {}) is longer than half the smallest box height "
                                   "({} nm)",
                                   system.nonbonded.cutoff_nm, config.system.topology, half));
}

}  // namespace

Model build_system_xml_model(const RunConfig& config) {
  const SystemConfig& sc = config.system;
  SystemXml sx = read_system_xml(sc.topology);
  print_notices(sc.topology, sx.notes);
  Model model;
  model.system = std::move(sx.system);
  model.system.nonbonded.pme_grid = sc.nonbonded.pme_grid;
  model.forcefield_files = {sc.topology};
  model.topology = is_openmm_xml_path(sc.pdb) ? state_topology(config, model.system, model.velocities_nm_per_ps)
                                               : structure_topology(config, model.system);
  check_overlaps(model.topology);
  check_cutoff(config, model.system);
  model.positions_nm = model.topology.positions_nm;
  return model;
}

namespace {

TopologyFileOptions topology_file_options(const SystemConfig& sc) {
  TopologyFileOptions o;
  o.nonbonded = sc.nonbonded;
  o.constraints = sc.constraints;
  o.rigid_water = sc.rigid_water;
  o.hydrogen_mass_amu = sc.hydrogen_mass_amu;
  o.include_dirs = sc.include_dirs;
  o.defines = sc.defines;
  o.parameters = sc.parameters;
  o.box = sc.box;
  return o;
}

// The periodic box: the coordinates' (the state the run continues from), else the topology's own (a prmtop's), else
// the config's `box`; none for a non-periodic method.
std::optional<Boxd> choose_box(const RunConfig& config, const CoordinateFile& coords, const System& system) {
  const SystemConfig& sc = config.system;
  if (!is_periodic(sc.nonbonded.method)) return std::nullopt;
  if (coords.box) return coords.box;
  if (system.box) return system.box;
  if (sc.box) return sc.box;
  throw_config_error(config, "system.nonbonded_method",
                     fmt::format("nonbonded_method '{}' needs a periodic box, but neither {} nor {} gives one: add "
                                 "system.box (three edges, e.g. [3.2 nm, 3.2 nm, 3.2 nm], or three vectors)",
                                 to_string(sc.nonbonded.method), sc.topology, sc.pdb));
}

// A topology's own position restraints, applied: how many, under which define (GROMACS [position_restraints]).
void notice_restraints(const SystemConfig& sc, const TopologyFileModel& file) {
  if (file.position_restraints.empty()) return;
  std::vector<std::string> guards;  // each distinct define they were under, in order
  for (const TopologyPositionRestraint& r : file.position_restraints)
    if (std::find(guards.begin(), guards.end(), r.guard) == guards.end()) guards.push_back(r.guard);
  std::string under;
  for (const std::string& g : guards) under += (under.empty() ? "" : "; ") + (g.empty() ? "no #ifdef" : g);
  print_notices(sc.topology, {fmt::format("its {} [position_restraints] (under {}) are applied for the whole run, "
                                          "about the starting coordinates of {}",
                                          file.position_restraints.size(), under, sc.pdb)});
}

// The format's reader. A CHARMM psf has no dispersion correction unless the config asks for one (OpenMM's
// CharmmPsfFile.createSystem always leaves it off; CHARMM force fields are parameterised without it).
TopologyFileModel read_topology_file(const RunConfig& config, TopologyFileOptions& options) {
  const SystemConfig& sc = config.system;
  switch (topology_format(sc.topology)) {
    case TopologyFormat::AmberPrmtop: return read_amber_prmtop(sc.topology, options);
    case TopologyFormat::CharmmPsf:
      if (config.locations.count("system.dispersion_correction") == 0) options.nonbonded.dispersion_correction = false;
      return read_charmm_psf(sc.topology, options);
    default: return read_gromacs_top(sc.topology, options);
  }
}

}  // namespace

bool same_box(const Boxd& a, const Boxd& b, double tolerance_nm) {
  const Vec3d d[3] = {a.a - b.a, a.b - b.b, a.c - b.c};
  for (const Vec3d& v : d)
    if (std::fabs(v.x) > tolerance_nm || std::fabs(v.y) > tolerance_nm || std::fabs(v.z) > tolerance_nm) return false;
  return true;
}

CoordinateFile read_coordinate_file(const std::string& path, Topology* structure) {
  if (is_structure_path(path)) {
    std::vector<std::string> notes;
    Topology top = read_run_structure(path, &notes);
    print_notices(path, notes);
    CoordinateFile out{path, top.positions_nm, {}, top.box};
    if (structure) *structure = std::move(top);
    return out;
  }
  if (is_openmm_xml_path(path)) {
    StateXml state = read_state_xml(path);
    return CoordinateFile{path, std::move(state.positions_nm), std::move(state.velocities_nm_per_ps), state.box};
  }
  if (ends_with_ci(path, ".gro")) return read_gro(path);
  const bool crd = ends_with_ci(path, ".crd") || ends_with_ci(path, ".chm");  // CHARMM's or AMBER's
  if (ends_with_ci(path, ".cor") || (crd && is_charmm_crd_file(path))) return read_charmm_crd(path, -1);
  return read_amber_coordinates(path, -1);  // .inpcrd, .rst7, AMBER's .crd, ...
}

Model build_topology_file_model(const RunConfig& config) {
  const SystemConfig& sc = config.system;
  const CoordinateFile coords = read_coordinate_file(sc.pdb);
  TopologyFileOptions options = topology_file_options(sc);
  if (coords.box) options.box = coords.box;  // a prmtop without a box of its own takes the coordinates'
  options.atom_limit = static_cast<long>(coords.positions_nm.size());
  TopologyFileModel file = read_topology_file(config, options);
  print_notices(sc.topology, file.notes);
  check_count(config, coords.positions_nm.size(), file.system.num_particles());
  notice_restraints(sc, file);
  Model model;
  model.system = std::move(file.system);
  model.system.box = choose_box(config, coords, model.system);
  apply_creation_options(model.system, file.topology,
                         CreationOptions{sc.constraints, sc.rigid_water, sc.hydrogen_mass_amu, false});
  model.forcefield_files = {sc.topology};
  model.topology = std::move(file.topology);
  model.topology.positions_nm = coords.positions_nm;
  model.topology.box = model.system.box;
  check_overlaps(model.topology);
  check_cutoff(config, model.system);
  model.positions_nm = model.topology.positions_nm;
  notice_velocities(config, coords.velocities_nm_per_ps);
  model.velocities_nm_per_ps = coords.velocities_nm_per_ps;
  model.position_restraints = std::move(file.position_restraints);
  return model;
}

}  // namespace mdsim
