// Bonded kernel (included by cuda_forces.cu only): every bonded term type of System (BondedTermTypes:
// harmonic bonds, harmonic angles, periodic torsions, RB torsions, harmonic impropers, CMAP, Urey-Bradley) in one
// launch, each thread one term, through physics/bonded.hpp — the functions the CPU reference platform
// calls. Displacements are not imaged (OpenMM's default for these forces). The terms' shared data
// (BondedTables: CMAP's patch table, a device copy of model/cmap's make_cmap_table) is a kernel argument.
#pragma once

#include <cstddef>
#include <utility>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/replica_energy.cuh"
#include "physics/bonded.hpp"
#include "model/system.hpp"

namespace mdsim::cuda {

// A bonded term of type Term (a System term type, e.g. HarmonicBondTerm) as the device reads it: its
// atoms and its parameters in `real`. Aligned as int2 / int4 would be for two or a multiple of four atoms,
// so the atom indices load as vectors.
template <class Term, typename real>
struct alignas(Term::kAtoms == 2 ? 8 : Term::kAtoms % 4 == 0 ? 16 : alignof(real)) DeviceBondedTerm {
  int atoms[Term::kAtoms];
  decltype(std::declval<const Term&>().template params<real>()) params;
};

template <typename real, class Term>
DeviceBondedTerm<Term, real> device_term(const Term& term) {
  DeviceBondedTerm<Term, real> d{};
  const auto atoms = term.atoms();
  for (int k = 0; k < Term::kAtoms; ++k) d.atoms[k] = atoms[static_cast<std::size_t>(k)];
  d.params = term.template params<real>();
  return d;
}

// One term type's device list, as the bonded kernel takes it.
template <class Term, typename real>
struct BondedList {
  const DeviceBondedTerm<Term, real>* __restrict__ terms;
  int count;
};

// x_b - x_a formed in double and rounded once to real (see exception_force in nonbonded_kernels.cuh).
template <typename real>
__device__ __forceinline__ Vec3<real> delta(const double4_16a& pa, const double4_16a& pb) {
  return Vec3<real>(real(pb.x - pa.x), real(pb.y - pa.y), real(pb.z - pa.z));
}
template <typename real>
__device__ __forceinline__ Vec3<real> delta(const double4_16a* __restrict__ pos, int a, int b) {
  return delta<real>(pos[a], pos[b]);
}

template <typename real>
__device__ __forceinline__ void add_force(unsigned long long* force, int stride, int atom, const Vec3<real>& f) {
  atomic_add_fixed(&force[atom], f.x);
  atomic_add_fixed(&force[stride + atom], f.y);
  atomic_add_fixed(&force[2 * stride + atom], f.z);
}

// Thread t takes term t of the lists in order (Term 0's, then Term 1's, ...); false and t reduced by
// this list's count when t lies beyond it.
template <typename real, class Term>
__device__ __forceinline__ bool bonded_term(const BondedList<Term, real>& list, int& t, const double4_16a* __restrict__ pos,
                                            int stride, unsigned long long* __restrict__ force, double* e,
                                            const BondedTables<real>& tables, int& first_atom) {
  if (t >= list.count) {
    t -= list.count;
    return false;
  }
  const DeviceBondedTerm<Term, real> q = list.terms[t];
  const auto r = evaluate_bonded(q.params, [&](int a, int b) { return delta<real>(pos, q.atoms[a], q.atoms[b]); }, tables);
  for (int k = 0; k < Term::kAtoms; ++k) add_force(force, stride, q.atoms[k], r.force[k]);
  e[static_cast<int>(Term::kEnergy)] = r.energy;
  first_atom = q.atoms[0];
  return true;
}

// Every bonded term in one launch, one thread per term, through evaluate_bonded
// (physics/bonded.hpp) — the functions the CPU platform calls. energy[g] receives the energy of
// BondedEnergy g (of the term's replica in a batch: replica_energy.cuh).
template <typename real, bool ENERGY, class... Terms>
__global__ void bonded_kernel(const double4_16a* __restrict__ pos, int stride, unsigned long long* __restrict__ force,
                              unsigned long long* __restrict__ energy, ReplicaEnergies replicas,
                              BondedTables<real> tables, BondedList<Terms, real>... lists) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  double e[kNumBondedEnergies] = {};
  int first_atom = -1;
  (bonded_term<real>(lists, t, pos, stride, force, e, tables, first_atom) || ...);
  if (ENERGY) {
    // Whole warps reach here (no early return above), so the shuffles are safe.
    const int replica = first_atom >= 0 ? replicas.replica_of(first_atom) : -1;
    for (int slot = 0; slot < kNumBondedEnergies; ++slot)
      add_energy_by_replica(&energy[slot], replicas.stride, replica, e[slot]);
  }
}

}  // namespace mdsim::cuda
