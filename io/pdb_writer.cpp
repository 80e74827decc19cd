#include "io/pdb_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string_view>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/structure_records.hpp"
#include "mdsim_version.hpp"

namespace mdsim {
namespace {

bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// OpenMM's _format_83: "%8.3f", losing decimals for large values, else an error.
void append_coordinate(std::string& out, double angstrom, int atom_index) {
  if (!std::isfinite(angstrom)) {
    throw RuntimeError(fmt::format("cannot write PDB: atom {} has a non-finite coordinate", atom_index));
  }
  if (angstrom > -999.999 && angstrom < 9999.999) {
    fmt::format_to(std::back_inserter(out), "{:8.3f}", angstrom);
  } else if (angstrom > -9999999.0 && angstrom < 99999999.0) {
    out += fmt::format("{:8.3f}", angstrom).substr(0, 8);
  } else {
    throw RuntimeError(
        fmt::format("cannot write PDB: coordinate {} Å of atom {} does not fit an 8-column field", angstrom, atom_index));
  }
}

// Residue name field of columns 18-21: right-justified in 18-20, or a 4-character name.
std::string residue_field(const std::string& name) {
  if (name.size() <= 3) return fmt::format("{:>3} ", name);
  return name.substr(0, 4);
}

int wrapped_resseq(int number) {
  if (number >= -999 && number <= 9999) return number;
  return ((number % 10000) + 10000) % 10000;
}

}  // namespace

void write_pdb(const std::string& path, const Topology& topology, const std::vector<Vec3d>& positions_nm,
               const std::optional<Boxd>& box) {
  const int n = topology.num_atoms();
  if (static_cast<int>(positions_nm.size()) != n) {
    throw std::invalid_argument(fmt::format("write_pdb: {} positions for {} atoms", positions_nm.size(), n));
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(n) * 81 + 4096);
  out += "REMARK   1 CREATED WITH MDSIM " MDSIM_VERSION_STRING "\n";

  if (box) {
    const CellParameters cell = cell_parameters(*box);
    fmt::format_to(std::back_inserter(out), "CRYST1{:9.3f}{:9.3f}{:9.3f}{:7.2f}{:7.2f}{:7.2f} P 1           1 \n",
                   cell.a_angstrom, cell.b_angstrom, cell.c_angstrom, cell.alpha_deg, cell.beta_deg, cell.gamma_deg);
  }

  // Serial number of every atom in the file (TER records take one too), before wrapping.
  std::vector<long> file_index(static_cast<std::size_t>(n), 0);
  long next = 1;
  for (std::size_t ci = 0; ci < topology.chains.size(); ++ci) {
    const TopologyChain& chain = topology.chains[ci];
    const std::string chain_id =
        chain.id.size() == 1 ? chain.id : std::string(1, static_cast<char>('A' + static_cast<int>(ci % 26)));
    for (std::size_t ri = 0; ri < chain.residues.size(); ++ri) {
      const TopologyResidue& residue = topology.residues.at(static_cast<std::size_t>(chain.residues[ri]));
      const std::string res_name = residue_field(residue.name);
      const char* record = is_polymer_residue(residue.name) ? "ATOM  " : "HETATM";
      const int resseq = wrapped_resseq(residue.number);
      const char icode = residue.insertion_code == '\0' ? ' ' : residue.insertion_code;
      for (int atom_index : residue.atoms) {
        const TopologyAtom& atom = topology.atoms.at(static_cast<std::size_t>(atom_index));
        const std::string symbol = atom.element.empty() ? std::string("EP") : atom.element;
        if (symbol.size() > 2) {
          throw std::invalid_argument(
              fmt::format("write_pdb: element symbol '{}' of atom {} does not fit columns 77-78", symbol, atom_index));
        }
        std::string name;
        if (atom.name.size() < 4 && !atom.name.empty() && is_alpha(atom.name[0]) && symbol.size() < 2) {
          name = " " + atom.name;
        } else {
          name = atom.name.substr(0, 4);
        }
        file_index[static_cast<std::size_t>(atom_index)] = next;
        const std::size_t start = out.size();
        fmt::format_to(std::back_inserter(out), "{}{:5d} {:<4} {}{}{:4d}{}   ", record, next % 100000, name, res_name,
                       chain_id, resseq, icode);
        const Vec3d& p = positions_nm[static_cast<std::size_t>(atom_index)];
        append_coordinate(out, p.x * 10, atom_index);
        append_coordinate(out, p.y * 10, atom_index);
        append_coordinate(out, p.z * 10, atom_index);
        fmt::format_to(std::back_inserter(out), "  1.00  0.00          {:>2}  ", symbol);
        if (out.size() - start != 80) {
          throw std::invalid_argument(fmt::format("write_pdb: fixed-width overflow writing atom {}", atom_index));
        }
        out += '\n';
        ++next;
      }
      if (ri + 1 == chain.residues.size()) {
        fmt::format_to(std::back_inserter(out), "TER   {:5d}      {}{}{:4d}\n", next % 100000, res_name, chain_id, resseq);
        ++next;
      }
    }
  }

  // CONECT records, grouped by atom in file order, at most four partners per record.
  std::map<long, std::vector<long>> partners;
  for (const auto& [i, j] : listed_bonds(topology, "write_pdb")) {
    const long fi = file_index[static_cast<std::size_t>(i)], fj = file_index[static_cast<std::size_t>(j)];
    if (fi == 0 || fj == 0) continue;  // atoms not listed in any chain were not written
    partners[fi].push_back(fj);
    partners[fj].push_back(fi);
  }
  for (const auto& [index, bonded] : partners) {
    for (std::size_t k = 0; k < bonded.size(); k += 4) {
      fmt::format_to(std::back_inserter(out), "CONECT{:5d}", index % 100000);
      for (std::size_t m = k; m < std::min(k + 4, bonded.size()); ++m) {
        fmt::format_to(std::back_inserter(out), "{:5d}", bonded[m] % 100000);
      }
      out += '\n';
    }
  }
  out += "END\n";

  write_file_atomically(path, out, "the PDB file");
}

}  // namespace mdsim
