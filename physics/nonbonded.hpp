// Nonbonded pair interactions, written once for host and device (MDSIM_HD), templated on the real
// type T. Pure math on one pair: the caller finds the pair, its minimum-image displacement d and
// r = |d|, and applies the result. Every function returns the energy (kJ/mol) and f_over_r =
// -(dE/dr)/r (kJ/mol/nm^2), so that with d = x_j - x_i the force on j is f_over_r * d and the force
// on i is -f_over_r * d. Conventions are OpenMM's NonbondedForce.
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// Coulomb's constant N_A e^2 / (4 pi eps0) in kJ mol^-1 nm e^-2, exactly as OpenMM 7.7 defines
// ONE_4PI_EPS0 (from the 2019 SI constants; measured: two unit charges 1 nm apart under OpenMM 7.7
// give 138.93545764438198 kJ/mol). The rounded 138.935456 found in older OpenMM releases and in
// DESIGN.md differs by 1.2e-8 relative, which would show up in comparisons with the references.
constexpr double kOneFourPiEps0 = 138.93545764438198;

template <typename T>
struct PairResult {
  T energy;
  T f_over_r;  // -(dE/dr)/r
  MDSIM_HD PairResult& operator+=(const PairResult& o) {
    energy += o.energy;
    f_over_r += o.f_over_r;
    return *this;
  }
};

// Lorentz-Berthelot combination: sigma = (sigma_i + sigma_j)/2, epsilon = sqrt(eps_i eps_j).
template <typename T>
MDSIM_HD T combine_sigma(T sigma_i_nm, T sigma_j_nm) { return T(0.5) * (sigma_i_nm + sigma_j_nm); }
template <typename T>
MDSIM_HD T combine_epsilon(T eps_i, T eps_j) { return pmath::sqrt_(eps_i * eps_j); }

// One term of a pair's energy in the form the pair step sums: E and w = -r dE/dr, so that the pair's
// -(dE/dr)/r is one multiply of the terms' summed w by 1/r^2 (as_pair_result). Each formula below is
// written once, as such a term; the PairResult functions are the same terms on their own.
template <typename T>
struct PairTerm {
  T energy;
  T w;  // -r dE/dr (kJ/mol)
  MDSIM_HD PairTerm& operator+=(const PairTerm& o) {
    energy += o.energy;
    w += o.w;
    return *this;
  }
};
template <typename T>
MDSIM_HD PairResult<T> as_pair_result(const PairTerm<T>& t, T inv_r2) {
  return {t.energy, t.w * inv_r2};
}

// Lennard-Jones 4 eps ((sigma/r)^12 - (sigma/r)^6), given 1/r^2 and 4 eps.
template <typename T>
MDSIM_HD PairTerm<T> lennard_jones_term(T inv_r2, T sigma_nm, T four_epsilon) {
  const T s2 = sigma_nm * sigma_nm * inv_r2;
  const T s6 = s2 * s2 * s2;
  const T a = four_epsilon * s6;
  return {a * (s6 - T(1)), a * (T(12) * s6 - T(6))};
}
template <typename T>
MDSIM_HD PairResult<T> lennard_jones(T inv_r2, T sigma_nm, T epsilon_kj_per_mol) {
  return as_pair_result(lennard_jones_term(inv_r2, sigma_nm, T(4) * epsilon_kj_per_mol), inv_r2);
}

// Pair-specific Lennard-Jones c12/r^12 - c6/r^6 (a LjTypeTable entry: NBFIX, AMBER's A/B tables), given 1/r^2,
// c12 (kJ/mol nm^12) and c6 (kJ/mol nm^6).
template <typename T>
MDSIM_HD PairTerm<T> lennard_jones_c12_c6_term(T inv_r2, T c12, T c6) {
  const T inv_r6 = inv_r2 * inv_r2 * inv_r2;
  const T a = c12 * inv_r6;  // c12/r^12 = a/r^6
  return {(a - c6) * inv_r6, (T(12) * a - T(6) * c6) * inv_r6};
}
template <typename T>
MDSIM_HD PairResult<T> lennard_jones_c12_c6(T inv_r2, T c12_kj_per_mol_nm12, T c6_kj_per_mol_nm6) {
  return as_pair_result(lennard_jones_c12_c6_term(inv_r2, c12_kj_per_mol_nm12, c6_kj_per_mol_nm6), inv_r2);
}

// A pair's Lennard-Jones parameters in the two forms the pair step takes: by the combining rule (combined sigma
// and 4 epsilon) or from a type table (c12, c6). Each gives its term and whether it is zero (SKIP_ZERO).
template <typename T>
struct LjSigmaEpsilon {
  T sigma_nm;
  T four_epsilon;  // kJ/mol
  MDSIM_HD bool is_zero() const { return four_epsilon == T(0); }
  MDSIM_HD PairTerm<T> term(T inv_r2) const { return lennard_jones_term(inv_r2, sigma_nm, four_epsilon); }
};
template <typename T>
struct LjC12C6 {
  T c12;  // kJ/mol nm^12
  T c6;   // kJ/mol nm^6
  MDSIM_HD bool is_zero() const { return c12 == T(0) && c6 == T(0); }
  MDSIM_HD PairTerm<T> term(T inv_r2) const { return lennard_jones_c12_c6_term(inv_r2, c12, c6); }
};

// OpenMM's switching function, applied to the LJ term when use_switching_function is on:
// S(r) = 1 - 10 t^3 + 15 t^4 - 6 t^5, t = (r - r_switch)/(r_cut - r_switch), S = 1 below r_switch.
template <typename T>
struct SwitchValue {
  T s;      // S(r)
  T ds_dr;  // dS/dr (1/nm)
};

template <typename T>
MDSIM_HD SwitchValue<T> switching_function(T r, T r_switch_nm, T r_cut_nm) {
  SwitchValue<T> out{T(1), T(0)};
  if (r > r_switch_nm) {
    const T width = r_cut_nm - r_switch_nm;
    T t = (r - r_switch_nm) / width;
    if (t > T(1)) t = T(1);
    out.s = T(1) + t * t * t * (T(-10) + t * (T(15) - t * T(6)));
    out.ds_dr = t * t * (T(-30) + t * (T(60) - t * T(30))) / width;
  }
  return out;
}

// Multiplies a term by a switching function value: E' = E S, dE'/dr = dE/dr S + E dS/dr.
template <typename T>
MDSIM_HD PairTerm<T> switched_term(const PairTerm<T>& t, const SwitchValue<T>& sw, T r) {
  return {t.energy * sw.s, t.w * sw.s - t.energy * sw.ds_dr * r};
}
template <typename T>
MDSIM_HD PairResult<T> apply_switch(const PairResult<T>& e, const SwitchValue<T>& sw, T r) {
  const T r2 = r * r;
  return as_pair_result(switched_term(PairTerm<T>{e.energy, e.f_over_r * r2}, sw, r), T(1) / r2);
}

// Coulomb's constant times the charge product (kJ/mol nm): K qq, or qq itself when the caller has folded K
// into one of the charges already (K_FOLDED: the CUDA tile kernel scales its i-atom's charge once per tile,
// which saves the multiply in every pair).
template <typename T, bool K_FOLDED = false>
MDSIM_HD T coulomb_kqq(T charge_product_e2) {
  return K_FOLDED ? charge_product_e2 : T(kOneFourPiEps0) * charge_product_e2;
}

// Plain Coulomb K qq / r (NoCutoff pairs and exceptions), given K qq.
template <typename T>
MDSIM_HD PairTerm<T> coulomb_plain_term(T kqq, T inv_r) {
  const T kqq_over_r = kqq * inv_r;  // w = E for 1/r
  return {kqq_over_r, kqq_over_r};
}
template <typename T, bool K_FOLDED = false>
MDSIM_HD PairResult<T> coulomb_plain(T charge_product_e2, T inv_r) {
  return as_pair_result(coulomb_plain_term(coulomb_kqq<T, K_FOLDED>(charge_product_e2), inv_r), inv_r * inv_r);
}

// Reaction-field constants for the cutoff methods (OpenMM): k_rf = (eps-1)/((2 eps+1) rc^3),
// c_rf = 3 eps/((2 eps+1) rc), with eps the reaction-field dielectric (78.3 by default).
template <typename T>
struct ReactionField {
  T k_rf;  // 1/nm^3
  T c_rf;  // 1/nm
};

template <typename T>
MDSIM_HD ReactionField<T> reaction_field_constants(T cutoff_nm, T dielectric) {
  ReactionField<T> rf;
  rf.k_rf = (dielectric - T(1)) / ((T(2) * dielectric + T(1)) * cutoff_nm * cutoff_nm * cutoff_nm);
  rf.c_rf = T(3) * dielectric / ((T(2) * dielectric + T(1)) * cutoff_nm);
  return rf;
}

// Reaction-field Coulomb K qq (1/r + k_rf r^2 - c_rf), for r below the cutoff, given K qq, r^2 and 1/r.
template <typename T>
MDSIM_HD PairTerm<T> coulomb_reaction_field_term(T kqq, T r2, T inv_r, const ReactionField<T>& rf) {
  return {kqq * (inv_r + rf.k_rf * r2 - rf.c_rf), kqq * (inv_r - T(2) * rf.k_rf * r2)};
}
template <typename T, bool K_FOLDED = false>
MDSIM_HD PairResult<T> coulomb_reaction_field(T charge_product_e2, T r, T inv_r,
                                              const ReactionField<T>& rf) {
  return as_pair_result(coulomb_reaction_field_term(coulomb_kqq<T, K_FOLDED>(charge_product_e2), r * r, inv_r, rf),
                        inv_r * inv_r);
}

// Ewald real-space Coulomb K qq erfc(alpha r)/r, given K qq, r, r^2, 1/r and alpha's multiples.
template <typename T>
MDSIM_HD PairTerm<T> coulomb_ewald_term(T kqq, T r, T r2, T inv_r, const pmath::ScaledErfc<T>& ewald) {
  T erfc_ar, bracket;
  pmath::erfc_and_bracket_(r, r2, ewald, erfc_ar, bracket);
  const T kqq_over_r = kqq * inv_r;
  return {kqq_over_r * erfc_ar, kqq_over_r * bracket};
}
template <typename T, bool K_FOLDED = false>
MDSIM_HD PairResult<T> coulomb_ewald_direct(T charge_product_e2, T r, T inv_r, T alpha_per_nm) {
  return as_pair_result(coulomb_ewald_term(coulomb_kqq<T, K_FOLDED>(charge_product_e2), r, r * r, inv_r,
                                           pmath::scaled_erfc<T>(alpha_per_nm)),
                        inv_r * inv_r);
}

// Correction for an excluded (or exception) pair under Ewald/PME: removes the pair's share of the
// reciprocal-space sum, E = -K qq erf(alpha r)/r. Finite as r -> 0 (limit -K qq 2 alpha/sqrt(pi)),
// evaluated there by its Taylor series to avoid cancellation.
template <typename T>
MDSIM_HD PairResult<T> ewald_exclusion_correction(T charge_product_e2, T r, T alpha_per_nm) {
  const T x = alpha_per_nm * r;
  const T kqq = T(kOneFourPiEps0) * charge_product_e2;
  const T a3 = alpha_per_nm * alpha_per_nm * alpha_per_nm;
  PairResult<T> out;
  if (x < T(1.0e-2)) {
    const T x2 = x * x;
    // erf(x)/x and (erf(x) - 2x/sqrt(pi) exp(-x^2))/x^3 by their series.
    const T erf_over_x = T(pmath::kTwoOverSqrtPi) * (T(1) - x2 / T(3) + x2 * x2 / T(10));
    const T g = T(pmath::kTwoOverSqrtPi) * (T(2) / T(3) - T(2) * x2 / T(5) + x2 * x2 / T(7));
    out.energy = -kqq * alpha_per_nm * erf_over_x;
    out.f_over_r = -kqq * a3 * g;
  } else {
    const T inv_r = T(1) / r;
    const T erf_x = pmath::erf_(x);
    out.energy = -kqq * erf_x * inv_r;
    out.f_over_r = -kqq * (erf_x - T(pmath::kTwoOverSqrtPi) * x * pmath::exp_(-x * x)) * inv_r * inv_r * inv_r;
  }
  return out;
}

// Exception pair (scaled 1-4 interaction and the like): plain Coulomb with the exception's charge
// product plus LJ with the exception's sigma and epsilon; no cutoff, no switching.
template <typename T>
MDSIM_HD PairResult<T> exception_pair(T charge_product_e2, T sigma_nm, T epsilon_kj_per_mol, T r) {
  const T inv_r = T(1) / r;
  PairResult<T> out = coulomb_plain(charge_product_e2, inv_r);
  if (epsilon_kj_per_mol != T(0)) out += lennard_jones(inv_r * inv_r, sigma_nm, epsilon_kj_per_mol);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The pair step, written once: every platform's pair loop (the CPU cell list, the CUDA tile kernel)
// calls nonbonded_pair with the same per-particle encoding and the same Coulomb method.

// How the real-space Coulomb term of a non-excluded pair is computed (OpenMM's NonbondedForce):
// NoCutoff pairs are plain Coulomb, the cutoff methods use the reaction field, PME uses the
// Ewald-screened direct sum.
enum class CoulombMethod { Plain, ReactionField, Ewald };

// Per-particle Lennard-Jones parameters in the pair step's encoding: sigma_i/2 and 2 sqrt(eps_i), so
// that Lorentz-Berthelot's sigma_ij = sigma_i/2 + sigma_j/2 and 4 eps_ij = 2 sqrt(eps_i) 2 sqrt(eps_j)
// cost one add and one multiply (and equal combine_sigma / 4 combine_epsilon to the last bit: the
// factors of 2 are exact).
template <typename T>
struct LjParticle {
  T half_sigma_nm;
  T two_sqrt_epsilon;  // 2 sqrt(kJ/mol)
};

// A particle's parameters in that encoding, from sigma (nm) and epsilon (kJ/mol), computed in double
// and rounded once to T (host code: the platforms' set-up).
template <typename T>
inline LjParticle<T> lj_particle(double sigma_nm, double epsilon_kj_per_mol) {
  return {T(0.5 * sigma_nm), T(2.0 * pmath::sqrt_(epsilon_kj_per_mol))};
}

// Position-independent constants of the pair step (nm, 1/nm).
template <typename T>
struct PairConstants {
  T cutoff_nm;                 // the LJ switch ends here
  T switch_distance_nm;        // start of the LJ switch, when SWITCH
  pmath::ScaledErfc<T> ewald;  // Ewald splitting parameter ewald.a (1/nm) and its multiples, when Ewald
  ReactionField<T> rf;         // when ReactionField
};

// The pair step's constants in another precision: the Ewald multiples recomputed from alpha in double.
template <typename T>
inline PairConstants<T> pair_constants_as(const PairConstants<double>& k) {
  return {T(k.cutoff_nm), T(k.switch_distance_nm), pmath::scaled_erfc<T>(k.ewald.a), {T(k.rf.k_rf), T(k.rf.c_rf)}};
}

// Energy and -(dE/dr)/r of one non-excluded pair inside the cutoff, given r^2 (nm^2) and 1/r, the
// charge product qq (e^2), the combined sigma (nm) and 4 epsilon (kJ/mol): Coulomb by method C plus LJ,
// the LJ part multiplied by the switching function when SWITCH: the sum of the terms above (the GPU's
// pair kernel spends most of its instructions here).
// SKIP_ZERO leaves out a term whose charge product or epsilon is zero (it adds exactly zero then):
// worth it where a branch is cheap (the CPU loop: water hydrogens carry no LJ), not in a warp,
// where it would diverge. K_FOLDED: qq includes Coulomb's constant already (coulomb_kqq).
// LJ is either form above (LjSigmaEpsilon, LjC12C6: a type table's entry), switched alike.
template <typename T, CoulombMethod C, bool SWITCH, bool SKIP_ZERO, bool K_FOLDED = false, class LJ>
MDSIM_HD PairResult<T> nonbonded_pair_lj(T r2, T inv_r, T qq, const LJ& lj, const PairConstants<T>& k) {
  const T inv_r2 = inv_r * inv_r;
  PairTerm<T> t{T(0), T(0)};
  if (!SKIP_ZERO || !lj.is_zero()) {
    t = lj.term(inv_r2);
    if (SWITCH) {
      const T r = r2 * inv_r;
      t = switched_term(t, switching_function(r, k.switch_distance_nm, k.cutoff_nm), r);
    }
  }
  if (!SKIP_ZERO || qq != T(0)) {
    const T kqq = coulomb_kqq<T, K_FOLDED>(qq);
    if (C == CoulombMethod::Plain)
      t += coulomb_plain_term(kqq, inv_r);
    else if (C == CoulombMethod::ReactionField)
      t += coulomb_reaction_field_term(kqq, r2, inv_r, k.rf);
    else
      t += coulomb_ewald_term(kqq, r2 * inv_r, r2, inv_r, k.ewald);
  }
  return as_pair_result(t, inv_r2);
}
template <typename T, CoulombMethod C, bool SWITCH, bool SKIP_ZERO, bool K_FOLDED = false>
MDSIM_HD PairResult<T> nonbonded_pair(T r2, T inv_r, T qq, T sigma_nm, T four_epsilon, const PairConstants<T>& k) {
  return nonbonded_pair_lj<T, C, SWITCH, SKIP_ZERO, K_FOLDED>(r2, inv_r, qq, LjSigmaEpsilon<T>{sigma_nm, four_epsilon},
                                                              k);
}

// The same with the parameters of two particles in the pair step's encoding.
template <typename T, CoulombMethod C, bool SWITCH, bool SKIP_ZERO>
MDSIM_HD PairResult<T> nonbonded_pair(T r2, T inv_r, T q_i, T q_j, const LjParticle<T>& a, const LjParticle<T>& b,
                                      const PairConstants<T>& k) {
  return nonbonded_pair<T, C, SWITCH, SKIP_ZERO>(r2, inv_r, q_i * q_j, a.half_sigma_nm + b.half_sigma_nm,
                                                 a.two_sqrt_epsilon * b.two_sqrt_epsilon, k);
}

// An exception (System::exceptions entry) as both platforms evaluate it: its own scaled Coulomb + LJ
// (no cutoff, no periodic images, as OpenMM) and, under Ewald, the removal of the pair's share of the
// reciprocal sum (at the minimum-image distance, with the product of the atoms' own charges).
template <typename T>
struct ExceptionParams {
  T charge_product_e2;  // the exception's own (scaled) value
  T sigma_nm;
  T epsilon_kj_per_mol;
  T atoms_charge_product_e2;  // q_i q_j, for the Ewald exclusion correction
};

// Whether the exception's own interaction is nonzero.
template <typename T>
MDSIM_HD bool exception_interacts(const ExceptionParams<T>& e) {
  return e.charge_product_e2 != T(0) || e.epsilon_kj_per_mol != T(0);
}

// The exception's own interaction at distance r (zero when it does not interact).
template <typename T>
MDSIM_HD PairResult<T> exception_interaction(const ExceptionParams<T>& e, T r) {
  if (!exception_interacts(e)) return {T(0), T(0)};
  return exception_pair(e.charge_product_e2, e.sigma_nm, e.epsilon_kj_per_mol, r);
}

// Under Ewald: the exclusion correction at minimum-image distance r (zero without charges).
template <typename T>
MDSIM_HD PairResult<T> exception_ewald_correction(const ExceptionParams<T>& e, T r, T alpha_per_nm) {
  if (e.atoms_charge_product_e2 == T(0)) return {T(0), T(0)};
  return ewald_exclusion_correction(e.atoms_charge_product_e2, r, alpha_per_nm);
}

// Ewald self energy of one charge, -K q^2 alpha/sqrt(pi).
template <typename T>
MDSIM_HD T ewald_self_energy(T charge_e, T alpha_per_nm) {
  return -T(kOneFourPiEps0) * charge_e * charge_e * alpha_per_nm * T(pmath::kInvSqrtPi);
}

}  // namespace mdsim
