#include "engine/evaluator.hpp"

#include <fmt/format.h>

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
                                               const PlatformConfig& settings) {
  if (platform.kind == PlatformKind::Cpu) return std::make_unique<CpuEvaluator>(system);
  return std::make_unique<CudaEvaluator>(system, cuda_options(settings, platform.device));
}

std::optional<PmeParameters> pme_parameters(const System& system) {
  if (system.nonbonded.method != NonbondedMethod::PME || !system.box) return std::nullopt;
  return choose_pme_parameters(*system.box, system.nonbonded);
}

}  // namespace mdsim
