// CUDA platform: force evaluation orchestration (see cuda_forces.hpp for the design). The neighbour
// list (sort, exclusion tiles, tile list) is cuda::NeighborList (cuda_neighbor_list.cuh); Evaluator<real>
// holds everything else and enqueues the evaluation; CudaForceEvaluator dispatches to the precision
// chosen at construction.
#include "kernels/cuda/cuda_forces.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/bonded_kernels.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_neighbor_list.cuh"
#include "kernels/cuda/cuda_pme.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/grid_size.cuh"
#include "kernels/cuda/neighbor_list.cuh"
#include "kernels/cuda/nonbonded_kernels.cuh"
#include "kernels/cuda/restraint_kernels.cuh"
#include "kernels/cuda/step_timeline.hpp"
#include "kernels/cuda/virtual_site_kernels.cuh"
#include "model/cmap.hpp"
#include "model/system_copies.hpp"
#include "physics/nonbonded.hpp"
#include "platform/nonbonded_plan.hpp"
#include "platform/virtual_sites.hpp"

namespace mdsim {

namespace cuda {

// Forces added from outside (N rows of x, y, z double, kJ/mol/nm) into the fixed-point sums (planes of
// `stride`). One thread per atom, after the evaluation on the same stream: no atomics needed.
__global__ void add_external_forces_kernel(int n, const Vec3d* __restrict__ f, unsigned long long* __restrict__ force,
                                           int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  force[i] += to_fixed(f[i].x);
  force[stride + i] += to_fixed(f[i].y);
  force[2 * stride + i] += to_fixed(f[i].z);
}

}  // namespace cuda


namespace {

using cuda::blocks_for;
using cuda::DeviceBuffer;
using cuda::kThreads;

// Bonded slots first, in BondedEnergy order (the bonded kernel adds at kSlotBond + group).
enum EnergySlot {
  kSlotBond = 0, kSlotAngle, kSlotTorsion, kSlotRbTorsion, kSlotImproper, kSlotCmap, kSlotUreyBradley,
  kSlotPairs, kSlotExceptions, kSlotReciprocal, kSlotRestraint, kNumSlots
};
static_assert(kSlotBond + kNumBondedEnergies == kSlotPairs, "one energy slot per BondedEnergy");

}  // namespace

namespace cuda {
// Each replica's potential energy from its block of energy slots, in Evaluator::replica_energies' order of sums
// (EnergyTerms::bonded_sum, then direct + reciprocal, then the restraints), so the same doubles bit for bit.
__global__ void replica_potentials_kernel(int replicas, const unsigned long long* __restrict__ energy,
                                          double dispersion_correction, bool pme, double self_energy,
                                          double* __restrict__ out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= replicas) return;
  const unsigned long long* e = energy + static_cast<std::size_t>(r) * kNumSlots;
  const double bonded = from_fixed(e[kSlotBond]) + from_fixed(e[kSlotAngle]) + from_fixed(e[kSlotUreyBradley]) +
                        from_fixed(e[kSlotTorsion]) + from_fixed(e[kSlotRbTorsion]) + from_fixed(e[kSlotImproper]) +
                        from_fixed(e[kSlotCmap]);
  const double direct = from_fixed(e[kSlotPairs]) + from_fixed(e[kSlotExceptions]) + dispersion_correction;
  const double reciprocal = pme ? from_fixed(e[kSlotReciprocal]) + self_energy : 0.0;
  const double external = 0.0;
  out[r] = bonded + (direct + reciprocal) + external + from_fixed(e[kSlotRestraint]);
}
}  // namespace cuda

namespace {

std::size_t free_device_memory() {
  std::size_t free = 0, total = 0;
  MDSIM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

// The force evaluation in one precision: real = float ("mixed") or double.
template <typename real>
class Evaluator {
 public:
  using real4 = cuda::real4_t<real>;
  using real2 = cuda::real2_t<real>;

  // Uploads everything position-independent; the first evaluation sorts the atoms and builds the list.
  // A replica batch (options.replicas > 1) holds that many copies of `system` (model/system_copies).
  Evaluator(const System& system, const CudaOptions& options)
      : sys_(options.replicas > 1 ? repeat_system(system, options.replicas) : system),
        plan_(plan_nonbonded(sys_)),
        opt_(options),
        replicas_(options.replicas),
        stream_(main_stream_priority(system, plan_, options)),
        pme_stream_(side_stream_priority(sys_, options)),
        bonded_stream_(side_stream_priority(sys_, options)) {
    const std::size_t free_before = free_device_memory();
    n_ = sys_.num_particles();
    if (n_ == 0) throw InputError("CUDA platform: the system has no particles");
    set_replica_constants(system);
    periodic_ = plan_.periodic;
    pme_ = plan_.pme;
    if (periodic_) box_ = *system.box;
    num_sms_ = cuda::multiprocessor_count(opt_.device);
    set_pair_constants();
    list_.emplace(n_, periodic_, box_, particle_data(), plan_, list_options(), stream_);
    npad_ = list_->npad();
    pos_.resize(n_);
    force_.resize(3 * static_cast<std::size_t>(npad_));
    energy_.resize(static_cast<std::size_t>(kNumSlots) * replicas_);
    upload_exceptions();
    upload_bonded_terms();
    upload_lj_table();
    upload_virtual_sites();
    create_pme();
    const std::size_t free_after = free_device_memory();
    memory_bytes_ = free_before > free_after ? free_before - free_after : 0;
  }

  ~Evaluator() {  // the streams' work must end before the buffers below them are freed
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(pme_stream_);
    cudaStreamSynchronize(bonded_stream_);
    invalidate_graphs();
  }
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // New positions; `resort`: the next evaluation re-sorts the atoms (and so rebuilds the list).
  void set_positions(const std::vector<Vec3d>& x, bool resort) {
    if (static_cast<int>(x.size()) != n_)
      throw RuntimeError(fmt::format("CUDA platform: {} positions for a system of {} particles", x.size(), n_));
    std::vector<double4_16a> p(n_);
    Vec3d lo = x[0], hi = x[0];
    for (int i = 0; i < n_; ++i) {
      p[i] = make_double4_16a(x[i].x, x[i].y, x[i].z, 0.0);
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], x[i][d]);
        hi[d] = std::max(hi[d], x[i][d]);
      }
    }
    pos_.upload(p, stream_);
    launch_place_sites();  // the positions read back hold the sites placed
    list_->set_extent(
        make_double3(std::max(hi.x - lo.x, 1e-3), std::max(hi.y - lo.y, 1e-3), std::max(hi.z - lo.z, 1e-3)));
    if (resort) list_->request_sort();
  }

  std::vector<Vec3d> positions() const { return positions_rows(0, static_cast<std::size_t>(n_)); }

  // Rows [first, first + count) (a batch's replica): uploaded, the sites placed, a re-sort requested.
  void set_positions_rows(const std::vector<Vec3d>& x, std::size_t first) {
    std::vector<double4_16a> p(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) p[i] = make_double4_16a(x[i].x, x[i].y, x[i].z, 0.0);
    pos_.upload_range(first, p.data(), p.size(), stream_);
    launch_place_sites();
    list_->request_sort();
  }

  std::vector<Vec3d> positions_rows(std::size_t first, std::size_t count) const {
    const std::vector<double4_16a> p = pos_.download_range(first, count, stream_);
    std::vector<Vec3d> x(count);
    for (std::size_t i = 0; i < count; ++i) x[i] = Vec3d(p[i].x, p[i].y, p[i].z);
    return x;
  }

  void set_box(const Boxd& box) {
    if (!periodic_) throw RuntimeError("CUDA platform: set_box on a non-periodic system");
    check_periodic_box(sys_.nonbonded, box);  // as the CPU platform: no wrong images for a small box
    box_ = box;
    list_->set_box(box);  // rebuilds at the next evaluation
    invalidate_graphs();  // the box is baked into the captured kernels' arguments
  }

  void reset_neighbor_list() { list_->request_sort(); }

  // Replaces the restraints. The graphs are captured again at the next evaluation (the launch's size and
  // list are in them); without restraints nothing is launched, so the evaluation is the same as before.
  void set_position_restraints(const PositionRestraints& r) {
    check_position_restraints(r, static_cast<std::size_t>(n_));
    std::vector<cuda::DeviceRestraint> device(r.atoms.size());
    for (std::size_t e = 0; e < r.atoms.size(); ++e) {
      const Vec3d& x0 = r.reference_nm[e];
      const Vec3d& k = r.k_kj_per_mol_nm2[e];
      device[e] = {x0.x, x0.y, x0.z, k.x, k.y, k.z, r.atoms[e]};
    }
    restraints_.upload(device, stream_);  // synchronises: no evaluation in flight reads the old list
    invalidate_graphs();
  }
  int graph_kernel_count(bool with_energy) const { return graph_kernels_[with_energy ? 1 : 0]; }

  // The steady evaluation in a caller's graph (CudaForceEvaluator::next_evaluation_is_steady).
  bool next_evaluations_are_steady(int count) const { return !external_ && list_->steady_for(count); }
  void enqueue_steady_evaluation() { enqueue_evaluation(false, cuda::ListUpdate{}, true); }
  void begin_steady_evaluations(int count) {
    last_with_energy_ = false;
    for (int k = 0; k < count; ++k) (void)list_->due_update();  // counts them towards the next sort; none is due
    clear_forces();
  }
  void forces_zeroed_by_consumer() { forces_zero_ = true; }
  std::uint64_t graph_generation() const { return graph_generation_; }

  // Decides (on the host, from counters only) whether this evaluation re-sorts the atoms or forces a
  // list rebuild; the common case — neither — replays a captured CUDA graph of the whole evaluation.
  void compute(bool with_energy) {
    last_with_energy_ = with_energy;
    clear_forces();
    const cuda::ListUpdate update = list_->due_update();
    if (!update.any()) {
      launch_graph(with_energy);
    } else {
      enqueue_evaluation(with_energy, update);
      list_->update_enqueued(update);
    }
    // Outside the graph, after it on the same stream: the external forces add into the sums (then the sites'
    // forces are spread, which the evaluation left to this point).
    external_energies_ = external_ ? external_(with_energy) : std::vector<double>{};
    if (external_) launch_spread_sites();
  }

  void set_external_hook(std::function<std::vector<double>(bool)> hook, std::string names) {
    external_ = std::move(hook);
    external_names_ = std::move(names);
    if (num_sites_ > 0) invalidate_graphs();  // whether the evaluation spreads the sites' forces depends on it
  }
  const Boxd& box() const { return box_; }

  void add_external_forces(const double* f) {
    cuda::add_external_forces_kernel<<<cuda::atom_blocks(n_), cuda::kAtomThreads, 0, stream_>>>(
        n_, reinterpret_cast<const Vec3d*>(f), force_.data(), npad_);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  std::vector<Vec3d> forces() { return forces_rows(0, static_cast<std::size_t>(n_)); }

  // Rows [first, first + count) of forces() (a batch's replica).
  std::vector<Vec3d> forces_rows(std::size_t first, std::size_t count) {
    settle_overflow();
    if (first + count > static_cast<std::size_t>(n_))
      throw RuntimeError(fmt::format("CUDA platform: rows {} .. {} of {} particles", first, first + count, n_));
    const std::size_t plane = static_cast<std::size_t>(npad_);  // x, y, z planes of the fixed-point sums
    const std::vector<unsigned long long> fx = force_.download_range(first, count, stream_);
    const std::vector<unsigned long long> fy = force_.download_range(plane + first, count, stream_);
    const std::vector<unsigned long long> fz = force_.download_range(2 * plane + first, count, stream_);
    std::vector<Vec3d> out(count);
    for (std::size_t i = 0; i < count; ++i)
      out[i] = Vec3d(cuda::from_fixed(fx[i]), cuda::from_fixed(fy[i]), cuda::from_fixed(fz[i]));
    return out;
  }

  // Each replica's energies (forces from outside are the batch's: their energy is the first replica's).
  std::vector<EnergyTerms> replica_energies() {
    settle_overflow();
    if (!last_with_energy_) {
      compute(true);
      settle_overflow();
    }
    const std::vector<unsigned long long> all = energy_.download(stream_);
    std::vector<EnergyTerms> out(static_cast<std::size_t>(replicas_));
    for (int r = 0; r < replicas_; ++r) {
      const unsigned long long* e = all.data() + static_cast<std::size_t>(r) * kNumSlots;
      EnergyTerms& t = out[static_cast<std::size_t>(r)];
      for (int g = 0; g < kNumBondedEnergies; ++g)
        t.bonded(static_cast<BondedEnergy>(g)) = cuda::from_fixed(e[kSlotBond + g]);
      t.dispersion_correction = dispersion_correction();
      t.nonbonded_direct = cuda::from_fixed(e[kSlotPairs]) + cuda::from_fixed(e[kSlotExceptions]) + t.dispersion_correction;
      t.nonbonded_reciprocal = pme_ ? cuda::from_fixed(e[kSlotReciprocal]) + self_energy_ : 0.0;
      t.nonbonded = t.nonbonded_direct + t.nonbonded_reciprocal;
      t.restraint = cuda::from_fixed(e[kSlotRestraint]);
      t.external = static_cast<std::size_t>(r) < external_energies_.size() ? external_energies_[r] : 0.0;
      t.total = t.bonded_sum() + t.nonbonded + t.external + t.restraint;
    }
    return out;
  }
  EnergyTerms energies() { return replica_energies().front(); }
  // The long-range dispersion correction for the current box (kJ/mol, per replica; 0 without one).
  double dispersion_correction() const {
    return periodic_ && dispersion_coefficient_ != 0.0 ? dispersion_coefficient_ / box_.volume() : 0.0;
  }
  void replica_potentials_on_device(double* out) {
    cuda::replica_potentials_kernel<<<blocks_for(replicas_, kThreads), kThreads, 0, stream_>>>(
        replicas_, energy_.data(), dispersion_correction(), pme_, self_energy_, out);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  const int* device_tile_overflow() const { return list_->device_tile_overflow(); }
  const int* device_exclusion_overflow() const { return list_->device_exclusion_overflow(); }
  int replicas() const { return replicas_; }

  int num_tiles() {
    settle_overflow();
    return list_->status().tile_count;
  }

  int num_list_builds() {
    settle_overflow();
    return list_->status().builds;
  }

  void* device_positions() { return pos_.data(); }
  const unsigned long long* device_forces_fixed() const { return force_.data(); }
  unsigned long long* device_forces_fixed_consumed() { return force_.data(); }
  int force_stride() const { return npad_; }
  void* device_stream() const { return stream_; }
  void* positions_prepared_event() const { return static_cast<cudaEvent_t>(positions_ready_); }
  const unsigned long long* device_energies_fixed() const { return energy_.data(); }
  double energy_constant() const {
    return (pme_ ? self_energy_ : 0.0) + dispersion_correction();
  }
  std::size_t memory_bytes() const { return memory_bytes_; }

  CudaTimings benchmark(int repetitions) {
    CudaTimings t;
    for (int i = 0; i < 20; ++i) compute(false);  // warm-up (includes the first sort and build)
    settle_overflow();
    auto median_of = [&](auto&& enqueue) {
      std::vector<float> ms;
      ms.reserve(repetitions);
      for (int r = 0; r < repetitions; ++r) {
        MDSIM_CUDA_CHECK(cudaEventRecord(start_, stream_));
        enqueue();
        MDSIM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
        MDSIM_CUDA_CHECK(cudaEventSynchronize(stop_));
        float v = 0;
        MDSIM_CUDA_CHECK(cudaEventElapsedTime(&v, start_, stop_));
        ms.push_back(v);
      }
      std::sort(ms.begin(), ms.end());
      return 1000.0 * ms[ms.size() / 2];
    };
    t.total_us = median_of([&] { compute(false); });
    t.total_energy_us = median_of([&] { compute(true); });
    t.neighbor_us = median_of([&] {
      list_->prepare(pos_.data(), box_, {false, true});
      list_->rebuild(box_);
    });
    t.nonbonded_us = median_of([&] { launch_nonbonded(false); });
    t.exceptions_us = median_of([&] { launch_exceptions(false, stream_); });
    t.bonded_us = median_of([&] { launch_bonded(false, stream_); });
    t.pme_us = pme_ ? median_of([&] { launch_pme(false, stream_); }) : 0.0;
    settle_overflow();
    return t;
  }

 private:
  // ---- construction steps ----

  // One replica's self energy and dispersion coefficient: plan_'s in a single system, `system`'s own plan in a
  // batch (plan_ sums over every replica).
  void set_replica_constants(const System& system) {
    if (replicas_ < 1) throw RuntimeError("CUDA platform: a replica batch needs at least one replica");
    const NonbondedPlan single = replicas_ > 1 ? plan_nonbonded(system) : NonbondedPlan{};
    const NonbondedPlan& p = replicas_ > 1 ? single : plan_;
    self_energy_ = p.self_energy_kj_per_mol;
    dispersion_coefficient_ = p.dispersion_coefficient;
  }

  cuda::ReplicaEnergies replica_layout() const { return {n_ / replicas_, kNumSlots, replicas_}; }

  // Per-particle data for the neighbour list to sort: charges, the pair step's LJ encoding (sigma/2,
  // 2 sqrt(epsilon)), and pair classes (cuda::PairClasses: charged; LJ with some particle, i.e. epsilon != 0, or a
  // type whose table row is not all zero).
  typename cuda::NeighborList<real>::Particles particle_data() const {
    typename cuda::NeighborList<real>::Particles p;
    p.charge.resize(n_);
    p.params.resize(n_);
    p.pair_class.resize(n_);
    std::vector<char> type_has_lj;
    if (sys_.lj_types) {
      const LjTypeTable& t = *sys_.lj_types;
      type_has_lj.assign(t.num_types, 0);
      for (int a = 0; a < t.num_types; ++a)
        for (int b = 0; b < t.num_types; ++b) {
          const std::size_t k = static_cast<std::size_t>(a) * t.num_types + b;
          if (t.c12_kj_per_mol_nm12[k] != 0.0 || t.c6_kj_per_mol_nm6[k] != 0.0) type_has_lj[a] = 1;
        }
    }
    for (int i = 0; i < n_; ++i) {
      p.charge[i] = real(sys_.charge_e[i]);
      const LjParticle<real> lj = lj_particle<real>(sys_.sigma_nm[i], sys_.epsilon_kj_per_mol[i]);
      p.params[i] = cuda::VecTypes<real>::make2(lj.half_sigma_nm, lj.two_sqrt_epsilon);
      bool has_lj = lj.two_sqrt_epsilon != real(0);
      if (sys_.lj_types) {  // the type and its table row, as bits (cuda::lj_type_bits)
        const int type = sys_.lj_types->particle_type[i];
        p.params[i] = cuda::VecTypes<real>::make2(int_bits(type), int_bits(type * sys_.lj_types->num_types));
        has_lj = type_has_lj[type] != 0;
      }
      p.pair_class[i] = static_cast<unsigned char>((p.charge[i] != real(0) ? cuda::kClassCharged : 0) |
                                                   (has_lj ? cuda::kClassLj : 0));
    }
    return p;
  }

  // An int's bits in a real (the low 32 or 64 bits), as the pair kernel reads them back (cuda::lj_type_bits).
  static real int_bits(int v) {
    using Bits = std::conditional_t<sizeof(real) == 4, std::int32_t, std::int64_t>;
    const Bits bits = v;
    real out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
  }

  // System::lj_types' (c12, c6) per type pair, rounded once to real (none without a table).
  void upload_lj_table() {
    if (!sys_.lj_types) return;
    const LjTypeTable& t = *sys_.lj_types;
    std::vector<real2> table(t.c12_kj_per_mol_nm12.size());
    for (std::size_t k = 0; k < table.size(); ++k)
      table[k] = cuda::VecTypes<real>::make2(real(t.c12_kj_per_mol_nm12[k]), real(t.c6_kj_per_mol_nm6[k]));
    lj_table_.upload(table);
  }

  cuda::NeighborListOptions list_options() const {
    cuda::NeighborListOptions o;
    o.buffer_nm = opt_.neighbor_buffer_nm;
    o.range_nm = range_;
    o.column_search_min_blocks = opt_.column_search_min_blocks;
    o.reorder_interval = opt_.reorder_interval;
    o.initial_tiles = opt_.initial_tiles;
    o.initial_exclusion_tiles = opt_.initial_exclusion_tiles;
    // The original-order copy is only for a PME solver that reads it (not in mixed precision).
    o.original_order_posq = pme_ && cuda::CudaPme<real>::reads_original_order();
    o.num_sms = num_sms_;
    o.replicas = replicas_;
    o.pair_classes = opt_.pair_classes;
    o.row_build = opt_.row_build;
    return o;
  }

  // With PME, the rigid waters whose three charged particles' pairs are pure exclusions (exceptions with
  // no charge product and no epsilon) go to the exceptions kernel's water blocks: O, H1, H2, or a 4-site
  // water's charge site, H1, H2 when its oxygen has no charge. Their exceptions are marked in
  // `in_water_kernel`.
  std::vector<cuda::WaterExclusionData<real>> rigid_water_exclusions(std::vector<char>& in_water_kernel) const {
    std::vector<cuda::WaterExclusionData<real>> waters;
    if (!pme_) return waters;
    std::vector<std::array<int, 3>> triples;
    for (const RigidWater& w : sys_.rigid_waters) triples.push_back({w.oxygen, w.hydrogen1, w.hydrogen2});
    const std::vector<int> charge_site = water_sites(  // a 4-site water's M, by water
        sys_, triples, [this](const VirtualSite& v) { return sys_.charge_e[static_cast<std::size_t>(v.particle)] != 0.0; });
    std::unordered_map<unsigned long long, std::size_t> pure_exclusion;  // pair key -> exception index
    auto key = [](int a, int b) {
      return (static_cast<unsigned long long>(std::min(a, b)) << 32) | static_cast<unsigned int>(std::max(a, b));
    };
    for (std::size_t k = 0; k < sys_.exceptions.size(); ++k) {
      const NonbondedException& e = sys_.exceptions[k];
      if (e.charge_product_e2 == 0.0 && e.epsilon_kj_per_mol == 0.0) pure_exclusion.emplace(key(e.i, e.j), k);
    }
    for (std::size_t k = 0; k < sys_.rigid_waters.size(); ++k) {
      RigidWater w = sys_.rigid_waters[k];
      if (sys_.charge_e[static_cast<std::size_t>(w.oxygen)] == 0.0 && charge_site[k] >= 0)
        w.oxygen = sys_.virtual_sites[static_cast<std::size_t>(charge_site[k])].particle;
      const auto oh1 = pure_exclusion.find(key(w.oxygen, w.hydrogen1));
      const auto oh2 = pure_exclusion.find(key(w.oxygen, w.hydrogen2));
      const auto hh = pure_exclusion.find(key(w.hydrogen1, w.hydrogen2));
      if (oh1 == pure_exclusion.end() || oh2 == pure_exclusion.end() || hh == pure_exclusion.end()) continue;
      if (in_water_kernel[oh1->second] || in_water_kernel[oh2->second] || in_water_kernel[hh->second]) continue;
      in_water_kernel[oh1->second] = in_water_kernel[oh2->second] = in_water_kernel[hh->second] = 1;
      const std::vector<double>& q = sys_.charge_e;
      waters.push_back({w.oxygen, w.hydrogen1, w.hydrogen2, real(q[w.oxygen] * q[w.hydrogen1]),
                        real(q[w.oxygen] * q[w.hydrogen2]), real(q[w.hydrogen1] * q[w.hydrogen2])});
    }
    return waters;
  }

  // Exceptions: their own kernel (with PME, a rigid water's three excluded pairs are handled together,
  // by the kernel's first blocks), except those that add nothing: no interaction of their own and an
  // uncharged atom (no Ewald correction), such as a 4-site water's pairs with its oxygen. Every one
  // also excludes its pair from the tile sum (the neighbour list's exclusion data, from the System).
  void upload_exceptions() {
    std::vector<char> in_water_kernel(sys_.exceptions.size(), 0);
    water_exclusions_.upload(rigid_water_exclusions(in_water_kernel));
    std::vector<cuda::ExceptionData<real>> exc;
    exc.reserve(sys_.exceptions.size());
    for (std::size_t k = 0; k < sys_.exceptions.size(); ++k) {
      const NonbondedException& e = sys_.exceptions[k];
      const ExceptionParams<double> p = exception_params<double>(sys_, e);
      const bool adds_nothing = !exception_interacts(p) && p.atoms_charge_product_e2 == 0.0;
      if (!in_water_kernel[k] && !adds_nothing) exc.push_back({make_int2(e.i, e.j), exception_params<real>(sys_, e)});
    }
    exceptions_.upload(exc);
  }

  // Every bonded term list of the System (System::for_each_bonded), as the bonded kernel reads it, rounded
  // once to real; and the terms' shared data: CMAP's patch table (model/cmap, the CPU platform's too) with
  // one view per map into it.
  void upload_bonded_terms() {
    sys_.for_each_bonded([&](const auto& terms) {
      using Term = typename std::decay_t<decltype(terms)>::value_type;
      std::vector<cuda::DeviceBondedTerm<Term, real>> device;
      device.reserve(terms.size());
      for (const Term& t : terms) device.push_back(cuda::device_term<real>(t));
      std::get<BondedBuffer<Term>>(bonded_).upload(device);
    });
    const CmapTable cmap = make_cmap_table(sys_.cmap_maps);
    cmap_coefficients_.upload(cmap.coefficients_as<real>());
    cmap_maps_.upload(cmap.views(cmap_coefficients_.data()));
  }

  // Pair parameters, from the plan both platforms share, and the neighbour search's range.
  void set_pair_constants() {
    const double cutoff = plan_.cutoff_nm;
    pair_.pair = pair_constants_as<real>(plan_.pair);
    pair_.cutoff2 = real(cutoff * cutoff);
    range_ = std::isfinite(cutoff) ? cutoff + opt_.neighbor_buffer_nm : std::numeric_limits<double>::infinity();
  }

  void create_pme() {
    if (!pme_) return;
    const PmeParameters& pme = plan_.pme_parameters;
    pme_solver_ = std::make_unique<cuda::CudaPme<real>>(pme.grid[0], pme.grid[1], pme.grid[2], pme.alpha_per_nm, n_,
                                                        cuda::PmeReplicas{replicas_, n_ / replicas_, kNumSlots});
  }

  // ---- evaluation ----

  // The steady-state evaluation (no sort, no forced rebuild) as a CUDA graph, captured at first use.
  void launch_graph(bool with_energy) {
    cudaGraphExec_t& exec = graph_exec_[with_energy ? 1 : 0];
    if (exec == nullptr) {
      cudaGraph_t graph = nullptr;
      MDSIM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      enqueue_evaluation(with_energy, cuda::ListUpdate{});
      MDSIM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      graph_kernels_[with_energy ? 1 : 0] = cuda::count_kernel_nodes(graph);
      const cudaError_t err = cuda::instantiate_graph(&exec, graph);
      cudaGraphDestroy(graph);
      MDSIM_CUDA_CHECK(err);
    }
    MDSIM_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
  }

  // Zeroes the force sums for the evaluation about to be enqueued, unless they are zero already
  // (forces_zeroed_by_consumer); outside the captured graphs, so the graphs hold no clearing.
  void clear_forces() {
    if (!forces_zero_) force_.zero(stream_);
    forces_zero_ = false;  // the evaluation adds into them
  }

  // `steady`: a steady evaluation in a step graph, which leaves the sites of leave_sites_to_steps to the step.
  void enqueue_evaluation(bool with_energy, const cuda::ListUpdate& update, bool steady = false) {
    if (with_energy) energy_.zero(stream_);
    const SiteList sites = steady ? steady_sites() : all_sites();
    launch_place_sites(sites);
    cuda::timeline_mark(stream_, "main: evaluation start");
    list_->prepare(pos_.data(), box_, update);
    cuda::timeline_mark(stream_, "main: positions prepared");
    // Three independent parts run side by side once the positions are ready: reciprocal space (PME
    // stream), exceptions + bonded terms (bonded stream), and the neighbour list + tiles (main stream).
    // Forces meet in the same fixed-point buffer (integer atomics: order does not matter); the main
    // stream waits for the other two at the end.
    MDSIM_CUDA_CHECK(cudaEventRecord(positions_ready_, stream_));
    if (pme_) {
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(pme_stream_, positions_ready_, 0));
      launch_pme(with_energy, pme_stream_);
      cuda::timeline_mark(pme_stream_, "pme: gather");
      MDSIM_CUDA_CHECK(cudaEventRecord(pme_done_, pme_stream_));
    }
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(bonded_stream_, positions_ready_, 0));
    launch_exceptions(with_energy, bonded_stream_);
    cuda::timeline_mark(bonded_stream_, "bonded: exceptions");
    launch_bonded(with_energy, bonded_stream_);
    launch_restraints(with_energy, bonded_stream_);
    cuda::timeline_mark(bonded_stream_, "bonded: bonded terms");
    MDSIM_CUDA_CHECK(cudaEventRecord(bonded_done_, bonded_stream_));
    list_->rebuild(box_);
    cuda::timeline_mark(stream_, "main: list bounds + build");
    launch_nonbonded(with_energy);
    cuda::timeline_mark(stream_, "main: nonbonded");
    if (pme_) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, pme_done_, 0));
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, bonded_done_, 0));
    cuda::timeline_mark(stream_, "main: forces joined");
    if (!external_) launch_spread_sites(sites);  // with forces from outside: after them (compute)
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // ---- virtual sites (none: nothing launched) ----

  struct SiteList {
    const cuda::DeviceVirtualSite* sites;
    int count;
  };
  int site_blocks(int count) const { return cuda::blocks_for(count, cuda::kSiteThreads); }
  SiteList all_sites() const { return {sites_.data(), num_sites_}; }
  SiteList steady_sites() const {
    return num_steady_sites_ < 0 ? all_sites() : SiteList{steady_sites_.data(), num_steady_sites_};
  }

  // The System's sites as the site kernels read them; those of particles `left_out` marks (non-empty) left out.
  std::vector<cuda::DeviceVirtualSite> device_sites(const std::vector<char>& left_out = {}) const {
    std::vector<cuda::DeviceVirtualSite> device;
    for (const VirtualSite& v : sys_.virtual_sites)
      if (left_out.empty() || !left_out[static_cast<std::size_t>(v.particle)])
        device.push_back({v.particle, {v.parents[0], v.parents[1], v.parents[2]}, virtual_site_params<double>(v)});
    return device;
  }

  void upload_virtual_sites() {
    check_virtual_sites(sys_);
    const std::vector<cuda::DeviceVirtualSite> device = device_sites();
    num_sites_ = static_cast<int>(device.size());
    if (num_sites_ > 0) sites_.upload(device, stream_);
  }

 public:
  // Each site from its parents' positions, in place, on the main stream.
  void launch_place_sites() { launch_place_sites(all_sites()); }

  // The steady evaluations (those in a step graph) leave these sites to the step after them, which spreads
  // their forces, places them and leaves their force sums zero (the fused LangevinMiddle step's rigid-water
  // sites); every other evaluation places and spreads all.
  void leave_sites_to_steps(const std::vector<int>& particles) {
    std::vector<char> left(static_cast<std::size_t>(n_), 0);
    for (int p : particles) left[static_cast<std::size_t>(p)] = 1;
    const std::vector<cuda::DeviceVirtualSite> device = device_sites(left);
    num_steady_sites_ = static_cast<int>(device.size());
    if (num_steady_sites_ > 0) steady_sites_.upload(device, stream_);
    invalidate_graphs();
  }

  // The sites' rows of an N x 3 double device array set to zero, on the main stream.
  void zero_site_rows(Vec3d* rows) {
    if (num_sites_ == 0) return;
    cuda::zero_virtual_site_rows_kernel<<<site_blocks(num_sites_), cuda::kSiteThreads, 0, stream_>>>(
        num_sites_, sites_.data(), rows);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

 private:
  void launch_place_sites(const SiteList& list) {
    if (list.count == 0) return;
    cuda::place_virtual_sites_kernel<<<site_blocks(list.count), cuda::kSiteThreads, 0, stream_>>>(
        list.count, list.sites, pos_.data());
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // The force on each site spread onto its parents (the site's row kept), after every force of the evaluation.
  void launch_spread_sites() { launch_spread_sites(all_sites()); }
  void launch_spread_sites(const SiteList& list) {
    if (list.count == 0) return;
    cuda::spread_virtual_site_forces_kernel<<<site_blocks(list.count), cuda::kSiteThreads, 0, stream_>>>(
        list.count, list.sites, pos_.data(), force_.data(), npad_);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  void invalidate_graphs() {
    ++graph_generation_;
    for (cudaGraphExec_t& exec : graph_exec_) {
      if (exec) cudaGraphExecDestroy(exec);
      exec = nullptr;
    }
  }

  // After a synchronising point: if the tile list or the exclusion tiles overflowed, the neighbour
  // list enlarges them and the evaluation is done again.
  void settle_overflow() {
    for (int attempt = 0; attempt < 8; ++attempt) {
      bool grown = false;
      try {
        grown = list_->grow_after_overflow([this] { invalidate_graphs(); });
      } catch (const RuntimeError& e) {  // the stability check: name the forces added from outside, if any
        if (!external_) throw;
        throw RuntimeError(std::string(e.what()) + " (forces added from outside were active: " + external_names_ +
                           "; check what they add)");
      }
      if (!grown) return;
      compute(last_with_energy_);
    }
    throw RuntimeError("CUDA platform: the tile list kept overflowing");
  }

  // The pair kernel's grid: blocks per multiprocessor, all resident at once (5 fit), taking tiles from a shared
  // cursor until none are left. Its resident blocks hold their multiprocessor's registers until the last tile, so
  // PME's chain (spread, transforms, gather) runs in the room they leave. A small system needs few pair warps and
  // gains from the room; a large batch's pair work is the larger share of its step. H200, benchmark settings,
  // us/step by blocks per SM (atoms per SM in brackets; the systems alone and the batches' 2-block figures with a
  // since-dropped gather of five threads an atom on every system, docs/PERFORMANCE.md): ala2_water alone (17)
  // 1 / 2 / 3: 40.9 / 42.0 / 44.8 (half the SMs: 43.9); villin_water alone (67) 1 / 2 / 3 / 4: 64.6 / 62.6 / 64.0 /
  // 63.0; DHFR alone (178) 2 / 3 / 4: 92.6 / 88.4 / 88.7, with amber14's 1.0 nm 3 / 4: 87.8 / 85.2. Batches of
  // ala2_water: 4 (69) 2 / 3 / 4: 64.9 / 62.9 / 63.8; 8 (137) 2 / 3 / 4: 90.9 / 92.3 / 94.7; 16 (275) 3 / 4 / 5
  // within 0.8; 32 (550) 3 / 4 / 5: 195 / 183.6 / 186.9; 128 (2,200) 689 / 616 / 605. 4 x villin_water (269)
  // 3 / 4 / 5: 126.9 / 123.1 / 124.3; 2 x DHFR (357) 151.8 / 142.5 / 148.0; 16 x villin_water (1,075) 454 / 395 /
  // 393; 8 x DHFR (1,428) 500 / 460 / 447.
  int pair_kernel_blocks() const {
    const int atoms_per_sm = n_ / num_sms_;
    const int per_sm = replicas_ == 1 ? (atoms_per_sm <= 50 ? 1 : (atoms_per_sm <= 100 ? 2 : 4))
                                      : (atoms_per_sm <= 150 ? 3 : (atoms_per_sm <= 600 ? 4 : 5));
    return num_sms_ * per_sm;
  }

  // Pair parameters for the current box (the image limit depends on it).
  cuda::TilePairParams<real> pair_params() const {
    cuda::TilePairParams<real> p = pair_;
    const double half_height = 0.5 * box_.smallest_height();
    p.image_limit = periodic_ ? real(half_height - sys_.nonbonded.cutoff_nm - opt_.neighbor_buffer_nm) : real(0);
    return p;
  }

  template <CoulombMethod C, bool PERIODIC, bool SWITCH, bool ENERGY, bool TABLE>
  void tile_kernel() {
    const cuda::TileKernelView<real> v = list_->tile_view();
    cuda::nonbonded_tile_kernel<real, C, PERIODIC, SWITCH, ENERGY, TABLE><<<pair_kernel_blocks(), 256, 0, stream_>>>(
        v.tile_count, v.capacity, v.tile_row, v.tile_atoms, v.masks, v.sorted_posq, v.sorted_params, v.perm, v.npad,
        force_.data(), energy_.data() + kSlotPairs, replica_layout(), v.block_center, v.block_half, cuda::box_as<real>(box_),
        pair_params(), v.rebuild_flag, v.tile_cursor, lj_table_.data(), v.lists);
  }

  // The kernel with or without System::lj_types' table (separate instantiations).
  template <CoulombMethod C, bool PERIODIC, bool SWITCH, bool ENERGY>
  void tile_kernel_table() {
    if (sys_.lj_types) tile_kernel<C, PERIODIC, SWITCH, ENERGY, true>();
    else tile_kernel<C, PERIODIC, SWITCH, ENERGY, false>();
  }

  template <CoulombMethod C, bool PERIODIC, bool ENERGY>
  void tile_kernel_switch() {
    if (plan_.switching) tile_kernel_table<C, PERIODIC, true, ENERGY>();
    else tile_kernel_table<C, PERIODIC, false, ENERGY>();
  }

  template <bool ENERGY>
  void tile_kernel_method() {
    switch (sys_.nonbonded.method) {
      case NonbondedMethod::PME: tile_kernel_switch<CoulombMethod::Ewald, true, ENERGY>(); break;
      case NonbondedMethod::CutoffPeriodic: tile_kernel_switch<CoulombMethod::ReactionField, true, ENERGY>(); break;
      case NonbondedMethod::CutoffNonPeriodic: tile_kernel_switch<CoulombMethod::ReactionField, false, ENERGY>(); break;
      case NonbondedMethod::NoCutoff: tile_kernel_table<CoulombMethod::Plain, false, false, ENERGY>(); break;
    }
  }

  void launch_nonbonded(bool with_energy) {
    if (with_energy) tile_kernel_method<true>();
    else tile_kernel_method<false>();
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  void launch_exceptions(bool with_energy, cudaStream_t stream) {
    const int count = static_cast<int>(exceptions_.size());
    const int waters = static_cast<int>(water_exclusions_.size());
    if (count + waters == 0) return;
    const auto box = cuda::box_as<real>(box_);
    const real alpha = real(plan_.pair.ewald.a);
    unsigned long long* e = energy_.data() + kSlotExceptions;
    const int water_blocks = waters > 0 ? blocks_for(waters, kThreads) : 0;
    const int blocks = water_blocks + (count > 0 ? blocks_for(count, kThreads) : 0);
    const auto launch = [&](auto kernel) {
      kernel<<<blocks, kThreads, 0, stream>>>(count, exceptions_.data(), waters, water_exclusions_.data(), water_blocks,
                                              pos_.data(), npad_, force_.data(), e, replica_layout(), box, alpha);
    };
    if (pme_) {
      if (with_energy) launch(cuda::exceptions_kernel<real, true, true>);
      else launch(cuda::exceptions_kernel<real, true, false>);
    } else {
      if (with_energy) launch(cuda::exceptions_kernel<real, false, true>);
      else launch(cuda::exceptions_kernel<real, false, false>);
    }
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // One launch over every term type; a System with only the first three (bonds, angles, periodic torsions:
  // amber's) launches the kernel instantiated over those alone, which needs 40 registers a thread where the
  // one over all seven (RB torsions, harmonic impropers, CMAP, Urey-Bradley too) needs 72 (mixed precision,
  // sm_90; the three with Urey-Bradley would need 48, and CHARMM's systems have impropers and CMAP anyway).
  void launch_bonded(bool with_energy, cudaStream_t stream) {
    constexpr std::size_t kAll = std::tuple_size_v<BondedTermTypes>;
    static_assert(kAll == 7, "the first three types are bonds, angles and periodic torsions");
    const bool only_first_three = std::get<3>(bonded_).size() == 0 && std::get<4>(bonded_).size() == 0 &&
                                  std::get<5>(bonded_).size() == 0 && std::get<6>(bonded_).size() == 0;
    if (only_first_three) launch_bonded_types(with_energy, stream, std::make_index_sequence<3>{});
    else launch_bonded_types(with_energy, stream, std::make_index_sequence<kAll>{});
  }

  // The bonded kernel over the device lists of the term types I... (BondedTermTypes' order).
  template <std::size_t... I>
  void launch_bonded_types(bool with_energy, cudaStream_t stream, std::index_sequence<I...>) {
    const int total = (0 + ... + static_cast<int>(std::get<I>(bonded_).size()));
    if (total == 0) return;
    const int blocks = blocks_for(total, kThreads);
    auto* e = energy_.data() + kSlotBond;
    const BondedTables<real> tables{cmap_maps_.data()};
    if (with_energy)
      cuda::bonded_kernel<real, true><<<blocks, kThreads, 0, stream>>>(
          pos_.data(), npad_, force_.data(), e, replica_layout(), tables, bonded_list(std::get<I>(bonded_))...);
    else
      cuda::bonded_kernel<real, false><<<blocks, kThreads, 0, stream>>>(
          pos_.data(), npad_, force_.data(), e, replica_layout(), tables, bonded_list(std::get<I>(bonded_))...);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // Position restraints (none: no launch). Minimum image in the current box for a periodic system (a
  // barostat trial's box during the trial: the reference points are not scaled), in the System's box
  // for a non-periodic method, plain differences without a box (as the CPU platform).
  void launch_restraints(bool with_energy, cudaStream_t stream) {
    const int count = static_cast<int>(restraints_.size());
    if (count == 0) return;
    const bool use_box = periodic_ || sys_.box.has_value();
    const Boxd box = periodic_ ? box_ : sys_.box.value_or(Boxd{});
    unsigned long long* e = energy_.data() + kSlotRestraint;
    if (with_energy)
      cuda::restraints_kernel<true><<<blocks_for(count, kThreads), kThreads, 0, stream>>>(
          count, restraints_.data(), pos_.data(), npad_, force_.data(), e, replica_layout(), box, use_box);
    else
      cuda::restraints_kernel<false><<<blocks_for(count, kThreads), kThreads, 0, stream>>>(
          count, restraints_.data(), pos_.data(), npad_, force_.data(), e, replica_layout(), box, use_box);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  template <class Term>
  static cuda::BondedList<Term, real> bonded_list(const DeviceBuffer<cuda::DeviceBondedTerm<Term, real>>& buffer) {
    return {buffer.data(), static_cast<int>(buffer.size())};
  }

  void launch_pme(bool with_energy, cudaStream_t stream) {
    if (!pme_) return;
    // The spatially sorted copy (written by prepare_positions_kernel before the PME stream starts) lets
    // the mixed-precision spread sum each block's charges in shared memory first.
    pme_solver_->compute(list_->original_order_posq(), box_, force_.data(), npad_,
                         with_energy ? energy_.data() + kSlotReciprocal : nullptr, stream, list_->sorted_atoms());
  }

  std::function<std::vector<double>(bool)> external_;  // Context::add_external_force's forces, after each evaluation
  std::vector<double> external_energies_;  // per replica, of the last evaluation (valid when it wanted the energy)
  std::string external_names_;             // for messages
  System sys_;
  NonbondedPlan plan_;  // checks, PME parameters, dispersion coefficient, self energy, exclusion partners
  CudaOptions opt_;
  int replicas_ = 1;                    // copies of the System in sys_ (a replica batch)
  double self_energy_ = 0.0;            // one replica's PME self energy (kJ/mol)
  double dispersion_coefficient_ = 0.0; // one replica's: the correction is this / volume
  int n_ = 0, npad_ = 0, num_sms_ = 1;  // npad_: sorted slots, the force buffer's stride
  bool periodic_ = false, pme_ = false;
  bool last_with_energy_ = false;
  double range_ = 0.0;  // cutoff + neighbour buffer (infinite without a cutoff)
  Boxd box_{};
  cuda::TilePairParams<real> pair_{};
  std::size_t memory_bytes_ = 0;  // device memory allocated by the constructor
  std::uint64_t graph_generation_ = 0;  // counts invalidate_graphs()
  bool forces_zero_ = false;            // the force sums are known to be zero (clear_forces)
  // PME and the bonded terms first where they compete with the pair kernel, up to 2,048 atoms per
  // multiprocessor: there PME's chain of small kernels (cuFFT's included) is latency-bound and, at equal
  // priority, would finish after the pair kernel. In larger systems PME's kernels have enough blocks to
  // take whole multiprocessors from the pair kernel while they wait on their chain, and equal priority
  // is faster: they run in the room the pair kernel's grid leaves.
  static cuda::StreamPriority side_stream_priority(const System& system, const CudaOptions& options) {
    const int sms = cuda::multiprocessor_count(options.device);
    return system.num_particles() <= sms * 2048 ? cuda::StreamPriority::High : cuda::StreamPriority::Normal;
  }
  // The main stream (the list's chain, the pair kernel, the integrator's main part) at high priority too for a
  // replica batch and for a system alone in a small box (NeighborList::small_box, at the first box): there the
  // list's build, on the critical path, otherwise waits behind the side streams' blocks (H200: 1-3% a step).
  // A larger system alone keeps it normal (DHFR: 2% slower at high priority). docs/PERFORMANCE.md.
  static cuda::StreamPriority main_stream_priority(const System& system, const NonbondedPlan& plan,
                                                   const CudaOptions& options) {
    const bool small = plan.periodic && system.box &&
                       cuda::small_search_box(*system.box, plan.cutoff_nm + options.neighbor_buffer_nm,
                                              static_cast<int>(system.num_particles()));
    return options.replicas > 1 || small ? cuda::StreamPriority::High : cuda::StreamPriority::Normal;
  }
  cuda::Stream stream_, pme_stream_, bonded_stream_;
  cuda::Event positions_ready_, pme_done_, bonded_done_;
  cudaGraphExec_t graph_exec_[2] = {nullptr, nullptr};  // steady-state evaluation without / with energies
  int graph_kernels_[2] = {0, 0};                        // kernel nodes in them (0 until captured)
  cuda::Event start_{true}, stop_{true};                 // benchmark timing

  std::optional<cuda::NeighborList<real>> list_;  // made in the constructor, after the memory probe
  DeviceBuffer<double4_16a> pos_;
  DeviceBuffer<unsigned long long> force_, energy_;
  DeviceBuffer<cuda::ExceptionData<real>> exceptions_;
  DeviceBuffer<cuda::DeviceVirtualSite> sites_;  // System::virtual_sites (empty: none)
  int num_sites_ = 0;
  DeviceBuffer<cuda::DeviceVirtualSite> steady_sites_;  // those the steady evaluations place and spread
  int num_steady_sites_ = -1;                           // -1: all (no leave_sites_to_steps)
  DeviceBuffer<real2> lj_table_;  // System::lj_types' (c12, c6) per type pair; empty without a table
  DeviceBuffer<cuda::WaterExclusionData<real>> water_exclusions_;  // PME only
  template <class Term>
  using BondedBuffer = DeviceBuffer<cuda::DeviceBondedTerm<Term, real>>;
  template <class Tuple>
  struct BondedBuffers;
  template <class... Terms>
  struct BondedBuffers<std::tuple<Terms...>> {
    using type = std::tuple<BondedBuffer<Terms>...>;
  };
  typename BondedBuffers<BondedTermTypes>::type bonded_;  // one device list per bonded term type
  DeviceBuffer<real> cmap_coefficients_;                 // CMAP's patch table (model/cmap), in real
  DeviceBuffer<CmapMapView<real>> cmap_maps_;            // one view per map into it (empty: no maps)
  std::unique_ptr<cuda::CudaPme<real>> pme_solver_;
  DeviceBuffer<cuda::DeviceRestraint> restraints_;  // empty: no restraints
};

}  // namespace

// One evaluator, of the precision chosen at construction.
struct CudaForceEvaluator::Impl {
  std::variant<std::unique_ptr<Evaluator<float>>, std::unique_ptr<Evaluator<double>>> eval;
  std::string device_name;

  // f(evaluator) for the evaluator held.
  template <typename F>
  decltype(auto) visit(F&& f) {
    return std::visit([&](auto& e) -> decltype(auto) { return f(*e); }, eval);
  }
};

CudaForceEvaluator::CudaForceEvaluator(const System& system, const CudaOptions& options) : impl_(new Impl) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw RuntimeError("CUDA platform: no usable CUDA device");
  }
  if (options.device < 0 || options.device >= count)
    throw InputError(fmt::format("CUDA platform: device {} requested, {} present", options.device, count));
  MDSIM_CUDA_CHECK(cudaSetDevice(options.device));
  cudaDeviceProp prop{};
  MDSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
  impl_->device_name = prop.name;
  if (options.double_precision) impl_->eval = std::make_unique<Evaluator<double>>(system, options);
  else impl_->eval = std::make_unique<Evaluator<float>>(system, options);
}

CudaForceEvaluator::~CudaForceEvaluator() = default;

void CudaForceEvaluator::set_positions(const std::vector<Vec3d>& positions_nm) {
  impl_->visit([&](auto& e) { e.set_positions(positions_nm, true); });
}
void CudaForceEvaluator::update_positions(const std::vector<Vec3d>& positions_nm) {
  impl_->visit([&](auto& e) { e.set_positions(positions_nm, false); });
}
int CudaForceEvaluator::num_list_builds() const {
  return impl_->visit([](auto& e) { return e.num_list_builds(); });
}
std::vector<Vec3d> CudaForceEvaluator::positions() const {
  return impl_->visit([](auto& e) { return e.positions(); });
}
void CudaForceEvaluator::set_positions_rows(const std::vector<Vec3d>& positions_nm, std::size_t first_row) {
  impl_->visit([&](auto& e) { e.set_positions_rows(positions_nm, first_row); });
}
std::vector<Vec3d> CudaForceEvaluator::positions_rows(std::size_t first_row, std::size_t count) const {
  return impl_->visit([&](auto& e) { return e.positions_rows(first_row, count); });
}
std::vector<Vec3d> CudaForceEvaluator::forces_rows(std::size_t first_row, std::size_t count) const {
  return impl_->visit([&](auto& e) { return e.forces_rows(first_row, count); });
}
void CudaForceEvaluator::set_box(const Boxd& box) {
  impl_->visit([&](auto& e) { e.set_box(box); });
}
void CudaForceEvaluator::reset_neighbor_list() {
  impl_->visit([](auto& e) { e.reset_neighbor_list(); });
}
void CudaForceEvaluator::set_position_restraints(const PositionRestraints& restraints) {
  impl_->visit([&](auto& e) { e.set_position_restraints(restraints); });
}
const Boxd& CudaForceEvaluator::box() const {
  return impl_->visit([](const auto& e) -> const Boxd& { return e.box(); });
}
void CudaForceEvaluator::set_external_hook(std::function<std::vector<double>(bool)> hook, std::string names) {
  impl_->visit([&](auto& e) { e.set_external_hook(hook, names); });
}
void CudaForceEvaluator::add_external_forces(const double* forces_kj_per_mol_nm) {
  impl_->visit([&](auto& e) { e.add_external_forces(forces_kj_per_mol_nm); });
}
int CudaForceEvaluator::graph_kernel_count(bool with_energy) const {
  return impl_->visit([&](auto& e) { return e.graph_kernel_count(with_energy); });
}
void CudaForceEvaluator::compute(bool with_energy) {
  impl_->visit([&](auto& e) { e.compute(with_energy); });
}
bool CudaForceEvaluator::next_evaluations_are_steady(int count) const {
  return impl_->visit([count](const auto& e) { return e.next_evaluations_are_steady(count); });
}
void CudaForceEvaluator::enqueue_steady_evaluation() {
  impl_->visit([](auto& e) { e.enqueue_steady_evaluation(); });
}
void CudaForceEvaluator::begin_steady_evaluations(int count) {
  impl_->visit([count](auto& e) { e.begin_steady_evaluations(count); });
}
void CudaForceEvaluator::forces_zeroed_by_consumer() {
  impl_->visit([](auto& e) { e.forces_zeroed_by_consumer(); });
}
unsigned long long* CudaForceEvaluator::device_forces_fixed_consumed() {
  return impl_->visit([](auto& e) { return e.device_forces_fixed_consumed(); });
}
std::uint64_t CudaForceEvaluator::graph_generation() const {
  return impl_->visit([](const auto& e) { return e.graph_generation(); });
}
std::vector<Vec3d> CudaForceEvaluator::forces() const {
  return impl_->visit([](auto& e) { return e.forces(); });
}
EnergyTerms CudaForceEvaluator::energies() const {
  return impl_->visit([](auto& e) { return e.energies(); });
}
std::vector<EnergyTerms> CudaForceEvaluator::replica_energies() const {
  return impl_->visit([](auto& e) { return e.replica_energies(); });
}
int CudaForceEvaluator::replicas() const {
  return impl_->visit([](auto& e) { return e.replicas(); });
}
CudaTimings CudaForceEvaluator::benchmark(int repetitions) {
  return impl_->visit([&](auto& e) { return e.benchmark(repetitions); });
}
void* CudaForceEvaluator::device_positions() {
  return impl_->visit([](auto& e) { return e.device_positions(); });
}
const unsigned long long* CudaForceEvaluator::device_forces_fixed() const {
  return impl_->visit([](auto& e) { return e.device_forces_fixed(); });
}
int CudaForceEvaluator::force_stride() const {
  return impl_->visit([](auto& e) { return e.force_stride(); });
}
void* CudaForceEvaluator::device_stream() const {
  return impl_->visit([](auto& e) { return e.device_stream(); });
}
void* CudaForceEvaluator::positions_prepared_event() const {
  return impl_->visit([](auto& e) { return e.positions_prepared_event(); });
}
const unsigned long long* CudaForceEvaluator::device_energies_fixed() const {
  return impl_->visit([](auto& e) { return e.device_energies_fixed(); });
}
void CudaForceEvaluator::replica_potentials_on_device(double* out) {
  impl_->visit([out](auto& e) { e.replica_potentials_on_device(out); });
}
const int* CudaForceEvaluator::device_tile_overflow() const {
  return impl_->visit([](const auto& e) { return e.device_tile_overflow(); });
}
const int* CudaForceEvaluator::device_exclusion_overflow() const {
  return impl_->visit([](const auto& e) { return e.device_exclusion_overflow(); });
}
double CudaForceEvaluator::energy_constant() const {
  return impl_->visit([](auto& e) { return e.energy_constant(); });
}
std::size_t CudaForceEvaluator::device_memory_bytes() const {
  return impl_->visit([](auto& e) { return e.memory_bytes(); });
}
int CudaForceEvaluator::num_tiles() const {
  return impl_->visit([](auto& e) { return e.num_tiles(); });
}
std::string CudaForceEvaluator::device_name() const { return impl_->device_name; }
void CudaForceEvaluator::place_virtual_sites() {
  impl_->visit([](auto& e) { e.launch_place_sites(); });
}
void CudaForceEvaluator::leave_sites_to_steps(const std::vector<int>& particles) {
  impl_->visit([&](auto& e) { e.leave_sites_to_steps(particles); });
}
void CudaForceEvaluator::zero_virtual_site_rows(void* rows_xyz) {
  impl_->visit([&](auto& e) { e.zero_site_rows(static_cast<Vec3d*>(rows_xyz)); });
}

EnergyTerms CudaForceEvaluator::compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces) {
  set_positions(positions_nm);
  return impl_->visit([&](auto& e) {
    e.compute(true);
    EnergyTerms energy = e.energies();
    if (forces) *forces = e.forces();
    return energy;
  });
}

}  // namespace mdsim
