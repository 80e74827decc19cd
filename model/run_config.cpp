#include "model/run_config.hpp"

namespace mdsim {

const char* to_string(NonbondedMethod m) {
  switch (m) {
    case NonbondedMethod::NoCutoff: return "no_cutoff";
    case NonbondedMethod::CutoffNonPeriodic: return "cutoff_nonperiodic";
    case NonbondedMethod::CutoffPeriodic: return "cutoff_periodic";
    case NonbondedMethod::PME: return "pme";
  }
  return "?";
}

const char* to_string(PmeGridSizes g) { return g == PmeGridSizes::FftFriendly ? "fft_friendly" : "exact"; }

const char* to_string(ConstraintMode m) {
  switch (m) {
    case ConstraintMode::None: return "none";
    case ConstraintMode::HBonds: return "hbonds";
    case ConstraintMode::AllBonds: return "allbonds";
    case ConstraintMode::HAngles: return "hangles";
  }
  return "?";
}

const char* to_string(IntegratorType t) {
  return t == IntegratorType::Verlet ? "verlet" : "langevin_middle";
}

const char* to_string(Precision p) { return p == Precision::Double ? "double" : "mixed"; }

const char* to_string(InitialVelocities v) {
  switch (v) {
    case InitialVelocities::Temperature: return "temperature";
    case InitialVelocities::Zero: return "zero";
    case InitialVelocities::FromCheckpoint: return "from_checkpoint";
  }
  return "?";
}

}  // namespace mdsim
