// Staged protocols end to end on the CPU platform (`mdsim run` with `stages:`): alanine dipeptide in water,
// minimised with heavy-atom restraints, then restrained NVT (1 fs steps: a context of its own), then NPT
// without restraints (2 fs, barostat). One state log and one trajectory continue across the stages; a run
// stopped inside the NVT stage (a first run of a shorter protocol, and a run stopped by SIGINT) and resumed there
// ends bit for bit where the uninterrupted run ends; a checkpoint of other stages is refused at the stage that
// differs.
#include "support/catch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/hdf5_arrays.hpp"
#include "io/state_log.hpp"
#include "support/ala2_water_run.hpp"
#include "support/checkpoints.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim::test::python_ok;
using mdsim_test::scratch;

namespace {

// The protocol; `nvt_steps` and `with_npt` shorten it (the first half of an interrupted run), `nvt_temperature`
// changes it (a checkpoint of other stages).
fs::path write_config(const fs::path& dir, int nvt_steps = 40, bool with_npt = true,
                      const std::string& nvt_temperature = "300 K") {
  mdsim_test::Ala2WaterRun run;
  run.integrator = "temperature: 300 K, friction: 1/ps, timestep: 2 fs";
  run.tail = "stages:\n"
             "  - name: minimize\n"
             "    minimize: {tolerance: 50 kJ/mol/nm, max_iterations: 20}\n"
             "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2, reference: initial}\n"
             "  - name: nvt\n"
             "    steps: " + std::to_string(nvt_steps) + "\n"
             "    integrator: {timestep: 1 fs, temperature: " + nvt_temperature + "}\n"
             "    restraints: {atoms: backbone, k: 2.39 kcal/mol/A^2, reference: start}\n";
  if (with_npt)
    run.tail += "  - name: npt\n"
                "    time: 0.04 ps\n"
                "    barostat: {pressure: 1 bar, interval: 5}\n";
  return run.write(dir);
}

std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    rows.push_back(fields);
  }
  return rows;
}


}  // namespace

TEST_CASE("a three-stage protocol: one state log and trajectory across the stages; resumed inside a stage, bit for bit") {
  const fs::path straight = scratch("straight");
  const auto run = mdsim::test::run_mdsim("run " + write_config(straight).string());
  INFO(run.all());
  REQUIRE(run.code == 0);
  CHECK(run.out.find("stage minimize: minimized: ") != std::string::npos);

  // The state log: the usual columns, then the restraint energy and the stage; steps and time continue
  // across the stages (1 fs steps in nvt, 2 fs in npt); restraint energy only where restrained.
  const auto rows = read_csv(straight / "out/state.csv");
  REQUIRE(rows.size() == 7);
  std::string header;
  for (const auto& f : rows[0]) header += (header.empty() ? "" : ",") + f;
  CHECK(header == mdsim::state_log_header(false, true));
  CHECK(header == std::string(mdsim::kStateLogHeader) + ",restraint_kj_per_mol,stage");
  const std::vector<std::string> steps{"10", "20", "30", "40", "50", "60"},
      times{"0.01", "0.02", "0.03", "0.04", "0.06", "0.08"}, stages{"nvt", "nvt", "nvt", "nvt", "npt", "npt"};
  for (std::size_t i = 1; i < rows.size(); ++i) {
    INFO("line " << i);
    REQUIRE(rows[i].size() == 11);
    CHECK(rows[i][0] == steps[i - 1]);
    CHECK(rows[i][1] == times[i - 1]);
    CHECK(rows[i][10] == stages[i - 1]);
    const double restraint = std::stod(rows[i][9]);
    if (stages[i - 1] == "nvt") CHECK(restraint > 0.0);
    else CHECK(restraint == 0.0);
  }
  // The trajectory: frames every 10 steps with continuous time, and the stages' step ranges.
  CHECK(python_ok("import h5py,sys,numpy as np; f=h5py.File(sys.argv[1],'r'); "
                  "assert list(f['particles/all/position/step'][:])==[10,20,30,40,50,60]; "
                  "assert np.allclose(f['time'][:],[0.01,0.02,0.03,0.04,0.06,0.08]); "
                  "assert [str(s) for s in f.attrs['mdsim_stage_names']]==['minimize','nvt','npt']; "
                  "assert list(f.attrs['mdsim_stage_first_step'])==[0,0,40]; "
                  "assert list(f.attrs['mdsim_stage_last_step'])==[0,40,60]; assert f.attrs['complete']==1",
                  straight / "out/trajectory.h5"));
  // Imaging (model/imaging.hpp): the solute (the first 22 atoms) moves continuously through nvt and npt (where
  // the barostat wraps molecule centres), molecules are whole and each water's centre lies within half a box of
  // the solute's centre.
  CHECK(python_ok("import h5py,sys,numpy as np; f=h5py.File(sys.argv[1],'r'); x=f['coordinates'][:]; "
                  "L=f['cell_lengths'][:]; c=x[:,:22].mean(1); assert np.abs(np.diff(c,axis=0)).max()<0.05; "
                  "w=x[:,22:].reshape(len(x),-1,3,3); assert np.linalg.norm(w[:,:,1:]-w[:,:,:1],axis=3).max()<0.11; "
                  "d=w.mean(2)-c[:,None,:]; assert (np.abs(d)<=L[:,None,:]/2+1e-4).all()",
                  straight / "out/trajectory.h5"));
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); a=f.attrs; "
                  "assert a['stage_index']==2 and a['stage_name']=='npt' and a['stage_step']==20 and a['step']==60; "
                  "assert 'stage_reference_nm' not in f",
                  straight / "out/checkpoint.h5"));

  // Stopped inside the nvt stage (a first run of its first 10 steps), then resumed with the whole protocol.
  const fs::path split = scratch("split");
  const auto first = mdsim::test::run_mdsim("run " + write_config(split, 10, false).string());
  INFO(first.all());
  REQUIRE(first.code == 0);
  // The checkpoint of the nvt stage keeps the reference it restrains to (the stage's start positions).
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); a=f.attrs; "
                  "assert a['stage_name']=='nvt' and a['stage_step']==10; "
                  "assert f['stage_reference_nm'].shape==(a['stage_reference_atoms'],3)==(8,3)",
                  split / "out/checkpoint.h5"));

  // A checkpoint of other stages is refused where they differ.
  write_config(split, 40, true, "310 K");
  const auto other = mdsim::test::run_mdsim("run --resume " + (split / "run.yaml").string());
  INFO(other.all());
  CHECK(other.code == 2);
  CHECK(other.err.find((split / "run.yaml").string() + ":15:5: --resume: stage 2 differs from the one") !=
        std::string::npos);

  write_config(split, 40, true);
  const auto resumed = mdsim::test::run_mdsim("run --resume " + (split / "run.yaml").string());
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);
  mdsim_test::check_same_final_state(straight, split);
  CHECK(mdsim_test::read_text((split / "out/state.csv").string()) ==
        mdsim_test::read_text((straight / "out/state.csv").string()));  // no speed column without progress
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                  "assert list(f['particles/all/position/step'][:])==[10,20,30,40,50,60]",
                  split / "out/trajectory.h5"));
  // The resumed run's frames continue the imaging of the frames before the stop: the same file as straight's.
  CHECK(python_ok("import h5py,sys,numpy as np; a=h5py.File(sys.argv[1],'r')['coordinates'][:]; "
                  "b=h5py.File('" + (straight / "out/trajectory.h5").string() + "','r')['coordinates'][:]; "
                  "assert (a==b).all()",
                  split / "out/trajectory.h5"));

  // Stopped by SIGINT once the first state line is out (at the next checkpoint step, inside the nvt stage unless
  // the machine is very slow or fast), then resumed: wherever it stopped, the same end.
  const fs::path stopped = scratch("stopped");
  const fs::path config = write_config(stopped);
  const pid_t child = mdsim::test::start_mdsim_run(config, stopped / "run.log");
  REQUIRE(child >= 0);
  mdsim::test::wait_for_lines(stopped / "out/state.csv", 2, std::chrono::seconds(60));
  const int status = mdsim::test::interrupt(child);
  REQUIRE(WIFEXITED(status));
  const std::string log = mdsim_test::read_text((stopped / "run.log").string());
  INFO(log);
  if (WEXITSTATUS(status) == 0) {
    WARN("the run finished before SIGINT arrived; the stop was not exercised");
  } else {
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(log.find("stopped after steps 0 to ") != std::string::npos);
    CHECK(python_ok("import h5py,sys; a=h5py.File(sys.argv[1],'r').attrs; print('stopped in stage', a['stage_name'], "
                    "'at step', a['step'])",
                    stopped / "out/checkpoint.h5"));
  }
  const auto continued = mdsim::test::run_mdsim("run --resume " + config.string());
  INFO(continued.all());
  REQUIRE(continued.code == 0);
  mdsim_test::check_same_final_state(straight, stopped);
  CHECK(mdsim_test::read_text((stopped / "out/state.csv").string()) ==
        mdsim_test::read_text((straight / "out/state.csv").string()));
  fs::remove_all(straight);
  fs::remove_all(split);
  fs::remove_all(stopped);
}

TEST_CASE("a run without stages writes the state log and checkpoint as before") {
  const fs::path dir = scratch("single");
  const fs::path cfg = dir / "run.yaml";
  std::ofstream(cfg) << "system:\n  pdb: " << std::string(MDSIM_TEST_DATA_DIR) << "/systems/ala2_vacuum.pdb\n"
                     << "  forcefield: [amber14-all.xml]\n  nonbonded_method: no_cutoff\n"
                     << "platform: cpu\nintegrator: {seed: 42}\nrun: {steps: 20}\n"
                     << "output: {directory: out, state: {interval: 10}, trajectory: {interval: 10}, progress: false}\n";
  const auto r = mdsim::test::run_mdsim("run " + cfg.string());
  INFO(r.all());
  REQUIRE(r.code == 0);
  const auto rows = read_csv(dir / "out/state.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].size() == 9);
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                  "assert not any(k.startswith('stage') for k in f.attrs) and 'stage_reference_nm' not in f",
                  dir / "out/checkpoint.h5"));
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                  "assert not any(k.startswith('mdsim_stage') for k in f.attrs)",
                  dir / "out/trajectory.h5"));
  fs::remove_all(dir);
}
