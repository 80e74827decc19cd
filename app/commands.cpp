#include "app/commands.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "engine/errors.hpp"
#include "engine/platform.hpp"
#include "engine/run_config.hpp"
#include "io/config.hpp"

namespace mdsim {

namespace {

// Exit code 2 with a clear statement, for commands whose physics has not landed yet.
int not_implemented(const char* what, const char* issue) {
  std::fprintf(stderr, "error: %s is not implemented yet (%s); no numbers are printed rather than invented ones\n",
               what, issue);
  return 2;
}

void print_config_summary(const RunConfig& c) {
  const auto& s = c.system;
  fmt::print("config: {}\n", c.source);
  fmt::print("  structure:      {}\n", s.pdb);
  std::string ff;
  for (const auto& f : s.forcefield) ff += (ff.empty() ? "" : ", ") + f;
  fmt::print("  force field:    {}\n", ff);
  fmt::print("  nonbonded:      {}, cutoff {} nm{}\n", to_string(s.nonbonded.method), s.nonbonded.cutoff_nm,
             s.nonbonded.method == NonbondedMethod::PME ? fmt::format(", ewald tolerance {}", s.nonbonded.ewald_tolerance)
                                                          : std::string());
  fmt::print("  constraints:    {}, rigid water {}\n", to_string(s.constraints), s.rigid_water ? "yes" : "no");
  fmt::print("  integrator:     {}, {} K, {} fs, friction {} /ps\n", to_string(c.integrator.type),
             c.integrator.temperature_k, c.integrator.timestep_ps * 1000.0, c.integrator.friction_per_ps);
  fmt::print("  run:            {} steps ({} ps)\n", c.run.steps, c.run.steps * c.integrator.timestep_ps);
  fmt::print("  platform:       {} ({} precision)\n", c.platform.name, to_string(c.platform.precision));
  fmt::print("  output:         {}\n", c.output.directory);
}

}  // namespace

int command_platforms() {
  fmt::print("cpu     reference platform (double precision), always available\n");
  const CudaProbe probe = probe_cuda();
  if (probe.devices.empty()) {
    fmt::print("cuda    not available: {}\n", probe.reason);
    return 0;
  }
  for (const auto& d : probe.devices) {
    fmt::print("cuda:{}  {}, {:.1f} GiB, compute capability {}.{}, {} multiprocessors\n", d.index, d.name,
               static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0), d.compute_major, d.compute_minor,
               d.multiprocessors);
  }
  fmt::print("        CUDA runtime {}.{}, driver {}.{}\n", probe.runtime_version / 1000, (probe.runtime_version % 1000) / 10,
             probe.driver_version / 1000, (probe.driver_version % 1000) / 10);
  return 0;
}

int command_check(const std::string& config_path) {
  const RunConfig cfg = load_config(config_path);
  print_config_summary(cfg);
  fmt::print("config OK\n");
  return 0;
}

int command_energy(const EnergyOptions& options) {
  load_config(options.config);
  return not_implemented("energy evaluation", "topology and force field: issue 3");
}

int command_run(const RunOptions& options) {
  load_config(options.config);
  return not_implemented("mdsim run (dynamics)", "issues 6 and 7");
}

int command_bench(const std::string& config_path) {
  load_config(config_path);
  return not_implemented("mdsim bench", "CUDA platform: issue 5");
}

}  // namespace mdsim
