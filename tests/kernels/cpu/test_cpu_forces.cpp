// CPU reference platform: total forces against finite differences of the total energy for every
// nonbonded method, the cell-list pair loop against a brute-force all-pairs loop (including small
// and triclinic boxes), the dispersion correction against hand computations, energy bookkeeping,
// and the errors for bad input.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cpu/cell_list.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cpu/cpu_pme.hpp"
#include "physics/nonbonded.hpp"
#include "platform/dispersion_correction.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/vectors.hpp"

using namespace mdsim;
using mdsim_test::make_box;

namespace {

constexpr double kPi = 3.14159265358979323846;

// n random particles (minimum separation 0.2 nm) in the box spanned by `box` (or the box's extent
// for open boundaries), with a few classes of LJ parameters, random charges, water-like exclusions
// and scaled exceptions among neighbours, and a few bonded terms.
struct Synthetic {
  System system;
  std::vector<Vec3d> x;
};

Synthetic make_synthetic(int n, const Boxd& box, unsigned seed, bool with_bonded = true) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0), uq(-0.8, 0.8);
  Synthetic s;
  while (int(s.x.size()) < n) {
    const Vec3d p = box.a * u(rng) + box.b * u(rng) + box.c * u(rng);
    bool ok = true;
    for (const Vec3d& y : s.x)
      if (norm(box.minimum_image(p - y)) < 0.2) ok = false;
    if (ok) s.x.push_back(p);
  }
  const double sig[3] = {0.315, 0.25, 0.1}, eps[3] = {0.636, 0.2, 0.0};
  for (int i = 0; i < n; ++i) {
    s.system.mass_amu.push_back(10.0);
    s.system.charge_e.push_back(uq(rng));
    s.system.sigma_nm.push_back(sig[i % 3]);
    s.system.epsilon_kj_per_mol.push_back(eps[i % 3]);
  }
  // exceptions between close pairs (non-periodic distance, as bonded neighbours would be)
  int count = 0;
  for (int i = 0; i < n && count < 12; ++i)
    for (int j = i + 1; j < n && count < 12; ++j)
      if (norm(s.x[size_t(j)] - s.x[size_t(i)]) < 0.4) {
        if (count % 2 == 0)
          s.system.exceptions.push_back({i, j, 0.0, 1.0, 0.0});
        else
          s.system.exceptions.push_back({i, j, 0.5 * s.system.charge_e[size_t(i)] * s.system.charge_e[size_t(j)], 0.3, 0.2});
        if (with_bonded) {
          s.system.bonds.push_back({i, j, 0.25, 1000.0});
          if (count >= 1) {
            const auto& prev = s.system.bonds[s.system.bonds.size() - 2];
            if (prev.i != i && prev.j != i) s.system.angles.push_back({prev.i, i, j, 1.8, 50.0});
            if (prev.i != i && prev.j != i && prev.i != j && prev.j != j)
              s.system.torsions.push_back({prev.i, prev.j, i, j, 2, 0.7, 3.0});
          }
        }
        ++count;
      }
  s.system.box = box;
  return s;
}

// Central finite difference of the total energy vs the total force on every coordinate.
void check_total_forces_by_finite_difference(const System& system, const std::vector<Vec3d>& x0) {
  CpuForceEvaluator ev(system);
  std::vector<Vec3d> f;
  ev.compute(x0, &f);
  double scale = 0;
  for (const Vec3d& v : f) scale = std::max(scale, norm(v));
  const double h = 1e-6;
  int bad = 0;
  for (size_t i = 0; i < x0.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      std::vector<Vec3d> xp = x0, xm = x0;
      xp[i][d] += h;
      xm[i][d] -= h;
      const double fd = -(ev.compute(xp, nullptr).total - ev.compute(xm, nullptr).total) / (2 * h);
      if (std::fabs(fd - f[i][d]) > 1e-6 * scale) {
        ++bad;
        INFO("atom " << i << " axis " << d << " analytic " << f[i][d] << " numeric " << fd);
        CHECK(std::fabs(fd - f[i][d]) <= 1e-6 * scale);
      }
    }
  CHECK(bad == 0);
}

// Brute-force reference for the real-space part: every pair, minimum image, no cell list.
double brute_force_direct(const System& s, const std::vector<Vec3d>& x, std::vector<Vec3d>& f, double alpha) {
  const int n = s.num_particles();
  f.assign(size_t(n), Vec3d());
  std::vector<std::vector<bool>> excluded(size_t(n), std::vector<bool>(size_t(n), false));
  for (const auto& e : s.exceptions) excluded[size_t(e.i)][size_t(e.j)] = excluded[size_t(e.j)][size_t(e.i)] = true;
  const auto& nb = s.nonbonded;
  const bool periodic = nb.method == NonbondedMethod::CutoffPeriodic || nb.method == NonbondedMethod::PME;
  const auto rf = reaction_field_constants(nb.cutoff_nm, nb.reaction_field_dielectric);
  double energy = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (excluded[size_t(i)][size_t(j)]) continue;
      Vec3d d = x[size_t(j)] - x[size_t(i)];
      if (periodic) d = s.box->minimum_image(d);
      const double r = norm(d);
      if (nb.method != NonbondedMethod::NoCutoff && r > nb.cutoff_nm) continue;
      const double qq = s.charge_e[size_t(i)] * s.charge_e[size_t(j)];
      PairResult<double> pr = nb.method == NonbondedMethod::NoCutoff ? coulomb_plain(qq, 1 / r)
                              : nb.method == NonbondedMethod::PME     ? coulomb_ewald_direct(qq, r, 1 / r, alpha)
                                                                      : coulomb_reaction_field(qq, r, 1 / r, rf);
      PairResult<double> lj = lennard_jones(1 / (r * r), 0.5 * (s.sigma_nm[size_t(i)] + s.sigma_nm[size_t(j)]),
                                            std::sqrt(s.epsilon_kj_per_mol[size_t(i)] * s.epsilon_kj_per_mol[size_t(j)]));
      if (nb.switch_distance_nm) lj = apply_switch(lj, switching_function(r, *nb.switch_distance_nm, nb.cutoff_nm), r);
      pr += lj;
      energy += pr.energy;
      f[size_t(j)] += d * pr.f_over_r;
      f[size_t(i)] -= d * pr.f_over_r;
    }
  return energy;
}

}  // namespace

TEST_CASE("total forces are minus the gradient of the total energy, every nonbonded method", "[cpu]") {
  const Boxd ortho = make_box(Vec3d(2.3, 0, 0), Vec3d(0, 2.2, 0), Vec3d(0, 0, 2.1));
  const Boxd tric = make_box(Vec3d(2.3, 0, 0), Vec3d(0.6, 2.2, 0), Vec3d(-0.7, 0.5, 2.1));
  struct Case {
    const char* name;
    NonbondedMethod method;
    bool triclinic;
    std::optional<double> switch_nm;
  } cases[] = {{"NoCutoff", NonbondedMethod::NoCutoff, false, std::nullopt},
               {"CutoffNonPeriodic", NonbondedMethod::CutoffNonPeriodic, false, std::nullopt},
               {"CutoffPeriodic", NonbondedMethod::CutoffPeriodic, false, 0.7},
               {"CutoffPeriodic triclinic", NonbondedMethod::CutoffPeriodic, true, 0.7},
               {"PME", NonbondedMethod::PME, false, std::nullopt},
               {"PME triclinic switched", NonbondedMethod::PME, true, 0.75}};
  for (const Case& c : cases) {
    INFO(c.name);
    Synthetic s = make_synthetic(40, c.triclinic ? tric : ortho, 17);
    s.system.nonbonded.method = c.method;
    s.system.nonbonded.cutoff_nm = 0.9;
    s.system.nonbonded.switch_distance_nm = c.switch_nm;
    if (c.method == NonbondedMethod::NoCutoff || c.method == NonbondedMethod::CutoffNonPeriodic) s.system.box.reset();
    REQUIRE(!s.system.bonds.empty());
    REQUIRE(!s.system.torsions.empty());
    // LJ without switching is cut off sharply; a pair within the FD step of the cutoff would make
    // this check fail (none does for this fixed layout).
    check_total_forces_by_finite_difference(s.system, s.x);
  }
}

TEST_CASE("cell-list pair loop equals a brute-force all-pairs loop", "[cpu]") {
  struct Case {
    const char* name;
    Boxd box;
    NonbondedMethod method;
    double cutoff;
    bool unique_shifts;  // enough cells for one image shift per neighbour cell
  } cases[] = {
      {"orthorhombic PME", make_box(Vec3d(3.1, 0, 0), Vec3d(0, 2.9, 0), Vec3d(0, 0, 3.3)), NonbondedMethod::PME, 0.8, true},
      {"triclinic PME", make_box(Vec3d(3.0, 0, 0), Vec3d(1.2, 2.8, 0), Vec3d(-1.1, 1.3, 2.7)), NonbondedMethod::PME, 0.9, true},
      {"small box: cells wrap onto themselves", make_box(Vec3d(2.0, 0, 0), Vec3d(0, 2.05, 0), Vec3d(0, 0, 1.95)),
       NonbondedMethod::CutoffPeriodic, 0.95, false},
      {"triclinic reaction field, small", make_box(Vec3d(2.6, 0, 0), Vec3d(-1.0, 2.5, 0), Vec3d(0.9, -1.2, 2.4)),
       NonbondedMethod::CutoffPeriodic, 1.0, false},
      {"open boundaries", make_box(Vec3d(3.0, 0, 0), Vec3d(0, 3.0, 0), Vec3d(0, 0, 3.0)), NonbondedMethod::CutoffNonPeriodic,
       0.9, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Synthetic s = make_synthetic(300, c.box, 23, false);
    CellList cells;
    cells.build(s.x, c.method == NonbondedMethod::CutoffNonPeriodic ? nullptr : &c.box, c.cutoff);
    CHECK(cells.shifts_exact == c.unique_shifts);
    s.system.nonbonded.method = c.method;
    s.system.nonbonded.cutoff_nm = c.cutoff;
    s.system.nonbonded.dispersion_correction = false;
    if (c.method == NonbondedMethod::CutoffNonPeriodic) s.system.box.reset();
    CpuForceEvaluator ev(s.system);
    const double alpha = ev.uses_pme() ? ev.pme_parameters().alpha_per_nm : 0.0;
    // Only the pair part: remove exceptions' own terms by giving them no interaction, and compare
    // the direct group without the Ewald exclusion corrections (PME) by subtracting them here.
    System pairs_only = s.system;
    for (auto& e : pairs_only.exceptions) e.charge_product_e2 = e.epsilon_kj_per_mol = 0.0;
    CpuForceEvaluator ev_pairs(pairs_only);
    std::vector<Vec3d> f;
    double e_direct = ev_pairs.compute(s.x, &f, kTermNonbondedDirect).nonbonded_direct;
    if (ev.uses_pme()) {
      for (const auto& e : pairs_only.exceptions) {
        const Vec3d d = pairs_only.box->minimum_image(s.x[size_t(e.j)] - s.x[size_t(e.i)]);
        const double qq = pairs_only.charge_e[size_t(e.i)] * pairs_only.charge_e[size_t(e.j)];
        const auto pr = ewald_exclusion_correction(qq, norm(d), alpha);
        e_direct -= pr.energy;
        f[size_t(e.j)] -= d * pr.f_over_r;
        f[size_t(e.i)] += d * pr.f_over_r;
      }
    }
    std::vector<Vec3d> f_ref;
    const double e_ref = brute_force_direct(pairs_only, s.x, f_ref, alpha);
    CHECK(e_direct == Catch::Approx(e_ref).epsilon(1e-12));
    CHECK(mdsim_test::relative_rms_difference(f, f_ref) < 1e-12);
  }
}

TEST_CASE("dispersion correction against hand computations", "[cpu]") {
  // One class: the textbook tail correction 8 pi N^2 eps (sigma^12/(9 rc^9) - sigma^6/(3 rc^3)) / V.
  System s;
  const int n = 100;
  for (int i = 0; i < n; ++i) {
    s.mass_amu.push_back(1);
    s.charge_e.push_back(0);
    s.sigma_nm.push_back(0.3);
    s.epsilon_kj_per_mol.push_back(0.5);
  }
  s.nonbonded.method = NonbondedMethod::CutoffPeriodic;
  s.nonbonded.cutoff_nm = 1.0;
  s.box = make_box(Vec3d(2, 0, 0), Vec3d(0, 2, 0), Vec3d(0, 0, 2));
  const double by_hand = 8 * kPi * 100.0 * 100.0 * 0.5 * (std::pow(0.3, 12) / 9 - std::pow(0.3, 6) / 3);
  CHECK(dispersion_correction_coefficient(s) == Catch::Approx(by_hand).epsilon(1e-14));
  std::vector<Vec3d> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[size_t(i)] = Vec3d(0.19 * (i % 10), 0.19 * (i / 10), 0.0);
  const EnergyTerms e = cpu_compute(s, x, nullptr);
  CHECK(e.dispersion_correction == Catch::Approx(by_hand / 8.0).epsilon(1e-14));

  // Two classes and a lone particle: OpenMM averages over all N(N+1)/2 pairs i <= j with combined
  // parameters; evaluate that average pair by pair here.
  System t = s;
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 1) {
      t.sigma_nm[size_t(i)] = 0.25;
      t.epsilon_kj_per_mol[size_t(i)] = 0.2;
    }
  }
  t.sigma_nm[7] = 0.4;
  t.epsilon_kj_per_mol[7] = 1.1;
  double s12 = 0, s6 = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) {
      const double sg = 0.5 * (t.sigma_nm[size_t(i)] + t.sigma_nm[size_t(j)]);
      const double ep = std::sqrt(t.epsilon_kj_per_mol[size_t(i)] * t.epsilon_kj_per_mol[size_t(j)]);
      s12 += ep * std::pow(sg, 12);
      s6 += ep * std::pow(sg, 6);
    }
  const double pairs = n * (n + 1) / 2.0;
  const double expected = 8 * kPi * n * n * (s12 / pairs / 9 - s6 / pairs / 3);
  CHECK(dispersion_correction_coefficient(t) == Catch::Approx(expected).epsilon(1e-12));

  // With switching: the extra integral of (sigma^12 r^-10 - sigma^6 r^-4)(1 - S(r)) over [rs, rc],
  // here by a fine composite Simpson rule.
  const double rs = 0.8, rc = 1.0, sigma = 0.3;
  const int m = 20000;
  double simpson = 0;
  for (int k = 0; k <= m; ++k) {
    const double r = rs + (rc - rs) * k / m;
    const double w = (k == 0 || k == m) ? 1 : (k % 2 ? 4 : 2);
    simpson += w * (std::pow(sigma, 12) / std::pow(r, 10) - std::pow(sigma, 6) / std::pow(r, 4)) *
               (1 - switching_function(r, rs, rc).s);
  }
  simpson *= (rc - rs) / m / 3;
  CHECK(dispersion_switch_integral(sigma, rs, rc) == Catch::Approx(simpson).epsilon(1e-10));
  System u = s;
  u.nonbonded.switch_distance_nm = rs;
  CHECK(dispersion_correction_coefficient(u) == Catch::Approx(by_hand + 8 * kPi * n * n * 0.5 * simpson).epsilon(1e-10));

  // Off for non-periodic methods and when disabled.
  System v = s;
  v.nonbonded.dispersion_correction = false;
  CHECK(dispersion_correction_coefficient(v) == 0.0);
  v = s;
  v.nonbonded.method = NonbondedMethod::CutoffNonPeriodic;
  CHECK(dispersion_correction_coefficient(v) == 0.0);
}

TEST_CASE("energy bookkeeping and term selection", "[cpu]") {
  const Boxd box = make_box(Vec3d(2.3, 0, 0), Vec3d(0, 2.2, 0), Vec3d(0, 0, 2.1));
  Synthetic s = make_synthetic(40, box, 31);
  s.system.nonbonded.method = NonbondedMethod::PME;
  s.system.nonbonded.cutoff_nm = 1.0;
  CpuForceEvaluator ev(s.system);
  std::vector<Vec3d> f_all(3, Vec3d(1e9, 1e9, 1e9));  // garbage: must be overwritten
  const EnergyTerms all = ev.compute(s.x, &f_all);
  REQUIRE(f_all.size() == s.x.size());
  CHECK(all.nonbonded == Catch::Approx(all.nonbonded_direct + all.nonbonded_reciprocal).epsilon(1e-15));
  CHECK(all.total == Catch::Approx(all.bond + all.angle + all.torsion + all.nonbonded).epsilon(1e-15));
  CHECK(all.dispersion_correction == Catch::Approx(ev.dispersion_coefficient() / box.volume()).epsilon(1e-15));
  CHECK(all.dispersion_correction < 0.0);

  // The parts add up, energies and forces.
  std::vector<Vec3d> sum(s.x.size());
  double total = 0;
  for (unsigned t : {kTermBond, kTermAngle, kTermTorsion, kTermNonbondedDirect, kTermNonbondedReciprocal}) {
    std::vector<Vec3d> f;
    total += ev.compute(s.x, &f, t).total;
    for (size_t i = 0; i < f.size(); ++i) sum[i] += f[i];
  }
  CHECK(total == Catch::Approx(all.total).epsilon(1e-13));
  CHECK(mdsim_test::relative_rms_difference(sum, f_all) < 1e-13);

  // The reciprocal group is the PME sum plus the self energy.
  CpuPme pme(ev.pme_parameters().grid[0], ev.pme_parameters().grid[1], ev.pme_parameters().grid[2],
             ev.pme_parameters().alpha_per_nm);
  double expected = pme.compute(s.x, s.system.charge_e, box, nullptr);
  for (double q : s.system.charge_e) expected += ewald_self_energy(q, ev.pme_parameters().alpha_per_nm);
  CHECK(ev.compute(s.x, nullptr, kTermNonbondedReciprocal).nonbonded_reciprocal == Catch::Approx(expected).epsilon(1e-14));

  // An excluded pair does not interact: NoCutoff energy with and without excluding a far pair.
  System open = s.system;
  open.nonbonded.method = NonbondedMethod::NoCutoff;
  open.box.reset();
  open.exceptions.clear();
  const double e_all = cpu_compute(open, s.x, nullptr).nonbonded;
  open.exceptions.push_back({0, 39, 0.0, 1.0, 0.0});
  const double e_excl = cpu_compute(open, s.x, nullptr).nonbonded;
  const double r = norm(s.x[39] - s.x[0]);
  const double pair = coulomb_plain(open.charge_e[0] * open.charge_e[39], 1 / r).energy +
                      lennard_jones(1 / (r * r), 0.5 * (open.sigma_nm[0] + open.sigma_nm[39]),
                                    std::sqrt(open.epsilon_kj_per_mol[0] * open.epsilon_kj_per_mol[39])).energy;
  CHECK(e_all - e_excl == Catch::Approx(pair).epsilon(1e-10));
}

TEST_CASE("bad settings and inconsistent systems are reported", "[cpu]") {
  const Boxd box = make_box(Vec3d(2.3, 0, 0), Vec3d(0, 2.2, 0), Vec3d(0, 0, 2.1));
  Synthetic s = make_synthetic(10, box, 5);
  System a = s.system;
  a.box.reset();
  REQUIRE_THROWS_AS(CpuForceEvaluator(a), InputError);
  REQUIRE_THROWS_WITH(CpuForceEvaluator(a), "nonbonded: a periodic nonbonded method needs a periodic box");
  System b = s.system;
  b.nonbonded.cutoff_nm = 1.2;
  REQUIRE_THROWS_AS(CpuForceEvaluator(b), InputError);
  System c = s.system;
  c.nonbonded.switch_distance_nm = 1.0;
  REQUIRE_THROWS_AS(CpuForceEvaluator(c), InputError);
  System d = s.system;
  d.exceptions.push_back({0, 10, 0, 1, 0});
  REQUIRE_THROWS_AS(CpuForceEvaluator(d), RuntimeError);
  System e = s.system;
  e.exceptions.clear();
  e.exceptions.push_back({3, 4, 0, 1, 0});
  e.exceptions.push_back({4, 3, 0, 1, 0});
  REQUIRE_THROWS_WITH(CpuForceEvaluator(e), "system: more than one exception for particles 4 and 3");
  System f = s.system;
  f.bonds.push_back({0, -1, 0.1, 1});
  REQUIRE_THROWS_AS(CpuForceEvaluator(f), RuntimeError);
  CpuForceEvaluator ok(s.system);
  REQUIRE_THROWS_AS(ok.compute(std::vector<Vec3d>(3), nullptr), RuntimeError);
  REQUIRE_THROWS_AS(ok.set_box(make_box(Vec3d(1.5, 0, 0), Vec3d(0, 2.2, 0), Vec3d(0, 0, 2.1))), InputError);
}
