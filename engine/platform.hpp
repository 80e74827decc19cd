// The platforms as the engine offers them: which one runs (the CUDA platform when the CUDA runtime finds a
// usable device; otherwise, with no driver, no device or an incompatible driver, the CPU reference platform)
// and the platform's dynamics context. Only the engine includes the platforms' own headers: everything above
// it (the command line, prepare, Python) reaches a platform through these functions and engine/evaluator.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "model/run_config.hpp"
#include "model/system.hpp"
#include "platform/context.hpp"
#include "platform/devices.hpp"

namespace mdsim {

enum class PlatformKind { Cpu, Cuda };

struct PlatformChoice {
  PlatformKind kind = PlatformKind::Cpu;
  int device = 0;
  std::string notice;  // one line for the user when the choice differs from the request ("auto" fell back)
};

// requested: "auto" | "cpu" | "cuda". Throws mdsim::InputError for "cuda" without a usable device
// or a device index out of range.
PlatformChoice choose_platform(const std::string& requested, int device_index);

const char* to_string(PlatformKind kind);

// The CUDA devices of this machine (`mdsim platforms`); never throws: no driver gives none and a reason.
CudaProbe probe_devices();

// A dynamics context on the chosen platform: the CPU reference, or the CUDA context (whole step on the GPU)
// on `platform.device` with the config's platform settings (precision, neighbour buffer).
std::unique_ptr<Context> make_context(const System& system, const DynamicsSettings& settings,
                                      const PlatformChoice& platform, const PlatformConfig& platform_settings);

// K = settings.size() replicas of `system` stepped together in one batch on the CUDA platform (CudaOptions::replicas;
// kernels/cuda/cuda_context.hpp's make_cuda_replica_batch says what they share and guarantee): one Context per
// replica. InputError on the CPU platform.
std::vector<std::unique_ptr<Context>> make_replica_batch(const System& system,
                                                         const std::vector<DynamicsSettings>& settings,
                                                         const PlatformChoice& platform,
                                                         const PlatformConfig& platform_settings);

// A force from outside on every replica of a batch at once (ExternalForce::add_batch), through any replica's Context of
// make_replica_batch; remove_batch_force takes it out. RuntimeError for a Context that is not a replica of a batch.
void add_batch_force(Context& replica, std::shared_ptr<ExternalForce> force);
void remove_batch_force(Context& replica, const ExternalForce* force);

// "cpu (double precision)", "cuda (mixed precision)", "cuda (double precision)".
std::string platform_description(const PlatformChoice& platform, const PlatformConfig& platform_settings);

// Host <-> device copies the CUDA platform has made in this process so far (every DeviceBuffer upload and
// download, every frame copy): what proves that steps copy nothing.
std::size_t cuda_host_device_copies();

}  // namespace mdsim
