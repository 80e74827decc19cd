#include "engine/evaluator.hpp"

#include <fmt/format.h>

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

 private:
  CudaForceEvaluator eval_;
  std::string precision_;
  int device_;
};

}  // namespace

CudaOptions cuda_options(const PlatformConfig& settings, int device) {
  CudaOptions options;
  options.device = device;
  options.double_precision = settings.precision == Precision::Double;
  options.neighbor_buffer_nm = settings.neighbor_buffer_nm;
  return options;
}

std::unique_ptr<ForceEvaluator> make_evaluator(const System& system, const PlatformChoice& platform,
                                               const PlatformConfig& settings) {
  if (platform.kind == PlatformKind::Cpu) return std::make_unique<CpuEvaluator>(system);
  return std::make_unique<CudaEvaluator>(system, cuda_options(settings, platform.device));
}

}  // namespace mdsim
