// CUDA platform versus the CPU reference platform on every shared system (same settings):
// mixed precision to 1e-5 (energy, relative; forces, relative RMS; no atom worse than 1e-3 of the
// RMS force), double precision to 1e-9; bit-identical repeats; the device-side neighbour-list
// rebuild; the exclusion-tile buffer's growth; no host<->device transfer in an evaluation; the pair kernel's
// imaging and the list's search in small rectangular and triclinic boxes; the two kernels that build a small
// system's list (a warp or a thread block per row item) make the same tiles.
#include "support/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <utility>

#include "common/errors.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "support/reference_systems.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;

namespace {

struct ForceError {
  double relative_rms = 0.0;   // ‖F − F_ref‖ / ‖F_ref‖ over all components
  double worst_atom = 0.0;     // max_i |F_i − F_ref,i| / RMS(|F_ref|)
};

ForceError compare_forces(const std::vector<Vec3d>& f, const std::vector<Vec3d>& ref) {
  double num = 0.0, den = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d2 = norm2(f[i] - ref[i]);
    num += d2;
    den += norm2(ref[i]);
    worst = std::max(worst, d2);
  }
  const double rms = std::sqrt(den / double(ref.size()));
  return {std::sqrt(num / den), std::sqrt(worst) / rms};
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-30); }

struct Reference {
  Model model;
  EnergyTerms energy;
  std::vector<Vec3d> forces;
};

const Reference& reference(const std::string& name) {
  static std::map<std::string, Reference> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    Reference r;
    r.model = test::reference_model(name);
    r.energy = cpu_compute(r.model.system, r.model.positions_nm, &r.forces);
    it = cache.emplace(name, std::move(r)).first;
  }
  return it->second;
}

}  // namespace

TEST_CASE("CUDA mixed and double precision match the CPU reference on every shared system") {
  for (const std::string& name : test::reference_system_names()) {
    const Reference& ref = reference(name);
    for (const bool dbl : {false, true}) {
      CudaOptions opt;
      opt.double_precision = dbl;
      CudaForceEvaluator gpu(ref.model.system, opt);
      std::vector<Vec3d> f;
      const EnergyTerms e = gpu.compute(ref.model.positions_nm, &f);
      const ForceError err = compare_forces(f, ref.forces);
      const double tol = dbl ? 1e-9 : 1e-5;
      std::printf("%-12s %-6s total %.10f (cpu %.10f) rel %.2e | bond %.1e angle %.1e torsion %.1e direct %.1e recip %.1e"
                  " | forces rel RMS %.2e, worst atom %.2e of RMS\n",
                  name.c_str(), dbl ? "double" : "mixed", e.total, ref.energy.total, rel(e.total, ref.energy.total),
                  rel(e.bond, ref.energy.bond), rel(e.angle, ref.energy.angle), rel(e.torsion, ref.energy.torsion),
                  rel(e.nonbonded_direct, ref.energy.nonbonded_direct),
                  rel(e.nonbonded_reciprocal, ref.energy.nonbonded_reciprocal), err.relative_rms, err.worst_atom);
      INFO(name << (dbl ? " double" : " mixed"));
      CHECK(rel(e.total, ref.energy.total) < tol);
      CHECK(rel(e.nonbonded, ref.energy.nonbonded) < tol);
      CHECK(err.relative_rms < tol);
      CHECK(err.worst_atom < (dbl ? 1e-7 : 1e-3));
    }
  }
}

TEST_CASE("CUDA forces are bit-identical run to run, and an evaluation copies nothing to or from the host") {
  const Reference& ref = reference("dhfr");
  CudaForceEvaluator gpu(ref.model.system, CudaOptions{});
  gpu.set_positions(ref.model.positions_nm);
  gpu.compute(false);
  const std::vector<Vec3d> first = gpu.forces();
  const std::size_t transfers = cuda::transfer_count();
  for (int i = 0; i < 10; ++i) gpu.compute(false);
  CHECK(cuda::transfer_count() == transfers);
  const std::vector<Vec3d> again = gpu.forces();
  int differing = 0;
  for (std::size_t i = 0; i < first.size(); ++i)
    differing += (first[i].x != again[i].x || first[i].y != again[i].y || first[i].z != again[i].z) ? 1 : 0;
  CHECK(differing == 0);
  CudaForceEvaluator other(ref.model.system, CudaOptions{});
  other.set_positions(ref.model.positions_nm);
  other.compute(false);
  const std::vector<Vec3d> separate = other.forces();
  differing = 0;
  for (std::size_t i = 0; i < first.size(); ++i)
    differing += (first[i].x != separate[i].x || first[i].y != separate[i].y || first[i].z != separate[i].z) ? 1 : 0;
  CHECK(differing == 0);
}

TEST_CASE("the tile list is rebuilt on the device exactly when atoms move past half the buffer") {
  const Reference& ref = reference("ala2_water");
  CudaOptions opt;
  opt.neighbor_buffer_nm = 0.1;
  opt.reorder_interval = 1000000;  // keep the atom order: only the displacement check may rebuild
  CudaForceEvaluator gpu(ref.model.system, opt);
  gpu.set_positions(ref.model.positions_nm);
  gpu.compute(false);
  gpu.forces();
  const int builds0 = gpu.num_list_builds();
  CHECK(builds0 == 1);

  std::mt19937 rng(7);
  auto moved = [&](double max_step) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Vec3d> x = ref.model.positions_nm;
    for (Vec3d& p : x) {
      Vec3d d(u(rng), u(rng), u(rng));
      p += d * (max_step / std::sqrt(3.0));  // |d| <= max_step
    }
    return x;
  };
  // Small moves (< half the buffer): no rebuild, forces still right.
  const std::vector<Vec3d> small = moved(0.04);
  gpu.update_positions(small);
  gpu.compute(false);
  std::vector<Vec3d> f_small = gpu.forces();
  CHECK(gpu.num_list_builds() == builds0);
  std::vector<Vec3d> ref_small;
  cpu_compute(ref.model.system, small, &ref_small);
  CHECK(compare_forces(f_small, ref_small).relative_rms < 1e-5);

  // Large moves (up to 0.12 nm): the device notices and rebuilds; forces right again.
  const std::vector<Vec3d> large = moved(0.12);
  gpu.update_positions(large);
  gpu.compute(false);
  std::vector<Vec3d> f_large = gpu.forces();
  CHECK(gpu.num_list_builds() == builds0 + 1);
  std::vector<Vec3d> ref_large;
  cpu_compute(ref.model.system, large, &ref_large);
  const ForceError err = compare_forces(f_large, ref_large);
  std::printf("after a 0.12 nm shake: forces rel RMS %.2e, worst atom %.2e of RMS, %d tiles\n", err.relative_rms,
              err.worst_atom, gpu.num_tiles());
  CHECK(err.relative_rms < 1e-5);
}

TEST_CASE("a tile list or exclusion-tile buffer that starts too small grows, and the forces are unchanged") {
  const Reference& ref = reference("villin_water");
  const auto forces_with = [&](int initial_tiles, int initial_exclusion_tiles) {
    CudaOptions o;
    o.double_precision = true;
    o.initial_tiles = initial_tiles;
    o.initial_exclusion_tiles = initial_exclusion_tiles;
    CudaForceEvaluator gpu(ref.model.system, o);
    gpu.set_positions(ref.model.positions_nm);
    gpu.compute(false);
    return gpu.forces();
  };
  const std::vector<Vec3d> estimated = forces_with(0, 0);
  const auto identical = [&](const std::vector<Vec3d>& f) {
    int differing = 0;
    for (std::size_t i = 0; i < f.size(); ++i)
      differing += (f[i].x != estimated[i].x || f[i].y != estimated[i].y || f[i].z != estimated[i].z) ? 1 : 0;
    return differing == 0;
  };
  for (const auto& [tiles, exclusion_tiles] : {std::pair<int, int>{1, 0}, {0, 1}, {100, 1}}) {
    const std::vector<Vec3d> grown = forces_with(tiles, exclusion_tiles);
    CHECK(identical(grown));
    const ForceError err = compare_forces(grown, ref.forces);
    std::printf("buffers grown from %d tiles, %d exclusion tiles: forces rel RMS %.2e against the CPU (double)\n",
                tiles, exclusion_tiles, err.relative_rms);
    CHECK(err.relative_rms < 1e-9);
  }
}

TEST_CASE("the column search of large systems finds every interaction, also after atoms drift from their columns") {
  for (const std::string& name : {std::string("ala2_water"), std::string("villin_water"), std::string("dhfr")}) {
    const Reference& ref = reference(name);
    CudaOptions all_pairs, columns;
    columns.column_search_min_blocks = 0;  // the column search even for these small systems
    columns.reorder_interval = 1000000;   // no re-sort: the atoms drift out of their columns below
    CudaForceEvaluator a(ref.model.system, all_pairs), b(ref.model.system, columns);
    std::vector<Vec3d> fa, fb;
    a.compute(ref.model.positions_nm, &fa);
    const EnergyTerms eb = b.compute(ref.model.positions_nm, &fb);
    const ForceError err = compare_forces(fb, ref.forces);
    std::printf("%-12s column search: %d tiles (all-pairs scan %d), energy rel %.2e, forces rel RMS %.2e, worst atom "
                "%.2e of RMS\n",
                name.c_str(), b.num_tiles(), a.num_tiles(), rel(eb.total, ref.energy.total), err.relative_rms,
                err.worst_atom);
    INFO(name);
    CHECK(rel(eb.total, ref.energy.total) < 1e-5);
    CHECK(err.relative_rms < 1e-5);
    CHECK(err.worst_atom < 1e-3);
    // Three moves of every atom by up to 0.29 nm: a translation plus a shear (0.1 nm amplitude, one
    // wave per box length, a new phase each time, so blocks drift out of their columns by different
    // amounts while no two atoms come close). Each forces a rebuild from positions far from the
    // columns of the last sort.
    const Boxd box = *ref.model.system.box;
    std::vector<Vec3d> x = ref.model.positions_nm;
    for (int walk = 0; walk < 3; ++walk) {
      const double phase = 1.7 * walk;
      for (Vec3d& p : x) {
        const Vec3d shear(std::sin(2.0 * M_PI * p.y / box.b.y + phase), std::sin(2.0 * M_PI * p.z / box.c.z + phase),
                          std::sin(2.0 * M_PI * p.x / box.a.x + phase));
        p += Vec3d(0.15, 0.1, 0.05) + shear * 0.1;
      }
      b.update_positions(x);
      b.compute(false);
      std::vector<Vec3d> f = b.forces(), f_ref;
      cpu_compute(ref.model.system, x, &f_ref);
      const ForceError e = compare_forces(f, f_ref);
      INFO("move " << walk);
      CHECK(e.relative_rms < 1e-5);
      CHECK(e.worst_atom < 1e-3);
      if (walk == 2)
        std::printf("%-12s column search after three moves: forces rel RMS %.2e, worst atom %.2e of RMS, %d list "
                    "builds\n",
                    name.c_str(), e.relative_rms, e.worst_atom, b.num_list_builds());
    }
    CHECK(b.num_list_builds() == 4);
  }
}

namespace {

// A gas of `n` charged LJ particles (charges +-0.5 e, sigma 0.2 nm, epsilon 0.5 kJ/mol, 1 amu), uniformly random
// in `box` with no two closer than 0.25 nm (the nearest images), PME at `cutoff_nm`. (Closer pairs, on the LJ
// wall's r^-13 slope, would magnify single precision's rounding of their displacement, ~3e-7 nm, into relative
// force errors of 1e-5.)
Model random_gas(const Boxd& box, int n, double cutoff_nm, unsigned seed) {
  Model m;
  m.system.box = box;
  m.system.nonbonded.cutoff_nm = cutoff_nm;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  while (static_cast<int>(m.positions_nm.size()) < n) {
    const Vec3d x = box.a * u(rng) + box.b * u(rng) + box.c * u(rng);
    bool clear = true;
    for (const Vec3d& y : m.positions_nm) clear = clear && norm2(box.minimum_image(x - y)) >= 0.0625;
    if (!clear) continue;
    m.positions_nm.push_back(x);
    m.system.mass_amu.push_back(1.0);
    m.system.charge_e.push_back(m.positions_nm.size() % 2 == 0 ? 0.5 : -0.5);
    m.system.sigma_nm.push_back(0.2);
    m.system.epsilon_kj_per_mol.push_back(0.5);
  }
  return m;
}

}  // namespace

// Small boxes, where the pair kernel images each pair (in a rectangular box's form, or the general one) and the
// list's search meets displacements near half the box, against the CPU: ala2_water at cutoffs up to 1.45 nm (half
// its box is 1.59 nm), with every atom moved just under half the buffer since the list's build; and a gas in a
// triclinic box.
TEST_CASE("the pair kernel's imaging and the list's search match the CPU in small rectangular and triclinic boxes") {
  const Reference& ref = reference("ala2_water");
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Vec3d> moved = ref.model.positions_nm;
  for (Vec3d& p : moved) {  // 0.049 nm each, in a random direction: half the 0.1 nm buffer is 0.05
    const Vec3d dir(g(rng), g(rng), g(rng));
    p += dir * (0.049 / norm(dir));
  }
  for (const double cutoff : {1.0, 1.2, 1.45}) {
    Model m = ref.model;
    m.system.nonbonded.cutoff_nm = cutoff;
    CudaOptions opt;
    opt.neighbor_buffer_nm = 0.1;
    CudaForceEvaluator gpu(m.system, opt);
    gpu.set_positions(m.positions_nm);
    gpu.compute(false);
    gpu.update_positions(moved);
    gpu.compute(false);
    std::vector<Vec3d> f_ref;
    const EnergyTerms e_ref = cpu_compute(m.system, moved, &f_ref);
    const ForceError err = compare_forces(gpu.forces(), f_ref);
    std::printf("ala2_water cutoff %.2f nm, atoms moved 0.049 nm: forces rel RMS %.2e, worst atom %.2e of RMS\n",
                cutoff, err.relative_rms, err.worst_atom);
    INFO("cutoff " << cutoff);
    CHECK(gpu.num_list_builds() == 1);  // the moved positions used the first build's list
    CHECK(err.relative_rms < 1e-5);
    CHECK(err.worst_atom < 1e-3);
    std::vector<Vec3d> f;
    const EnergyTerms e = gpu.compute(moved, &f);
    CHECK(rel(e.nonbonded, e_ref.nonbonded) < 1e-5);
  }
  // Reduced triclinic, heights 3.0, 2.9 and 2.8 nm; blocks of ~0.8 nm^3. At a cutoff of 1.2 nm the list's search
  // must look past the minimum image of a long displacement between blocks or to an atom
  // (SearchBox::gap2_to_nearest_image; it missed pairs here before). Double precision shows any wrong image or
  // missed pair at the 1e-9 level.
  const Boxd tri{{3.0, 0.0, 0.0}, {1.0, 2.9, 0.0}, {-0.9, 1.2, 2.8}};
  for (const double cutoff : {0.5, 1.2}) {
    const Model gas = random_gas(tri, 1000, cutoff, 3);
    std::vector<Vec3d> f_ref;
    const EnergyTerms e_ref = cpu_compute(gas.system, gas.positions_nm, &f_ref);
    for (const bool dbl : {false, true}) {
      CudaOptions opt;
      opt.double_precision = dbl;
      CudaForceEvaluator gpu(gas.system, opt);
      std::vector<Vec3d> f;
      const EnergyTerms e = gpu.compute(gas.positions_nm, &f);
      const ForceError err = compare_forces(f, f_ref);
      std::printf("triclinic gas, cutoff %.2f nm, %s: energy rel %.2e, forces rel RMS %.2e, worst atom %.2e of RMS\n",
                  cutoff, dbl ? "double" : "mixed", rel(e.total, e_ref.total), err.relative_rms, err.worst_atom);
      INFO("triclinic, cutoff " << cutoff << (dbl ? " double" : " mixed"));
      CHECK(rel(e.nonbonded, e_ref.nonbonded) < (dbl ? 1e-9 : 1e-5));
      CHECK(err.relative_rms < (dbl ? 1e-9 : 1e-5));
      CHECK(err.worst_atom < (dbl ? 1e-7 : 1e-3));
    }
  }
}

namespace {

// Every atom of each replica moved by `step_nm` in a random direction (its own draw per replica and seed).
std::vector<Vec3d> moved_batch(const std::vector<Vec3d>& x, int replicas, double step_nm, unsigned seed) {
  std::vector<Vec3d> out;
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int r = 0; r < replicas; ++r)
    for (const Vec3d& p : x) {
      const Vec3d dir(g(rng), g(rng), g(rng));
      out.push_back(p + dir * (step_nm / norm(dir)));
    }
  return out;
}

// Forces and energies of `s` at x, then at positions moved past half the buffer (a second build), with the list
// built by `build`.
struct ListRun {
  std::vector<std::vector<Vec3d>> forces;
  std::vector<std::vector<EnergyTerms>> energies;
  int builds = 0;
};
ListRun run_list(const System& s, const std::vector<Vec3d>& x, CudaOptions opt, cuda::RowBuild build) {
  opt.row_build = build;
  CudaForceEvaluator gpu(s, opt);
  ListRun run;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<Vec3d> at = moved_batch(x, opt.replicas, pass == 0 ? 0.01 : 0.08, 11 + pass);
    if (pass == 0) gpu.set_positions(at);
    else gpu.update_positions(at);
    gpu.compute(true);
    run.forces.push_back(gpu.forces());
    run.energies.push_back(gpu.replica_energies());
  }
  run.builds = gpu.num_list_builds();
  return run;
}

}  // namespace

// tile_build_rows_kernel (the four warps of a thread block per row item, each a quarter of its blocks) must make the
// tiles tile_build_kernel (one warp per item) makes: the same atoms in the same slots, since a tile's float sums
// round by its contents. Forces and energies bit for bit, at the first build and after a rebuild: ala2_water and
// villin_water (small rectangular boxes: the atom filter at each pair's own image), DHFR (the filter at the image
// next to block I's centre), a triclinic gas (small triclinic box: no filter), TIP4P-Ew (pair classes), a batch of
// 3 ala2_water replicas; mixed and double.
TEST_CASE("a small system's tile list built a thread block per row item equals the warp-per-item list bit for bit") {
  struct Case {
    std::string name;
    System system;
    std::vector<Vec3d> x;
    int replicas;
  };
  const Model gas = random_gas({{3.0, 0.0, 0.0}, {1.0, 2.9, 0.0}, {-0.9, 1.2, 2.8}}, 1000, 1.2, 5);
  const System tip4p = mdsim_test::tip4pew_system();
  std::vector<Case> cases;
  for (const char* name : {"ala2_water", "villin_water", "dhfr"})
    cases.push_back({name, reference(name).model.system, reference(name).model.positions_nm, 1});
  const Model& ala2 = reference("ala2_water").model;
  cases.push_back({"ala2_water x 3", ala2.system, ala2.positions_nm, 3});
  cases.push_back({"triclinic gas", gas.system, gas.positions_nm, 1});
  cases.push_back({"tip4pew_ala2", tip4p, mdsim_test::tip4pew_positions(), 1});
  for (const Case& c : cases)
    for (const bool dbl : {false, true}) {
      INFO(c.name << (dbl ? ", double" : ", mixed"));
      CudaOptions opt;
      opt.double_precision = dbl;
      opt.replicas = c.replicas;
      const ListRun warp = run_list(c.system, c.x, opt, cuda::RowBuild::Warp);
      const ListRun block = run_list(c.system, c.x, opt, cuda::RowBuild::Block);
      CHECK(warp.builds >= 2);  // the moved positions were built anew
      CHECK(block.builds == warp.builds);
      for (std::size_t pass = 0; pass < 2; ++pass) {
        std::size_t differing = 0;
        for (std::size_t i = 0; i < warp.forces[pass].size(); ++i) {
          const Vec3d& a = warp.forces[pass][i];
          const Vec3d& b = block.forces[pass][i];
          differing += (a.x != b.x || a.y != b.y || a.z != b.z) ? 1 : 0;
        }
        std::printf("%-14s %-6s build %zu: %zu of %zu atoms' forces differ, nonbonded direct %.9f / %.9f kJ/mol\n",
                    c.name.c_str(), dbl ? "double" : "mixed", pass + 1, differing, warp.forces[pass].size(),
                    warp.energies[pass][0].nonbonded_direct, block.energies[pass][0].nonbonded_direct);
        CHECK(differing == 0);
        for (std::size_t r = 0; r < warp.energies[pass].size(); ++r) {
          CHECK(warp.energies[pass][r].nonbonded_direct == block.energies[pass][r].nonbonded_direct);
          CHECK(warp.energies[pass][r].total == block.energies[pass][r].total);
        }
      }
    }
}

TEST_CASE("CUDA set_box refuses a box below twice the cutoff, as the CPU platform does") {
  const Reference& ref = reference("dhfr");
  CudaForceEvaluator gpu(ref.model.system, CudaOptions{});
  CpuForceEvaluator cpu(ref.model.system);
  Boxd small = *ref.model.system.box;
  const double scale = 1.9 * ref.model.system.nonbonded.cutoff_nm / std::min({small.a.x, small.b.y, small.c.z});
  small.a *= scale;
  small.b *= scale;
  small.c *= scale;
  REQUIRE_THROWS_AS(cpu.set_box(small), InputError);
  REQUIRE_THROWS_AS(gpu.set_box(small), InputError);
  gpu.set_box(*ref.model.system.box);  // the original box is accepted again
}
