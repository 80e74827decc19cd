// Generator of tests/data/dyn_ala2_water_equilibrated.h5, the equilibrated starting state of the
// NVE validation test (tests/validation/test_nve_drift.cpp). Not part of the build.
//
// Procedure (mdsim CPU reference platform): ala2_water.pdb, amber14-all + amber14/tip3p, PME 1.0 nm
// (Ewald tolerance 5e-4, dispersion correction), HBonds, rigid water, no COM motion removal;
// minimise (tolerance 10 kJ/mol/nm, 150 iterations); Maxwell-Boltzmann velocities at 300 K (seed
// 2718); 20 ps LangevinMiddle (300 K, 1/ps, 2 fs, seed 2718). The box stays the PDB's. Written as
// float32 (N x 3) datasets /positions_nm and /velocities_nm_per_ps; users re-apply the constraints.
//
// Build and run from the repository root, against a configured build folder `build` (one command):
//   g++ -std=c++20 -O2 -fopenmp -DFMT_SHARED -I. -Ibuild/generated -isystem /usr/include/hdf5/serial
//     -isystem /usr/include/eigen3 -isystem /usr/local/cuda/include tests/data/dyn_make_ala2_water_equilibrated.cpp
//     build/libmdsim_core.a -L/usr/local/cuda/lib64 -lcudart -lcufft -lhdf5_serial -lyaml-cpp -lfmt -lexpat
//     -o /tmp/make_equilibrated
//   /tmp/make_equilibrated tests/data/dyn_ala2_water_equilibrated.h5
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_context.hpp"

using namespace mdsim;

static void write_dataset(hid_t file, const char* name, const std::vector<Vec3d>& v, const char* unit) {
  std::vector<float> flat;
  for (const auto& p : v) {
    flat.push_back(static_cast<float>(p.x));
    flat.push_back(static_cast<float>(p.y));
    flat.push_back(static_cast<float>(p.z));
  }
  const hsize_t dims[2] = {v.size(), 3};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t set = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data());
  const hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, std::string(unit).size());
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(set, "unit", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, str, unit);
  H5Aclose(attr);
  H5Sclose(scalar);
  H5Tclose(str);
  H5Dclose(set);
  H5Sclose(space);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s output.h5\n", argv[0]);
    return 2;
  }
  const std::string dir = std::filesystem::absolute("tests/data/shared").string();  // run from the repository root
  const Model model = build_model(parse_config("system:\n  pdb: " + dir + "/systems/ala2_water.pdb\n"
                                               "  constraints: hbonds\n  rigid_water: true\n"
                                               "  remove_cm_motion: false\n",
                                               "ala2_water.yaml", dir));
  DynamicsSettings s;
  s.integrator.seed = 2718;
  s.remove_cm_motion = false;
  auto ctx = make_cpu_context(model.system, s);
  ctx->set_positions(model.positions_nm);
  ctx->minimize(10.0, 150);
  ctx->set_velocities_to_temperature(300.0, 0);
  ctx->step(10000);
  const SimulationState st = ctx->state(StateRequest{true, true, false, true});
  std::printf("step %lld, T %.2f K, potential %.3f kJ/mol\n", static_cast<long long>(st.step), st.temperature_k,
              st.potential.total);
  const hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  write_dataset(file, "positions_nm", st.positions_nm, "nm");
  write_dataset(file, "velocities_nm_per_ps", st.velocities_nm_per_ps, "nm/ps");
  H5Fclose(file);
  return 0;
}
