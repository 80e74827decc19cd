#include "prepare/protocol.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "prepare/prepare.hpp"

namespace fs = std::filesystem;

namespace mdsim {

namespace {

// A YAML double-quoted scalar.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The solute's heavy atoms: the solute is the first atoms of the prepared structure (water and ions follow).
std::string solute_selection(const PreparedSystem& p) {
  const Topology& top = p.topology;
  int solute_atoms = 0;
  for (const TopologyResidue& r : top.residues) {
    if (r.name == "HOH" || r.name == "NA" || r.name == "CL" || r.name == "K") break;
    solute_atoms += static_cast<int>(r.atoms.size());
  }
  return fmt::format("0-{} and heavy", solute_atoms - 1);
}

}  // namespace

std::string protocol_config(const PreparedSystem& p, const std::string& structure_path, const std::string& config_path,
                            const PrepareOptions& o) {
  const fs::path folder = fs::absolute(config_path).parent_path();
  const std::string structure = fs::absolute(structure_path).lexically_relative(folder).string();
  const bool periodic = p.topology.box.has_value();
  std::string ff;
  for (const std::string& f : prepare_forcefields(o)) ff += (ff.empty() ? "" : ", ") + f;
  const std::string restraints =
      o.restraint_k_kj_per_mol_nm2 > 0.0
          ? fmt::format("    restraints: {{atoms: {}, k: {} kJ/mol/nm^2, reference: initial}}\n", quoted(solute_selection(p)),
                        o.restraint_k_kj_per_mol_nm2)
          : std::string();
  const std::string barostat =
      periodic ? fmt::format("    barostat: {{pressure: {} bar, temperature: {} K, interval: 25}}\n", o.pressure_bar, o.temperature_k)
               : std::string();

  std::string y;
  y += fmt::format("# Written by `mdsim prepare` from {}: {} atoms{}.\n", p.report.input, p.report.atoms,
                   p.report.solvated ? fmt::format(", {} waters, {} + / {} - ions", p.report.solvent.waters_added -
                                                       p.report.ions.positive - p.report.ions.negative,
                                                   p.report.ions.positive, p.report.ions.negative)
                                     : std::string());
  y += "# Protocol: minimise and equilibrate with the solute's heavy atoms restrained (NVT, then NPT), then\n"
       "# production. Every key: docs/config.md. Run it with `mdsim run` on this file.\n";
  y += "system:\n";
  y += fmt::format("  structure: {}\n", quoted(structure));
  y += fmt::format("  forcefield: [{}]\n", ff);
  if (periodic) {
    y += "  nonbonded_method: pme\n";
    y += fmt::format("  cutoff: {} nm\n", o.cutoff_nm);
  } else {
    y += "  nonbonded_method: no_cutoff\n";
  }
  y += "  constraints: hbonds\n  rigid_water: true\n";
  y += "platform: {name: auto}\n";
  y += fmt::format("integrator: {{type: langevin_middle, temperature: {} K, friction: 1/ps, timestep: 2 fs, seed: 0}}\n",
                   o.temperature_k);
  y += "stages:\n";
  y += "  - name: minimize\n    minimize: {tolerance: 10 kJ/mol/nm}\n" + restraints;
  if (o.nvt_time_ps > 0.0) y += fmt::format("  - name: nvt\n    time: {} ps\n", o.nvt_time_ps) + restraints;
  if (periodic && o.npt_time_ps > 0.0)
    y += fmt::format("  - name: npt\n    time: {} ps\n", o.npt_time_ps) + barostat + restraints;
  if (o.production_time_ps > 0.0) y += fmt::format("  - name: production\n    time: {} ps\n", o.production_time_ps) + barostat;
  y += "output:\n  directory: out\n";
  y += "  trajectory: {file: trajectory.h5, interval: 5000}\n";
  y += "  state: {file: state.csv, interval: 500}\n";
  y += "  checkpoint: {file: checkpoint.h5, interval: 50000}\n";
  y += "  final_pdb: final.pdb\n";
  return y;
}

}  // namespace mdsim
