// libFuzzer target of the gemmi-based structure reader (io/structure_reader.hpp): the input is the text of a PDB
// or PDBx/mmCIF file, its format told by its content (a CIF file starts with data_). read_structure documents
// InputError for bad input; any other exception, a sanitizer report, a crash or a timeout is a finding. A
// topology it accepts must also be self-consistent (checked below).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/structure_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mdsim::StructureFile file;
  try {
    file = mdsim::read_structure_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const mdsim::InputError&) {
    return 0;
  }
  const mdsim::Topology& top = file.topology;
  const int n = static_cast<int>(top.atoms.size());
  if (n == 0 || top.positions_nm.size() != top.atoms.size()) std::abort();
  for (const auto& chain : top.chains)
    for (int r : chain.residues)
      if (r < 0 || r >= static_cast<int>(top.residues.size())) std::abort();
  for (const auto& residue : top.residues)
    for (int a : residue.atoms)
      if (a < 0 || a >= n) std::abort();
  for (const auto& atom : top.atoms)
    if (atom.element.empty() || atom.residue < 0 || atom.residue >= static_cast<int>(top.residues.size())) std::abort();
  for (const auto& p : top.positions_nm)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) std::abort();
  for (const auto& [i, j] : top.conect)
    if (i < 0 || j < 0 || i >= n || j >= n || i >= j) std::abort();
  return 0;
}
