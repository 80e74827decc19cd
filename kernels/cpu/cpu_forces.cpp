#include "kernels/cpu/cpu_forces.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "common/errors.hpp"
#include "kernels/cpu/cell_list.hpp"
#include "kernels/cpu/cpu_pme.hpp"
#include "model/cmap.hpp"
#include "physics/bonded.hpp"
#include "physics/nonbonded.hpp"
#include "physics/restraint.hpp"
#include "platform/virtual_sites.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mdsim {

namespace {

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

// How a pair's displacement is found: open boundaries; periodic with the cell list's per
// neighbour-cell image shift; periodic with a minimum-image wrap per pair (boxes too small for
// unique shifts).
enum class Geometry { Open, PeriodicShift, PeriodicWrap };

// Systems smaller than this evaluate on one thread.
constexpr int kThreadedMinAtoms = 512;

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
// Evaluator state

struct CpuForceEvaluator::Impl {
  std::optional<Boxd> box;
  // Exceptions that interact (nonzero charge product or epsilon).
  std::vector<NonbondedException> interacting;
  std::unique_ptr<CpuPme> pme;
  CellList cells;
  // scratch, in cell order
  std::vector<double> qs;
  std::vector<LjParticle<double>> lj;
  std::vector<int> lj_type;  // System::lj_types' type of each particle, when set
  std::vector<std::vector<Vec3d>> thread_forces;
  std::vector<std::vector<int>> thread_stamp;
  PositionRestraints restraints;
  std::vector<Vec3d> placed_x;  // the positions with the virtual sites placed (systems with sites)
  // The bonded terms' shared data: CMAP's patch table, made once, and the views evaluate_bonded reads.
  CmapTable cmap;
  std::vector<CmapMapView<double>> cmap_views;
  BondedTables<double> tables() const { return {cmap_views.data()}; }

  // The stages of compute (defined below the pair loop).
  double pair_energy(const System& s, const NonbondedPlan& plan, const std::vector<Vec3d>& x,
                     std::vector<Vec3d>* forces);
  void add_exceptions(const System& s, const std::vector<Vec3d>& x, std::vector<Vec3d>* forces, double& direct) const;
  void add_exception_ewald_corrections(const System& s, const std::vector<Vec3d>& x, double alpha,
                                       std::vector<Vec3d>* forces, double& direct) const;
  double reciprocal_energy(const System& s, double alpha, const std::vector<Vec3d>& x, std::vector<Vec3d>* forces);
  double restraint_energy(const System& s, const std::vector<Vec3d>& x, std::vector<Vec3d>* forces) const;
};

CpuForceEvaluator::CpuForceEvaluator(const System& system)
    : system_(system), plan_(plan_nonbonded(system_)), impl_(std::make_unique<Impl>()) {
  const System& s = system_;
  check_virtual_sites(s);
  const int n = s.num_particles();
  for (const NonbondedException& e : s.exceptions)
    if (e.charge_product_e2 != 0.0 || e.epsilon_kj_per_mol != 0.0) impl_->interacting.push_back(e);
  if (plan_.periodic) impl_->box = *s.box;
  impl_->cmap = make_cmap_table(s.cmap_maps);
  impl_->cmap_views = impl_->cmap.views(impl_->cmap.coefficients.data());
  if (plan_.pme) {
    const PmeParameters& pme = plan_.pme_parameters;
    impl_->pme = std::make_unique<CpuPme>(pme.grid[0], pme.grid[1], pme.grid[2], pme.alpha_per_nm);
  }
  // Below a few hundred atoms a parallel region costs more than the pairs it shares out, and its
  // threads spin at every barrier, which stalls whatever else shares the cores: such systems run on
  // one thread.
  const int threads = n < kThreadedMinAtoms ? 1 : max_threads();
  impl_->thread_forces.resize(size_t(threads));
  impl_->thread_stamp.assign(size_t(threads), std::vector<int>(size_t(n), -1));
}

CpuForceEvaluator::~CpuForceEvaluator() = default;

void CpuForceEvaluator::set_box(const Boxd& box) {
  check_periodic_box(system_.nonbonded, box);
  impl_->box = box;
}

const Boxd* CpuForceEvaluator::box() const { return impl_->box ? &*impl_->box : nullptr; }

void CpuForceEvaluator::set_position_restraints(const PositionRestraints& restraints) {
  check_position_restraints(restraints, static_cast<std::size_t>(system_.num_particles()));
  impl_->restraints = restraints;
}

const PositionRestraints& CpuForceEvaluator::position_restraints() const { return impl_->restraints; }

// ---------------------------------------------------------------------------------------------
// Real-space pair loop over the cell list.

namespace {

struct PairLoopInput {
  const CellList* cells;
  const std::vector<Vec3d>* xs;  // positions in cell order
  const std::vector<double>* qs;
  const std::vector<LjParticle<double>>* lj;
  const std::vector<int>* excl_start;
  const std::vector<int>* excl_partner;
  const Imager* imager;  // null: open boundaries
  double cutoff2;        // infinite: no cutoff
  PairConstants<double> pair;
  // With System::lj_types: each particle's type (cell order) and the c12/c6 tables ([t1 * num_types + t2]).
  const std::vector<int>* lj_type = nullptr;
  const LjTypeTable* table = nullptr;
};

// A pair's LJ parameters: by the combining rule, or (kTable) from the type table.
template <bool kTable>
auto pair_lj(const PairLoopInput& in, [[maybe_unused]] const LjParticle<double>& a, int pa, int pb) {
  if constexpr (kTable) {
    const std::size_t k = std::size_t((*in.lj_type)[std::size_t(pa)] * in.table->num_types + (*in.lj_type)[std::size_t(pb)]);
    return LjC12C6<double>{in.table->c12_kj_per_mol_nm12[k], in.table->c6_kj_per_mol_nm6[k]};
  } else {
    const LjParticle<double>& b = (*in.lj)[std::size_t(pb)];
    return LjSigmaEpsilon<double>{a.half_sigma_nm + b.half_sigma_nm, a.two_sqrt_epsilon * b.two_sqrt_epsilon};
  }
}

template <CoulombMethod C, Geometry G, bool kCutoff, bool kSwitch, bool kTable>
double pair_loop(const PairLoopInput& in, std::vector<std::vector<Vec3d>>& thread_forces,
                 std::vector<std::vector<int>>& thread_stamp, bool want_forces) {
  const CellList& cells = *in.cells;
  const std::vector<Vec3d>& xs = *in.xs;
  const std::vector<double>& qs = *in.qs;
  const std::vector<LjParticle<double>>& lj = *in.lj;
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
        const double qi = qs[size_t(p)];
        const LjParticle<double> lj_i = lj[size_t(p)];
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
            const PairResult<double> pr = nonbonded_pair_lj<double, C, kSwitch, true>(
                r2, inv_r, qi * qs[size_t(pj)], pair_lj<kTable>(in, lj_i, p, pj), in.pair);
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

// The pair loop instantiated for the plan's method: Coulomb flavour, geometry, cutoff and switching; kTable: LJ
// from System::lj_types.
template <bool kTable>
double run_pair_loop(const NonbondedPlan& plan, bool shifts_exact, const PairLoopInput& in,
                     std::vector<std::vector<Vec3d>>& tf, std::vector<std::vector<int>>& ts, bool want) {
  const bool sw = plan.switching;
  const NonbondedMethod method = plan.method;
  if (method == NonbondedMethod::NoCutoff)
    return pair_loop<CoulombMethod::Plain, Geometry::Open, false, false, kTable>(in, tf, ts, want);
  if (method == NonbondedMethod::CutoffNonPeriodic)
    return sw ? pair_loop<CoulombMethod::ReactionField, Geometry::Open, true, true, kTable>(in, tf, ts, want)
              : pair_loop<CoulombMethod::ReactionField, Geometry::Open, true, false, kTable>(in, tf, ts, want);
  // periodic: reaction field or Ewald, image shifts per neighbour cell or wraps per pair
  if (method == NonbondedMethod::CutoffPeriodic) {
    if (shifts_exact)
      return sw ? pair_loop<CoulombMethod::ReactionField, Geometry::PeriodicShift, true, true, kTable>(in, tf, ts, want)
                : pair_loop<CoulombMethod::ReactionField, Geometry::PeriodicShift, true, false, kTable>(in, tf, ts, want);
    return sw ? pair_loop<CoulombMethod::ReactionField, Geometry::PeriodicWrap, true, true, kTable>(in, tf, ts, want)
              : pair_loop<CoulombMethod::ReactionField, Geometry::PeriodicWrap, true, false, kTable>(in, tf, ts, want);
  }
  if (shifts_exact)
    return sw ? pair_loop<CoulombMethod::Ewald, Geometry::PeriodicShift, true, true, kTable>(in, tf, ts, want)
              : pair_loop<CoulombMethod::Ewald, Geometry::PeriodicShift, true, false, kTable>(in, tf, ts, want);
  return sw ? pair_loop<CoulombMethod::Ewald, Geometry::PeriodicWrap, true, true, kTable>(in, tf, ts, want)
            : pair_loop<CoulombMethod::Ewald, Geometry::PeriodicWrap, true, false, kTable>(in, tf, ts, want);
}

// A non-finite coordinate would send the cell list out of range: stop with the cause instead.
void check_positions(const std::vector<Vec3d>& x, int n) {
  if (x.size() != size_t(n))
    throw RuntimeError("cpu_compute: " + std::to_string(x.size()) + " positions for a system of " + std::to_string(n) +
                       " particles");
  for (int i = 0; i < n; ++i) {
    const Vec3d& p = x[size_t(i)];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      throw RuntimeError("cpu platform: particle " + std::to_string(i) + " has a non-finite position (" +
                         std::to_string(p.x) + ", " + std::to_string(p.y) + ", " + std::to_string(p.z) +
                         ") nm: the simulation became unstable (overlapping atoms, a time step too long for the "
                         "system, or an unminimised start); minimise first or shorten the time step");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The stages of an evaluation. Forces are ADDED to *forces when it is non-null; energies are
// accumulated into `direct` in the order the terms are visited.

// Real-space pairs over the cell list (built from x), excluded and exception pairs skipped.
double CpuForceEvaluator::Impl::pair_energy(const System& s, const NonbondedPlan& plan, const std::vector<Vec3d>& x,
                                            std::vector<Vec3d>* forces) {
  const int n = s.num_particles();
  const double cutoff = plan.cutoff_nm;
  cells.build(x, plan.periodic ? &*box : nullptr, cutoff);
  qs.resize(size_t(n));
  lj.resize(size_t(n));
  for (int p = 0; p < n; ++p) {
    const size_t i = size_t(cells.atoms[size_t(p)]);
    qs[size_t(p)] = s.charge_e[i];
    lj[size_t(p)] = lj_particle<double>(s.sigma_nm[i], s.epsilon_kj_per_mol[i]);
  }
  std::optional<Imager> imager;
  if (plan.periodic) imager.emplace(*box);
  PairLoopInput in{&cells, &cells.sorted_positions, &qs, &lj, &plan.exclusion_start,
                   &plan.exclusion_partner, imager ? &*imager : nullptr, cutoff * cutoff, plan.pair};
  if (s.lj_types) {
    lj_type.resize(size_t(n));
    for (int p = 0; p < n; ++p) lj_type[size_t(p)] = s.lj_types->particle_type[size_t(cells.atoms[size_t(p)])];
    in.lj_type = &lj_type;
    in.table = &*s.lj_types;
  }
  const bool want = forces != nullptr;
  const double energy = s.lj_types ? run_pair_loop<true>(plan, cells.shifts_exact, in, thread_forces, thread_stamp, want)
                                   : run_pair_loop<false>(plan, cells.shifts_exact, in, thread_forces, thread_stamp, want);
  if (forces) {
    for (const std::vector<Vec3d>& buffer : thread_forces) {
      for (int p = 0; p < n; ++p) (*forces)[size_t(cells.atoms[size_t(p)])] += buffer[size_t(p)];
    }
  }
  return energy;
}

// Exceptions: plain Coulomb + LJ with their own parameters, no cutoff, no periodic images.
void CpuForceEvaluator::Impl::add_exceptions(const System& s, const std::vector<Vec3d>& x,
                                             std::vector<Vec3d>* forces, double& direct) const {
  for (const NonbondedException& ex : interacting) {
    const Vec3d d = x[size_t(ex.j)] - x[size_t(ex.i)];
    const PairResult<double> pr = exception_interaction(exception_params<double>(s, ex), std::sqrt(dot(d, d)));
    direct += pr.energy;
    if (forces) {
      (*forces)[size_t(ex.j)] += d * pr.f_over_r;
      (*forces)[size_t(ex.i)] -= d * pr.f_over_r;
    }
  }
}

// Ewald: every exception pair's share of the reciprocal sum is taken out again.
void CpuForceEvaluator::Impl::add_exception_ewald_corrections(const System& s, const std::vector<Vec3d>& x,
                                                              double alpha, std::vector<Vec3d>* forces,
                                                              double& direct) const {
  const Imager img(*box);
  for (const NonbondedException& ex : s.exceptions) {
    const ExceptionParams<double> params = exception_params<double>(s, ex);
    if (params.atoms_charge_product_e2 == 0.0) continue;
    const Vec3d d = img(x[size_t(ex.j)] - x[size_t(ex.i)]);
    const PairResult<double> pr = exception_ewald_correction(params, std::sqrt(dot(d, d)), alpha);
    direct += pr.energy;
    if (forces) {
      (*forces)[size_t(ex.j)] += d * pr.f_over_r;
      (*forces)[size_t(ex.i)] -= d * pr.f_over_r;
    }
  }
}

// The reciprocal-space forces go straight into the output (added to what is there).
double CpuForceEvaluator::Impl::reciprocal_energy(const System& s, double alpha, const std::vector<Vec3d>& x,
                                                  std::vector<Vec3d>* forces) {
  double recip = pme->compute(x, s.charge_e, *box, forces);
  // Per charge, in order (not plan_.self_energy_kj_per_mol: the same terms, summed into recip).
  for (int i = 0; i < s.num_particles(); ++i) recip += ewald_self_energy(s.charge_e[size_t(i)], alpha);
  return recip;
}

// The current box when the system has one (a barostat trial's during the trial; the reference
// points are not scaled with it), the System's box for a non-periodic method, none in vacuum.
double CpuForceEvaluator::Impl::restraint_energy(const System& s, const std::vector<Vec3d>& x,
                                                 std::vector<Vec3d>* forces) const {
  const Boxd* restraint_box = box ? &*box : (s.box ? &*s.box : nullptr);
  const PositionRestraints& r = restraints;
  double restraint = 0.0;
  for (std::size_t k = 0; k < r.atoms.size(); ++k) {
    const std::size_t atom = static_cast<std::size_t>(r.atoms[k]);
    const RestraintResult<double> rr =
        position_restraint(restraint_displacement(x[atom], r.reference_nm[k], restraint_box), r.k_kj_per_mol_nm2[k]);
    restraint += rr.energy;
    if (forces) (*forces)[atom] += rr.force;
  }
  return restraint;
}

// ---------------------------------------------------------------------------------------------

EnergyTerms CpuForceEvaluator::compute(const std::vector<Vec3d>& x_given, std::vector<Vec3d>* forces,
                                       unsigned terms) {
  const System& s = system_;
  const int n = s.num_particles();
  check_positions(x_given, n);
  // Virtual sites placed from their parents, in a copy (the caller's positions may be a trial's).
  if (!s.virtual_sites.empty()) {
    impl_->placed_x = x_given;
    place_virtual_sites(s, impl_->placed_x);
  }
  const std::vector<Vec3d>& x = s.virtual_sites.empty() ? x_given : impl_->placed_x;
  if (forces) forces->assign(size_t(n), Vec3d());
  EnergyTerms e;
  Impl& im = *impl_;
  const BondedTables<double> tables = im.tables();
  s.for_each_bonded([&](const auto& list) {
    using Term = typename std::decay_t<decltype(list)>::value_type;
    if (terms & term_bit(Term::kEnergy)) e.bonded(Term::kEnergy) += cpu_bonded_energy(list, x, forces, tables);
  });

  const bool pme = plan_.pme;
  const double alpha = plan_.pair.ewald.a;

  if (terms & kTermNonbondedDirect) {
    double direct = im.pair_energy(s, plan_, x, forces);
    im.add_exceptions(s, x, forces, direct);
    if (pme) im.add_exception_ewald_corrections(s, x, alpha, forces, direct);
    if (plan_.periodic && plan_.dispersion_coefficient != 0.0) {
      e.dispersion_correction = plan_.dispersion_coefficient / im.box->volume();
      direct += e.dispersion_correction;
    }
    e.nonbonded_direct = direct;
  }
  if ((terms & kTermNonbondedReciprocal) && pme) e.nonbonded_reciprocal = im.reciprocal_energy(s, alpha, x, forces);
  if ((terms & kTermRestraint) && !im.restraints.empty()) e.restraint = im.restraint_energy(s, x, forces);

  if (forces && !s.virtual_sites.empty()) spread_virtual_site_forces(s, x, *forces);  // site rows kept (getState's)
  e.nonbonded = e.nonbonded_direct + e.nonbonded_reciprocal;
  e.total = e.bonded_sum() + e.nonbonded + e.restraint;
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
