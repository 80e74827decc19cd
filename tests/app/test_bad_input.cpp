// Bad input ends in a clear, located error before anything is written. Overlapping atoms:
// find_closest_pair on its own, then `mdsim check`, `mdsim energy` and `mdsim run` on a structure with
// two coincident atoms (directly and through a periodic image): exit 2, both atoms and their lines
// named, no output created. A non-finite coordinate reaching the CPU platform is a runtime error
// naming the particle, not a crash in the cell list.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/energy_terms.hpp"
#include "platform/nonbonded_plan.hpp"
#include "model/overlaps.hpp"
#include "support/catch.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;
using namespace mdsim;

namespace {

const std::string kPdb = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";

using mdsim_test::contains;

// ala2_water.pdb with the coordinates of the atom on line `to` (1-based) replaced by those of the atom on
// line `from`, shifted by shift_angstrom.
std::string moved_atom_pdb(int from, int to, const Vec3d& shift_angstrom) {
  std::stringstream in(mdsim_test::read_text(kPdb));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::string& src = lines.at(static_cast<std::size_t>(from - 1));
  std::string& dst = lines.at(static_cast<std::size_t>(to - 1));
  for (int d = 0; d < 3; ++d) {
    const double v = std::stod(src.substr(30 + 8 * static_cast<std::size_t>(d), 8)) + shift_angstrom[d];
    char field[16];
    std::snprintf(field, sizeof field, "%8.3f", v);
    dst.replace(30 + 8 * static_cast<std::size_t>(d), 8, field);
  }
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

fs::path write_case(const fs::path& dir, const std::string& pdb_text) {
  std::ofstream(dir / "overlap.pdb") << pdb_text;
  const fs::path config = dir / "run.yaml";
  std::ofstream(config) << "system:\n  pdb: overlap.pdb\n  nonbonded_method: pme\n  cutoff: 1.0 nm\n"
                        << "platform: cpu\n"
                        << "minimize: {tolerance: 10 kJ/mol/nm}\n"
                        << "run: {steps: 10}\n"
                        << "output:\n  directory: out\n  trajectory: {interval: 5}\n  state: {interval: 5}\n"
                        << "  checkpoint: {interval: 5}\n  final_pdb: final.pdb\n  progress: false\n";
  return config;
}

}  // namespace

TEST_CASE("find_closest_pair: the nearest pair below the threshold, through periodic images too", "[overlap]") {
  const std::vector<Vec3d> apart = {Vec3d(0, 0, 0), Vec3d(0.1, 0, 0), Vec3d(0, 0.2, 0), Vec3d(1.0, 1.0, 1.0)};
  CHECK_FALSE(find_closest_pair(apart, std::nullopt).has_value());

  std::vector<Vec3d> close = apart;
  close.push_back(Vec3d(1.0, 1.0, 1.03));  // 0.03 nm from atom 3
  close.push_back(Vec3d(0.1, 0.0, 0.0));   // on atom 1
  const std::optional<AtomPair> p = find_closest_pair(close, std::nullopt);
  REQUIRE(p.has_value());
  CHECK(p->i == 1);
  CHECK(p->j == 5);
  CHECK(p->distance_nm == 0.0);

  // Through the boundary of a 2 nm box (also a triclinic one): 0.02 nm apart by the nearest image,
  // 1.98 nm apart as given.
  Boxd cubic{};
  cubic.a = Vec3d(2, 0, 0), cubic.b = Vec3d(0, 2, 0), cubic.c = Vec3d(0, 0, 2);
  Boxd triclinic{};
  triclinic.a = Vec3d(2, 0, 0), triclinic.b = Vec3d(0.5, 2, 0), triclinic.c = Vec3d(-0.6, 0.7, 2);
  for (const Boxd& box : {cubic, triclinic}) {
    const std::vector<Vec3d> wrap = {Vec3d(0.01, 0.5, 0.5), Vec3d(1.0, 1.0, 1.0), Vec3d(1.99, 0.5, 0.5)};
    CHECK_FALSE(find_closest_pair(wrap, std::nullopt).has_value());
    const std::optional<AtomPair> q = find_closest_pair(wrap, box);
    REQUIRE(q.has_value());
    CHECK(q->i == 0);
    CHECK(q->j == 2);
    CHECK(q->distance_nm == Catch::Approx(0.02).epsilon(1e-9));
  }

  // Every pair of a random cloud against the O(N^2) search.
  std::vector<Vec3d> cloud;
  unsigned state = 12345;
  const auto next = [&state] {
    state = state * 1103515245u + 12345u;
    return static_cast<double>((state >> 8) & 0xffff) / 65536.0;
  };
  for (int i = 0; i < 600; ++i) cloud.push_back(Vec3d(3 * next(), 3 * next(), 3 * next()));
  double brute = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < cloud.size(); ++i)
    for (std::size_t j = i + 1; j < cloud.size(); ++j) brute = std::min(brute, norm(cloud[j] - cloud[i]));
  const std::optional<AtomPair> r = find_closest_pair(cloud, std::nullopt, 0.05);
  REQUIRE(brute < 0.05);  // 600 points in 27 nm^3 have a pair this close
  REQUIRE(r.has_value());
  CHECK(r->distance_nm == brute);
}

TEST_CASE("overlapping atoms: check, energy and run stop before writing, naming both atoms", "[overlap]") {
  // ala2_water.pdb: line 38 is HOH E's O (atom 36), line 42 HOH F's O (atom 40).
  struct Case {
    const char* name;
    Vec3d shift_angstrom;
    const char* extra;
  };
  const Case cases[] = {{"coincident", Vec3d(0, 0, 0), ""},
                        {"image", Vec3d(32.853, 0, 0), " (nearest periodic image)"}};
  for (const Case& c : cases) {
    INFO(c.name);
    const fs::path dir = scratch(c.name);
    const fs::path config = write_case(dir, moved_atom_pdb(38, 42, c.shift_angstrom));
    const std::string expected = (dir / "overlap.pdb").string() +
                                 ":38: atom 36 (O of HOH 1, chain E) and atom 40 (O of HOH 1, chain F) (line 42) "
                                 "are 0.0000 nm apart" + c.extra + ", closer than 0.05 nm";
    for (const char* command : {"check", "energy", "run"}) {
      INFO(command);
      const mdsim::test::CommandResult r = mdsim::test::run_mdsim(std::string(command) + " " + config.string());
      CHECK(r.code == 2);
      CHECK(contains(r.err, expected));
      CHECK(contains(r.err, "Remove the duplicated record or fix the clash"));
      CHECK_FALSE(fs::exists(dir / "out"));
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("a non-finite position reaching the CPU platform is a runtime error naming the particle", "[overlap]") {
  System s;
  s.mass_amu = {1, 1, 1};
  s.charge_e = {0.1, -0.1, 0.0};
  s.sigma_nm = {0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0.5, 0.5, 0.5};
  s.nonbonded.method = NonbondedMethod::CutoffNonPeriodic;
  s.nonbonded.cutoff_nm = 1.0;
  CpuForceEvaluator evaluator(s);
  std::vector<Vec3d> x = {Vec3d(0, 0, 0), Vec3d(0.4, 0, 0), Vec3d(0, 0.4, 0)};
  std::vector<Vec3d> f;
  CHECK(std::isfinite(evaluator.compute(x, &f).total));
  x[2].y = std::numeric_limits<double>::quiet_NaN();
  std::string message;
  try {
    evaluator.compute(x, &f);
  } catch (const RuntimeError& e) {
    message = e.what();
  }
  CHECK(contains(message, "cpu platform: particle 2 has a non-finite position"));
  x[2].y = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(evaluator.compute(x, &f), RuntimeError);
}

TEST_CASE("a PME grid too large to allocate is an input error naming the tolerance", "[pme]") {
  System s;
  s.mass_amu = {1, 1};
  s.charge_e = {0.5, -0.5};
  s.sigma_nm = {0.3, 0.3};
  s.epsilon_kj_per_mol = {0.1, 0.1};
  Boxd box{};
  box.a = Vec3d(10, 0, 0), box.b = Vec3d(0, 10, 0), box.c = Vec3d(0, 0, 10);
  s.box = box;
  s.nonbonded.method = NonbondedMethod::PME;
  s.nonbonded.cutoff_nm = 1.0;
  s.nonbonded.ewald_tolerance = 1e-10;  // the config's smallest: 3151^3 points in a 10 nm box
  std::string message;
  try {
    plan_nonbonded(s);
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(contains(message, "nonbonded: the PME grid for ewald_tolerance 1e-10 and cutoff 1 nm in this box would be "
                          "3151 x 3151 x 3151 points"));
  CHECK(contains(message, "raise system.ewald_tolerance"));
  s.nonbonded.ewald_tolerance = 1e-300;  // below the config's range: still no overflow, the same error
  CHECK_THROWS_AS(plan_nonbonded(s), InputError);
  s.nonbonded.ewald_tolerance = 5e-4;
  CHECK(plan_nonbonded(s).pme_parameters.grid[0] == 81);
}

TEST_CASE("nonfinite_terms names the energy terms JSON cannot carry", "[energy]") {
  EnergyTerms e;
  e.bond = 1.0;
  CHECK(nonfinite_terms(e).empty());
  e.nonbonded_direct = std::numeric_limits<double>::infinity();
  e.total = std::numeric_limits<double>::quiet_NaN();
  CHECK(nonfinite_terms(e) == "nonbonded_direct inf, total nan");
}

TEST_CASE("an output path that is a directory or a device is refused before anything is written", "[output]") {
  const fs::path dir = scratch("outputs");
  std::ofstream(dir / "run.yaml") << "system: {pdb: " << kPdb << "}\n"
                                  << "platform: cpu\nrun: {steps: 10}\n"
                                  << "output:\n  directory: out\n  trajectory: {interval: 5}\n  state: {interval: 5}\n"
                                  << "  final_pdb: final.pdb\n  progress: false\n";
  fs::create_directories(dir / "out" / "final.pdb");  // a directory where the final structure would go
  for (const char* command : {"check", "run"}) {
    INFO(command);
    const mdsim::test::CommandResult r = mdsim::test::run_mdsim(std::string(command) + " " + (dir / "run.yaml").string());
    CHECK(r.code == 2);
    CHECK(contains(r.err, "output.final_pdb: " + (dir / "out" / "final.pdb").string() +
                              " exists and is a directory; an output must be a new or regular file"));
    CHECK_FALSE(fs::exists(dir / "out" / "trajectory.h5"));
    CHECK_FALSE(fs::exists(dir / "out" / "state.csv"));
  }
  // A device node: /dev/null as the trajectory is refused, not replaced by a regular file.
  std::ofstream(dir / "dev.yaml") << "system: {pdb: " << kPdb << "}\n"
                                  << "platform: cpu\nrun: {steps: 10}\n"
                                  << "output:\n  directory: out2\n  trajectory: {file: /dev/null, interval: 5}\n"
                                  << "  progress: false\n";
  const mdsim::test::CommandResult r = mdsim::test::run_mdsim("run " + (dir / "dev.yaml").string());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "output.trajectory.file: /dev/null exists and is a character device"));
  CHECK_FALSE(fs::exists(dir / "out2"));
  CHECK(fs::is_character_file("/dev/null"));
  fs::remove_all(dir);
}

TEST_CASE("force-field values out of range are located in the XML file", "[forcefield]") {
  const fs::path dir = scratch("ffxml");
  const auto error_of = [&dir](const std::string& body) {
    std::ofstream(dir / "ff.xml") << "<ForceField>\n <AtomTypes>\n" << body;
    try {
      load_forcefields({(dir / "ff.xml").string()}, dir.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string type = "  <Type name=\"a\" class=\"A\" element=\"O\" mass=\"15.999\"/>\n </AtomTypes>\n";
  CHECK(error_of("  <Type name=\"a\" class=\"A\" element=\"O\" mass=\"-16\"/>\n </AtomTypes>\n</ForceField>\n") ==
        (dir / "ff.xml").string() +
            ":3: atom type 'a' has mass -16 amu; a mass must be zero (a massless extra particle) or positive");
  CHECK(error_of(type + " <NonbondedForce coulomb14scale=\"0.8\" lj14scale=\"0.5\">\n"
                        "  <Atom type=\"a\" charge=\"0\" sigma=\"-0.3\" epsilon=\"0.5\"/>\n </NonbondedForce>\n"
                        "</ForceField>\n") ==
        (dir / "ff.xml").string() + ":6: sigma = -0.3 is negative; Lennard-Jones sigma (nm) must be zero or positive");
  CHECK(error_of(type + " <NonbondedForce coulomb14scale=\"0.8\" lj14scale=\"0.5\">\n"
                        "  <Atom type=\"a\" charge=\"0\" sigma=\"0.3\" epsilon=\"-1\"/>\n </NonbondedForce>\n"
                        "</ForceField>\n") ==
        (dir / "ff.xml").string() +
            ":6: epsilon = -1 is negative; Lennard-Jones epsilon (kJ/mol) must be zero or positive");
  CHECK(error_of(type + "</ForceField>\n") == "no error");
  fs::remove_all(dir);
}

TEST_CASE("the command line: an unknown command and a folder given as the structure", "[cli]") {
  const mdsim::test::CommandResult unknown = mdsim::test::run_mdsim("rnu config.yaml");
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.err, "unknown command 'rnu'; the commands are run, energy, check, bench, platforms, demux and prepare"));
  const fs::path dir = scratch("pdbdir");
  std::ofstream(dir / "run.yaml") << "system: {pdb: .}\n";
  const mdsim::test::CommandResult folder = mdsim::test::run_mdsim("check " + (dir / "run.yaml").string());
  CHECK(folder.code == 2);
  CHECK(contains(folder.err, (dir / "run.yaml").string() + ":1:15: 'pdb': " + dir.string()));
  CHECK(contains(folder.err, "is a directory; name the structure file (PDB or PDBx/mmCIF) in it"));
  fs::remove_all(dir);
}

TEST_CASE("--resume refuses changed physics, listing each difference, and accepts a longer run", "[resume]") {
  const fs::path dir = scratch("resume");
  const auto config = [&dir](const std::string& timestep, const std::string& temperature, int steps) {
    std::ofstream(dir / "run.yaml") << "system: {pdb: " << kPdb << "}\n"
                                    << "platform: cpu\n"
                                    << "integrator: {type: langevin_middle, temperature: " << temperature
                                    << ", friction: 1/ps, timestep: " << timestep << ", seed: 5}\n"
                                    << "run: {steps: " << steps << "}\n"
                                    << "output:\n  directory: out\n  trajectory: {interval: 5}\n  state: {interval: 5}\n"
                                    << "  checkpoint: {interval: 5}\n  progress: false\n";
    return (dir / "run.yaml").string();
  };
  const mdsim::test::CommandResult first = mdsim::test::run_mdsim("run " + config("2 fs", "300 K", 10));
  REQUIRE(first.code == 0);
  const std::string state_before = mdsim_test::read_text(dir / "out" / "state.csv");

  const mdsim::test::CommandResult changed = mdsim::test::run_mdsim("run --resume " + config("4 fs", "310 K", 20));
  CHECK(changed.code == 2);
  CHECK(contains(changed.err, (dir / "out" / "checkpoint.h5").string() +
                                  ": --resume continues the simulation the checkpoint belongs to, but the config "
                                  "changes its physics (integrator.timestep: checkpoint 0.002 ps, config 0.004 ps; "
                                  "integrator.temperature: checkpoint 300 K, config 310 K)"));
  CHECK(mdsim_test::read_text(dir / "out" / "state.csv") == state_before);  // nothing appended

  const mdsim::test::CommandResult longer = mdsim::test::run_mdsim("run --resume " + config("2 fs", "300 K", 20));
  CHECK(longer.code == 0);
  CHECK(mdsim_test::read_text(dir / "out" / "state.csv").size() > state_before.size());
  fs::remove_all(dir);
}

TEST_CASE("check refuses what run refuses: trajectory selection, platform, resources; run writes nothing", "[parity]") {
  // Each config differs from a valid ala2_water run in one place; `mdsim check` and `mdsim run` both stop
  // with exit 2 at that key of run.yaml (line:column), and neither creates the output folder.
  struct Case {
    const char* name;
    const char* platform;
    const char* system_extra;
    const char* run;
    const char* trajectory;
    const char* located;  // "run.yaml:LINE:COLUMN: ..." expected in the message
  };
  const bool have_cuda = mdsim::test::run_mdsim("platforms").out.find("cuda:0") != std::string::npos;
  const Case cases[] = {
      {"selection", "cpu", "", "{steps: 10}", "{interval: 5, atoms: \"0-999999\"}",
       "run.yaml:8:29: output.trajectory.atoms: invalid atom selection \"0-999999\": atom index 999999"},
      {"replicate", "cpu", "  replicate: [100, 100, 100]\n", "{steps: 10}", "{interval: 5}",
       "run.yaml:5:3: system.replicate: 2269000000 atoms (100 × 100 × 100 copies of 2269) need about"},
      {"disk", "cpu", "", "{steps: 1000000000000}", "{interval: 1, velocities: true}",
       "run.yaml:8:16: output.trajectory.interval: 1000000000000 frames of 2269 atoms need about"},
      {"device", "{name: cuda, device: 7}", "", "{steps: 10}", "{interval: 5}",
       have_cuda ? "run.yaml:5:12: platform device 7 requested but only"
                 : "run.yaml:5:12: platform 'cuda' requested but no usable CUDA device"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const fs::path dir = scratch(std::string("parity_") + c.name);
    fs::copy_file(kPdb, dir / "ala2_water.pdb");
    std::ofstream(dir / "run.yaml") << "system:\n  pdb: ala2_water.pdb\n  nonbonded_method: pme\n  cutoff: 1.0 nm\n"
                                    << c.system_extra << "platform: " << c.platform << "\nrun: " << c.run << "\n"
                                    << "output:\n  trajectory: " << c.trajectory << "\n  progress: false\n";
    for (const char* command : {"check", "run"}) {
      INFO(command);
      const mdsim::test::CommandResult r = mdsim::test::run_mdsim(std::string(command) + " " + (dir / "run.yaml").string());
      INFO(r.err);
      CHECK(r.code == 2);
      CHECK(contains(r.err, (dir / c.located).string()));
      CHECK_FALSE(fs::exists(dir / "out"));
    }
    fs::remove_all(dir);
  }
}
