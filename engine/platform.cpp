#include "engine/platform.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/cuda_options.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/device_query.hpp"

namespace mdsim {

std::size_t cuda_host_device_copies() { return cuda::transfer_count(); }

const char* to_string(PlatformKind kind) { return kind == PlatformKind::Cuda ? "cuda" : "cpu"; }

CudaProbe probe_devices() { return probe_cuda(); }

CudaOptions cuda_options(const PlatformConfig& settings, int device) {
  CudaOptions options;
  options.device = device;
  options.double_precision = settings.precision == Precision::Double;
  options.neighbor_buffer_nm = settings.neighbor_buffer_nm;
  return options;
}

std::unique_ptr<Context> make_context(const System& system, const DynamicsSettings& settings,
                                      const PlatformChoice& platform, const PlatformConfig& platform_settings) {
  if (platform.kind == PlatformKind::Cuda)
    return make_cuda_context(system, settings, cuda_options(platform_settings, platform.device));
  return make_cpu_context(system, settings);
}

std::vector<std::unique_ptr<Context>> make_replica_batch(const System& system,
                                                         const std::vector<DynamicsSettings>& settings,
                                                         const PlatformChoice& platform,
                                                         const PlatformConfig& platform_settings) {
  if (platform.kind != PlatformKind::Cuda)
    throw InputError("a replica batch runs on the CUDA platform (the CPU platform runs replicas one by one)");
  return make_cuda_replica_batch(system, settings, cuda_options(platform_settings, platform.device));
}

void add_batch_force(Context& replica, std::shared_ptr<ExternalForce> force) {
  add_replica_batch_force(replica, std::move(force));
}
void remove_batch_force(Context& replica, const ExternalForce* force) { remove_replica_batch_force(replica, force); }

std::string platform_description(const PlatformChoice& platform, const PlatformConfig& platform_settings) {
  if (platform.kind == PlatformKind::Cpu) return "cpu (double precision)";
  return platform_settings.precision == Precision::Double ? "cuda (double precision)" : "cuda (mixed precision)";
}

PlatformChoice choose_platform(const std::string& requested, int device_index) {
  PlatformChoice choice;
  choice.device = device_index;
  if (requested == "cpu") return choice;
  const CudaProbe probe = probe_cuda();
  const bool have = !probe.devices.empty();
  if (requested == "cuda") {
    if (!have) throw InputError(fmt::format("platform 'cuda' requested but no usable CUDA device ({}); use platform: auto to "
                                   "run on the CPU platform when there is none (mdsim platforms lists the devices)",
                                   probe.reason));
    if (device_index < 0 || device_index >= static_cast<int>(probe.devices.size()))
      throw InputError(fmt::format("platform device {} requested but only {} CUDA device(s) present (indices from 0; "
                                   "mdsim platforms lists them)",
                                   device_index, probe.devices.size()));
    choice.kind = PlatformKind::Cuda;
    return choice;
  }
  // auto
  if (have && device_index >= 0 && device_index < static_cast<int>(probe.devices.size())) {
    choice.kind = PlatformKind::Cuda;
  } else {
    choice.notice = have ? fmt::format("notice: CUDA device {} not present; using the CPU platform", device_index)
                         : fmt::format("notice: no usable CUDA device ({}); using the CPU platform", probe.reason);
  }
  return choice;
}

}  // namespace mdsim
