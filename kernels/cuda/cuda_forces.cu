// CUDA platform: force evaluation orchestration (see cuda_forces.hpp for the design).
#include "kernels/cuda/cuda_forces.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/bonded_kernels.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_pme.hpp"
#include "kernels/cuda/neighbor_list.cuh"
#include "kernels/cuda/nonbonded_kernels.cuh"
#include "kernels/physics/nonbonded.hpp"
#include "kernels/plan/nonbonded_plan.hpp"

namespace mdsim {

namespace {

using cuda::DeviceBuffer;

// Bonded slots first, in BondedEnergy order (the bonded kernel adds at kSlotBond + group).
enum EnergySlot { kSlotBond = 0, kSlotAngle, kSlotTorsion, kSlotPairs, kSlotExceptions, kSlotReciprocal, kNumSlots };
static_assert(kSlotBond + kNumBondedEnergies == kSlotPairs, "one energy slot per BondedEnergy");

constexpr int kThreads = 256;
constexpr double kPi = 3.14159265358979323846;

bool is_rectangular(const Boxd& b) { return b.b.x == 0.0 && b.c.x == 0.0 && b.c.y == 0.0; }

int blocks_for(long long n, int threads = kThreads) { return static_cast<int>(std::max<long long>(1, (n + threads - 1) / threads)); }

// Precision-independent interface of the implementation.
struct EvaluatorBase {
  virtual ~EvaluatorBase() = default;
  virtual void set_positions(const std::vector<Vec3d>& x, bool resort) = 0;
  virtual std::vector<Vec3d> positions() const = 0;
  virtual void set_box(const Boxd& box) = 0;
  virtual void reset_neighbor_list() = 0;
  virtual void compute(bool with_energy) = 0;
  virtual std::vector<Vec3d> forces() = 0;
  virtual EnergyTerms energies() = 0;
  virtual CudaTimings benchmark(int repetitions) = 0;
  virtual int num_tiles() = 0;
  virtual void* device_positions() = 0;
  virtual const unsigned long long* device_forces_fixed() const = 0;
  virtual int force_stride() const = 0;
  virtual void* device_stream() const = 0;
  virtual const unsigned long long* device_energies_fixed() const = 0;
  virtual double energy_constant() const = 0;
  virtual int num_list_builds() = 0;
  virtual int graph_kernel_count(bool with_energy) const = 0;
  std::size_t memory_bytes = 0;
};

template <typename real>
class Evaluator final : public EvaluatorBase {
 public:
  using real4 = cuda::real4_t<real>;
  using real2 = cuda::real2_t<real>;

  Evaluator(const System& system, const CudaOptions& options)
      : sys_(system), plan_(plan_nonbonded(sys_)), opt_(options) {
    std::size_t free_before = 0, total = 0;
    MDSIM_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));

    n_ = system.num_particles();
    if (n_ == 0) throw InputError("CUDA platform: the system has no particles");
    periodic_ = plan_.periodic;
    pme_ = plan_.pme;
    if (periodic_) {
      // Columns about as wide as a cube holding one block of 32 atoms at the system's density.
      const double side = std::cbrt(cuda::kTileSize * system.box->volume() / n_);
      ncx_ = std::max(1, static_cast<int>(system.box->a.x / side));
      ncy_ = std::max(1, static_cast<int>(system.box->b.y / side));
    }
    const int ncolumns = ncx_ * ncy_;
    // Each column is padded to whole blocks: at most 31 padding slots per column.
    npad_ = (n_ + 31 * ncolumns + cuda::kTileSize - 1) / cuda::kTileSize * cuda::kTileSize;
    nblocks_ = npad_ / cuda::kTileSize;

    if (periodic_) {
      box_ = *system.box;
      rectangular_ = is_rectangular(box_);
    }

    // Per-particle data: charges, and the pair step's LJ encoding (sigma/2, sqrt(epsilon)).
    std::vector<real> charge(n_);
    std::vector<real2> params(n_);
    for (int i = 0; i < n_; ++i) {
      charge[i] = real(system.charge_e[i]);
      const LjParticle<real> lj = lj_particle<real>(system.sigma_nm[i], system.epsilon_kj_per_mol[i]);
      params[i] = cuda::VecTypes<real>::make2(lj.half_sigma_nm, lj.sqrt_epsilon);
    }
    charge_.upload(charge);
    params_.upload(params);
    pos_.resize(n_);
    sorted_at_build_.resize(npad_);
    sorted_at_build_.zero(stream_);  // read (harmlessly) by the first evaluation, which rebuilds anyway
    sorted_charge_.resize(npad_);
    // The original-order copy is only for a PME solver that reads it (not in mixed precision).
    if (pme_ && cuda::CudaPme<real>::reads_original_order()) posq_.resize(npad_);
    sorted_posq_.resize(npad_);
    sorted_params_.resize(npad_);
    perm_.resize(npad_);
    force_.resize(3 * static_cast<std::size_t>(npad_));
    energy_.resize(kNumSlots);
    status_.resize(1);
    status_.zero(stream_);
    block_center_.resize(nblocks_);
    block_half_.resize(nblocks_);
    sort_keys_in_.resize(n_);
    sort_keys_out_.resize(n_);
    column_counts_.resize(ncolumns);
    column_raw_start_.resize(ncolumns);
    column_padded_start_.resize(ncolumns);
    column_block_start_.resize(ncolumns + 1);
    block_column_.resize(nblocks_);
    blocks_used_.resize(1);
    sort_values_in_.resize(n_);
    sort_values_out_.resize(n_);
    std::size_t temp = 0;
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, sort_keys_in_.data(), sort_keys_out_.data(),
                                                     sort_values_in_.data(), sort_values_out_.data(), n_, 0, 64,
                                                     stream_));
    sort_temp_.resize(std::max<std::size_t>(temp, 1));

    // Exceptions: their own kernel (with PME, a rigid water's three excluded pairs are handled
    // together, by the kernel's first blocks); every one also excludes its pair from the tile sum, through
    // per-atom exclusion data (a 64-bit window of nearby partners, a CSR list of the rest).
    std::vector<char> in_water_kernel(system.exceptions.size(), 0);
    std::vector<cuda::WaterExclusionData<real>> waters;
    if (pme_) {
      std::unordered_map<unsigned long long, std::size_t> pure_exclusion;  // pair key -> exception index
      auto key = [](int a, int b) {
        return (static_cast<unsigned long long>(std::min(a, b)) << 32) | static_cast<unsigned int>(std::max(a, b));
      };
      for (std::size_t k = 0; k < system.exceptions.size(); ++k) {
        const NonbondedException& e = system.exceptions[k];
        if (e.charge_product_e2 == 0.0 && e.epsilon_kj_per_mol == 0.0) pure_exclusion.emplace(key(e.i, e.j), k);
      }
      for (const RigidWater& w : system.rigid_waters) {
        const auto oh1 = pure_exclusion.find(key(w.oxygen, w.hydrogen1));
        const auto oh2 = pure_exclusion.find(key(w.oxygen, w.hydrogen2));
        const auto hh = pure_exclusion.find(key(w.hydrogen1, w.hydrogen2));
        if (oh1 == pure_exclusion.end() || oh2 == pure_exclusion.end() || hh == pure_exclusion.end()) continue;
        if (in_water_kernel[oh1->second] || in_water_kernel[oh2->second] || in_water_kernel[hh->second]) continue;
        in_water_kernel[oh1->second] = in_water_kernel[oh2->second] = in_water_kernel[hh->second] = 1;
        const std::vector<double>& q = system.charge_e;
        waters.push_back({w.oxygen, w.hydrogen1, w.hydrogen2, real(q[w.oxygen] * q[w.hydrogen1]),
                          real(q[w.oxygen] * q[w.hydrogen2]), real(q[w.hydrogen1] * q[w.hydrogen2])});
      }
    }
    water_exclusions_.upload(waters);
    std::vector<cuda::ExceptionData<real>> exc;
    exc.reserve(system.exceptions.size());
    for (std::size_t k = 0; k < system.exceptions.size(); ++k) {
      const NonbondedException& e = system.exceptions[k];
      if (!in_water_kernel[k]) exc.push_back({make_int2(e.i, e.j), exception_params<real>(system, e)});
    }
    exceptions_.upload(exc);
    std::vector<unsigned long long> excl_window(n_, 0ull);
    std::vector<int> excl_start(n_ + 1, 0), excl_partner;
    std::vector<int2> excl_range(n_);
    for (int i = 0; i < n_; ++i) {
      std::vector<int> far;
      for (int e = plan_.exclusion_start[i]; e < plan_.exclusion_start[i + 1]; ++e) {
        const int b = plan_.exclusion_partner[e];
        const int offset = b - i + 32;
        if (offset >= 0 && offset < 64) excl_window[i] |= 1ull << offset;
        else far.push_back(b);
      }
      std::sort(far.begin(), far.end());
      excl_start[i + 1] = excl_start[i] + static_cast<int>(far.size());
      excl_partner.insert(excl_partner.end(), far.begin(), far.end());
      excl_range[i] = far.empty() ? make_int2(1, 0) : make_int2(far.front(), far.back());
    }
    if (excl_partner.empty()) excl_partner.push_back(-1);  // keep the buffer allocated
    excl_window_.upload(excl_window);
    // Every excluded pair once (a < b), for finding the exclusion tiles after each sort.
    std::vector<int2> excluded_pairs;
    for (int a = 0; a < n_; ++a) {
      std::vector<int> later;
      for (int e = plan_.exclusion_start[a]; e < plan_.exclusion_start[a + 1]; ++e)
        if (plan_.exclusion_partner[e] > a) later.push_back(plan_.exclusion_partner[e]);
      std::sort(later.begin(), later.end());
      later.erase(std::unique(later.begin(), later.end()), later.end());
      for (int b : later) excluded_pairs.push_back(make_int2(a, b));
    }
    num_excluded_pairs_ = static_cast<int>(excluded_pairs.size());
    if (excluded_pairs.empty()) excluded_pairs.push_back(make_int2(0, 0));  // keep the buffer allocated
    excluded_pairs_.upload(excluded_pairs);
    const std::size_t max_exclusion_tiles = static_cast<std::size_t>(num_excluded_pairs_) + nblocks_;
    exclusion_keys_.resize(max_exclusion_tiles);
    exclusion_tile_keys_.resize(max_exclusion_tiles);
    // Most blocks share exclusion tiles with a few neighbours only; more are found at the first sort
    // that needs them (settle_overflow).
    exclusion_capacity_ = opt_.initial_exclusion_tiles > 0
                              ? opt_.initial_exclusion_tiles
                              : static_cast<int>(std::min<std::size_t>(max_exclusion_tiles, 12 * static_cast<std::size_t>(nblocks_) + 64));
    exclusion_tile_masks_.resize(static_cast<std::size_t>(exclusion_capacity_) * cuda::kTileSize);
    exclusion_tile_count_.resize(1);
    exclusion_row_start_.resize(nblocks_ + 1);
    slot_of_.resize(n_);
    {
      std::size_t sort_bytes = 0, unique_bytes = 0;
      const int items = static_cast<int>(max_exclusion_tiles);
      MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, exclusion_keys_.data(),
                                                      exclusion_tile_keys_.data(), items, 0, 64, stream_));
      MDSIM_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, unique_bytes, exclusion_tile_keys_.data(),
                                                 exclusion_keys_.data(), exclusion_tile_count_.data(), items, stream_));
      exclusion_temp_.resize(std::max<std::size_t>({sort_bytes, unique_bytes, 1}));
    }
    excl_start_.upload(excl_start);
    excl_partner_.upload(excl_partner);
    excl_range_.upload(excl_range);

    upload_bonded(system);

    // Pair parameters, from the plan both platforms share.
    const double cutoff = plan_.cutoff_nm;
    pair_.pair.cutoff_nm = real(cutoff);
    pair_.pair.switch_distance_nm = real(plan_.pair.switch_distance_nm);
    pair_.pair.alpha_per_nm = real(plan_.pair.alpha_per_nm);
    pair_.pair.rf = {real(plan_.pair.rf.k_rf), real(plan_.pair.rf.c_rf)};
    pair_.cutoff2 = real(cutoff * cutoff);
    range_ = std::isfinite(cutoff) ? cutoff + opt_.neighbor_buffer_nm : std::numeric_limits<double>::infinity();

    if (pme_) {
      const PmeParameters& pme = plan_.pme_parameters;
      pme_solver_ = std::make_unique<cuda::CudaPme<real>>(pme.grid[0], pme.grid[1], pme.grid[2], pme.alpha_per_nm, n_);
    }

    grow_tile_capacity(opt_.initial_tiles > 0 ? static_cast<std::size_t>(opt_.initial_tiles) : estimate_tiles());

    MDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, opt_.device));
    std::size_t free_after = 0;
    MDSIM_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    memory_bytes = free_before > free_after ? free_before - free_after : 0;
  }

  ~Evaluator() override {  // the streams' work must end before the buffers below them are freed
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(pme_stream_);
    cudaStreamSynchronize(bonded_stream_);
    invalidate_graphs();
  }

  void set_positions(const std::vector<Vec3d>& x, bool resort) override {
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
    region_extent_ = make_double3(std::max(hi.x - lo.x, 1e-3), std::max(hi.y - lo.y, 1e-3), std::max(hi.z - lo.z, 1e-3));
    if (resort) need_reorder_ = true;
  }

  std::vector<Vec3d> positions() const override {
    const std::vector<double4_16a> p = pos_.download(stream_);
    std::vector<Vec3d> x(n_);
    for (int i = 0; i < n_; ++i) x[i] = Vec3d(p[i].x, p[i].y, p[i].z);
    return x;
  }

  void set_box(const Boxd& box) override {
    if (!periodic_) throw RuntimeError("CUDA platform: set_box on a non-periodic system");
    box_ = box;
    rectangular_ = is_rectangular(box);
    force_rebuild_ = true;
    invalidate_graphs();  // the box is baked into the captured kernels' arguments
  }

  void reset_neighbor_list() override { need_reorder_ = true; }
  int graph_kernel_count(bool with_energy) const override { return graph_kernels_[with_energy ? 1 : 0]; }

  // Decides (on the host, from counters only) whether this evaluation re-sorts the atoms or forces a
  // list rebuild; the common case — neither — replays a captured CUDA graph of the whole evaluation.
  void compute(bool with_energy) override {
    last_with_energy_ = with_energy;
    const bool reorder_now =
        need_reorder_ || (opt_.reorder_interval > 0 && ++evaluations_since_sort_ >= opt_.reorder_interval);
    if (!reorder_now && !force_rebuild_) {
      cudaGraphExec_t& exec = graph_exec_[with_energy ? 1 : 0];
      if (exec == nullptr) {
        cudaGraph_t graph = nullptr;
        MDSIM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        enqueue_evaluation(with_energy, false, false);
        MDSIM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
        graph_kernels_[with_energy ? 1 : 0] = cuda::count_kernel_nodes(graph);
        const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        MDSIM_CUDA_CHECK(err);
      }
      MDSIM_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      return;
    }
    enqueue_evaluation(with_energy, reorder_now, force_rebuild_);
    if (reorder_now) {
      need_reorder_ = false;
      evaluations_since_sort_ = 0;
    }
    force_rebuild_ = false;
  }

  void enqueue_evaluation(bool with_energy, bool reorder_now, bool force_rebuild) {
    force_.zero(stream_);
    if (with_energy) energy_.zero(stream_);
    launch_prepare(reorder_now, force_rebuild);
    // Three independent parts run side by side once the positions are ready: reciprocal space (PME
    // stream), exceptions + bonded terms (bonded stream), and the neighbour list + tiles (main stream).
    // Forces meet in the same fixed-point buffer (integer atomics: order does not matter); the main
    // stream waits for the other two at the end.
    MDSIM_CUDA_CHECK(cudaEventRecord(positions_ready_, stream_));
    if (pme_) {
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(pme_stream_, positions_ready_, 0));
      launch_pme(with_energy, pme_stream_);
      MDSIM_CUDA_CHECK(cudaEventRecord(pme_done_, pme_stream_));
    }
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(bonded_stream_, positions_ready_, 0));
    launch_exceptions(with_energy, bonded_stream_);
    launch_bonded(with_energy, bonded_stream_);
    MDSIM_CUDA_CHECK(cudaEventRecord(bonded_done_, bonded_stream_));
    launch_rebuild();
    launch_nonbonded(with_energy);
    if (pme_) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, pme_done_, 0));
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, bonded_done_, 0));
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  void invalidate_graphs() {
    for (cudaGraphExec_t& exec : graph_exec_) {
      if (exec) cudaGraphExecDestroy(exec);
      exec = nullptr;
    }
  }

  std::vector<Vec3d> forces() override {
    settle_overflow();
    const std::vector<unsigned long long> f = force_.download(stream_);
    std::vector<Vec3d> out(n_);
    for (int i = 0; i < n_; ++i)
      out[i] = Vec3d(cuda::from_fixed(f[i]), cuda::from_fixed(f[npad_ + i]), cuda::from_fixed(f[2 * npad_ + i]));
    return out;
  }

  EnergyTerms energies() override {
    settle_overflow();
    if (!last_with_energy_) {
      compute(true);
      settle_overflow();
    }
    const std::vector<unsigned long long> e = energy_.download(stream_);
    EnergyTerms t;
    for (int g = 0; g < kNumBondedEnergies; ++g) t.bonded(static_cast<BondedEnergy>(g)) = cuda::from_fixed(e[kSlotBond + g]);
    if (periodic_ && plan_.dispersion_coefficient != 0.0) t.dispersion_correction = plan_.dispersion_coefficient / box_.volume();
    t.nonbonded_direct = cuda::from_fixed(e[kSlotPairs]) + cuda::from_fixed(e[kSlotExceptions]) + t.dispersion_correction;
    t.nonbonded_reciprocal = pme_ ? cuda::from_fixed(e[kSlotReciprocal]) + plan_.self_energy_kj_per_mol : 0.0;
    t.nonbonded = t.nonbonded_direct + t.nonbonded_reciprocal;
    t.total = t.bond + t.angle + t.torsion + t.nonbonded;
    return t;
  }

  int num_tiles() override {
    settle_overflow();
    return list_status().tile_count;
  }

  void* device_positions() override { return pos_.data(); }
  const unsigned long long* device_forces_fixed() const override { return force_.data(); }
  int force_stride() const override { return npad_; }
  void* device_stream() const override { return stream_; }
  const unsigned long long* device_energies_fixed() const override { return energy_.data(); }
  double energy_constant() const override {
    return (pme_ ? plan_.self_energy_kj_per_mol : 0.0) +
           (periodic_ && plan_.dispersion_coefficient != 0.0 ? plan_.dispersion_coefficient / box_.volume() : 0.0);
  }

  int num_list_builds() override {
    settle_overflow();
    return list_status().builds;
  }

  CudaTimings benchmark(int repetitions) override {
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
      launch_prepare(false, true);
      launch_rebuild();
    });
    t.nonbonded_us = median_of([&] { launch_nonbonded(false); });
    t.exceptions_us = median_of([&] { launch_exceptions(false, stream_); });
    t.bonded_us = median_of([&] { launch_bonded(false, stream_); });
    t.pme_us = pme_ ? median_of([&] { launch_pme(false, stream_); }) : 0.0;
    settle_overflow();
    return t;
  }

 private:
  cuda::NeighborListStatus list_status() const { return status_.download(stream_)[0]; }
  int* rebuild_flag() { return &status_.data()->rebuild; }
  int* tile_count() { return &status_.data()->tile_count; }
  int* overflow_flag() { return &status_.data()->tile_overflow; }
  int* build_count() { return &status_.data()->builds; }
  int* column_excess() { return status_.data()->column_excess; }
  // The column search (O(N)) for large periodic systems in a rectangular box, the all-pairs block scan
  // otherwise (cheaper for small systems: more warps share the work).
  bool column_search() const { return periodic_ && rectangular_ && nblocks_ >= opt_.column_search_min_blocks; }

  std::size_t estimate_tiles() const {
    const std::size_t all_pairs = static_cast<std::size_t>(nblocks_) * (nblocks_ + 1) / 2;
    if (!std::isfinite(range_)) return all_pairs;
    const double volume = periodic_ ? box_.volume() : region_volume_estimate();
    const double density = n_ / std::max(volume, 1e-6);             // atoms per nm^3
    const double side = std::cbrt(cuda::kTileSize / density);        // a block as a cube, nm
    const double r = range_;
    // Atoms within r of a block's box (Steiner's formula), half of them in blocks J > I, packed 32 a
    // tile, plus the diagonal and a partly filled last tile. Column blocks (periodic) are nearly cubes:
    // DHFR needs 0.96 of this estimate, so 1.5 leaves a wide margin; Morton blocks are less compact,
    // hence 2. An overflow is still caught and the list enlarged.
    const double shell = side * side * side + 6 * side * side * r + 3 * kPi * side * r * r + 4.0 / 3.0 * kPi * r * r * r;
    const double per_row = 0.5 * shell * density / cuda::kTileSize + 2.0;
    const double margin = periodic_ ? 1.5 : 2.0;
    return std::min(all_pairs + nblocks_, static_cast<std::size_t>(margin * per_row * nblocks_) + 64);
  }

  double region_volume_estimate() const {
    // Non-periodic: the positions' bounding box (set at set_positions), at least 1 nm^3.
    return std::max(1.0, region_extent_.x * region_extent_.y * region_extent_.z);
  }

  void grow_tile_capacity(std::size_t tiles) {
    invalidate_graphs();  // buffers and capacity are baked into the captured kernels' arguments
    capacity_ = static_cast<int>(std::min<std::size_t>(tiles, std::numeric_limits<int>::max() / cuda::kTileSize));
    tile_row_.resize(capacity_);
    tile_atoms_.resize(static_cast<std::size_t>(capacity_) * cuda::kTileSize);
    masks_.resize(static_cast<std::size_t>(capacity_) * cuda::kTileSize);
  }

  // After a synchronising point: if the tile list or the exclusion tiles overflowed, enlarge them and
  // evaluate again.
  void settle_overflow() {
    for (int attempt = 0; attempt < 8; ++attempt) {
      MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
      const cuda::NeighborListStatus status = list_status();
      if (status.tile_overflow == 0 && status.exclusion_overflow == 0) return;
      if (status.exclusion_overflow != 0) {
        const int needed = exclusion_tile_count_.download(stream_)[0];
        invalidate_graphs();  // the masks buffer is baked into the captured build kernels
        exclusion_capacity_ = needed + needed / 4 + 64;
        exclusion_tile_masks_.resize(static_cast<std::size_t>(exclusion_capacity_) * cuda::kTileSize);
        MDSIM_CUDA_CHECK(cudaMemsetAsync(&status_.data()->exclusion_overflow, 0, sizeof(int), stream_));
        need_reorder_ = true;  // finds the exclusion tiles again
      }
      if (status.tile_overflow != 0) grow_tile_capacity(static_cast<std::size_t>(status.tile_count) * 5 / 4 + 64);
      force_rebuild_ = true;
      compute(last_with_energy_);
    }
    throw RuntimeError("CUDA platform: the tile list kept overflowing");
  }

  void reorder() {
    cuda::spatial_keys_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(n_, pos_.data(), periodic_, box_, ncx_, ncy_,
                                                                         sort_keys_in_.data(), sort_values_in_.data());
    std::size_t temp = sort_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.data(), temp, sort_keys_in_.data(),
                                                     sort_keys_out_.data(), sort_values_in_.data(),
                                                     sort_values_out_.data(), n_, 0, 64, stream_));
    column_counts_.zero(stream_);
    MDSIM_CUDA_CHECK(cudaMemsetAsync(perm_.data(), 0xff, perm_.bytes(), stream_));  // -1: padding
    const int ncolumns = ncx_ * ncy_;
    cuda::column_count_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(n_, sort_keys_out_.data(), column_counts_.data());
    cuda::column_scan_kernel<<<1, 1, 0, stream_>>>(ncolumns, column_counts_.data(), column_raw_start_.data(),
                                                   column_padded_start_.data(), blocks_used_.data());
    cuda::scatter_sorted_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(
        n_, sort_keys_out_.data(), sort_values_out_.data(), column_raw_start_.data(), column_padded_start_.data(),
        perm_.data(), slot_of_.data());
    cuda::column_blocks_kernel<<<blocks_for(ncolumns + 1), kThreads, 0, stream_>>>(
        ncolumns, column_padded_start_.data(), blocks_used_.data(), column_block_start_.data(), block_column_.data());
    cuda::sorted_params_kernel<real><<<blocks_for(npad_), kThreads, 0, stream_>>>(
        npad_, perm_.data(), params_.data(), charge_.data(), sorted_params_.data(), sorted_charge_.data(), status_.data());
    find_exclusion_tiles();
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // After a sort: the block pairs holding excluded pairs, plus every diagonal, made unique (keys
  // sorted by row), and their masks; every list build until the next sort copies them.
  void find_exclusion_tiles() {
    const int items = num_excluded_pairs_ + nblocks_;
    cuda::exclusion_keys_kernel<<<blocks_for(items), kThreads, 0, stream_>>>(
        num_excluded_pairs_, excluded_pairs_.data(), nblocks_, blocks_used_.data(), slot_of_.data(),
        exclusion_keys_.data());
    std::size_t temp = exclusion_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(exclusion_temp_.data(), temp, exclusion_keys_.data(),
                                                    exclusion_tile_keys_.data(), items, 0, 64, stream_));
    temp = exclusion_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceSelect::Unique(exclusion_temp_.data(), temp, exclusion_tile_keys_.data(),
                                               exclusion_keys_.data(), exclusion_tile_count_.data(), items, stream_));
    // The unique keys are in exclusion_keys_ now.
    cuda::exclusion_row_start_kernel<<<blocks_for(nblocks_ + 1), kThreads, 0, stream_>>>(
        nblocks_, exclusion_keys_.data(), exclusion_tile_count_.data(), exclusion_row_start_.data());
    cuda::exclusion_tile_masks_kernel<<<std::max(1, std::min(num_sms_ * 8, (exclusion_capacity_ + 7) / 8)), 256, 0,
                                        stream_>>>(exclusion_keys_.data(), exclusion_tile_count_.data(),
                                                   exclusion_capacity_, perm_.data(), exclusion_view(),
                                                   exclusion_tile_masks_.data(),
                                                   &status_.data()->exclusion_overflow);
  }

  cuda::ExclusionTiles exclusion_tiles() const {
    return {exclusion_keys_.data(), exclusion_tile_masks_.data(), exclusion_row_start_.data(), exclusion_capacity_};
  }

  void launch_prepare(bool reorder_now, bool force_rebuild) {
    // The rebuild flag starts at 0 each evaluation unless a rebuild is already due.
    MDSIM_CUDA_CHECK(cudaMemsetAsync(rebuild_flag(), 0, sizeof(int), stream_));
    if (reorder_now) {
      reorder();  // sets the rebuild flag
    } else if (force_rebuild) {
      MDSIM_CUDA_CHECK(cudaMemsetAsync(rebuild_flag(), 1, sizeof(int), stream_));  // any nonzero value
    }
    const double half_buffer = 0.5 * opt_.neighbor_buffer_nm;
    cuda::prepare_positions_kernel<real><<<blocks_for(npad_), kThreads, 0, stream_>>>(
        npad_, pos_.data(), sorted_charge_.data(), perm_.data(), posq_.data(), sorted_posq_.data(), sorted_at_build_.data(),
        std::isfinite(range_) ? real(half_buffer * half_buffer) : std::numeric_limits<real>::infinity(), rebuild_flag());
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  void launch_rebuild() {
    const auto box = cuda::box_as<real>(box_);
    const int bounds_blocks = blocks_for(static_cast<long long>(nblocks_) * 32, cuda::kBoundsThreads);
    const real range2 = std::isfinite(range_) ? real(range_ * range_) : std::numeric_limits<real>::infinity();
    const long long build_items = static_cast<long long>(nblocks_) * ((nblocks_ + cuda::kBuildSegment - 1) / cuda::kBuildSegment);
    const int build_blocks = static_cast<int>(std::min<long long>(blocks_for(build_items * 32, 128), num_sms_ * 16LL));
    if (periodic_) {
      cuda::block_bounds_kernel<real, true><<<bounds_blocks, cuda::kBoundsThreads, 0, stream_>>>(
          blocks_used_.data(), sorted_posq_.data(), box, rebuild_flag(), block_center_.data(), block_half_.data(),
          sorted_at_build_.data(), tile_count(), overflow_flag(), build_count(),
          rectangular_ ? block_column_.data() : nullptr, ncx_, ncy_, column_excess());
      if (column_search()) {
        cuda::tile_build_columns_kernel<real><<<blocks_for(static_cast<long long>(nblocks_) * 32, 128), 128, 0, stream_>>>(
            blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(), box, range2,
            rebuild_flag(), perm_.data(), block_column_.data(), column_block_start_.data(), ncx_, ncy_, column_excess(),
            exclusion_tiles(), list_view());
      } else {
        cuda::tile_build_kernel<real, true><<<build_blocks, 128, 0, stream_>>>(
            nblocks_, blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(), box, range2,
            rebuild_flag(), perm_.data(), exclusion_tiles(), list_view());
      }
    } else {
      cuda::block_bounds_kernel<real, false><<<bounds_blocks, cuda::kBoundsThreads, 0, stream_>>>(
          blocks_used_.data(), sorted_posq_.data(), box, rebuild_flag(), block_center_.data(), block_half_.data(),
          sorted_at_build_.data(), tile_count(), overflow_flag(), build_count(), nullptr, 1, 1,
          column_excess());
      cuda::tile_build_kernel<real, false><<<build_blocks, 128, 0, stream_>>>(
          nblocks_, blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(), box, range2,
          rebuild_flag(), perm_.data(), exclusion_tiles(), list_view());
    }
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // 16 blocks of 256 per SM, about three times as many as fit at once: each warp takes every W-th tile,
  // and smaller shares balance better as blocks finish. Measured on the H100 (2x2x2 replica, 107,135
  // tiles): 5 blocks per SM (one resident wave) 338 µs, 8 per SM 315 µs, 16 per SM 303 µs.
  int persistent_blocks() const { return num_sms_ * 16; }

  // Pair parameters for the current box (the image limit depends on it).
  cuda::TilePairParams<real> pair_params() const {
    cuda::TilePairParams<real> p = pair_;
    const double half_height = 0.5 * std::min({box_.a.x, box_.b.y, box_.c.z});
    p.image_limit = periodic_ ? real(half_height - sys_.nonbonded.cutoff_nm - opt_.neighbor_buffer_nm) : real(0);
    return p;
  }

  cuda::ExclusionView exclusion_view() const {
    return {excl_window_.data(), excl_start_.data(), excl_partner_.data(), excl_range_.data()};
  }

  cuda::TileListView list_view() {
    return {tile_count(), overflow_flag(), capacity_, tile_row_.data(), tile_atoms_.data(), masks_.data()};
  }

  template <CoulombMethod C, bool PERIODIC, bool SWITCH, bool ENERGY>
  void tile_kernel() {
    cuda::nonbonded_tile_kernel<real, C, PERIODIC, SWITCH, ENERGY><<<persistent_blocks(), 256, 0, stream_>>>(
        tile_count(), capacity_, tile_row_.data(), tile_atoms_.data(), masks_.data(), sorted_posq_.data(), sorted_params_.data(), perm_.data(), npad_,
        force_.data(), energy_.data() + kSlotPairs, block_center_.data(), block_half_.data(), cuda::box_as<real>(box_),
        pair_params());
  }

  template <CoulombMethod C, bool PERIODIC, bool ENERGY>
  void tile_kernel_switch() {
    if (plan_.switching) tile_kernel<C, PERIODIC, true, ENERGY>();
    else tile_kernel<C, PERIODIC, false, ENERGY>();
  }

  template <bool ENERGY>
  void tile_kernel_method() {
    switch (sys_.nonbonded.method) {
      case NonbondedMethod::PME: tile_kernel_switch<CoulombMethod::Ewald, true, ENERGY>(); break;
      case NonbondedMethod::CutoffPeriodic: tile_kernel_switch<CoulombMethod::ReactionField, true, ENERGY>(); break;
      case NonbondedMethod::CutoffNonPeriodic: tile_kernel_switch<CoulombMethod::ReactionField, false, ENERGY>(); break;
      case NonbondedMethod::NoCutoff: tile_kernel<CoulombMethod::Plain, false, false, ENERGY>(); break;
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
    const real alpha = real(plan_.pair.alpha_per_nm);
    unsigned long long* e = energy_.data() + kSlotExceptions;
    const int water_blocks = waters > 0 ? blocks_for(waters) : 0;
    const int blocks = water_blocks + (count > 0 ? blocks_for(count) : 0);
    const auto launch = [&](auto kernel) {
      kernel<<<blocks, kThreads, 0, stream>>>(count, exceptions_.data(), waters, water_exclusions_.data(), water_blocks,
                                              pos_.data(), npad_, force_.data(), e, box, alpha);
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

  // Every bonded term list of the System (System::for_each_bonded), as the bonded kernel reads it.
  void upload_bonded(const System& system) {
    system.for_each_bonded([&](const auto& terms) {
      using Term = typename std::decay_t<decltype(terms)>::value_type;
      std::vector<cuda::DeviceBondedTerm<Term, real>> device;
      device.reserve(terms.size());
      for (const Term& t : terms) device.push_back(cuda::device_term<real>(t));
      std::get<BondedBuffer<Term>>(bonded_).upload(device);
    });
  }

  void launch_bonded(bool with_energy, cudaStream_t stream) {
    std::apply(
        [&](const auto&... lists) {
          const int total = (0 + ... + static_cast<int>(lists.size()));
          if (total == 0) return;
          const int blocks = blocks_for(total);
          auto* e = energy_.data() + kSlotBond;
          if (with_energy)
            cuda::bonded_kernel<real, true><<<blocks, kThreads, 0, stream>>>(pos_.data(), npad_, force_.data(), e,
                                                                           bonded_list(lists)...);
          else
            cuda::bonded_kernel<real, false><<<blocks, kThreads, 0, stream>>>(pos_.data(), npad_, force_.data(), e,
                                                                            bonded_list(lists)...);
          MDSIM_CUDA_CHECK_LAUNCH();
        },
        bonded_);
  }

  template <class Term>
  static cuda::BondedList<Term, real> bonded_list(const DeviceBuffer<cuda::DeviceBondedTerm<Term, real>>& buffer) {
    return {buffer.data(), static_cast<int>(buffer.size())};
  }

  void launch_pme(bool with_energy, cudaStream_t stream) {
    if (!pme_) return;
    // The spatially sorted copy (written by prepare_positions_kernel before the PME stream starts) lets
    // the mixed-precision spread sum each block's charges in shared memory first.
    pme_solver_->compute(posq_.data(), box_, force_.data(), npad_, with_energy ? energy_.data() + kSlotReciprocal : nullptr,
                         stream, {sorted_posq_.data(), npad_, perm_.data()});
  }

  System sys_;
  NonbondedPlan plan_;  // checks, PME parameters, dispersion coefficient, self energy, exclusion partners
  CudaOptions opt_;
  int n_ = 0, npad_ = 0, nblocks_ = 0, capacity_ = 0, num_sms_ = 1;
  int ncx_ = 1, ncy_ = 1;  // sort columns (periodic systems)
  bool rectangular_ = false;  // periodic box with orthogonal vectors (the column search's geometry)
  bool periodic_ = false, pme_ = false;
  bool need_reorder_ = true, force_rebuild_ = true, last_with_energy_ = false;
  int evaluations_since_sort_ = 0;
  double range_ = 0.0;
  Boxd box_{};
  double3 region_extent_{1, 1, 1};  // bounding box of the positions given last (tile-capacity estimate)
  cuda::TilePairParams<real> pair_{};
  cuda::Stream stream_, pme_stream_, bonded_stream_;
  cuda::Event positions_ready_, pme_done_, bonded_done_;
  cudaGraphExec_t graph_exec_[2] = {nullptr, nullptr};  // steady-state evaluation without / with energies
  int graph_kernels_[2] = {0, 0};                        // kernel nodes in them (0 until captured)
  cuda::Event start_{true}, stop_{true};                 // benchmark timing

  DeviceBuffer<double4_16a> pos_;
  DeviceBuffer<real> charge_, sorted_charge_;
  DeviceBuffer<real2> params_, sorted_params_;
  DeviceBuffer<real4> posq_, sorted_posq_, sorted_at_build_, block_center_, block_half_;
  DeviceBuffer<int> perm_, sort_values_in_, sort_values_out_;
  DeviceBuffer<cuda::NeighborListStatus> status_;  // one
  DeviceBuffer<int> tile_row_, tile_atoms_, excl_start_, excl_partner_;
  DeviceBuffer<int2> excl_range_;
  DeviceBuffer<unsigned long long> excl_window_;
  // Exclusion tiles of the current sort (see neighbor_list.cuh).
  int num_excluded_pairs_ = 0, exclusion_capacity_ = 0;
  DeviceBuffer<int2> excluded_pairs_;  // each excluded pair once, a < b (original indices)
  DeviceBuffer<int> slot_of_;          // sorted slot of each atom
  DeviceBuffer<unsigned long long> exclusion_keys_, exclusion_tile_keys_;
  DeviceBuffer<unsigned int> exclusion_tile_masks_;
  DeviceBuffer<int> exclusion_tile_count_, exclusion_row_start_;
  DeviceBuffer<unsigned char> exclusion_temp_;
  DeviceBuffer<unsigned long long> sort_keys_in_, sort_keys_out_;
  DeviceBuffer<unsigned int> masks_;
  DeviceBuffer<int> column_counts_, column_raw_start_, column_padded_start_, blocks_used_;
  DeviceBuffer<int> column_block_start_, block_column_;  // blocks of each column; column of each block
  DeviceBuffer<unsigned char> sort_temp_;
  DeviceBuffer<unsigned long long> force_, energy_;
  DeviceBuffer<cuda::ExceptionData<real>> exceptions_;
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
  std::unique_ptr<cuda::CudaPme<real>> pme_solver_;
};

}  // namespace

struct CudaForceEvaluator::Impl {
  std::unique_ptr<EvaluatorBase> eval;
  std::string device_name;
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
  impl_->eval->set_positions(positions_nm, true);
}
void CudaForceEvaluator::update_positions(const std::vector<Vec3d>& positions_nm) {
  impl_->eval->set_positions(positions_nm, false);
}
int CudaForceEvaluator::num_list_builds() const { return impl_->eval->num_list_builds(); }
std::vector<Vec3d> CudaForceEvaluator::positions() const { return impl_->eval->positions(); }
void CudaForceEvaluator::set_box(const Boxd& box) { impl_->eval->set_box(box); }
void CudaForceEvaluator::reset_neighbor_list() { impl_->eval->reset_neighbor_list(); }
int CudaForceEvaluator::graph_kernel_count(bool with_energy) const {
  return impl_->eval->graph_kernel_count(with_energy);
}
void CudaForceEvaluator::compute(bool with_energy) { impl_->eval->compute(with_energy); }
std::vector<Vec3d> CudaForceEvaluator::forces() const { return impl_->eval->forces(); }
EnergyTerms CudaForceEvaluator::energies() const { return impl_->eval->energies(); }
CudaTimings CudaForceEvaluator::benchmark(int repetitions) { return impl_->eval->benchmark(repetitions); }
void* CudaForceEvaluator::device_positions() { return impl_->eval->device_positions(); }
const unsigned long long* CudaForceEvaluator::device_forces_fixed() const { return impl_->eval->device_forces_fixed(); }
int CudaForceEvaluator::force_stride() const { return impl_->eval->force_stride(); }
void* CudaForceEvaluator::device_stream() const { return impl_->eval->device_stream(); }
const unsigned long long* CudaForceEvaluator::device_energies_fixed() const {
  return impl_->eval->device_energies_fixed();
}
double CudaForceEvaluator::energy_constant() const { return impl_->eval->energy_constant(); }
std::size_t CudaForceEvaluator::device_memory_bytes() const { return impl_->eval->memory_bytes; }
int CudaForceEvaluator::num_tiles() const { return impl_->eval->num_tiles(); }
std::string CudaForceEvaluator::device_name() const { return impl_->device_name; }

EnergyTerms CudaForceEvaluator::compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces) {
  set_positions(positions_nm);
  impl_->eval->compute(true);
  EnergyTerms e = impl_->eval->energies();
  if (forces) *forces = impl_->eval->forces();
  return e;
}

}  // namespace mdsim
