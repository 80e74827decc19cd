#include "prepare/prepare.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/atomic_file.hpp"
#include "io/forcefield_xml.hpp"
#include "io/mmcif_writer.hpp"
#include "io/output_paths.hpp"
#include "io/pdb_writer.hpp"
#include "io/structure_reader.hpp"
#include "model/forcefield.hpp"
#include "prepare/chain_breaks.hpp"
#include "prepare/protocol.hpp"

namespace fs = std::filesystem;

namespace mdsim {

namespace {

// "A:45" / "A:45B" -> the residue index; InputError naming the option when no residue has that id.
std::map<int, std::string> resolve_variants(const Topology& top, const std::map<std::string, std::string>& given) {
  std::map<int, std::string> out;
  for (const auto& [id, variant] : given) {
    const std::size_t colon = id.find(':');
    const std::string chain = id.substr(0, colon);
    std::string number = id.substr(colon + 1);
    char icode = ' ';
    if (!number.empty() && std::isalpha(static_cast<unsigned char>(number.back()))) {
      icode = number.back();
      number.pop_back();
    }
    const int resseq = std::stoi(number);
    int found = -1;
    for (std::size_t r = 0; r < top.residues.size() && found < 0; ++r) {
      const TopologyResidue& res = top.residues[r];
      std::string cid = top.chains[static_cast<std::size_t>(res.chain)].id;
      if (cid == " ") cid.clear();  // a blank chain id is written ":45"
      if (res.number == resseq && res.insertion_code == icode && cid == chain)
        found = static_cast<int>(r);
    }
    if (found < 0)
      throw InputError(fmt::format("variant {}={}: {} has no residue {} in chain '{}' (give CHAIN:NUMBER[ICODE] as the "
                                   "structure numbers it)",
                                   id, variant, top.source, id.substr(colon + 1), chain));
    out[found] = variant;
  }
  return out;
}

ForceFieldOptions vacuum_options() {
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  o.constraints = ConstraintMode::None;
  o.rigid_water = false;
  return o;
}

}  // namespace

PreparedSystem prepare_system(const PrepareFiles& files, const PrepareOptions& options) {
  PreparedSystem out;
  PrepareReport& rep = out.report;
  rep.input = files.input;

  StructureFile read = read_structure(files.input);
  Topology top = std::move(read.topology);
  rep.notes = read.notes;
  rep.input_atoms = top.num_atoms();
  rep.input_residues = static_cast<int>(top.residues.size());
  rep.input_chains = static_cast<int>(top.chains.size());
  check_overlaps(top);

  const ForceFieldData ff = load_forcefields(options.forcefield, ".");
  create_topology_bonds(top, ff.standard);

  const std::vector<ChainBreak> breaks = find_chain_breaks(top);
  if (!breaks.empty()) {
    if (!options.split_chain_breaks) {
      const ChainBreak& b = breaks.front();
      throw InputError(located(
          top.source, top.residues[static_cast<std::size_t>(b.after)].line, 0,
          fmt::format("{}{}: residues are missing there. Model them (PDBFixer), or treat each piece as its own chain "
                      "with charged ends (--chain-breaks split, prepare.chain_breaks: split)",
                      describe(top, b), breaks.size() > 1 ? fmt::format(" (and {} more breaks)", breaks.size() - 1) : "")));
    }
    for (const ChainBreak& b : breaks) rep.notes.push_back("split: " + describe(top, b));
    top = split_chains(top, breaks);
    create_topology_bonds(top, ff.standard);
    rep.chains_split = static_cast<int>(breaks.size());
  }

  HydrogenOptions hopt;
  hopt.ph = options.ph;
  hopt.variants = resolve_variants(top, options.variants);
  const HydrogenDefinitions defs = load_default_hydrogen_definitions();
  top = add_hydrogens(top, ff, ff.standard, defs, hopt, &rep.hydrogens);
  for (const std::string& n : rep.hydrogens.notes) rep.notes.push_back(n);

  // The solute against the force field: a residue that matches no template fails here, with the template
  // matcher's explanation, before any water is added.
  const System solute = build_system(top, ff, vacuum_options());
  rep.solute_charge_e = rounded_total_charge(solute);
  rep.final_charge_e = rep.solute_charge_e;

  if (options.solvate) {
    SolventOptions sopt;
    sopt.water_model = options.water_model;
    sopt.padding_nm = options.padding_nm;
    sopt.shape = options.box_shape;
    sopt.box_nm = options.box_nm;
    sopt.cutoff_nm = options.cutoff_nm;
    top = add_solvent(top, solute, sopt, &rep.solvent);
    rep.solvated = true;
    IonOptions iopt;
    iopt.neutralize = options.neutralize;
    iopt.ionic_strength_molar = options.ionic_strength_molar;
    iopt.positive_ion = options.positive_ion;
    iopt.negative_ion = options.negative_ion;
    iopt.seed = options.seed;
    top = add_ions(top, rep.solute_charge_e, iopt, &rep.ions);
    create_topology_bonds(top, ff.standard);
  }

  // The whole system as `mdsim run` will build it: every residue must match a template.
  ForceFieldOptions full = vacuum_options();
  if (top.box) {
    full.nonbonded.method = NonbondedMethod::PME;
    full.nonbonded.cutoff_nm = options.cutoff_nm;
  }
  const System whole = build_system(top, ff, full);
  rep.final_charge_e = rounded_total_charge(whole);
  rep.atoms = top.num_atoms();
  out.topology = std::move(top);
  return out;
}

std::string prepared_structure_path(const PrepareFiles& files, int atoms) {
  if (!files.output.empty()) return files.output;
  fs::path in(files.input);
  if (in.extension() == ".gz") in = in.stem();
  const std::string stem = in.stem().string();
  return (fs::path(files.input).parent_path() / (stem + (atoms > 99999 ? "_prepared.cif" : "_prepared.pdb"))).string();
}

namespace {

// The prepared structure's name must say its format.
std::string structure_format(const std::string& structure) {
  std::string ext = fs::path(structure).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext != ".pdb" && ext != ".cif" && ext != ".mmcif")
    throw InputError(fmt::format("output {}: name a .pdb or .cif file (the format follows the extension)", structure));
  return ext;
}

// An output is a new or regular file in a folder that exists.
void check_output_place(const std::string& option, const std::string& path) {
  if (const std::string problem = output_place_problem(path); !problem.empty())
    throw InputError(fmt::format("{} {}: {}", option, path, problem));
}

}  // namespace

void check_prepare_files(const PrepareFiles& files, const std::string& settings_file) {
  std::vector<RoleFile> outputs;
  // Without --output the name depends on the atom count (.pdb, or .cif above 99,999 atoms): check both.
  for (const int atoms : {0, 100000}) {
    if (atoms > 0 && !files.output.empty()) break;
    const std::string structure = prepared_structure_path(files, atoms);
    structure_format(structure);
    check_output_place("--output", structure);
    outputs.push_back({"the prepared structure (--output)", structure});
  }
  if (!files.config.empty()) {
    check_output_place("--config", files.config);
    outputs.push_back({"the run config (--config)", files.config});
  }
  std::vector<RoleFile> inputs{{"the input structure", files.input}};
  if (!settings_file.empty()) inputs.push_back({"the settings file", settings_file});
  check_outputs_apart(inputs, outputs);
}

std::vector<std::string> write_prepared(const PreparedSystem& p, const PrepareFiles& files,
                                        const PrepareOptions& options, const std::string& settings_file) {
  check_prepare_files(files, settings_file);
  const std::string structure = prepared_structure_path(files, p.report.atoms);
  const std::string ext = structure_format(structure);
  // The config first (in memory), so a bad setting fails before anything is written.
  std::string config_text;
  if (!files.config.empty()) config_text = protocol_config(p, structure, files.config, options);
  if (ext == ".pdb") write_pdb(structure, p.topology, p.topology.positions_nm, p.topology.box);
  else write_mmcif(structure, p.topology, p.topology.positions_nm, p.topology.box);
  std::vector<std::string> written{structure};
  if (!files.config.empty()) {
    write_file_atomically(files.config, config_text, "the run config");
    written.push_back(files.config);
  }
  return written;
}

}  // namespace mdsim

namespace mdsim {

std::string prepare_summary(const PreparedSystem& p) {
  const PrepareReport& r = p.report;
  std::string s;
  s += fmt::format("input: {} atoms, {} residues, {} chains ({})\n", r.input_atoms, r.input_residues, r.input_chains,
                   r.input);
  for (const std::string& n : r.notes) s += "  note: " + n + "\n";
  std::string per;
  for (const auto& [name, count] : r.hydrogens.added_per_residue_name)
    per += fmt::format("{}{} {}", per.empty() ? "" : ", ", name, count);
  s += fmt::format("hydrogens: {} added{}\n", r.hydrogens.added, per.empty() ? "" : " (" + per + ")");
  if (r.hydrogens.iterations > 0)
    s += fmt::format("  optimised with the force field: largest force on an added hydrogen {:.0f} -> {:.0f} kJ/mol/nm "
                     "({} iterations)\n",
                     r.hydrogens.max_force_before, r.hydrogens.max_force_after, r.hydrogens.iterations);
  // Protonation: counts per variant, then every choice that is not the residue's own name (HIS always listed).
  std::map<std::string, int> variants;
  for (const ProtonationChoice& c : r.hydrogens.choices) ++variants[c.variant];
  std::string counts;
  for (const auto& [v, n] : variants) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", v, n);
  if (!counts.empty()) s += "protonation: " + counts + "\n";
  // Every histidine and every residue not in its default form (ASH, GLH, LYN, CYX, ...); chain ends are counted.
  for (const ProtonationChoice& c : r.hydrogens.choices)
    if (c.residue_name == "HIS" || (c.variant.size() == 3 && c.variant != c.residue_name))
      s += fmt::format("  {} {}{} (chain '{}'): {}{}\n", c.residue_name, c.number, c.icode == ' ' ? "" : std::string(1, c.icode),
                       c.chain, c.variant, c.reason.empty() ? "" : " (" + c.reason + ")");
  if (r.solvated) {
    const Boxd& b = r.solvent.box;
    s += fmt::format("solvent: {} waters; box vectors (nm) a = ({:.4f}, 0, 0), b = ({:.4f}, {:.4f}, 0), c = ({:.4f}, "
                     "{:.4f}, {:.4f}); {:.2f} nm^3\n",
                     r.solvent.waters_added - r.ions.positive - r.ions.negative, b.a.x, b.b.x, b.b.y, b.c.x, b.c.y,
                     b.c.z, b.a.x * b.b.y * b.c.z);
    s += fmt::format("  waters left out: {} overlapping the solute, {} clashing across the periodic boundary{}\n",
                     r.solvent.removed_near_solute, r.solvent.removed_boundary_clashes + r.solvent.removed_atom_clashes,
                     r.solvent.enlarged ? "; the box was widened to keep the padding from the solute's images" : "");
    s += fmt::format("ions: {} positive, {} negative ({} neutralising, {} pairs: {:.3f} M)\n", r.ions.positive,
                     r.ions.negative, r.ions.neutralizing, r.ions.pairs, r.ions.ionic_strength_molar);
  }
  s += fmt::format("net charge: {:+d} e (solute) -> {:+d} e\n", r.solute_charge_e, r.final_charge_e);
  s += fmt::format("atoms: {}\n", r.atoms);
  return s;
}

}  // namespace mdsim
