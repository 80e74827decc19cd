// build_system_xml_model (engine/model.hpp): a serialized OpenMM System with its coordinates.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/structure_reader.hpp"
#include "io/system_xml.hpp"
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

bool same_box(const Boxd& a, const Boxd& b, double tolerance_nm) {
  const Vec3d d[3] = {a.a - b.a, a.b - b.b, a.c - b.c};
  for (const Vec3d& v : d)
    if (std::fabs(v.x) > tolerance_nm || std::fabs(v.y) > tolerance_nm || std::fabs(v.z) > tolerance_nm) return false;
  return true;
}

std::string box_text(const Boxd& b) {
  return b.triclinic() ? fmt::format("a ({:.4f}, 0, 0), b ({:.4f}, {:.4f}, 0), c ({:.4f}, {:.4f}, {:.4f}) nm", b.a.x,
                                     b.b.x, b.b.y, b.c.x, b.c.y, b.c.z)
                       : fmt::format("{:.4f} x {:.4f} x {:.4f} nm", b.a.x, b.b.y, b.c.z);
}

// A serialized State: positions (and, for a periodic System, its box), with a topology made from the System.
Topology state_topology(const RunConfig& config, System& system) {
  const SystemConfig& sc = config.system;
  const StateXml state = read_state_xml(sc.pdb);
  check_count(config, state.positions_nm.size(), system.num_particles());
  if (system.box && state.box) system.box = state.box;  // as Context.setState sets the box
  std::vector<std::string> notes{
      "a serialized State holds no topology: one residue per molecule of the System (HOH for waters, MOL for the "
      "others, the element for single ions), elements from masses; selections by residue or atom name (protein, "
      "backbone) match nothing; give a PDB or PDBx/mmCIF file as coordinates for names"};
  if (!state.velocities_nm_per_ps.empty())
    notes.push_back("its velocities are not used (run.initial_velocities sets the starting velocities)");
  print_notices(sc.pdb, notes);
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
  const Boxd& b = *system.box;
  const double half = 0.5 * std::min({b.a.x, b.b.y, b.c.z});
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
  model.topology =
      is_openmm_xml_path(sc.pdb) ? state_topology(config, model.system) : structure_topology(config, model.system);
  check_overlaps(model.topology);
  check_cutoff(config, model.system);
  model.positions_nm = model.topology.positions_nm;
  return model;
}

}  // namespace mdsim
