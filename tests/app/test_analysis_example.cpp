// examples/analyze.py end to end: a short `mdsim run` of ala2_water on the CPU, then the analysis script
// through Debian's /usr/bin/python3 (MDTraj, matplotlib). Checks its three PNG plots, its rmsd_rg.csv
// (one row per frame, RMSD of frame 0 zero, times of the frames, mass-weighted Rg equal to one computed
// here from the trajectory's positions (HDF5 C API) and mdsim's element masses), its --out prefix, and
// its input errors with exit code 2: missing folder, empty selection, a trajectory without protein,
// a trajectory without frames.
#include "support/catch.hpp"
#include "support/text_file.hpp"

#include <hdf5.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/pdb_reader.hpp"
#include "model/elements.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kSource = MDSIM_SOURCE_DIR;
const std::string kPdb = kSource + "/examples/ala2_water/ala2_water.pdb";
constexpr int kSteps = 60;
constexpr int kInterval = 10;
constexpr double kTimestepPs = 0.002;
constexpr int kProteinAtoms = 22;  // ACE-ALA-NME come first in ala2_water.pdb, then 749 waters

// Runs examples/analyze.py with `args` through /usr/bin/python3; stdout and stderr apart.
mdsim::test::CommandResult run_analysis(const fs::path& scratch, const std::string& args) {
  const fs::path out = scratch / "analyze.out";
  const fs::path err = scratch / "analyze.err";
  const std::string cmd = "/usr/bin/python3 " + kSource + "/examples/analyze.py " + args + " > " + out.string() +
                          " 2> " + err.string();
  const int status = std::system(cmd.c_str());
  mdsim::test::CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = mdsim_test::read_text(out);
  r.err = mdsim_test::read_text(err);
  return r;
}

struct Trajectory {
  std::size_t frames = 0, atoms = 0;
  std::vector<float> xyz;    // frames × atoms × 3, nm
  std::vector<double> time;  // ps
};

// /coordinates and /time of an mdsim trajectory, read with the HDF5 C API.
Trajectory read_trajectory(const std::string& path) {
  Trajectory t;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t coords = H5Dopen2(file, "coordinates", H5P_DEFAULT);
  REQUIRE(coords >= 0);
  const hid_t space = H5Dget_space(coords);
  REQUIRE(H5Sget_simple_extent_ndims(space) == 3);
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  REQUIRE(dims[2] == 3);
  t.frames = static_cast<std::size_t>(dims[0]);
  t.atoms = static_cast<std::size_t>(dims[1]);
  t.xyz.resize(t.frames * t.atoms * 3);
  REQUIRE(H5Dread(coords, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.xyz.data()) >= 0);
  H5Dclose(coords);
  const hid_t time = H5Dopen2(file, "time", H5P_DEFAULT);
  REQUIRE(time >= 0);
  t.time.resize(t.frames);
  REQUIRE(H5Dread(time, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.time.data()) >= 0);
  H5Dclose(time);
  H5Fclose(file);
  return t;
}

// Mass-weighted radius of gyration (nm) about the centre of mass of atoms [0, masses.size()) of `frame`.
double radius_of_gyration(const Trajectory& t, std::size_t frame, const std::vector<double>& masses) {
  const float* x = t.xyz.data() + frame * t.atoms * 3;
  double total = 0;
  std::array<double, 3> com{0, 0, 0};
  for (std::size_t i = 0; i < masses.size(); ++i) {
    total += masses[i];
    for (int k = 0; k < 3; ++k) com[k] += masses[i] * x[3 * i + k];
  }
  for (double& c : com) c /= total;
  double sum = 0;
  for (std::size_t i = 0; i < masses.size(); ++i)
    for (int k = 0; k < 3; ++k) sum += masses[i] * (x[3 * i + k] - com[k]) * (x[3 * i + k] - com[k]);
  return std::sqrt(sum / total);
}

std::vector<std::vector<double>> read_csv_numbers(const std::string& text, std::string& header) {
  std::istringstream in(text);
  std::getline(in, header);
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::vector<double> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

// A CPU run of ala2_water into dir/NAME: `steps` LangevinMiddle steps of 2 fs, frames and state lines every
// kInterval steps (trajectory of `atoms`), no checkpoint or final PDB.
fs::path write_config(const fs::path& dir, const std::string& name, int steps, const std::string& extra,
                      const std::string& atoms = "all") {
  const fs::path cfg = dir / (name + ".yaml");
  std::ofstream(cfg) << "system:\n  pdb: " << kPdb << "\n"
                     << "platform: cpu\n" << extra
                     << "integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs,"
                     << " seed: 7}\n"
                     << "run: {steps: " << steps << "}\n"
                     << "output:\n  directory: " << name << "\n  trajectory: {interval: " << kInterval
                     << ", atoms: " << atoms << "}\n"
                     << "  state: {interval: " << kInterval << "}\n  checkpoint: null\n  final_pdb: null\n"
                     << "  progress: false\n";
  return cfg;
}

bool is_png(const fs::path& p) {
  const std::string bytes = mdsim_test::read_text(p);
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

}  // namespace

TEST_CASE("examples/analyze.py analyses an mdsim output folder") {
  const fs::path dir = mdsim_test::scratch("analysis");
  const fs::path cfg = write_config(dir, "run", kSteps, "minimize: {tolerance: 100 kJ/mol/nm, max_iterations: 20}\n");
  const auto run = mdsim::test::run_mdsim("run " + cfg.string());
  INFO(run.all());
  REQUIRE(run.code == 0);
  const fs::path out = dir / "run";

  {  // plots, table and RMSD/Rg of the protein (blocks, not SECTIONs: the run above is done once)
    const auto r = run_analysis(dir, out.string());
    INFO(r.all());
    REQUIRE(r.code == 0);
    CHECK(r.out.find("selection 'protein': 22 atoms") != std::string::npos);
    for (const char* png : {"energy.png", "temperature.png", "rmsd_rg.png"}) {
      INFO(png);
      REQUIRE(fs::exists(out / png));
      CHECK(fs::file_size(out / png) > 1000);
      CHECK(is_png(out / png));
    }

    const Trajectory traj = read_trajectory((out / "trajectory.h5").string());
    REQUIRE(traj.frames == static_cast<std::size_t>(kSteps / kInterval));
    REQUIRE(traj.atoms == 2269);
    std::string header;
    const auto rows = read_csv_numbers(mdsim_test::read_text(out / "rmsd_rg.csv"), header);
    CHECK(header == "frame,time_ps,rmsd_nm,rg_nm");
    REQUIRE(rows.size() == traj.frames);

    // Masses of the first 22 atoms (the protein) from mdsim's element table.
    const mdsim::Topology top = mdsim::read_pdb(kPdb);
    std::vector<double> masses;
    for (int i = 0; i < kProteinAtoms; ++i) {
      const auto& atom = top.atoms[static_cast<std::size_t>(i)];
      const std::string& res = top.residues[static_cast<std::size_t>(atom.residue)].name;
      INFO("atom " << i << " in " << res);
      REQUIRE((res == "ACE" || res == "ALA" || res == "NME"));
      const mdsim::Element* e = mdsim::find_element(atom.element);
      REQUIRE(e != nullptr);
      masses.push_back(e->mass_amu);
    }
    CHECK(top.residues[static_cast<std::size_t>(top.atoms[kProteinAtoms].residue)].name == "HOH");

    for (std::size_t f = 0; f < traj.frames; ++f) {
      const auto& row = rows[f];
      INFO("frame " << f);
      REQUIRE(row.size() == 4);
      CHECK(row[0] == static_cast<double>(f));
      CHECK(row[1] == Catch::Approx(traj.time[f]).epsilon(1e-6));
      CHECK(row[1] == Catch::Approx(kTimestepPs * kInterval * static_cast<double>(f + 1)).epsilon(1e-6));
      if (f == 0) {
        CHECK(std::abs(row[2]) < 1e-6);
      } else {
        CHECK(row[2] > 1e-4);  // the protein moved
        CHECK(row[2] < 0.5);   // but stayed a dipeptide
      }
      const double rg = radius_of_gyration(traj, f, masses);
      CAPTURE(rg, row[3]);
      CHECK(rg > 0.1);
      CHECK(row[3] == Catch::Approx(rg).epsilon(1e-4));
    }
  }

  {  // --out prefix, a one-atom selection, an empty selection
    const fs::path prefix = dir / "results" / "ca_";
    const auto r = run_analysis(dir, out.string() + " --selection 'protein and name CA' --out " + prefix.string());
    INFO(r.all());
    REQUIRE(r.code == 0);
    CHECK(r.out.find("1 atoms") != std::string::npos);
    for (const char* f : {"ca_energy.png", "ca_temperature.png", "ca_rmsd_rg.png", "ca_rmsd_rg.csv"}) {
      INFO(f);
      CHECK(fs::exists(dir / "results" / f));
    }
    const auto none = run_analysis(dir, out.string() + " --selection 'resname XYZ'");
    CHECK(none.code == 2);
    CHECK(none.err.find("selection 'resname XYZ' matches none of the 2269 atoms") != std::string::npos);
  }

  {  // a missing output folder is an input error naming the file
    const fs::path missing = dir / "no_such_folder";
    const auto r = run_analysis(dir, missing.string());
    INFO(r.all());
    CHECK(r.code == 2);
    CHECK(r.err.find((missing / "trajectory.h5").string() + ": no such file") != std::string::npos);
    CHECK(r.err.find("Traceback") == std::string::npos);
  }
  {  // a trajectory of water only (no protein), and one without frames (a run shorter than the interval)
    const auto water = mdsim::test::run_mdsim("run " + write_config(dir, "water", kInterval, "", "water").string());
    INFO(water.all());
    REQUIRE(water.code == 0);
    const auto r = run_analysis(dir, (dir / "water").string());
    INFO(r.all());
    CHECK(r.code == 2);
    CHECK(r.err.find("matches none of the 2247 atoms") != std::string::npos);
    CHECK(r.err.find("the trajectory has no protein atoms") != std::string::npos);

    const auto empty = mdsim::test::run_mdsim("run " + write_config(dir, "empty", kInterval / 2, "").string());
    INFO(empty.all());
    REQUIRE(empty.code == 0);
    const auto e = run_analysis(dir, (dir / "empty").string());
    INFO(e.all());
    CHECK(e.code == 2);
    const std::string expected = (dir / "empty" / "trajectory.h5").string() + ": the trajectory has no frames";
    CHECK(e.err.find(expected) != std::string::npos);
  }
  fs::remove_all(dir);
}
