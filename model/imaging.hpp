// How written frames show a periodic system (trajectory frames and final_pdb; the simulation's own state and
// checkpoints keep the raw positions, whose molecule centres the barostat wraps into the box):
//  - every molecule whole: each atom at the image of its bonded parent's nearest to that parent;
//  - the solute (every molecule that is neither water nor a single atom) continuous in time: each solute
//    molecule at the image of its centre nearest its centre in the previous frame; in the first frame the
//    largest solute molecule (the anchor) where the simulation has it and every other solute molecule at its
//    image nearest the anchor;
//  - every other molecule (water, ions) with its centre in the periodic cell centred on the solute's centre
//    (of all its atoms; without solute: in the cell [0, a) x [0, b) x [0, c) of the reduced box).
// So the solute never jumps between frames or stages, and the solvent surrounds it. Non-periodic frames
// are left as they are.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "model/molecules.hpp"
#include "model/topology.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

class FrameImager {
 public:
  // `topology` names the residues (water: is_water_residue); atoms past its end count as solute atoms.
  FrameImager(MoleculeTrees trees, const Topology& topology);

  // Images one frame in place (positions in nm, 3 floats per atom) and remembers the solute's centres.
  void image(std::span<float> positions_nm, const Boxd& box);
  void image(std::vector<Vec3d>& positions_nm, const Boxd& box);

  // Continues from an earlier frame (resuming a run): `atoms` are the system atoms the frame recorded,
  // 3 floats each; a solute molecule whose atoms are all recorded continues from its centre there.
  void continue_from(const std::vector<int>& atoms, std::span<const float> positions_nm);

  // The solute molecules' centres of the last frame imaged (nm); empty before the first.
  const std::vector<std::optional<Vec3d>>& solute_centres() const { return previous_; }

 private:
  void image_positions(std::vector<Vec3d>& x, const Boxd& box);
  Vec3d place_solute(std::vector<Vec3d>& x, const Boxd& box);

  MoleculeTrees trees_;
  std::vector<int> solute_;   // molecule indices, the anchor (the largest) first
  std::vector<int> solvent_;  // molecule indices
  std::vector<std::optional<Vec3d>> previous_;  // per solute_ entry: its centre in the last frame
  std::vector<Vec3d> scratch_;
};

}  // namespace mdsim
