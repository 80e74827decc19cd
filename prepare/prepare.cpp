#include "prepare/prepare.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
#include "prepare/extra_particles.hpp"
#include "prepare/heterogens.hpp"
#include "prepare/protocol.hpp"
#include "prepare/residue_problems.hpp"

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

// The input structure must be a file: a folder would be read as a file that holds no atoms.
void check_input_file(const std::string& input) {
  std::error_code ec;
  if (fs::is_directory(input, ec))
    throw InputError(
        fmt::format("{}: is a folder; give a .pdb or .cif file (PDB or PDBx/mmCIF, optionally .gz)", input));
}

// The structure as read.
Topology read_input(const PrepareFiles& files, PrepareReport& rep) {
  check_input_file(files.input);
  StructureFile read = read_structure(files.input);
  rep.notes = read.notes;
  rep.input_atoms = read.topology.num_atoms();
  rep.input_residues = static_cast<int>(read.topology.residues.size());
  rep.input_chains = static_cast<int>(read.topology.chains.size());
  return std::move(read.topology);
}

// Heterogens removed when asked (before anything else looks at the structure), overlaps checked, bonds made.
void clean_input(Topology& top, const PrepareOptions& options, const ForceFieldData& ff, PrepareReport& rep) {
  if (options.remove_heterogens) {
    top = remove_heterogens(top, ff.standard, options.keep_heterogens, &rep.heterogens);
    rep.heterogens_removed = true;
  }
  check_overlaps(top);
  create_topology_bonds(top, ff.standard);
}

// " (--remove-heterogens removed NLN 3 there: ...)" when a removed heterogen sat in the break (a modified residue
// of the chain, which PDBFixer's removeHeterogens removes too).
std::string removed_in_break(const Topology& top, const ChainBreak& b, const HeterogenReport& removed) {
  const TopologyResidue& before = top.residues[static_cast<std::size_t>(b.before)];
  const TopologyResidue& after = top.residues[static_cast<std::size_t>(b.after)];
  for (const RemovedResidue& r : removed.removed_residues)
    if (r.chain == top.chains[static_cast<std::size_t>(b.chain)].id && r.number >= before.number &&
        r.number <= after.number)
      return fmt::format(" (--remove-heterogens removed {} {}{} there: if it belongs to the chain, keep it with "
                         "--keep-heterogens {})",
                         r.name, r.number, r.icode == ' ' ? "" : std::string(1, r.icode), r.name);
  return "";
}

// Chain breaks: an error naming the first (and how many more), or each piece its own chain (split_chain_breaks).
void handle_chain_breaks(Topology& top, const PrepareOptions& options, const ForceFieldData& ff, PrepareReport& rep) {
  const std::vector<ChainBreak> breaks = find_chain_breaks(top);
  if (breaks.empty()) return;
  if (!options.split_chain_breaks) {
    const ChainBreak& b = breaks.front();
    throw InputError(located(
        top.source, top.residues[static_cast<std::size_t>(b.after)].line, 0,
        fmt::format("{}{}: residues are missing there{}. Model them (PDBFixer), or treat each piece as its own chain "
                    "with charged ends (--chain-breaks split, prepare.chain_breaks: split)",
                    describe(top, b), breaks.size() > 1 ? fmt::format(" (and {} more breaks)", breaks.size() - 1) : "",
                    removed_in_break(top, b, rep.heterogens))));
  }
  for (const ChainBreak& b : breaks) rep.notes.push_back("split: " + describe(top, b));
  top = split_chains(top, breaks);
  create_topology_bonds(top, ff.standard);
  rep.chains_split = static_cast<int>(breaks.size());
}

// The waters the input holds, and what solvating does with them: a note for the summary. Water fills about
// 0.0299 nm^3 per molecule (1 g/cm^3); an input whose waters fill 40% of its box or more is already solvated.
void note_input_waters(const Topology& top, const PrepareOptions& options, const ForceFieldData& ff,
                       PrepareReport& rep) {
  for (const TopologyResidue& res : top.residues) rep.input_waters += is_water(res.name, ff.standard);
  if (rep.input_waters == 0 || !options.solvate) return;
  const std::string where = options.box_nm ? "in the box given (--box)"
                                           : fmt::format("in a new box {} nm (padding) beyond the outermost atom, "
                                                         "waters included",
                                                         quoted_number(options.padding_nm));
  const std::string kept = fmt::format("They are kept; water is added only where there is room (no new water "
                                       "overlaps an atom already there), {}, and ions replace randomly chosen "
                                       "waters, the input's too. --no-solvent (prepare.solvent: false) adds no water "
                                       "or ions",
                                       where);
  if (top.box) {
    const Boxd& b = *top.box;
    const double filled = rep.input_waters * 0.0299 / (b.a.x * b.b.y * b.c.z);
    if (filled >= 0.4) {
      rep.notes.push_back(fmt::format("the input is already solvated: its {} waters fill about {:.0f}% of its periodic "
                                      "box ({:.4g} x {:.4g} x {:.4g} nm). {} and keeps the input's box",
                                      rep.input_waters, 100.0 * std::min(filled, 1.0), b.a.x, b.b.y, b.c.z, kept));
      return;
    }
  }
  rep.notes.push_back(
      fmt::format("the input holds {} water{}. {}", rep.input_waters, rep.input_waters == 1 ? "" : "s", kept));
}

// Solvent and ions around `solute` (its System built without cutoff).
Topology solvate(const Topology& top, const System& solute, const PrepareOptions& options, const ForceFieldData& ff,
                 PrepareReport& rep) {
  SolventOptions sopt;
  sopt.water_model = options.water_model;
  sopt.padding_nm = options.padding_nm;
  sopt.shape = options.box_shape;
  sopt.box_nm = options.box_nm;
  sopt.cutoff_nm = options.cutoff_nm;
  Topology out = add_solvent(top, solute, sopt, &rep.solvent);
  add_water_extra_particles(out, ff);  // the new waters' extra particles (4-site models), before ions replace waters
  rep.solvated = true;
  IonOptions iopt;
  iopt.neutralize = options.neutralize;
  iopt.ionic_strength_molar = options.ionic_strength_molar;
  iopt.positive_ion = options.positive_ion;
  iopt.negative_ion = options.negative_ion;
  iopt.seed = options.seed;
  out = add_ions(out, rep.solute_charge_e, iopt, &rep.ions);
  create_topology_bonds(out, ff.standard);
  return out;
}

}  // namespace

std::vector<std::string> prepare_forcefields(const PrepareOptions& options) {
  const std::string water = "amber14/" + options.water_model + ".xml";
  std::vector<std::string> files = options.forcefield;
  if (!options.forcefield_given) {
    for (std::string& f : files)
      if (f == "amber14/tip3p.xml") f = water;
    return files;
  }
  for (const std::string& f : files)
    for (const char* other : {"amber14/tip3p.xml", "amber14/tip4pew.xml"})
      if (f == other && f != water)
        throw InputError(fmt::format("--forcefield (prepare.forcefield) lists {} but the water model is {} "
                                     "(--water-model, prepare.water_model), whose water force field is {}: list {} "
                                     "instead, or leave out the force-field list to get amber14-all.xml and {}",
                                     f, options.water_model, water, water, water));
  return files;
}

PreparedSystem prepare_system(const PrepareFiles& files, const PrepareOptions& options) {
  PreparedSystem out;
  PrepareReport& rep = out.report;
  rep.input = files.input;

  if (!options.keep_heterogens.empty() && !options.remove_heterogens)
    throw InputError(fmt::format("--keep-heterogens {} given without --remove-heterogens: the keep list names the "
                                 "heterogens --remove-heterogens leaves in place; add --remove-heterogens "
                                 "(prepare.remove_heterogens: true) or leave out the keep list",
                                 fmt::join(options.keep_heterogens, ",")));
  Topology top = read_input(files, rep);
  const ForceFieldData ff = load_forcefields(prepare_forcefields(options), ".");
  clean_input(top, options, ff, rep);
  handle_chain_breaks(top, options, ff, rep);

  HydrogenOptions hopt;
  hopt.ph = options.ph;
  hopt.variants = resolve_variants(top, options.variants);
  const HydrogenDefinitions defs = load_default_hydrogen_definitions();
  top = add_hydrogens(top, ff, ff.standard, defs, hopt, &rep.hydrogens);
  for (const std::string& n : rep.hydrogens.notes) rep.notes.push_back(n);
  // The input's waters get their extra particles when the water model has them (TIP4P-Ew's M).
  rep.input_waters_given_sites = add_water_extra_particles(top, ff);
  if (rep.input_waters_given_sites > 0)
    rep.notes.push_back(fmt::format("{} water{} of the input got the extra particle of the force field's water "
                                    "(placed by its virtual site)",
                                    rep.input_waters_given_sites, rep.input_waters_given_sites == 1 ? "" : "s"));

  // The solute against the force field: residues that match no template fail here, all of them in one message,
  // before any water is added.
  const System solute = build_system_listing_residues(top, ff, vacuum_options());
  rep.solute_charge_e = rounded_total_charge(solute);
  rep.final_charge_e = rep.solute_charge_e;
  note_input_waters(top, options, ff, rep);
  if (options.solvate) top = solvate(top, solute, options, ff, rep);

  // The whole system as `mdsim run` will build it: every residue must match a template.
  ForceFieldOptions full = vacuum_options();
  if (top.box) {
    full.nonbonded.method = NonbondedMethod::PME;
    full.nonbonded.cutoff_nm = options.cutoff_nm;
  }
  const System whole = build_system_listing_residues(top, ff, full);
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
  check_input_file(files.input);
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

namespace {

// "heterogens removed: GOL 6, NAG 4 (10 residues, 84 atoms); kept: HEM 1 (--keep-heterogens), 143 waters".
std::string heterogens_line(const HeterogenReport& h) {
  std::string removed, kept;
  int residues = 0;
  for (const auto& [name, n] : h.removed) {
    removed += fmt::format("{}{} {}", removed.empty() ? "" : ", ", name, n);
    residues += n;
  }
  for (const auto& [name, n] : h.kept) kept += fmt::format("{}{} {}", kept.empty() ? "" : ", ", name, n);
  if (!kept.empty()) kept += " (--keep-heterogens)";
  if (h.waters_kept > 0)
    kept += fmt::format("{}{} water{}", kept.empty() ? "" : ", ", h.waters_kept, h.waters_kept == 1 ? "" : "s");
  return fmt::format("heterogens removed: {}{}\n",
                     removed.empty() ? "none"
                                     : fmt::format("{} ({} residue{}, {} atoms)", removed, residues,
                                                   residues == 1 ? "" : "s", h.removed_atoms),
                     kept.empty() ? "" : "; kept: " + kept);
}

}  // namespace

std::string prepare_summary(const PreparedSystem& p) {
  const PrepareReport& r = p.report;
  std::string s;
  s += fmt::format("input: {} atoms, {} residues, {} chains ({})\n", r.input_atoms, r.input_residues, r.input_chains,
                   r.input);
  for (const std::string& n : r.notes) s += "  note: " + n + "\n";
  if (r.heterogens_removed) s += heterogens_line(r.heterogens);
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
  // Every histidine (whatever the input names it: HIS, HIE, ...) and every residue not in its default form (ASH,
  // GLH, LYN, CYX, ...); chain ends are counted.
  const auto histidine = [](const std::string& v) { return v == "HID" || v == "HIE" || v == "HIP" || v == "HIN"; };
  for (const ProtonationChoice& c : r.hydrogens.choices)
    if (histidine(c.variant) || (c.variant.size() == 3 && c.variant != c.residue_name))
      s += fmt::format("  {} {}{} (chain '{}'): {}{}\n", c.residue_name, c.number, c.icode == ' ' ? "" : std::string(1, c.icode),
                       c.chain, c.variant, c.reason.empty() ? "" : " (" + c.reason + ")");
  if (r.solvated) {
    const Boxd& b = r.solvent.box;
    s += fmt::format("solvent: {} waters{}; box vectors (nm) a = ({:.4f}, 0, 0), b = ({:.4f}, {:.4f}, 0), c = ({:.4f}, "
                     "{:.4f}, {:.4f}); {:.2f} nm^3\n",
                     r.solvent.waters_added - r.ions.positive - r.ions.negative,
                     r.input_waters > 0 ? fmt::format(" besides the input's {}", r.input_waters) : "", b.a.x,
                     b.b.x, b.b.y, b.c.x, b.c.y,
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
