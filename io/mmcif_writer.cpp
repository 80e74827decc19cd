#include "io/mmcif_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string_view>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/structure_records.hpp"
#include "mdsim_version.hpp"

namespace mdsim {
namespace {

// A CIF value: bare when it can be, else quoted with a quote character it does not contain.
std::string token(const std::string& value) {
  if (value.empty()) return "?";
  bool bare = value != "." && value != "?";
  const char first = value.front();
  if (first == '_' || first == '#' || first == '$' || first == '\'' || first == '"' || first == '[' ||
      first == ']' || first == ';')
    bare = false;
  for (char c : value)
    if (c == ' ' || c == '\t') bare = false;
  const auto lower = [&](std::string_view prefix) {
    if (value.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(value[i])) != prefix[i]) return false;
    return true;
  };
  if (lower("data_") || lower("save_") || lower("loop_") || lower("stop_") || lower("global_")) bare = false;
  if (bare) return value;
  // A quote closes a quoted value only when followed by a blank: e.g. O5' stays legal inside "...".
  if (value.find("' ") == std::string::npos && value.back() != '\'') return "'" + value + "'";
  if (value.find("\" ") == std::string::npos && value.back() != '"') return "\"" + value + "\"";
  throw std::invalid_argument(fmt::format("write_mmcif: the name '{}' cannot be written as a CIF value", value));
}

// A, B, ..., Z, AA, AB, ...
std::string letters(std::size_t index) {
  std::string out;
  ++index;
  while (index > 0) {
    --index;
    out.insert(out.begin(), static_cast<char>('A' + index % 26));
    index /= 26;
  }
  return out;
}

}  // namespace

void write_mmcif(const std::string& path, const Topology& topology, const std::vector<Vec3d>& positions_nm,
                 const std::optional<Boxd>& box) {
  const int n = topology.num_atoms();
  if (static_cast<int>(positions_nm.size()) != n)
    throw std::invalid_argument(fmt::format("write_mmcif: {} positions for {} atoms", positions_nm.size(), n));
  std::string out;
  out.reserve(static_cast<std::size_t>(n) * 110 + 4096);
  out += "data_mdsim\n# Created with mdsim " MDSIM_VERSION_STRING "\n#\n";
  if (box) {
    const CellParameters cell = cell_parameters(*box);
    fmt::format_to(std::back_inserter(out),
                   "_cell.length_a     {:10.4f}\n_cell.length_b     {:10.4f}\n_cell.length_c     {:10.4f}\n"
                   "_cell.angle_alpha  {:10.4f}\n_cell.angle_beta   {:10.4f}\n_cell.angle_gamma  {:10.4f}\n#\n"
                   "_symmetry.space_group_name_H-M 'P 1'\n#\n",
                   cell.a_angstrom, cell.b_angstrom, cell.c_angstrom, cell.alpha_deg, cell.beta_deg, cell.gamma_deg);
  }

  // Chain identifiers. auth_asym_id: the topology's (a blank one: its label). label_asym_id: the topology's at
  // its first use, else a fresh A, B, ... Z, AA, ...: unique per chain, and equal to auth_asym_id wherever the
  // chain IDs are unique, so that a reader keying _struct_conn by either (OpenMM: the one with more distinct
  // values) finds the partners.
  const auto blank = [](const std::string& id) { return id.find_first_not_of(' ') == std::string::npos; };
  std::set<std::string> used;
  for (const TopologyChain& chain : topology.chains)
    if (!blank(chain.id)) used.insert(chain.id);
  std::set<std::string> labelled;
  std::size_t next_letter = 0;
  std::vector<std::string> label_asym(topology.chains.size()), auth_asym(topology.chains.size());
  for (std::size_t ci = 0; ci < topology.chains.size(); ++ci) {
    const std::string& id = topology.chains[ci].id;
    if (!blank(id) && labelled.insert(id).second) {
      label_asym[ci] = id;
    } else {
      while (used.count(letters(next_letter))) ++next_letter;
      label_asym[ci] = letters(next_letter++);
      used.insert(label_asym[ci]);
    }
    auth_asym[ci] = blank(id) ? label_asym[ci] : id;
  }
  std::vector<int> chain_of_residue(topology.residues.size(), -1);
  for (std::size_t ci = 0; ci < topology.chains.size(); ++ci)
    for (int r : topology.chains[ci].residues) chain_of_residue.at(static_cast<std::size_t>(r)) = static_cast<int>(ci);

  // Bonds OpenMM lists in _struct_conn: to or within a non-standard residue, and CYS SG-SG.
  const std::vector<std::pair<int, int>> listed = listed_bonds(topology, "write_mmcif");
  if (!listed.empty()) {
    out += "loop_\n_struct_conn.id\n_struct_conn.conn_type_id\n_struct_conn.ptnr1_label_asym_id\n"
           "_struct_conn.ptnr1_label_comp_id\n_struct_conn.ptnr1_label_seq_id\n_struct_conn.ptnr1_label_atom_id\n"
           "_struct_conn.ptnr2_label_asym_id\n_struct_conn.ptnr2_label_comp_id\n_struct_conn.ptnr2_label_seq_id\n"
           "_struct_conn.ptnr2_label_atom_id\n";
    for (std::size_t k = 0; k < listed.size(); ++k) {
      const TopologyAtom& a1 = topology.atoms[static_cast<std::size_t>(listed[k].first)];
      const TopologyAtom& a2 = topology.atoms[static_cast<std::size_t>(listed[k].second)];
      const TopologyResidue& r1 = topology.residues[static_cast<std::size_t>(a1.residue)];
      const TopologyResidue& r2 = topology.residues[static_cast<std::size_t>(a2.residue)];
      const int c1 = chain_of_residue[static_cast<std::size_t>(a1.residue)];
      const int c2 = chain_of_residue[static_cast<std::size_t>(a2.residue)];
      if (c1 < 0 || c2 < 0) continue;  // atoms of residues in no chain are not written
      const bool disulfide = r1.name == "CYS" && r2.name == "CYS";
      fmt::format_to(std::back_inserter(out), "bond{} {} {} {} {} {} {} {} {} {}\n", k + 1,
                     disulfide ? "disulf" : "covale", token(label_asym[static_cast<std::size_t>(c1)]), token(r1.name),
                     r1.number, token(a1.name), token(label_asym[static_cast<std::size_t>(c2)]), token(r2.name),
                     r2.number, token(a2.name));
    }
    out += "#\n";
  }

  out += "loop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
         "_atom_site.label_alt_id\n_atom_site.label_comp_id\n_atom_site.label_asym_id\n_atom_site.label_entity_id\n"
         "_atom_site.label_seq_id\n_atom_site.pdbx_PDB_ins_code\n_atom_site.Cartn_x\n_atom_site.Cartn_y\n"
         "_atom_site.Cartn_z\n_atom_site.occupancy\n_atom_site.B_iso_or_equiv\n_atom_site.pdbx_formal_charge\n"
         "_atom_site.auth_seq_id\n_atom_site.auth_comp_id\n_atom_site.auth_asym_id\n_atom_site.auth_atom_id\n"
         "_atom_site.pdbx_PDB_model_num\n";
  long serial = 1;
  for (std::size_t ci = 0; ci < topology.chains.size(); ++ci) {
    for (int r : topology.chains[ci].residues) {
      const TopologyResidue& residue = topology.residues.at(static_cast<std::size_t>(r));
      const char* group = is_polymer_residue(residue.name) ? "ATOM" : "HETATM";
      const std::string icode =
          residue.insertion_code == ' ' || residue.insertion_code == '\0' ? "?" : std::string(1, residue.insertion_code);
      const std::string comp = token(residue.name);
      for (int atom_index : residue.atoms) {
        const TopologyAtom& atom = topology.atoms.at(static_cast<std::size_t>(atom_index));
        const Vec3d p = positions_nm.at(static_cast<std::size_t>(atom_index)) * 10.0;
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
          throw RuntimeError(fmt::format("cannot write {}: atom {} has a non-finite coordinate", path, atom_index));
        const std::string name = token(atom.name);
        fmt::format_to(std::back_inserter(out),
                       "{:<6} {:>6} {:<2} {:<4} . {:<4} {} ? {:>5} {} {:10.4f} {:10.4f} {:10.4f} 1.0 0.0 ? {:>5} {:<4} "
                       "{} {:<4} 1\n",
                       group, serial, atom.element.empty() ? "?" : atom.element, name, comp, token(label_asym[ci]),
                       residue.number, icode, p.x, p.y, p.z, residue.number, comp, token(auth_asym[ci]), name);
        ++serial;
      }
    }
  }
  out += "#\n";
  write_file_atomically(path, out, "the PDBx/mmCIF file");
}

}  // namespace mdsim
