#include "kernels/cpu/cpu_forces.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "engine/errors.hpp"
#include "kernels/cpu/cell_list.hpp"
#include "kernels/cpu/cpu_pme.hpp"
#include "kernels/cpu/dispersion_correction.hpp"
#include "kernels/physics/bonded.hpp"
#include "kernels/physics/nonbonded.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mdsim {

namespace {

std::string fmt_nm(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool is_periodic(NonbondedMethod m) { return m == NonbondedMethod::CutoffPeriodic || m == NonbondedMethod::PME; }

// Minimum-image displacement in OpenMM's reduced triclinic form (same sequence of wraps as
// BoxVectors::minimum_image, with the divisions replaced by precomputed reciprocals).
struct Imager {
  Boxd box;
  double inv_ax = 0, inv_by = 0, inv_cz = 0;
  explicit Imager(const Boxd& b) : box(b), inv_ax(1.0 / b.a.x), inv_by(1.0 / b.b.y), inv_cz(1.0 / b.c.z) {}
  Vec3d operator()(Vec3d d) const {
    double s = std::floor(d.z * inv_cz + 0.5);
    d.x -= box.c.x * s;
    d.y -= box.c.y * s;
    d.z -= box.c.z * s;
    s = std::floor(d.y * inv_by + 0.5);
    d.x -= box.b.x * s;
    d.y -= box.b.y * s;
    s = std::floor(d.x * inv_ax + 0.5);
    d.x -= box.a.x * s;
    return d;
  }
};

void check_index(int index, int n, const char* what, size_t term) {
  if (index < 0 || index >= n)
    throw RuntimeError(std::string("system: ") + what + " " + std::to_string(term) + " refers to particle " +
                       std::to_string(index) + ", but the system has " + std::to_string(n) + " particles");
}

enum class Coulomb { Plain, ReactionField, Ewald };

// How a pair's displacement is found: open boundaries; periodic with the cell list's per
// neighbour-cell image shift; periodic with a minimum-image wrap per pair (boxes too small for
// unique shifts).
enum class Geometry { Open, PeriodicShift, PeriodicWrap };

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Bonded terms

double cpu_bond_energy(const std::vector<HarmonicBondTerm>& bonds, const std::vector<Vec3d>& x,
                       std::vector<Vec3d>* forces) {
  double energy = 0.0;
  for (const HarmonicBondTerm& b : bonds) {
    const BondResult<double> r = harmonic_bond(x[size_t(b.j)] - x[size_t(b.i)], b.length_nm, b.k_kj_per_mol_nm2);
    energy += r.energy;
    if (forces) {
      (*forces)[size_t(b.i)] += r.force_i;
      (*forces)[size_t(b.j)] += r.force_j;
    }
  }
  return energy;
}

double cpu_angle_energy(const std::vector<HarmonicAngleTerm>& angles, const std::vector<Vec3d>& x,
                        std::vector<Vec3d>* forces) {
  double energy = 0.0;
  for (const HarmonicAngleTerm& a : angles) {
    const AngleResult<double> r =
        harmonic_angle(x[size_t(a.i)] - x[size_t(a.j)], x[size_t(a.k)] - x[size_t(a.j)], a.angle_rad, a.k_kj_per_mol_rad2);
    energy += r.energy;
    if (forces) {
      (*forces)[size_t(a.i)] += r.force_i;
      (*forces)[size_t(a.j)] += r.force_j;
      (*forces)[size_t(a.k)] += r.force_k;
    }
  }
  return energy;
}

double cpu_torsion_energy(const std::vector<PeriodicTorsionTerm>& torsions, const std::vector<Vec3d>& x,
                          std::vector<Vec3d>* forces) {
  double energy = 0.0;
  for (const PeriodicTorsionTerm& t : torsions) {
    const TorsionResult<double> r =
        periodic_torsion(x[size_t(t.j)] - x[size_t(t.i)], x[size_t(t.k)] - x[size_t(t.j)], x[size_t(t.l)] - x[size_t(t.k)],
                         t.periodicity, t.phase_rad, t.k_kj_per_mol);
    energy += r.energy;
    if (forces) {
      (*forces)[size_t(t.i)] += r.force_i;
      (*forces)[size_t(t.j)] += r.force_j;
      (*forces)[size_t(t.k)] += r.force_k;
      (*forces)[size_t(t.l)] += r.force_l;
    }
  }
  return energy;
}

// ---------------------------------------------------------------------------------------------
// Evaluator state

struct CpuForceEvaluator::Impl {
  std::optional<Boxd> box;
  std::vector<double> sqrt_epsilon;
  // Every exception partner of each particle (both directions), CSR layout.
  std::vector<int> excl_start, excl_partner;
  // Exceptions that interact (nonzero charge product or epsilon).
  std::vector<NonbondedException> interacting;
  ReactionField<double> rf{0.0, 0.0};
  std::unique_ptr<CpuPme> pme;
  CellList cells;
  // scratch, in cell order
  std::vector<double> qs, sigmas, seps;
  std::vector<std::vector<Vec3d>> thread_forces;
  std::vector<std::vector<int>> thread_stamp;
};

CpuForceEvaluator::CpuForceEvaluator(const System& system) : system_(system), impl_(std::make_unique<Impl>()) {
  const System& s = system_;
  const int n = s.num_particles();
  if (s.charge_e.size() != size_t(n) || s.sigma_nm.size() != size_t(n) || s.epsilon_kj_per_mol.size() != size_t(n))
    throw RuntimeError("system: per-particle arrays (mass, charge, sigma, epsilon) differ in length");
  for (size_t t = 0; t < s.bonds.size(); ++t) {
    check_index(s.bonds[t].i, n, "bond", t);
    check_index(s.bonds[t].j, n, "bond", t);
  }
  for (size_t t = 0; t < s.angles.size(); ++t) {
    check_index(s.angles[t].i, n, "angle", t);
    check_index(s.angles[t].j, n, "angle", t);
    check_index(s.angles[t].k, n, "angle", t);
  }
  for (size_t t = 0; t < s.torsions.size(); ++t) {
    check_index(s.torsions[t].i, n, "torsion", t);
    check_index(s.torsions[t].j, n, "torsion", t);
    check_index(s.torsions[t].k, n, "torsion", t);
    check_index(s.torsions[t].l, n, "torsion", t);
  }
  for (int i = 0; i < n; ++i) {
    if (s.sigma_nm[size_t(i)] < 0.0 || s.epsilon_kj_per_mol[size_t(i)] < 0.0)
      throw RuntimeError("system: particle " + std::to_string(i) + " has a negative sigma or epsilon");
  }

  // Exceptions: each pair at most once; every one removes the normal pair interaction.
  std::vector<std::vector<int>> partners(static_cast<size_t>(n));
  std::set<std::pair<int, int>> seen;
  for (size_t t = 0; t < s.exceptions.size(); ++t) {
    const NonbondedException& e = s.exceptions[t];
    check_index(e.i, n, "exception", t);
    check_index(e.j, n, "exception", t);
    if (e.i == e.j) throw RuntimeError("system: exception " + std::to_string(t) + " pairs particle " + std::to_string(e.i) + " with itself");
    if (!seen.insert({std::min(e.i, e.j), std::max(e.i, e.j)}).second)
      throw RuntimeError("system: more than one exception for particles " + std::to_string(e.i) + " and " + std::to_string(e.j));
    partners[size_t(e.i)].push_back(e.j);
    partners[size_t(e.j)].push_back(e.i);
    if (e.charge_product_e2 != 0.0 || e.epsilon_kj_per_mol != 0.0) impl_->interacting.push_back(e);
  }
  impl_->excl_start.assign(size_t(n) + 1, 0);
  for (int i = 0; i < n; ++i) impl_->excl_start[size_t(i) + 1] = impl_->excl_start[size_t(i)] + int(partners[size_t(i)].size());
  impl_->excl_partner.reserve(size_t(impl_->excl_start[size_t(n)]));
  for (int i = 0; i < n; ++i) impl_->excl_partner.insert(impl_->excl_partner.end(), partners[size_t(i)].begin(), partners[size_t(i)].end());

  impl_->sqrt_epsilon.resize(size_t(n));
  for (int i = 0; i < n; ++i) impl_->sqrt_epsilon[size_t(i)] = std::sqrt(s.epsilon_kj_per_mol[size_t(i)]);

  // Nonbonded settings.
  const NonbondedSettings& nb = s.nonbonded;
  if (nb.method != NonbondedMethod::NoCutoff) {
    if (!(nb.cutoff_nm > 0.0)) throw InputError("nonbonded: the cutoff must be positive (got " + fmt_nm(nb.cutoff_nm) + " nm)");
    if (nb.switch_distance_nm && (*nb.switch_distance_nm < 0.0 || *nb.switch_distance_nm >= nb.cutoff_nm))
      throw InputError("nonbonded: the switching distance must satisfy 0 <= r_switch < cutoff (got " +
                       fmt_nm(*nb.switch_distance_nm) + " nm with cutoff " + fmt_nm(nb.cutoff_nm) + " nm)");
    impl_->rf = reaction_field_constants(nb.cutoff_nm, nb.reaction_field_dielectric);
  }
  if (is_periodic(nb.method)) {
    if (!s.box) throw InputError("nonbonded: a periodic nonbonded method needs a periodic box");
    set_box(*s.box);
  }
  if (nb.method == NonbondedMethod::PME) {
    if (!(nb.ewald_tolerance > 0.0 && nb.ewald_tolerance < 0.5))
      throw InputError("nonbonded: the Ewald error tolerance must lie in (0, 0.5) (got " + fmt_nm(nb.ewald_tolerance) + ")");
    pme_params_ = choose_pme_parameters(*s.box, nb);  // follows nb.pme_grid; the CUDA platform copies these
    impl_->pme = std::make_unique<CpuPme>(pme_params_.grid[0], pme_params_.grid[1], pme_params_.grid[2],
                                          pme_params_.alpha_per_nm);
  }
  dispersion_coefficient_ = dispersion_correction_coefficient(s);

  const int threads = max_threads();
  impl_->thread_forces.resize(size_t(threads));
  impl_->thread_stamp.assign(size_t(threads), std::vector<int>(size_t(n), -1));
}

CpuForceEvaluator::~CpuForceEvaluator() = default;

void CpuForceEvaluator::set_box(const Boxd& box) {
  const double cutoff = system_.nonbonded.cutoff_nm;
  if (!(box.a.x > 0.0 && box.b.y > 0.0 && box.c.z > 0.0))
    throw InputError("nonbonded: periodic box vectors must have positive diagonal elements");
  const double half_min = 0.5 * std::min({box.a.x, box.b.y, box.c.z});
  if (is_periodic(system_.nonbonded.method) && cutoff > half_min)
    throw InputError("nonbonded: the cutoff " + fmt_nm(cutoff) + " nm exceeds half the periodic box size (" +
                     fmt_nm(half_min) + " nm)");
  impl_->box = box;
}

const Boxd* CpuForceEvaluator::box() const { return impl_->box ? &*impl_->box : nullptr; }

// ---------------------------------------------------------------------------------------------
// Real-space pair loop over the cell list.

namespace {

struct PairLoopInput {
  const CellList* cells;
  const std::vector<Vec3d>* xs;  // positions in cell order
  const std::vector<double>* qs;
  const std::vector<double>* sigmas;
  const std::vector<double>* seps;  // sqrt(epsilon)
  const std::vector<int>* excl_start;
  const std::vector<int>* excl_partner;
  const Imager* imager;  // null: open boundaries
  double cutoff2;        // infinite: no cutoff
  double cutoff;
  double switch_distance;
  double alpha;
  ReactionField<double> rf;
};

template <Coulomb C, Geometry G, bool kCutoff, bool kSwitch>
double pair_loop(const PairLoopInput& in, std::vector<std::vector<Vec3d>>& thread_forces,
                 std::vector<std::vector<int>>& thread_stamp, bool want_forces) {
  const CellList& cells = *in.cells;
  const std::vector<Vec3d>& xs = *in.xs;
  const std::vector<double>& qs = *in.qs;
  const std::vector<double>& sigmas = *in.sigmas;
  const std::vector<double>& seps = *in.seps;
  const int ncell = cells.num_cells();
  const size_t n = xs.size();
  const int threads = int(thread_forces.size());
  std::vector<double> thread_energy(size_t(threads), 0.0);
  // Zeroed here, not inside the region: the runtime may start fewer threads than asked for.
  if (want_forces)
    for (std::vector<Vec3d>& tf : thread_forces) tf.assign(n, Vec3d());

#pragma omp parallel num_threads(threads)
  {
    const int tid = thread_id();
    std::vector<Vec3d>& f = thread_forces[size_t(tid)];
    std::vector<int>& stamp = thread_stamp[size_t(tid)];
    double energy = 0.0;
#pragma omp for schedule(static, 4)
    for (int c = 0; c < ncell; ++c) {
      const int begin = cells.cell_start[size_t(c)], end = cells.cell_start[size_t(c) + 1];
      for (int p = begin; p < end; ++p) {
        const int i = cells.atoms[size_t(p)];
        for (int e = (*in.excl_start)[size_t(i)]; e < (*in.excl_start)[size_t(i) + 1]; ++e)
          stamp[size_t((*in.excl_partner)[size_t(e)])] = i;
        const Vec3d xi = xs[size_t(p)];
        const double qi = qs[size_t(p)], si = sigmas[size_t(p)], ei = seps[size_t(p)];
        Vec3d fi;
        const std::vector<int>& neighbors = cells.upper_neighbors[size_t(c)];
        for (size_t nc = 0; nc < neighbors.size(); ++nc) {
          const int c2 = neighbors[nc];
          const int jbegin = (c2 == c) ? p + 1 : cells.cell_start[size_t(c2)];
          const int jend = cells.cell_start[size_t(c2) + 1];
          Vec3d xi_shifted = xi;  // x_j + shift - x_i = x_j - (x_i - shift)
          if constexpr (G == Geometry::PeriodicShift) xi_shifted -= cells.upper_shifts[size_t(c)][nc];
          for (int pj = jbegin; pj < jend; ++pj) {
            const int j = cells.atoms[size_t(pj)];
            if (stamp[size_t(j)] == i) continue;  // excluded or exception pair
            Vec3d d = xs[size_t(pj)] - xi_shifted;
            if constexpr (G == Geometry::PeriodicWrap) d = (*in.imager)(d);
            const double r2 = dot(d, d);
            if constexpr (kCutoff) {
              if (r2 > in.cutoff2) continue;
            }
            const double r = std::sqrt(r2);
            const double inv_r = 1.0 / r;
            const double qq = qi * qs[size_t(pj)];
            PairResult<double> pr{0.0, 0.0};
            if (qq != 0.0) {
              if constexpr (C == Coulomb::Plain) pr = coulomb_plain(qq, inv_r);
              if constexpr (C == Coulomb::ReactionField) pr = coulomb_reaction_field(qq, r, inv_r, in.rf);
              if constexpr (C == Coulomb::Ewald) pr = coulomb_ewald_direct(qq, r, inv_r, in.alpha);
            }
            const double eps = ei * seps[size_t(pj)];
            if (eps != 0.0) {
              PairResult<double> lj = lennard_jones(inv_r * inv_r, combine_sigma(si, sigmas[size_t(pj)]), eps);
              if constexpr (kSwitch) lj = apply_switch(lj, switching_function(r, in.switch_distance, in.cutoff), r);
              pr += lj;
            }
            energy += pr.energy;
            if (want_forces) {
              const Vec3d fj = d * pr.f_over_r;
              f[size_t(pj)] += fj;
              fi -= fj;
            }
          }
        }
        if (want_forces) f[size_t(p)] += fi;
      }
    }
    thread_energy[size_t(tid)] = energy;
  }
  double total = 0.0;
  for (double e : thread_energy) total += e;
  return total;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

EnergyTerms CpuForceEvaluator::compute(const std::vector<Vec3d>& x, std::vector<Vec3d>* forces, unsigned terms) {
  const System& s = system_;
  const int n = s.num_particles();
  if (x.size() != size_t(n))
    throw RuntimeError("cpu_compute: " + std::to_string(x.size()) + " positions for a system of " + std::to_string(n) +
                       " particles");
  if (forces) forces->assign(size_t(n), Vec3d());
  EnergyTerms e;
  if (terms & kTermBond) e.bond = cpu_bond_energy(s.bonds, x, forces);
  if (terms & kTermAngle) e.angle = cpu_angle_energy(s.angles, x, forces);
  if (terms & kTermTorsion) e.torsion = cpu_torsion_energy(s.torsions, x, forces);

  const NonbondedSettings& nb = s.nonbonded;
  const bool periodic = is_periodic(nb.method);
  const bool pme = nb.method == NonbondedMethod::PME;
  Impl& im = *impl_;

  if (terms & kTermNonbondedDirect) {
    // Real-space pairs.
    const double cutoff = nb.method == NonbondedMethod::NoCutoff ? std::numeric_limits<double>::infinity() : nb.cutoff_nm;
    im.cells.build(x, periodic ? &*im.box : nullptr, cutoff);
    im.qs.resize(size_t(n));
    im.sigmas.resize(size_t(n));
    im.seps.resize(size_t(n));
    for (int p = 0; p < n; ++p) {
      const size_t i = size_t(im.cells.atoms[size_t(p)]);
      im.qs[size_t(p)] = s.charge_e[i];
      im.sigmas[size_t(p)] = s.sigma_nm[i];
      im.seps[size_t(p)] = im.sqrt_epsilon[i];
    }
    std::optional<Imager> imager;
    if (periodic) imager.emplace(*im.box);
    PairLoopInput in{&im.cells, &im.cells.sorted_positions, &im.qs, &im.sigmas, &im.seps, &im.excl_start, &im.excl_partner,
                     imager ? &*imager : nullptr, cutoff * cutoff, cutoff,
                     nb.switch_distance_nm.value_or(0.0), pme ? pme_params_.alpha_per_nm : 0.0, im.rf};
    const bool sw = nb.switch_distance_nm.has_value() && nb.method != NonbondedMethod::NoCutoff;
    const bool want = forces != nullptr;
    auto& tf = im.thread_forces;
    auto& ts = im.thread_stamp;
    double pair_energy = 0.0;
    if (nb.method == NonbondedMethod::NoCutoff) {
      pair_energy = pair_loop<Coulomb::Plain, Geometry::Open, false, false>(in, tf, ts, want);
    } else if (nb.method == NonbondedMethod::CutoffNonPeriodic) {
      pair_energy = sw ? pair_loop<Coulomb::ReactionField, Geometry::Open, true, true>(in, tf, ts, want)
                       : pair_loop<Coulomb::ReactionField, Geometry::Open, true, false>(in, tf, ts, want);
    } else {
      // periodic: reaction field or Ewald, image shifts per neighbour cell or wraps per pair
      const bool exact = im.cells.shifts_exact;
      if (nb.method == NonbondedMethod::CutoffPeriodic) {
        if (exact)
          pair_energy = sw ? pair_loop<Coulomb::ReactionField, Geometry::PeriodicShift, true, true>(in, tf, ts, want)
                           : pair_loop<Coulomb::ReactionField, Geometry::PeriodicShift, true, false>(in, tf, ts, want);
        else
          pair_energy = sw ? pair_loop<Coulomb::ReactionField, Geometry::PeriodicWrap, true, true>(in, tf, ts, want)
                           : pair_loop<Coulomb::ReactionField, Geometry::PeriodicWrap, true, false>(in, tf, ts, want);
      } else {
        if (exact)
          pair_energy = sw ? pair_loop<Coulomb::Ewald, Geometry::PeriodicShift, true, true>(in, tf, ts, want)
                           : pair_loop<Coulomb::Ewald, Geometry::PeriodicShift, true, false>(in, tf, ts, want);
        else
          pair_energy = sw ? pair_loop<Coulomb::Ewald, Geometry::PeriodicWrap, true, true>(in, tf, ts, want)
                           : pair_loop<Coulomb::Ewald, Geometry::PeriodicWrap, true, false>(in, tf, ts, want);
      }
    }
    if (forces) {
      for (const std::vector<Vec3d>& buffer : im.thread_forces) {
        for (int p = 0; p < n; ++p) (*forces)[size_t(im.cells.atoms[size_t(p)])] += buffer[size_t(p)];
      }
    }
    double direct = pair_energy;

    // Exceptions: plain Coulomb + LJ with their own parameters, no cutoff, no periodic images.
    for (const NonbondedException& ex : im.interacting) {
      const Vec3d d = x[size_t(ex.j)] - x[size_t(ex.i)];
      const PairResult<double> pr = exception_pair(ex.charge_product_e2, ex.sigma_nm, ex.epsilon_kj_per_mol, std::sqrt(dot(d, d)));
      direct += pr.energy;
      if (forces) {
        (*forces)[size_t(ex.j)] += d * pr.f_over_r;
        (*forces)[size_t(ex.i)] -= d * pr.f_over_r;
      }
    }
    // Ewald: every exception pair's share of the reciprocal sum is taken out again.
    if (pme) {
      const Imager img(*im.box);
      for (const NonbondedException& ex : s.exceptions) {
        const double qq = s.charge_e[size_t(ex.i)] * s.charge_e[size_t(ex.j)];
        if (qq == 0.0) continue;
        const Vec3d d = img(x[size_t(ex.j)] - x[size_t(ex.i)]);
        const PairResult<double> pr = ewald_exclusion_correction(qq, std::sqrt(dot(d, d)), pme_params_.alpha_per_nm);
        direct += pr.energy;
        if (forces) {
          (*forces)[size_t(ex.j)] += d * pr.f_over_r;
          (*forces)[size_t(ex.i)] -= d * pr.f_over_r;
        }
      }
    }
    if (periodic && dispersion_coefficient_ != 0.0) {
      e.dispersion_correction = dispersion_coefficient_ / im.box->volume();
      direct += e.dispersion_correction;
    }
    e.nonbonded_direct = direct;
  }

  if ((terms & kTermNonbondedReciprocal) && pme) {
    // The reciprocal-space forces go straight into the output (added to what is there).
    double recip = im.pme->compute(x, s.charge_e, *im.box, forces);
    for (int i = 0; i < n; ++i) recip += ewald_self_energy(s.charge_e[size_t(i)], pme_params_.alpha_per_nm);
    e.nonbonded_reciprocal = recip;
  }

  e.nonbonded = e.nonbonded_direct + e.nonbonded_reciprocal;
  e.total = e.bond + e.angle + e.torsion + e.nonbonded;
  return e;
}

EnergyTerms cpu_compute_terms(const System& system, const std::vector<Vec3d>& positions_nm,
                              std::vector<Vec3d>* forces, unsigned terms) {
  CpuForceEvaluator evaluator(system);
  return evaluator.compute(positions_nm, forces, terms);
}

EnergyTerms cpu_compute(const System& system, const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces) {
  return cpu_compute_terms(system, positions_nm, forces, kTermAll);
}

}  // namespace mdsim
