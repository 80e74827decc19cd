// Small HDF5 files of per-atom arrays (`mdsim energy --forces`): /positions (N×3, nm, float64) and
// /forces (N×3, kJ/mol/nm, float64), each with a `unit` attribute. Written to a temporary name and
// renamed into place, so a failed write never leaves a file that looks complete.
#pragma once

#include <string>
#include <vector>

#include "physics/vec3.hpp"

namespace mdsim {

void write_forces_h5(const std::string& path, const std::vector<Vec3d>& positions_nm,
                     const std::vector<Vec3d>& forces_kj_per_mol_nm);

// Reads an N×3 float64 dataset (e.g. the reference files' /forces_kj_per_mol_nm/total).
std::vector<Vec3d> read_vec3_dataset_h5(const std::string& path, const std::string& dataset);

}  // namespace mdsim
