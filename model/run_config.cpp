#include "model/run_config.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "common/errors.hpp"

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
    case InitialVelocities::FromCoordinates: return "from_coordinates";
  }
  return "?";
}

std::vector<double> geometric_temperature_ladder(double min_k, double max_k, int count) {
  if (count < 2) throw InputError(fmt::format("a temperature ladder needs at least 2 temperatures, got {}", count));
  if (!(std::isfinite(min_k) && std::isfinite(max_k) && min_k > 0.0 && max_k > min_k))
    throw InputError(fmt::format("a temperature ladder needs 0 < min < max (K), got min {:g} K and max {:g} K", min_k,
                                 max_k));
  std::vector<double> t(static_cast<std::size_t>(count));
  const double ratio = max_k / min_k;
  for (int k = 0; k < count; ++k)
    t[static_cast<std::size_t>(k)] = min_k * std::pow(ratio, static_cast<double>(k) / (count - 1));
  t.front() = min_k;
  t.back() = max_k;
  return t;
}

const char* to_string(ReplicaExchangeKind k) {
  switch (k) {
    case ReplicaExchangeKind::Temperature: return "temperature";
    case ReplicaExchangeKind::None: return "none";
  }
  return "?";
}

const char* to_string(RestraintReference r) {
  switch (r) {
    case RestraintReference::Initial: return "initial";
    case RestraintReference::Start: return "start";
    case RestraintReference::File: return "file";
  }
  return "?";
}

RunConfig stage_run_config(const RunConfig& config, const StageConfig& stage) {
  RunConfig c = config;
  c.integrator = stage.integrator;
  c.barostat = stage.barostat;
  return c;
}

std::string stage_signature(const StageConfig& st, bool with_length) {
  const auto number = [](double v, const char* unit) { return quoted_number(v) + unit; };
  std::string s;
  const auto add = [&s](const std::string& key, const std::string& value) {
    s += (s.empty() ? "" : "; ") + key + "=" + value;
  };
  if (st.minimize)
    add("minimize", number(st.minimize->tolerance_kj_per_mol_nm, " kJ/mol/nm") + ", " +
                        std::to_string(st.minimize->max_iterations) + " iterations");
  if (with_length) add("steps", std::to_string(st.steps));
  if (st.steps > 0) {
    const IntegratorConfig& g = st.integrator;
    add("integrator", std::string(to_string(g.type)) + ", " + number(g.timestep_ps, " ps") + ", " +
                          number(g.temperature_k, " K") + ", " + number(g.friction_per_ps, " 1/ps") + ", tolerance " +
                          quoted_number(g.constraint_tolerance));
    add("barostat", st.barostat ? number(st.barostat->pressure_bar, " bar") + ", " +
                                      number(st.barostat->temperature_k, " K") + ", every " +
                                      std::to_string(st.barostat->interval_steps)
                                : std::string("none"));
    if (st.initial_velocities) add("initial_velocities", to_string(*st.initial_velocities));
  }
  if (st.restraints) {
    const RestraintConfig& r = *st.restraints;
    add("restraints", "\"" + r.atoms + "\", " + number(r.k_kj_per_mol_nm2, " kJ/mol/nm^2") + ", reference " +
                          (r.reference == RestraintReference::File ? r.reference_file : to_string(r.reference)));
  } else {
    add("restraints", "none");
  }
  return s;
}

std::vector<std::int64_t> stage_first_steps(const std::vector<StageConfig>& stages) {
  std::vector<std::int64_t> first;
  std::int64_t step = 0;
  for (const StageConfig& st : stages) {
    first.push_back(step);
    step += st.steps;
  }
  return first;
}

std::vector<OutputFile> output_files(const OutputConfig& o) {
  std::vector<OutputFile> out;
  if (o.trajectory.interval_steps > 0 && !o.trajectory.file.empty())
    out.push_back({"output.trajectory.file", o.trajectory.file});
  if (o.state.interval_steps > 0 && !o.state.file.empty()) out.push_back({"output.state.file", o.state.file});
  if (!o.checkpoint.file.empty()) out.push_back({"output.checkpoint.file", o.checkpoint.file});
  if (!o.final_pdb.empty()) out.push_back({"output.final_pdb", o.final_pdb});
  return out;
}

std::vector<std::pair<std::string, std::string>> physics_settings(const RunConfig& c) {
  const auto number = [](double v, const char* unit) { return quoted_number(v) + unit; };
  const SystemConfig& s = c.system;
  const NonbondedSettings& nb = s.nonbonded;
  std::string forcefield;
  for (const std::string& f : s.forcefield) forcefield += (forcefield.empty() ? "" : ", ") + f;
  std::vector<std::pair<std::string, std::string>> out = {
      {"system.forcefield", forcefield},
  };
  // The System file's name (the system's masses and charges are the checkpoint fingerprint's to compare), and the
  // GROMACS defines, which choose what the top holds (its [position_restraints] under POSRES, FLEXIBLE water).
  if (!s.topology.empty()) {
    out.emplace_back("system.topology", std::filesystem::path(s.topology).filename().string());
    std::string defines;
    for (const auto& [name, value] : s.defines)
      defines += (defines.empty() ? "" : ", ") + name + (value.empty() ? "" : "=" + value);
    out.emplace_back("system.defines", defines.empty() ? "none" : defines);
  }
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"system.nonbonded_method", to_string(nb.method)},
      {"system.cutoff", number(nb.cutoff_nm, " nm")},
      {"system.ewald_tolerance", quoted_number(nb.ewald_tolerance)},
      {"system.pme_grid", to_string(nb.pme_grid)},
      {"system.switch_distance", nb.switch_distance_nm ? number(*nb.switch_distance_nm, " nm") : "none"},
      {"system.dispersion_correction", nb.dispersion_correction ? "true" : "false"},
      {"system.constraints", to_string(s.constraints)},
      {"system.rigid_water", s.rigid_water ? "true" : "false"},
      {"system.hydrogen_mass", s.hydrogen_mass_amu ? number(*s.hydrogen_mass_amu, " amu") : "none"},
      {"system.remove_cm_motion", s.remove_cm_motion ? "true" : "false"},
      {"system.remove_cm_motion_interval", std::to_string(s.remove_cm_motion_interval) + " steps"},
      {"system.replicate", std::to_string(s.replicate[0]) + " x " + std::to_string(s.replicate[1]) + " x " +
                               std::to_string(s.replicate[2])},
      {"integrator.type", to_string(c.integrator.type)},
      {"integrator.timestep", number(c.integrator.timestep_ps, " ps")},
      {"integrator.constraint_tolerance", quoted_number(c.integrator.constraint_tolerance)},
  };
  out.insert(out.end(), settings.begin(), settings.end());
  // Temperature replica exchange: the ladder stands for the bath temperatures (each replica's changes).
  const bool ladder = c.replicas && c.replicas->exchange == ReplicaExchangeKind::Temperature;
  if (c.integrator.type == IntegratorType::LangevinMiddle) {
    if (!ladder) out.emplace_back("integrator.temperature", number(c.integrator.temperature_k, " K"));
    out.emplace_back("integrator.friction", number(c.integrator.friction_per_ps, " 1/ps"));
  }
  if (c.barostat) {
    out.emplace_back("barostat.pressure", number(c.barostat->pressure_bar, " bar"));
    if (!ladder) out.emplace_back("barostat.temperature", number(c.barostat->temperature_k, " K"));
    out.emplace_back("barostat.interval", std::to_string(c.barostat->interval_steps));
  } else {
    out.emplace_back("barostat", "none");
  }
  if (c.replicas) {
    const ReplicaConfig& r = *c.replicas;
    out.emplace_back("replicas.exchange", to_string(r.exchange));
    out.emplace_back("replicas.count", std::to_string(r.count));
    if (ladder) {
      std::string temperatures;
      for (const double t : r.temperatures_k) temperatures += (temperatures.empty() ? "" : ", ") + number(t, " K");
      out.emplace_back("replicas.temperatures", temperatures);
      out.emplace_back("replicas.exchange_interval", std::to_string(r.exchange_interval_steps) + " steps");
    }
  }
  return out;
}

std::string at_config_key(const RunConfig& config, const std::string& key, const std::string& message) {
  for (std::string k = key; !k.empty();) {
    if (const auto it = config.locations.find(k); it != config.locations.end())
      return located(config.source, it->second.line, it->second.column, message);
    const std::size_t dot = k.rfind('.');
    k = dot == std::string::npos ? std::string() : k.substr(0, dot);
  }
  return located(config.source, 0, 0, message);
}

void throw_config_error(const RunConfig& config, const std::string& key, const std::string& message) {
  throw InputError(at_config_key(config, key, message));
}

std::string structure_key(const RunConfig& config) {
  if (!config.system.topology.empty()) return "system.coordinates";
  return config.locations.count("system.pdb") ? "system.pdb" : "system.structure";
}

}  // namespace mdsim
