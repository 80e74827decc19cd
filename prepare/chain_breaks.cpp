#include "prepare/chain_breaks.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

namespace mdsim {

namespace {

int find_atom(const Topology& top, int residue, const char* name) {
  for (int a : top.residues[static_cast<std::size_t>(residue)].atoms)
    if (top.atoms[static_cast<std::size_t>(a)].name == name) return a;
  return -1;
}

std::string residue_id(const Topology& top, int r) {
  const TopologyResidue& res = top.residues[static_cast<std::size_t>(r)];
  std::string id = fmt::format("{} {}", res.name, res.number);
  if (res.insertion_code != ' ') id += res.insertion_code;
  return id;
}

}  // namespace

std::vector<ChainBreak> find_chain_breaks(const Topology& top) {
  std::vector<ChainBreak> out;
  for (std::size_t c = 0; c < top.chains.size(); ++c) {
    const std::vector<int>& res = top.chains[c].residues;
    for (std::size_t k = 0; k + 1 < res.size(); ++k) {
      // The link that would join them: protein C -> N, else nucleic O3' -> P; neither = not a polymer link.
      int from = find_atom(top, res[k], "C"), to = find_atom(top, res[k + 1], "N");
      if (from < 0 || to < 0) {
        from = find_atom(top, res[k], "O3'");
        to = find_atom(top, res[k + 1], "P");
      }
      if (from < 0 || to < 0) continue;
      const Vec3d d = top.positions_nm[static_cast<std::size_t>(to)] - top.positions_nm[static_cast<std::size_t>(from)];
      const double r = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
      if (r > kChainBreakDistanceNm) out.push_back({static_cast<int>(c), res[k], res[k + 1], r});
    }
  }
  return out;
}

std::string describe(const Topology& top, const ChainBreak& gap) {
  const std::string& id = top.chains[static_cast<std::size_t>(gap.chain)].id;
  const bool nucleic = find_atom(top, gap.before, "C") < 0;
  return fmt::format("chain '{}' breaks between {} and {}: {} {:.2f} nm apart (a bond is at most {} nm)", id,
                     residue_id(top, gap.before), residue_id(top, gap.after), nucleic ? "O3'–P" : "C–N",
                     gap.distance_nm, kChainBreakDistanceNm);
}

Topology split_chains(const Topology& top, const std::vector<ChainBreak>& breaks) {
  std::set<int> cut_after;
  for (const ChainBreak& b : breaks) cut_after.insert(b.before);
  Topology out = top;
  out.chains.clear();
  out.bonds.clear();
  for (const TopologyChain& chain : top.chains) {
    TopologyChain piece{chain.id, {}};
    for (int r : chain.residues) {
      piece.residues.push_back(r);
      if (cut_after.count(r) != 0) {
        out.chains.push_back(piece);
        piece.residues.clear();
      }
    }
    if (!piece.residues.empty()) out.chains.push_back(piece);
  }
  for (std::size_t c = 0; c < out.chains.size(); ++c)
    for (int r : out.chains[c].residues) out.residues[static_cast<std::size_t>(r)].chain = static_cast<int>(c);
  return out;
}

}  // namespace mdsim
