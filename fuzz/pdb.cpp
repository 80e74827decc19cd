// libFuzzer target of the PDB reader (io/pdb_reader.hpp): the input is the text of a PDB file.
// read_pdb documents InputError for bad input; any other exception, a sanitizer report, a crash or a
// timeout is a finding. A topology it accepts must also be self-consistent (checked below).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/pdb_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mdsim::Topology top;
  try {
    top = mdsim::read_pdb_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pdb");
  } catch (const mdsim::InputError&) {
    return 0;
  }
  const int n = static_cast<int>(top.atoms.size());
  if (n == 0 || top.positions_nm.size() != top.atoms.size()) std::abort();
  for (const auto& chain : top.chains)
    for (int r : chain.residues)
      if (r < 0 || r >= static_cast<int>(top.residues.size())) std::abort();
  for (const auto& residue : top.residues)
    for (int a : residue.atoms)
      if (a < 0 || a >= n) std::abort();
  for (const auto& [i, j] : top.conect)
    if (i < 0 || j < 0 || i >= n || j >= n) std::abort();
  return 0;
}
