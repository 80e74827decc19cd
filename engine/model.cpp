#include "engine/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/resources.hpp"
#include "io/file_names.hpp"
#include "io/forcefield_xml.hpp"
#include "io/structure_reader.hpp"
#include "model/forcefield.hpp"
#include "model/overlaps.hpp"
#include "model/system_copies.hpp"

namespace mdsim {

namespace {

// A label for an atom in messages: "atom 12 (CA of ALA 3, chain A)".
std::string atom_label(const Topology& top, int index) {
  const TopologyAtom& a = top.atoms[static_cast<std::size_t>(index)];
  const TopologyResidue& r = top.residues[static_cast<std::size_t>(a.residue)];
  const std::string chain = r.chain >= 0 ? top.chains[static_cast<std::size_t>(r.chain)].id : std::string();
  return fmt::format("atom {} ({} of {} {}{}{})", a.serial, a.name, r.name, r.number,
                     r.insertion_code != ' ' ? std::string(1, r.insertion_code) : std::string(),
                     chain.empty() || chain == " " ? std::string() : ", chain " + chain);
}

}  // namespace

void print_notices(const std::string& file, const std::vector<std::string>& notes) {
  for (const std::string& note : notes) std::fprintf(stderr, "notice: %s: %s\n", file.c_str(), note.c_str());
}

void check_overlaps(const Topology& top) {
  // Extra points (virtual sites: no element, as OpenMM's PDBFile reads element EP) are no atoms: a TIP4P site sits
  // 0.0125 nm from its oxygen.
  std::vector<Vec3d> atoms;
  std::vector<int> index;  // atoms' row -> topology atom
  for (std::size_t a = 0; a < top.positions_nm.size(); ++a)
    if (a >= top.atoms.size() || !top.atoms[a].element.empty()) {
      atoms.push_back(top.positions_nm[a]);
      index.push_back(static_cast<int>(a));
    }
  std::optional<AtomPair> pair = find_closest_pair(atoms, top.box);
  if (!pair) return;
  pair->i = index[static_cast<std::size_t>(pair->i)];
  pair->j = index[static_cast<std::size_t>(pair->j)];
  const TopologyAtom& a = top.atoms[static_cast<std::size_t>(pair->i)];
  const TopologyAtom& b = top.atoms[static_cast<std::size_t>(pair->j)];
  const double direct_nm = norm(top.positions_nm[static_cast<std::size_t>(pair->j)] -
                                top.positions_nm[static_cast<std::size_t>(pair->i)]);
  const bool through_image = direct_nm > pair->distance_nm + 1e-9;
  throw InputError(located(
      top.source, a.line, 0,
      fmt::format("{} and {} (line {}) are {:.4f} nm apart{}, closer than {} nm: overlapping atoms have "
                  "unphysical (infinite) interactions. Remove the duplicated record or fix the clash in the "
                  "structure",
                  atom_label(top, pair->i), atom_label(top, pair->j), b.line, pair->distance_nm,
                  through_image ? " (nearest periodic image)" : "", kOverlapDistanceNm)));
}

int count_waters(const Topology& topology) {
  return static_cast<int>(std::count_if(topology.residues.begin(), topology.residues.end(), [](const TopologyResidue& r) { return is_water_residue_name(r.name); }));
}

namespace {

// The dispersion correction as OpenMM's createSystem decides it: the config's key (createSystem's argument) when
// written, else the force field's useDispersionCorrection (charmm36.xml says False), else on. A written key that
// contradicts the force field is refused, as OpenMM refuses the conflict.
bool dispersion_correction(const RunConfig& config, const ForceFieldData& ff) {
  const std::optional<bool> file =
      ff.use_dispersion_correction ? ff.use_dispersion_correction : ff.lennard_jones_dispersion_correction;
  const bool written = config.locations.count("system.dispersion_correction") > 0;
  const bool asked = config.system.nonbonded.dispersion_correction;
  if (!file) return asked;
  if (!written) return *file;
  if (asked != *file)
    throw_config_error(config, "system.dispersion_correction",
                       fmt::format("'dispersion_correction' is {}, but the force field says useDispersionCorrection="
                                   "\"{}\" (as OpenMM's createSystem, the two must agree): remove the key to use the "
                                   "force field's setting",
                                   asked ? "true" : "false", *file ? "True" : "False"));
  return asked;
}

// The structure and force fields through the templates (model/forcefield), as OpenMM's createSystem.
Model build_template_model(const RunConfig& config) {
  const SystemConfig& sc = config.system;
  Model model;
  std::vector<std::string> notes;  // what the reader wants the user to know: a model chosen, altlocs dropped
  model.topology = read_run_structure(sc.pdb, &notes);  // read_pdb for PDB files, gemmi for PDBx/mmCIF and .gz
  print_notices(sc.pdb, notes);
  check_overlaps(model.topology);
  const bool periodic = is_periodic(sc.nonbonded.method);
  if (periodic) {
    if (!model.topology.box)
      throw_config_error(config, "system.nonbonded_method",
                   fmt::format("nonbonded_method '{}' needs a periodic box, but {} has no {}",
                               to_string(sc.nonbonded.method), sc.pdb,
                               is_mmcif_path(sc.pdb) ? "_cell (unit cell)" : "CRYST1 record"));
    const double half = 0.5 * model.topology.box->smallest_height();
    if (sc.nonbonded.cutoff_nm > half)
      throw_config_error(config, "system.cutoff",
                   fmt::format("cutoff {} nm is longer than half the smallest box height of {} ({} nm)",
                               sc.nonbonded.cutoff_nm, sc.pdb, half));
  }
  const std::string base = std::filesystem::path(config.source).parent_path().string();
  const ForceFieldData ff = load_forcefields(sc.forcefield, base.empty() ? "." : base);
  model.forcefield_files = ff.files;
  create_topology_bonds(model.topology, ff.standard);  // the PDB's bonds, as OpenMM's PDBFile makes them

  ForceFieldOptions options;
  options.constraints = sc.constraints;
  options.rigid_water = sc.rigid_water;
  options.hydrogen_mass_amu = sc.hydrogen_mass_amu;
  options.nonbonded = sc.nonbonded;
  options.nonbonded.dispersion_correction = dispersion_correction(config, ff);
  model.system = build_system(model.topology, ff, options);
  model.positions_nm = model.topology.positions_nm;
  return model;
}

}  // namespace

Model build_model(const RunConfig& config) {
  const SystemConfig& sc = config.system;
  Model model = sc.topology.empty()                                        ? build_template_model(config)
                : topology_format(sc.topology) == TopologyFormat::SystemXml ? build_system_xml_model(config)
                                                                            : build_topology_file_model(config);
  if (sc.replicate != std::array<int, 3>{1, 1, 1}) {
    check_model_memory(config, model.system.num_particles());
    model = replicate_model(model, sc.replicate);
  }
  return model;
}

Model replicate_model(const Model& in, const std::array<int, 3>& counts) {
  if (!in.system.box) throw InputError("replicate: the system has no periodic box");
  const Boxd& box = *in.system.box;
  const int n = in.system.num_particles();
  Model out;
  out.forcefield_files = in.forcefield_files;
  Boxd big = box;
  big.a = box.a * double(counts[0]);
  big.b = box.b * double(counts[1]);
  big.c = box.c * double(counts[2]);
  out.system = repeat_system(in.system, counts[0] * counts[1] * counts[2]);
  out.system.box = big;
  out.topology.source = in.topology.source;
  out.topology.box = big;
  for (int cz = 0; cz < counts[2]; ++cz) {
    for (int cy = 0; cy < counts[1]; ++cy) {
      for (int cx = 0; cx < counts[0]; ++cx) {
        const int copy = (cz * counts[1] + cy) * counts[0] + cx;
        const int off = copy * n;
        const Vec3d shift = box.a * double(cx) + box.b * double(cy) + box.c * double(cz);
        for (const Vec3d& x : in.positions_nm) out.positions_nm.push_back(x + shift);
        out.velocities_nm_per_ps.insert(out.velocities_nm_per_ps.end(), in.velocities_nm_per_ps.begin(),
                                        in.velocities_nm_per_ps.end());
        for (auto r : in.position_restraints) { r.atom += off; out.position_restraints.push_back(r); }
        // Topology: chains, residues and atoms copied with shifted indices.
        Topology& top = out.topology;
        const int chain_off = static_cast<int>(top.chains.size());
        const int res_off = static_cast<int>(top.residues.size());
        for (auto ch : in.topology.chains) {
          for (int& r : ch.residues) r += res_off;
          top.chains.push_back(ch);
        }
        for (auto r : in.topology.residues) {
          r.chain += chain_off;
          for (int& a : r.atoms) a += off;
          top.residues.push_back(r);
        }
        for (auto a : in.topology.atoms) {
          a.residue += res_off;
          top.atoms.push_back(a);
        }
        for (const auto& [i, j] : in.topology.bonds) top.bonds.emplace_back(i + off, j + off);
        for (const auto& [i, j] : in.topology.conect) top.conect.emplace_back(i + off, j + off);
      }
    }
  }
  out.topology.positions_nm = out.positions_nm;
  return out;
}

}  // namespace mdsim
