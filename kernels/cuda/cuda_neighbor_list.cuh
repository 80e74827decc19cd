// The CUDA force evaluation's tile neighbour list (included by cuda_forces.cu only; its kernels are in
// neighbor_list.cuh): the spatial sort of the atoms into blocks of 32, the sorted copies of positions,
// parameters and charges, the exclusion data and exclusion tiles, the tile-list buffers, the list's
// device status, and the host's side of capacity overflows.
//
// Every launch is on the stream given at construction, which the evaluator also uses for the tile
// kernel: an evaluation calls prepare() (sort when due, gather, displacement check), then rebuild()
// (a rebuild on the device when the flag is set), then reads tile_view().
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_pme.hpp"
#include "physics/stability.hpp"
#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/grid_size.cuh"
#include "kernels/cuda/neighbor_list.cuh"
#include "platform/nonbonded_plan.hpp"

namespace mdsim::cuda {

// Threads per block of the one-thread-per-item kernels (list upkeep, sort, exceptions, bonded terms, restraints).
// 256 (64 and 128 measured: DHFR 0.5-0.9 us/step faster, villin_water alone 3-6 us slower, H200).
inline constexpr int kThreads = 256;

inline bool is_rectangular_box(const Boxd& b) { return b.b.x == 0.0 && b.c.x == 0.0 && b.c.y == 0.0; }

// What an evaluation does to the list besides the device-side displacement check.
struct ListUpdate {
  bool sort = false;     // re-sort the atoms and find the exclusion tiles again (sets the rebuild flag)
  bool rebuild = false;  // rebuild the tile list whatever the displacement check finds
  bool any() const { return sort || rebuild; }
};

struct NeighborListOptions {
  double buffer_nm = 0.1;             // skin beyond the cutoff
  double range_nm = 0.0;              // cutoff + buffer; infinite without a cutoff
  int column_search_min_blocks = 2048;
  int reorder_interval = 100;         // evaluations between sorts (0: only when asked)
  int initial_tiles = 0;              // 0: estimates
  int initial_exclusion_tiles = 0;
  bool original_order_posq = false;   // also gather posq in the System's order (double-precision PME)
  int num_sms = 1;
  int replicas = 1;                   // a replica batch's copies (CudaOptions::replicas): each its own columns
  bool pair_classes = true;           // uncharged particles in blocks of their own where it pays (choose_class_sort)
  RowBuild row_build = RowBuild::Automatic;  // tile_build_kernel or tile_build_rows_kernel (rows_together)
};

// What the tile kernel reads: the list and the sorted atoms.
template <typename real>
struct TileKernelView {
  const int* tile_count;
  int capacity;
  const int* tile_row;
  const int* tile_atoms;
  const unsigned int* masks;
  const real4_t<real>* sorted_posq;
  const real2_t<real>* sorted_params;
  const int* perm;
  int npad;  // sorted slots
  const real4_t<real>* block_center;
  const real4_t<real>* block_half;
  int* rebuild_flag;  // the tile kernel clears it for the next evaluation (the build, before it, was its last reader)
  int* tile_cursor;   // [2]: next tile to take, warps finished (zero between launches)
  ReplicaLists lists; // a batch's per-replica lists (the tile kernel walks tile_start, clears the rebuild flags)
};

// Bits a non-negative value needs (0 for 0): the radix sorts' key widths.
inline int bits_for(int value) {
  int bits = 0;
  while (bits < 31 && (value >> bits) != 0) ++bits;
  return bits;
}

// A periodic box in which a row's block, taken as a cube holding 32 atoms at the density (`atoms` in the box), reaches
// too far for the atom filter to image candidates next to the block's centre (row_packer: range + 2 |h| below half
// the smallest box height), as boxes under ~4.3 nm at a 1 nm range do: there each pair takes its own image.
inline bool small_search_box(const Boxd& box, double range_nm, int atoms) {
  const double side = std::cbrt(kTileSize * box.volume() / atoms);
  return range_nm + std::sqrt(3.0) * side >= 0.5 * box.smallest_height();
}

template <typename real>
class NeighborList {
 public:
  using real4 = real4_t<real>;
  using real2 = real2_t<real>;

  // Per-particle data in the System's order: charges (e), the pair step's LJ encoding, and pair classes
  // (kClassCharged | kClassLj: q != 0, LJ with some particle; see PairClasses in neighbor_list.cuh).
  struct Particles {
    std::vector<real> charge;
    std::vector<real2> params;
    std::vector<unsigned char> pair_class;
  };

  // `box` is the system's box (ignored unless periodic); `plan` gives the exclusion partners.
  NeighborList(int n, bool periodic, const Boxd& box, const Particles& particles, const NonbondedPlan& plan,
               const NeighborListOptions& options, cudaStream_t stream)
      : n_(n), n_replica_(n / options.replicas), periodic_(periodic), opt_(options), stream_(stream) {
    choose_class_sort(particles.pair_class);
    set_layout(box);
    upload_particles(particles);
    upload_exclusions(plan);
    grow_tile_capacity(opt_.initial_tiles > 0 ? static_cast<std::size_t>(opt_.initial_tiles) : estimate_tiles(box));
  }
  NeighborList(const NeighborList&) = delete;
  NeighborList& operator=(const NeighborList&) = delete;

  int npad() const { return npad_; }

  // The next evaluation sorts the atoms (new positions, or a reset).
  void request_sort() { need_sort_ = true; }
  // The update the next evaluation makes (counts it towards the next periodic sort).
  ListUpdate due_update() {
    const bool sort = sort_due_next();
    if (!need_sort_ && opt_.reorder_interval > 0) ++evaluations_since_sort_;
    return {sort, force_rebuild_};
  }
  // Whether the next due_update() will ask for anything, without counting the evaluation.
  bool update_due_next() const { return !steady_for(1); }
  // Whether none of the next `evaluations` due_update()s will ask for anything.
  bool steady_for(int evaluations) const {
    return !need_sort_ && !force_rebuild_ &&
           (opt_.reorder_interval <= 0 || evaluations_since_sort_ + evaluations < opt_.reorder_interval);
  }
  // Whether the next evaluation sorts: asked for, or the periodic sort's turn.
  bool sort_due_next() const {
    return need_sort_ || (opt_.reorder_interval > 0 && evaluations_since_sort_ + 1 >= opt_.reorder_interval);
  }
  // `update` has been enqueued.
  void update_enqueued(const ListUpdate& update) {
    if (update.sort) {
      need_sort_ = false;
      evaluations_since_sort_ = 0;
    }
    force_rebuild_ = false;
  }

  // The box changed: the list is rebuilt at the next evaluation.
  void set_box(const Boxd& box) {
    rectangular_ = is_rectangular_box(box);
    force_rebuild_ = true;
  }
  // Bounding box of the positions given last, for the non-periodic tile-capacity estimate. That
  // estimate is made only at construction, before any positions, so it sees the initial 1 nm^3.
  void set_extent(double3 extent) { region_extent_ = extent; }

  // Per evaluation, first: the rebuild flag set by `update` (it is clear otherwise: the previous
  // evaluation's tile kernel cleared it), the sort when due, then the positions (double, System order)
  // gathered into sorted posq and checked against the last build.
  void prepare(const double4_16a* pos, const Boxd& box, const ListUpdate& update) {
    if (update.sort) {
      sort(pos, box);  // sets the rebuild flags
    } else if (update.rebuild) {
      MDSIM_CUDA_CHECK(cudaMemsetAsync(rebuild_flag(), 1, sizeof(int), stream_));  // any nonzero value
      if (opt_.replicas > 1)
        MDSIM_CUDA_CHECK(cudaMemsetAsync(replica_rebuild_.data(), 1, replica_rebuild_.bytes(), stream_));
    }
    const double half_buffer = 0.5 * opt_.buffer_nm;
    prepare_positions_kernel<real><<<blocks_for(npad_, kThreads), kThreads, 0, stream_>>>(
        npad_, pos, sorted_charge_.data(), perm_.data(), posq_.data(), sorted_posq_.data(), sorted_at_build_.data(),
        std::isfinite(opt_.range_nm) ? real(half_buffer * half_buffer) : std::numeric_limits<real>::infinity(),
        rebuild_flag(), &status_.data()->nonfinite, lists());
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // Per evaluation, after prepare(): block bounds and the tile-list build, which return at once on the
  // device unless the rebuild flag is set.
  void rebuild(const Boxd& box_d) {
    const auto box = box_as<real>(box_d);
    const int bounds_blocks = blocks_for(static_cast<long long>(nblocks_) * 32, kBoundsThreads);
    const real range2 =
        std::isfinite(opt_.range_nm) ? real(opt_.range_nm * opt_.range_nm) : std::numeric_limits<real>::infinity();
    const bool batch = opt_.replicas > 1;
    const int segments = (replica_max_blocks_ + kBuildSegment - 1) / kBuildSegment;
    const long long build_items = batch ? static_cast<long long>(nblocks_) * segments
                                        : BuildItems{nblocks_, nblocks_, kBuildSegment, segments}.count();
    const bool small = small_box(box_d);
    const bool together = rows_together(small);
    // The chain's kernels as programmatic dependent launches in small boxes (H200: ala2_water alone -1 us a step,
    // 32 replicas -5), not in larger ones (DHFR alone +2).
    const bool dependent = small;
    const int build_blocks = static_cast<int>(
        together ? std::min<long long>(build_items, std::numeric_limits<int>::max())  // a block per item
                 : std::min<long long>(blocks_for(build_items * 32, 128), opt_.num_sms * 16LL));
    if (periodic_) {
      launch_kernel(dependent, block_bounds_kernel<real, true>, bounds_blocks, kBoundsThreads, 0, stream_,
          blocks_used_.data(), sorted_posq_.data(), box, rebuild_flag(), block_center_.data(), block_half_.data(),
          sorted_at_build_.data(), tile_overflow(), build_count(), rectangular_ ? block_column_.data() : nullptr, ncx_,
          ncy_, sub_columns_, column_excess(), lists());
      if (column_search()) {
        auto build = class_sort() ? tile_build_columns_kernel<real, true> : tile_build_columns_kernel<real, false>;
        launch_kernel(dependent, build, blocks_for(static_cast<long long>(nblocks_) * 32, 128), 128, 0, stream_,
            blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(), box, range2,
            rebuild_flag(), perm_.data(), block_column_.data(), column_block_start_.data(), ncx_, ncy_, sub_columns_,
            column_excess(), exclusion_tiles(), list_view(), lists().rebuild, pair_classes());
      } else {
        auto build = periodic_build_kernel(together);
        launch_kernel(dependent, build, build_blocks, 128, 0, stream_,
            replica_max_blocks_, blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(),
            box, range2, rebuild_flag(), perm_.data(), block_column_.data(), column_block_start_.data(),
            ncx_ * ncy_ * sub_columns_, exclusion_tiles(), list_view(), lists().rebuild, pair_classes(), batch);
      }
    } else {
      launch_kernel(dependent, block_bounds_kernel<real, false>, bounds_blocks, kBoundsThreads, 0, stream_,
          blocks_used_.data(), sorted_posq_.data(), box, rebuild_flag(), block_center_.data(), block_half_.data(),
          sorted_at_build_.data(), tile_overflow(), build_count(), nullptr, 1, 1, 1, column_excess(), lists());
      launch_kernel(dependent, tile_build_kernel<real, false, false, false>, build_blocks, 128, 0, stream_,
          replica_max_blocks_, blocks_used_.data(), sorted_posq_.data(), block_center_.data(), block_half_.data(), box,
          range2, rebuild_flag(), perm_.data(), block_column_.data(), column_block_start_.data(), 1, exclusion_tiles(),
          list_view(), lists().rebuild, pair_classes(), batch);
    }
    if (opt_.replicas > 1)
      launch_kernel(dependent, tile_prefix_kernel, 1, kScanThreads, 0, stream_, rebuild_flag(), lists());
  }

  // Whether a small periodic system's build takes tile_build_rows_kernel (`small`: small_box() of the current box):
  // a system alone in a small box, and a batch in small boxes while it has at most 42 blocks (rows) per SM: about a
  // third of them rebuild at a step (each replica's list lasts ~3 steps), two waves of the rows kernel's 7 resident
  // blocks per SM. Both kernels make the same tiles. A larger batch has items enough for a warp each, and a block per
  // item was slower there (32 x ala2_water a block, 16 x villin_water a block, 128 x ala2_water a warp:
  // docs/PERFORMANCE.md).
  bool rows_together(bool small) const {
    if (opt_.row_build != RowBuild::Automatic) return periodic_ && opt_.row_build == RowBuild::Block;
    return small && (opt_.replicas == 1 || nblocks_ <= 42LL * opt_.num_sms);
  }
  bool small_box(const Boxd& box) const { return periodic_ && small_search_box(box, opt_.range_nm, n_replica_); }

  using BuildKernel = void (*)(int, const int*, const real4*, const real4*, const real4*, BoxVectors<real>, real,
                               const int*, const int*, const int*, const int*, int, ExclusionTiles, TileListView,
                               const int*, PairClasses, bool);
  BuildKernel periodic_build_kernel(bool together) const {
    if (together)
      return rectangular_ ? (class_sort() ? tile_build_rows_kernel<real, false, true>
                                          : tile_build_rows_kernel<real, false, false>)
                          : (class_sort() ? tile_build_rows_kernel<real, true, true>
                                          : tile_build_rows_kernel<real, true, false>);
    return rectangular_ ? (class_sort() ? tile_build_kernel<real, true, false, true>
                                        : tile_build_kernel<real, true, false, false>)
                        : (class_sort() ? tile_build_kernel<real, true, true, true>
                                        : tile_build_kernel<real, true, true, false>);
  }

  TileKernelView<real> tile_view() {
    return {tile_count(), capacity_, tile_row_.data(), tile_atoms_.data(), masks_.data(), sorted_posq_.data(),
            sorted_params_.data(), perm_.data(), npad_, block_center_.data(), block_half_.data(),
            rebuild_flag(), status_.data()->tile_cursor, lists()};
  }
  // posq in the System's order (null unless options.original_order_posq), and the sorted atoms, for PME.
  const real4* original_order_posq() const { return posq_.data(); }
  typename CudaPme<real>::SortedAtoms sorted_atoms() const { return {sorted_posq_.data(), npad_, perm_.data()}; }

  // The overflow flags in device memory (read by kernels that must not use a truncated list's results).
  const int* device_tile_overflow() const { return &status_.data()->tile_overflow; }
  const int* device_exclusion_overflow() const { return &status_.data()->exclusion_overflow; }
  // The device status (synchronises); a batch's tile count: every replica's tiles.
  NeighborListStatus status() const {
    NeighborListStatus s = status_.download(stream_)[0];
    if (opt_.replicas > 1) {
      s.tile_count = 0;
      for (const int c : replica_tile_count_.download(stream_)) s.tile_count += c;
    }
    return s;
  }

  // After the stream's work: when the last evaluation overflowed the tile list or the exclusion tiles,
  // enlarges them (calling `before_realloc` first: captured graphs hold the old buffers), schedules a
  // rebuild (and a sort after an exclusion-tile overflow) and returns true: the caller evaluates again.
  template <typename F>
  bool grow_after_overflow(F&& before_realloc) {
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const NeighborListStatus s = status();
    // A NaN, infinite or absurdly far position (dynamics blown up) makes every later result meaningless: stop
    // here, as the CPU platform does at the step itself. The list's kernels stay in bounds meanwhile.
    if (s.nonfinite != 0)
      throw RuntimeError(std::string("CUDA platform: the simulation became unstable: ") + unstable_simulation_reason());
    if (s.tile_overflow == 0 && s.exclusion_overflow == 0) return false;
    if (s.exclusion_overflow != 0) {
      const int needed = exclusion_tile_count_.download(stream_)[0];
      before_realloc();
      exclusion_capacity_ = needed + needed / 4 + 64;
      exclusion_tile_masks_.resize(static_cast<std::size_t>(exclusion_capacity_) * kTileSize);
      MDSIM_CUDA_CHECK(cudaMemsetAsync(&status_.data()->exclusion_overflow, 0, sizeof(int), stream_));
      need_sort_ = true;  // finds the exclusion tiles again
    }
    if (s.tile_overflow != 0) {
      before_realloc();
      // A batch's regions all grow to what the largest replica's list needs.
      int needed = s.tile_count;
      if (opt_.replicas > 1) {
        needed = 0;
        for (const int c : replica_tile_count_.download(stream_)) needed = std::max(needed, c);
      }
      grow_tile_capacity((static_cast<std::size_t>(needed) * 5 / 4 + 64) * static_cast<std::size_t>(opt_.replicas));
      MDSIM_CUDA_CHECK(cudaMemsetAsync(tile_overflow(), 0, sizeof(int), stream_));
    }
    force_rebuild_ = true;
    return true;
  }

 private:
  // Whether uncharged particles get blocks of their own (PairClasses): periodic systems where their pairs with
  // charged particles without LJ, all zero, are at least a fifth of all pairs (2 u c of them, for fractions u and c):
  // 4- and 5-site water (TIP4P-Ew: 0.32); not TIP3P (no uncharged particle), nor a united-atom membrane whose neutral
  // CH2 groups meet only SPC hydrogens (~0.1). Their columns are `class_group_` times coarser, so that a block of
  // them is about as compact as a cube holding 32 of them: the cube root of the density ratio.
  void choose_class_sort(const std::vector<unsigned char>& pair_class) {
    if (!opt_.pair_classes || !periodic_ || pair_class.size() != static_cast<std::size_t>(n_)) return;
    const auto uncharged = std::count_if(pair_class.begin(), pair_class.end(),
                                         [](unsigned char c) { return (c & kClassCharged) == 0; });
    const auto charge_only = std::count(pair_class.begin(), pair_class.end(), kClassCharged);
    const double u = static_cast<double>(uncharged) / n_, c = static_cast<double>(charge_only) / n_;
    if (uncharged == 0 || 2.0 * u * c < 0.2) return;
    sub_columns_ = 2;
    class_group_ = std::max(1, static_cast<int>(std::lround(std::cbrt(static_cast<double>(n_) / uncharged))));
    atom_class_.upload(pair_class);
  }

  // Sort columns (periodic), about as wide as a cube holding one block of 32 atoms at the system's
  // density, and the sorted slots: each column (each sub-column, with pair classes) padded to whole blocks, at
  // most 31 padding slots each. A replica batch has every replica's columns (ncolumns()).
  void set_layout(const Boxd& box) {
    if (periodic_) {
      rectangular_ = is_rectangular_box(box);
      const double side = std::cbrt(kTileSize * box.volume() / n_replica_);
      ncx_ = std::max(1, static_cast<int>(box.a.x / side));
      ncy_ = std::max(1, static_cast<int>(box.b.y / side));
    }
    npad_ = (n_ + 31 * ncolumns() + kTileSize - 1) / kTileSize * kTileSize;
    nblocks_ = npad_ / kTileSize;
    replica_max_blocks_ = (n_replica_ + 31 * ncx_ * ncy_ * sub_columns_ + kTileSize - 1) / kTileSize;
  }
  int ncolumns() const { return ncx_ * ncy_ * sub_columns_ * opt_.replicas; }
  bool class_sort() const { return sub_columns_ > 1; }
  PairClasses pair_classes() const {
    return PairClasses{class_sort() ? block_class_.data() : nullptr};
  }

  // The per-particle data and the buffers of the sort and of the sorted copies.
  void upload_particles(const Particles& particles) {
    charge_.upload(particles.charge);
    params_.upload(particles.params);
    sorted_at_build_.resize(npad_);
    sorted_at_build_.zero(stream_);  // read (harmlessly) by the first evaluation, which rebuilds anyway
    sorted_charge_.resize(npad_);
    if (opt_.original_order_posq) posq_.resize(npad_);
    sorted_posq_.resize(npad_);
    sorted_params_.resize(npad_);
    perm_.resize(npad_);
    status_.resize(1);
    status_.zero(stream_);
    block_center_.resize(nblocks_);
    block_half_.resize(nblocks_);
    if (class_sort()) block_class_.resize(nblocks_);
    sort_keys_in_.resize(n_);
    sort_keys_out_.resize(n_);
    const int ncolumns = this->ncolumns();
    column_raw_start_.resize(ncolumns + 1);
    column_padded_start_.resize(ncolumns + 1);
    column_block_start_.resize(ncolumns + 1);
    block_column_.resize(nblocks_);
    block_replica_.resize(nblocks_);
    block_replica_.zero(stream_);  // blocks past the last in use stay replica 0
    if (opt_.replicas > 1) {
      replica_rebuild_.resize(static_cast<std::size_t>(opt_.replicas));
      replica_rebuild_.zero(stream_);
      replica_tile_count_.resize(static_cast<std::size_t>(opt_.replicas));
      replica_tile_count_.zero(stream_);
      tile_start_.resize(static_cast<std::size_t>(opt_.replicas) + 1);
      tile_start_.zero(stream_);
    }
    blocks_used_.resize(1);
    sort_values_in_.resize(n_);
    sort_values_out_.resize(n_);
    std::size_t temp = 0;
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, sort_keys_in_.data(), sort_keys_out_.data(),
                                                     sort_values_in_.data(), sort_values_out_.data(), n_, 0, 64,
                                                     stream_));
    sort_temp_.resize(std::max<std::size_t>(temp, 1));
  }

  // Exclusions: per atom a 64-bit window of nearby partners and a CSR list of the rest (for the
  // exclusion tiles' masks); every excluded pair once; the buffers of the exclusion-tile search.
  void upload_exclusions(const NonbondedPlan& plan) {
    std::vector<unsigned long long> window(n_, 0ull);
    std::vector<int> start(n_ + 1, 0), partner;
    std::vector<int2> range(n_);
    for (int i = 0; i < n_; ++i) {
      std::vector<int> far;
      for (int e = plan.exclusion_start[i]; e < plan.exclusion_start[i + 1]; ++e) {
        const int b = plan.exclusion_partner[e];
        const int offset = b - i + 32;
        if (offset >= 0 && offset < 64) window[i] |= 1ull << offset;
        else far.push_back(b);
      }
      std::sort(far.begin(), far.end());
      start[i + 1] = start[i] + static_cast<int>(far.size());
      partner.insert(partner.end(), far.begin(), far.end());
      range[i] = far.empty() ? make_int2(1, 0) : make_int2(far.front(), far.back());
    }
    if (partner.empty()) partner.push_back(-1);  // keep the buffer allocated
    excl_window_.upload(window);
    upload_excluded_pairs(plan);
    allocate_exclusion_tiles();
    excl_start_.upload(start);
    excl_partner_.upload(partner);
    excl_range_.upload(range);
  }

  // Every excluded pair once (a < b), for finding the exclusion tiles after each sort.
  void upload_excluded_pairs(const NonbondedPlan& plan) {
    std::vector<int2> pairs;
    for (int a = 0; a < n_; ++a) {
      std::vector<int> later;
      for (int e = plan.exclusion_start[a]; e < plan.exclusion_start[a + 1]; ++e)
        if (plan.exclusion_partner[e] > a) later.push_back(plan.exclusion_partner[e]);
      std::sort(later.begin(), later.end());
      later.erase(std::unique(later.begin(), later.end()), later.end());
      for (int b : later) pairs.push_back(make_int2(a, b));
    }
    num_excluded_pairs_ = static_cast<int>(pairs.size());
    if (pairs.empty()) pairs.push_back(make_int2(0, 0));  // keep the buffer allocated
    excluded_pairs_.upload(pairs);
  }

  // Keys for every excluded pair and diagonal; masks for the exclusion tiles expected. Most blocks
  // share exclusion tiles with a few neighbours only; more are made at the first sort that needs them
  // (grow_after_overflow).
  void allocate_exclusion_tiles() {
    const std::size_t max_exclusion_tiles = static_cast<std::size_t>(num_excluded_pairs_) + nblocks_;
    exclusion_keys_.resize(max_exclusion_tiles);
    exclusion_tile_keys_.resize(max_exclusion_tiles);
    exclusion_capacity_ =
        opt_.initial_exclusion_tiles > 0
            ? opt_.initial_exclusion_tiles
            : static_cast<int>(std::min<std::size_t>(max_exclusion_tiles, 12 * static_cast<std::size_t>(nblocks_) + 64));
    exclusion_tile_masks_.resize(static_cast<std::size_t>(exclusion_capacity_) * kTileSize);
    exclusion_tile_count_.resize(1);
    exclusion_row_start_.resize(nblocks_ + 1);
    slot_of_.resize(n_);
    std::size_t sort_bytes = 0, unique_bytes = 0;
    const int items = static_cast<int>(max_exclusion_tiles);
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, exclusion_keys_.data(),
                                                    exclusion_tile_keys_.data(), items, 0, 64, stream_));
    MDSIM_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, unique_bytes, exclusion_tile_keys_.data(),
                                               exclusion_keys_.data(), exclusion_tile_count_.data(), items, stream_));
    exclusion_temp_.resize(std::max<std::size_t>({sort_bytes, unique_bytes, 1}));
  }

  // Tiles the list is expected to need, from the density (of one replica: a batch's replicas are apart).
  std::size_t estimate_tiles(const Boxd& box) const {
    const std::size_t replica_blocks = static_cast<std::size_t>(replica_max_blocks_);
    const std::size_t all_pairs = replica_blocks * (replica_blocks + 1) / 2 * static_cast<std::size_t>(opt_.replicas);
    if (!std::isfinite(opt_.range_nm)) return all_pairs;
    const double volume = periodic_ ? box.volume() : region_volume_estimate();
    const double density = n_replica_ / std::max(volume, 1e-6);  // atoms per nm^3
    const double side = std::cbrt(kTileSize / density);     // a block as a cube, nm
    const double r = opt_.range_nm;
    constexpr double kPi = 3.14159265358979323846;
    // Atoms within r of a block's box (Steiner's formula), half of them in blocks J > I, packed 32 a
    // tile, plus the diagonal and a partly filled last tile. Column blocks (periodic) are nearly cubes
    // (DHFR needs a little less than this estimate), so 1.5 leaves a wide margin; Morton blocks are
    // less compact, hence 2. An overflow is still caught and the list enlarged.
    const double shell = side * side * side + 6 * side * side * r + 3 * kPi * side * r * r + 4.0 / 3.0 * kPi * r * r * r;
    const double per_row = 0.5 * shell * density / kTileSize + 2.0;
    const double margin = periodic_ ? 1.5 : 2.0;
    return std::min(all_pairs + nblocks_, static_cast<std::size_t>(margin * per_row * nblocks_) + 64);
  }

  // Non-periodic: the positions' bounding box (set_extent), at least 1 nm^3.
  double region_volume_estimate() const {
    return std::max(1.0, region_extent_.x * region_extent_.y * region_extent_.z);
  }

  // Callers invalidate captured graphs first (they hold the buffers and the capacity).
  void grow_tile_capacity(std::size_t tiles) {
    capacity_ = static_cast<int>(std::min<std::size_t>(tiles, std::numeric_limits<int>::max() / kTileSize));
    region_ = capacity_ / opt_.replicas;  // a batch's replica's share
    tile_row_.resize(capacity_);
    tile_atoms_.resize(static_cast<std::size_t>(capacity_) * kTileSize);
    masks_.resize(static_cast<std::size_t>(capacity_) * kTileSize);
  }

  // The spatial sort: keys, radix sort, column counts and padded starts, the slot of every atom, the
  // blocks of every column, sorted parameters and charges (asks for a rebuild), exclusion tiles.
  void sort(const double4_16a* pos, const Boxd& box) {
    spatial_keys_kernel<<<blocks_for(n_, kThreads), kThreads, 0, stream_>>>(
        n_, pos, periodic_, box, ncx_, ncy_, n_replica_, class_sort() ? atom_class_.data() : nullptr, class_group_,
        sort_keys_in_.data(), sort_values_in_.data());
    const int ncolumns = this->ncolumns();
    // The keys' bits above the column's are zero: sorting only the bits in use gives the same order in fewer passes.
    std::size_t temp = sort_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.data(), temp, sort_keys_in_.data(),
                                                     sort_keys_out_.data(), sort_values_in_.data(),
                                                     sort_values_out_.data(), n_, 0, 32 + bits_for(ncolumns - 1),
                                                     stream_));
    MDSIM_CUDA_CHECK(cudaMemsetAsync(perm_.data(), 0xff, perm_.bytes(), stream_));  // -1: padding
    column_starts_kernel<<<blocks_for(n_ + 1, kThreads), kThreads, 0, stream_>>>(n_, ncolumns, sort_keys_out_.data(),
                                                                                  column_raw_start_.data());
    column_scan_kernel<<<1, kScanThreads, 0, stream_>>>(ncolumns, column_raw_start_.data(),
                                                        column_padded_start_.data(), blocks_used_.data());
    scatter_sorted_kernel<<<blocks_for(n_, kThreads), kThreads, 0, stream_>>>(
        n_, sort_keys_out_.data(), sort_values_out_.data(), column_raw_start_.data(), column_padded_start_.data(),
        perm_.data(), slot_of_.data());
    column_blocks_kernel<<<blocks_for(ncolumns + 1, kThreads), kThreads, 0, stream_>>>(
        ncolumns, column_padded_start_.data(), blocks_used_.data(), column_block_start_.data(), block_column_.data(),
        ncx_ * ncy_ * sub_columns_, block_replica_.data());
    sorted_params_kernel<real><<<blocks_for(npad_, kThreads), kThreads, 0, stream_>>>(
        npad_, perm_.data(), params_.data(), charge_.data(), sorted_params_.data(), sorted_charge_.data(),
        status_.data(), lists(), class_sort() ? atom_class_.data() : nullptr, block_class_.data());
    find_exclusion_tiles();
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // After a sort: the block pairs holding excluded pairs, plus every diagonal, made unique (keys
  // sorted by row), and their masks; every list build until the next sort copies them.
  void find_exclusion_tiles() {
    const int items = num_excluded_pairs_ + nblocks_;
    exclusion_keys_kernel<<<blocks_for(items, kThreads), kThreads, 0, stream_>>>(
        num_excluded_pairs_, excluded_pairs_.data(), nblocks_, blocks_used_.data(), slot_of_.data(),
        exclusion_keys_.data());
    // Keys (I << 32) | J with I, J < nblocks_, and all ones past the blocks in use: sorted on their low 32 +
    // bits_for(nblocks_) bits, in which the all-ones keys are still the largest, they come in the order all 64 give.
    std::size_t temp = exclusion_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(exclusion_temp_.data(), temp, exclusion_keys_.data(),
                                                    exclusion_tile_keys_.data(), items, 0, 32 + bits_for(nblocks_),
                                                    stream_));
    temp = exclusion_temp_.size();
    MDSIM_CUDA_CHECK(cub::DeviceSelect::Unique(exclusion_temp_.data(), temp, exclusion_tile_keys_.data(),
                                               exclusion_keys_.data(), exclusion_tile_count_.data(), items, stream_));
    // The unique keys are in exclusion_keys_ now.
    exclusion_row_start_kernel<<<blocks_for(nblocks_ + 1, kThreads), kThreads, 0, stream_>>>(
        nblocks_, exclusion_keys_.data(), exclusion_tile_count_.data(), exclusion_row_start_.data());
    exclusion_tile_masks_kernel<<<std::max(1, std::min(opt_.num_sms * 8, (exclusion_capacity_ + 7) / 8)), 256, 0,
                                  stream_>>>(exclusion_keys_.data(), exclusion_tile_count_.data(), exclusion_capacity_,
                                             perm_.data(), exclusion_view(), exclusion_tile_masks_.data(),
                                             &status_.data()->exclusion_overflow);
  }

  // The column search (O(N)) for large periodic systems in a rectangular box, the all-pairs block scan
  // otherwise (cheaper for small systems: more warps share the work); a batch's replicas by their own size.
  bool column_search() const {
    return periodic_ && rectangular_ && replica_max_blocks_ >= opt_.column_search_min_blocks;
  }

  // Fields of the device status, for the kernels.
  int* rebuild_flag() { return &status_.data()->rebuild; }
  int* tile_count() { return &status_.data()->tile_count; }
  const int* tile_count() const { return &status_.data()->tile_count; }
  int* tile_overflow() { return &status_.data()->tile_overflow; }
  int* build_count() { return &status_.data()->builds; }
  int* column_excess() { return status_.data()->column_excess; }

  ExclusionView exclusion_view() const {
    return {excl_window_.data(), excl_start_.data(), excl_partner_.data(), excl_range_.data()};
  }
  ExclusionTiles exclusion_tiles() const {
    return {exclusion_keys_.data(), exclusion_tile_masks_.data(), exclusion_row_start_.data(), exclusion_capacity_};
  }
  TileListView list_view() {
    return {lists().tile_count, tile_overflow(), capacity_,          region_,
            block_replica_.data(), tile_row_.data(), tile_atoms_.data(), masks_.data()};
  }
  // A single system's are the status' own flag and count, replica 0's.
  ReplicaLists lists() {
    const bool batch = opt_.replicas > 1;
    return {opt_.replicas,
            n_replica_,
            batch ? replica_rebuild_.data() : rebuild_flag(),
            batch ? replica_tile_count_.data() : tile_count(),
            region_,
            block_replica_.data(),
            batch ? tile_start_.data() : nullptr};
  }

  int n_ = 0, n_replica_ = 0, npad_ = 0, nblocks_ = 0;
  int replica_max_blocks_ = 0;  // the most blocks one replica of a batch can take (all blocks without a batch)
  int ncx_ = 1, ncy_ = 1;     // sort columns (periodic systems)
  int sub_columns_ = 1;       // 2 with pair classes: each column's charged atoms, then its uncharged ones
  int class_group_ = 1;       // the uncharged atoms' columns span this many columns per axis
  bool periodic_ = false;
  bool rectangular_ = false;  // periodic box with orthogonal vectors (the column search's geometry)
  NeighborListOptions opt_;
  cudaStream_t stream_;
  bool need_sort_ = true, force_rebuild_ = true;
  int evaluations_since_sort_ = 0;
  double3 region_extent_{1, 1, 1};  // bounding box of the positions given last (tile-capacity estimate)

  // Per-particle data (System order) and the sorted copies.
  DeviceBuffer<real> charge_, sorted_charge_;
  DeviceBuffer<real2> params_, sorted_params_;
  DeviceBuffer<real4> posq_, sorted_posq_, sorted_at_build_, block_center_, block_half_;
  DeviceBuffer<int> perm_;                          // sorted slot -> atom (-1: padding)
  DeviceBuffer<unsigned char> atom_class_, block_class_;  // pair classes, System order / per block (class sort only)
  DeviceBuffer<NeighborListStatus> status_;         // one
  // The sort.
  DeviceBuffer<unsigned long long> sort_keys_in_, sort_keys_out_;
  DeviceBuffer<int> sort_values_in_, sort_values_out_;
  DeviceBuffer<int> column_raw_start_, column_padded_start_, blocks_used_;  // [ncolumns + 1], [.. + 1], [1]
  DeviceBuffer<int> column_block_start_, block_column_;  // blocks of each column; column of each block
  DeviceBuffer<unsigned char> sort_temp_;
  // Exclusion data (System order).
  DeviceBuffer<unsigned long long> excl_window_;
  DeviceBuffer<int> excl_start_, excl_partner_;
  DeviceBuffer<int2> excl_range_;
  // Exclusion tiles of the current sort (see neighbor_list.cuh).
  int num_excluded_pairs_ = 0, exclusion_capacity_ = 0;
  DeviceBuffer<int2> excluded_pairs_;  // each excluded pair once, a < b (original indices)
  DeviceBuffer<int> slot_of_;          // sorted slot of each atom
  DeviceBuffer<unsigned long long> exclusion_keys_, exclusion_tile_keys_;
  DeviceBuffer<unsigned int> exclusion_tile_masks_;
  DeviceBuffer<int> exclusion_tile_count_, exclusion_row_start_;
  DeviceBuffer<unsigned char> exclusion_temp_;
  // A batch's per-replica lists (ReplicaLists); the replica of each block, also without a batch (all 0).
  DeviceBuffer<int> replica_rebuild_, replica_tile_count_, tile_start_, block_replica_;
  // The tile list.
  int capacity_ = 0, region_ = 0;
  DeviceBuffer<int> tile_row_, tile_atoms_;
  DeviceBuffer<unsigned int> masks_;
};

}  // namespace mdsim::cuda
