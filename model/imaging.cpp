#include "model/imaging.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace mdsim {

namespace {

bool is_solvent(const std::vector<int>& molecule, const Topology& topology) {
  if (molecule.size() == 1) return true;  // an ion (or a lone atom)
  for (const int a : molecule) {
    if (a >= topology.num_atoms()) return false;
    const int residue = topology.atoms[static_cast<std::size_t>(a)].residue;
    if (residue < 0 || !is_water_residue_name(topology.residues[static_cast<std::size_t>(residue)].name)) return false;
  }
  return true;
}

// The lattice vector that takes displacement d to its minimum image.
Vec3d image_shift(const Boxd& box, const Vec3d& d) { return box.minimum_image(d) - d; }

// The lattice vector that takes point p into the cell [0, a) x [0, b) x [0, c) placed at `origin`.
Vec3d wrap_shift(const Boxd& box, const Vec3d& p, const Vec3d& origin) {
  Vec3d r = p - origin;
  r -= box.c * std::floor(r.z / box.c.z);
  r -= box.b * std::floor(r.y / box.b.y);
  r -= box.a * std::floor(r.x / box.a.x);
  return (r + origin) - p;
}

void shift_molecule(std::vector<Vec3d>& x, const std::vector<int>& molecule, const Vec3d& shift) {
  if (shift.x == 0.0 && shift.y == 0.0 && shift.z == 0.0) return;  // positions stay bit for bit
  for (const int a : molecule) x[static_cast<std::size_t>(a)] += shift;
}

// Makes a molecule whole (each atom at its parent's nearest image) and returns its geometric centre.
Vec3d make_whole(std::vector<Vec3d>& x, const std::vector<int>& order, const std::vector<int>& parent, const Boxd& box) {
  Vec3d sum(0.0, 0.0, 0.0);
  for (const int a : order) {
    Vec3d& xa = x[static_cast<std::size_t>(a)];
    if (const int p = parent[static_cast<std::size_t>(a)]; p >= 0) {
      const Vec3d shift = image_shift(box, xa - x[static_cast<std::size_t>(p)]);
      if (shift.x != 0.0 || shift.y != 0.0 || shift.z != 0.0) xa += shift;
    }
    sum += xa;
  }
  return sum / static_cast<double>(order.size());
}

}  // namespace

FrameImager::FrameImager(MoleculeTrees trees, const Topology& topology) : trees_(std::move(trees)) {
  for (std::size_t m = 0; m < trees_.order.size(); ++m)
    (is_solvent(trees_.order[m], topology) ? solvent_ : solute_).push_back(static_cast<int>(m));
  // The anchor: the largest solute molecule (the first of equals).
  std::stable_sort(solute_.begin(), solute_.end(), [&](int a, int b) {
    return trees_.order[static_cast<std::size_t>(a)].size() > trees_.order[static_cast<std::size_t>(b)].size();
  });
  previous_.assign(solute_.size(), std::nullopt);
}

// Places the solute (whole, continuous or next to the anchor) and returns its centre (of all its atoms).
Vec3d FrameImager::place_solute(std::vector<Vec3d>& x, const Boxd& box) {
  Vec3d anchor(0.0, 0.0, 0.0), sum(0.0, 0.0, 0.0);
  std::size_t atoms = 0;
  for (std::size_t k = 0; k < solute_.size(); ++k) {
    const std::vector<int>& molecule = trees_.order[static_cast<std::size_t>(solute_[k])];
    const Vec3d centre = make_whole(x, molecule, trees_.parent, box);
    Vec3d shift(0.0, 0.0, 0.0);
    if (previous_[k])
      shift = image_shift(box, centre - *previous_[k]);
    else if (k > 0)
      shift = image_shift(box, centre - anchor);
    shift_molecule(x, molecule, shift);
    previous_[k] = centre + shift;
    if (k == 0) anchor = centre + shift;
    sum += (centre + shift) * static_cast<double>(molecule.size());
    atoms += molecule.size();
  }
  return sum / static_cast<double>(atoms);
}

void FrameImager::image_positions(std::vector<Vec3d>& x, const Boxd& box) {
  const Vec3d half_cell = (box.a + box.b + box.c) * 0.5;
  const Vec3d origin = solute_.empty() ? Vec3d(0.0, 0.0, 0.0) : place_solute(x, box) - half_cell;
  for (const int m : solvent_) {
    const std::vector<int>& molecule = trees_.order[static_cast<std::size_t>(m)];
    const Vec3d centre = make_whole(x, molecule, trees_.parent, box);
    shift_molecule(x, molecule, wrap_shift(box, centre, origin));
  }
}

void FrameImager::image(std::vector<Vec3d>& positions_nm, const Boxd& box) { image_positions(positions_nm, box); }

void FrameImager::image(std::span<float> positions_nm, const Boxd& box) {
  const std::size_t n = positions_nm.size() / 3;
  scratch_.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    scratch_[i] = Vec3d(positions_nm[3 * i], positions_nm[3 * i + 1], positions_nm[3 * i + 2]);
  image_positions(scratch_, box);
  for (std::size_t i = 0; i < n; ++i) {
    positions_nm[3 * i] = static_cast<float>(scratch_[i].x);
    positions_nm[3 * i + 1] = static_cast<float>(scratch_[i].y);
    positions_nm[3 * i + 2] = static_cast<float>(scratch_[i].z);
  }
}

void FrameImager::continue_from(const std::vector<int>& atoms, std::span<const float> positions_nm) {
  std::vector<int> slot(trees_.parent.size(), -1);  // system atom -> index in the recorded frame
  for (std::size_t k = 0; k < atoms.size() && 3 * k + 2 < positions_nm.size(); ++k)
    if (atoms[k] >= 0 && static_cast<std::size_t>(atoms[k]) < slot.size())
      slot[static_cast<std::size_t>(atoms[k])] = static_cast<int>(k);
  for (std::size_t k = 0; k < solute_.size(); ++k) {
    const std::vector<int>& molecule = trees_.order[static_cast<std::size_t>(solute_[k])];
    Vec3d sum(0.0, 0.0, 0.0);
    bool recorded = true;
    for (const int a : molecule) {
      const int s = slot[static_cast<std::size_t>(a)];
      if (s < 0) {
        recorded = false;
        break;
      }
      const std::size_t i = 3 * static_cast<std::size_t>(s);
      sum += Vec3d(positions_nm[i], positions_nm[i + 1], positions_nm[i + 2]);
    }
    if (recorded) previous_[k] = sum / static_cast<double>(molecule.size());
  }
}

}  // namespace mdsim
