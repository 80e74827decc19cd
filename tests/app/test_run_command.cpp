// `mdsim run` end to end on the CPU platform: outputs exist and external readers (h5py, MDTraj,
// MDAnalysis through Debian's /usr/bin/python3) open the trajectory with the right frames, atoms and
// box; a resumed run reaches the same final coordinates as an uninterrupted one; bad output folders
// and a resume without a checkpoint are clear errors with exit code 2.
#include "support/catch.hpp"
#include "support/ala2_water_run.hpp"
#include "support/checkpoints.hpp"
#include "support/text_file.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/hdf5_arrays.hpp"
#include "io/pdb_reader.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;

namespace {

const std::string kPdb = mdsim_test::ala2_water_pdb();

// A short ala2_water run on the CPU: `steps` LangevinMiddle steps of 2 fs, frames and state lines every
// 10 steps, checkpoint every 10, fixed seed.
fs::path write_config(const fs::path& dir, int steps, const std::string& extra = "") {
  mdsim_test::Ala2WaterRun run;
  run.steps = steps;
  run.tail = extra;
  return run.write(dir);
}

}  // namespace

TEST_CASE("mdsim run writes a trajectory that h5py, MDTraj and MDAnalysis read") {
  const fs::path dir = scratch("readers");
  const fs::path cfg = write_config(dir, 20, "minimize: {tolerance: 100 kJ/mol/nm, max_iterations: 20}\n");
  const auto r = mdsim::test::run_mdsim("run " + cfg.string());
  INFO(r.all());
  REQUIRE(r.code == 0);
  const fs::path out = dir / "out";
  for (const char* f : {"trajectory.h5", "state.csv", "checkpoint.h5", "final.pdb"}) {
    INFO(f);
    CHECK(fs::exists(out / f));
  }
  // State log: header plus one line per 10 steps.
  const std::string csv = mdsim_test::read_text(out / "state.csv");
  CHECK(csv.rfind("step,time_ps,potential_kj_per_mol", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
  // Final PDB reads back with every atom.
  CHECK(mdsim::read_pdb((out / "final.pdb").string()).num_atoms() == 2269);
  // External readers.
  const std::string script =
      "import sys, h5py, mdtraj, MDAnalysis, numpy as np\n"
      "traj, pdb = sys.argv[1], sys.argv[2]\n"
      "with h5py.File(traj, 'r') as f:\n"
      "    assert f['particles/all/position/value'].shape == (2, 2269, 3), f['particles/all/position/value'].shape\n"
      "    assert int(f.attrs['complete']) == 1\n"
      "t = mdtraj.load(traj)\n"
      "assert t.n_frames == 2 and t.n_atoms == 2269, (t.n_frames, t.n_atoms)\n"
      "assert abs(t.unitcell_lengths[0][0] - 3.2853) < 1e-4, t.unitcell_lengths[0]\n"
      "u = MDAnalysis.Universe(pdb, traj, format='H5MD')\n"
      "assert u.trajectory.n_frames == 2 and len(u.atoms) == 2269\n"
      "assert abs(u.dimensions[0] - 32.853) < 1e-3, u.dimensions\n"
      "assert np.allclose(u.trajectory[1].positions / 10.0, t.xyz[1], atol=1e-5)\n"
      "print('readers OK')\n";
  std::ofstream(dir / "check.py") << script;
  const std::string cmd = "/usr/bin/python3 " + (dir / "check.py").string() + " " + (out / "trajectory.h5").string() +
                          " " + kPdb + " > " + (dir / "check.log").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  INFO(mdsim_test::read_text(dir / "check.log"));
  CHECK(rc == 0);
  fs::remove_all(dir);
}

TEST_CASE("a resumed run continues to the same final coordinates as an uninterrupted one") {
  const fs::path straight = scratch("straight");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(straight, 40).string()).code == 0);

  const fs::path split = scratch("split");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(split, 20).string()).code == 0);
  write_config(split, 40);  // same config, longer run
  const auto resumed = mdsim::test::run_mdsim("run --resume " + (split / "run.yaml").string());
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);

  const auto differing = mdsim_test::differing_vectors(straight / "out/checkpoint.h5", split / "out/checkpoint.h5",
                                                       "positions_nm");
  CHECK(differing == 0);
  // The resumed trajectory holds the frames of both parts.
  const std::string count = "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                            "sys.exit(0 if f['particles/all/position/value'].shape[0]==4 else 1)\" " +
                            (split / "out/trajectory.h5").string();
  CHECK(std::system(count.c_str()) == 0);
  fs::remove_all(straight);
  fs::remove_all(split);
}

TEST_CASE("run input errors: unwritable output folder, resume without checkpoint") {
  const fs::path dir = scratch("errors");
  {
    const fs::path cfg = dir / "bad_out.yaml";
    std::ofstream(cfg) << "system:\n  pdb: " << kPdb << "\nplatform: cpu\nrun: {steps: 10}\n"
                       << "output: {directory: /proc/mdsim_cannot_write_here, progress: false}\n";
    const auto r = mdsim::test::run_mdsim("run " + cfg.string());
    CHECK(r.code == 2);
    CHECK(r.err.find("output.directory") != std::string::npos);
  }
  {
    const auto r = mdsim::test::run_mdsim("run --resume " + write_config(dir, 10).string());
    CHECK(r.code == 2);
    CHECK(r.err.find("no checkpoint to resume from") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out" / "trajectory.h5"));
  }
  fs::remove_all(dir);
}
