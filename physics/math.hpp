// Overloaded elementary functions for float and double that resolve to the right precision on the
// host and in CUDA device code alike (::expf, ::erfcf, ... exist in both worlds). The physics
// functions call these instead of std:: names, which CUDA device code cannot always use.
#pragma once

#include <cmath>

#include "physics/vec3.hpp"

namespace mdsim {
namespace pmath {

MDSIM_HD double sqrt_(double x) { return ::sqrt(x); }
MDSIM_HD float sqrt_(float x) { return ::sqrtf(x); }
MDSIM_HD double exp_(double x) { return ::exp(x); }
MDSIM_HD float exp_(float x) { return ::expf(x); }
MDSIM_HD double erf_(double x) { return ::erf(x); }
MDSIM_HD float erf_(float x) { return ::erff(x); }
MDSIM_HD double erfc_(double x) { return ::erfc(x); }
MDSIM_HD float erfc_(float x) { return ::erfcf(x); }
MDSIM_HD double cos_(double x) { return ::cos(x); }
MDSIM_HD float cos_(float x) { return ::cosf(x); }
MDSIM_HD double sin_(double x) { return ::sin(x); }
MDSIM_HD float sin_(float x) { return ::sinf(x); }
MDSIM_HD double atan2_(double y, double x) { return ::atan2(y, x); }
MDSIM_HD float atan2_(float y, float x) { return ::atan2f(y, x); }
MDSIM_HD double log_(double x) { return ::log(x); }
MDSIM_HD float log_(float x) { return ::logf(x); }
MDSIM_HD double fabs_(double x) { return ::fabs(x); }
MDSIM_HD float fabs_(float x) { return ::fabsf(x); }
MDSIM_HD double floor_(double x) { return ::floor(x); }
MDSIM_HD float floor_(float x) { return ::floorf(x); }

// Abramowitz & Stegun 7.1.26, erfc(x) = t q(t) exp(-x^2) with t = 1 / (1 + p x) (absolute error below
// 1.5e-7): the float form below, as GPU MD codes use in single precision. erfc_t_q_ is t q(t).
constexpr double kErfcP = 0.3275911;
MDSIM_HD float erfc_t_q_(float t) {
  return (0.254829592f + (-0.284496736f + (1.421413741f + (-1.453152027f + 1.061405429f * t) * t) * t) * t) * t;
}

// 1/sqrt(pi) and 2/sqrt(pi), exact to double precision.
constexpr double kInvSqrtPi = 0.56418958354775628695;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kPi = 3.14159265358979323846;

// erfc(a r) and the Ewald force's bracket erfc(a r) + (2/sqrt(pi)) a r exp(-a^2 r^2) at a fixed a (1/nm),
// as the pair step needs them. The multiples of a that the float form uses are precomputed once
// (scaled_erfc, in double and rounded once), so that each pair spends one multiply on each.
template <typename T>
struct ScaledErfc {
  T a;            // 1/nm
  T t_scale;      // p a, A&S 7.1.26's t = 1 / (1 + p a r) (1/nm)
  T force_scale;  // (2/sqrt(pi)) a (1/nm)
  T exp2_scale;   // -a^2 log2(e): exp(-a^2 r^2) = 2^(exp2_scale r^2) (1/nm^2)
};

constexpr double kLog2E = 1.44269504088896340736;  // log2(e)

template <typename T>
MDSIM_HD ScaledErfc<T> scaled_erfc(double a) {
  return {T(a), T(kErfcP * a), T(kTwoOverSqrtPi * a), T(-a * a * kLog2E)};
}

// Given r and r^2 (nm, nm^2). Double: the library functions. Float: A&S 7.1.26, the bracket as
// exp(-x^2) (t q(t) + (2/sqrt(pi)) x) with erfc = exp(-x^2) t q(t): the pair step's force needs only the
// bracket, so its erfc is dead code there. On the GPU the exponential and the reciprocal are the
// hardware approximations (exp2f: a few ulp for the arguments here; __fdividef: 2 ulp), far inside the
// approximation's own error and a quarter of the instructions of the IEEE-exact library forms.
MDSIM_HD void erfc_and_bracket_(double r, double r2, const ScaledErfc<double>& s, double& erfc_ar, double& bracket) {
  const double x = s.a * r;
  erfc_ar = ::erfc(x);
  bracket = erfc_ar + s.force_scale * r * ::exp(-s.a * s.a * r2);
}
MDSIM_HD void erfc_and_bracket_(float r, float r2, const ScaledErfc<float>& s, float& erfc_ar, float& bracket) {
#ifdef __CUDA_ARCH__
  const float gauss = exp2f(s.exp2_scale * r2);
  const float t = __fdividef(1.0f, 1.0f + s.t_scale * r);
#else
  const float gauss = ::exp2f(s.exp2_scale * r2);
  const float t = 1.0f / (1.0f + s.t_scale * r);
#endif
  const float tq = erfc_t_q_(t);
  erfc_ar = gauss * tq;
  bracket = gauss * (tq + s.force_scale * r);
}

}  // namespace pmath
}  // namespace mdsim
