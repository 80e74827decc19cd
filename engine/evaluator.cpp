#include "engine/evaluator.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/cuda_options.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_forces.hpp"

namespace mdsim {

namespace {

class CpuEvaluator final : public ForceEvaluator {
 public:
  explicit CpuEvaluator(const System& system) : eval_(system) {}
  EnergyTerms compute(const std::vector<Vec3d>& x, std::vector<Vec3d>* forces) override { return eval_.compute(x, forces); }
  std::string description() const override { return "cpu (double precision)"; }

 private:
  CpuForceEvaluator eval_;
};

class CudaEvaluator final : public ForceEvaluator {
 public:
  CudaEvaluator(const System& system, const CudaOptions& options)
      : eval_(system, options), precision_(options.double_precision ? "double" : "mixed"), device_(options.device) {}
  EnergyTerms compute(const std::vector<Vec3d>& x, std::vector<Vec3d>* forces) override { return eval_.compute(x, forces); }
  std::string description() const override {
    return fmt::format("cuda:{} {} ({} precision)", device_, eval_.device_name(), precision_);
  }
  std::optional<ForceBenchTimings> time_parts(const std::vector<Vec3d>& x, int repetitions) override {
    eval_.set_positions(x);
    ForceBenchTimings out;
    out.parts = eval_.benchmark(repetitions);
    out.device_name = eval_.device_name();
    out.device_memory_bytes = eval_.device_memory_bytes();
    out.tiles = eval_.num_tiles();
    return out;
  }

 private:
  CudaForceEvaluator eval_;
  std::string precision_;
  int device_;
};

}  // namespace

std::unique_ptr<ForceEvaluator> make_evaluator(const System& system, const PlatformChoice& platform,
                                               const PlatformConfig& settings, int replicas) {
  if (replicas < 1) throw InputError(fmt::format("a replica batch needs at least one replica (got {})", replicas));
  if (platform.kind == PlatformKind::Cpu) {
    if (replicas > 1)
      throw InputError("a replica batch runs on the CUDA platform only (the CPU platform runs replicas in turn)");
    return std::make_unique<CpuEvaluator>(system);
  }
  CudaOptions options = cuda_options(settings, platform.device);
  options.replicas = replicas;
  return std::make_unique<CudaEvaluator>(system, options);
}

std::optional<PmeParameters> pme_parameters(const System& system) {
  if (system.nonbonded.method != NonbondedMethod::PME || !system.box) return std::nullopt;
  return choose_pme_parameters(*system.box, system.nonbonded);
}

std::vector<std::pair<std::string, std::vector<Vec3d>>> term_forces(const System& system,
                                                                    const std::vector<Vec3d>& positions_nm,
                                                                    const Boxd* box) {
  CpuForceEvaluator evaluator(system);
  if (box && system.box) evaluator.set_box(*box);
  const std::pair<const char*, unsigned> terms[] = {
      {"bond", system.bonds.empty() ? 0u : kTermBond},
      {"angle", system.angles.empty() ? 0u : kTermAngle},
      {"urey_bradley", system.urey_bradleys.empty() ? 0u : kTermUreyBradley},
      {"torsion", system.torsions.empty() ? 0u : kTermTorsion},
      {"rb_torsion", system.rb_torsions.empty() ? 0u : kTermRbTorsion},
      {"improper", system.impropers.empty() ? 0u : kTermImproper},
      {"cmap", system.cmap_torsions.empty() ? 0u : kTermCmap},
      {"nonbonded_direct", kTermNonbondedDirect},
      {"nonbonded_reciprocal", evaluator.uses_pme() ? kTermNonbondedReciprocal : 0u}};
  std::vector<std::pair<std::string, std::vector<Vec3d>>> out;
  for (const auto& [name, bit] : terms) {
    if (bit == 0) continue;
    std::vector<Vec3d> f;
    evaluator.compute(positions_nm, &f, bit);
    out.emplace_back(name, std::move(f));
  }
  return out;
}

}  // namespace mdsim
