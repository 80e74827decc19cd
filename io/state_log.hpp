// State log (state.csv): one line per report, the quantities of OpenMM's StateDataReporter with
// the units in the column names:
//   step,time_ps,potential_kj_per_mol,kinetic_kj_per_mol,total_kj_per_mol,temperature_k,volume_nm3,
//   density_g_per_cm3,speed_ns_per_day[,external_kj_per_mol][,restraint_kj_per_mol][,stage]
// total = potential + kinetic; density = total mass (amu -> g: 1.66053906660e-24 g) / volume
// (nm^3 -> cm^3: 1e-21); volume and density are empty without a periodic box, speed is empty until
// known (OpenMM prints "--" on its first line). external_kj_per_mol, the energy of forces added from
// outside (the Python package's add_force; included in the potential), is a column only in the logs of runs
// that have such forces. A staged run (config `stages:`) adds restraint_kj_per_mol, the position restraints'
// energy (included in the potential; 0 in an unrestrained stage), and stage, the stage's name, as the last two
// columns; a run without stages but with restraints (a topology's [position_restraints]) adds restraint_kj_per_mol
// alone. Numbers have 10 significant digits. Every line is
// written through to the file at once (a killed run keeps every reported line).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "io/csv_log.hpp"

namespace mdsim {

struct StateSample {
  std::int64_t step = 0;
  double time_ps = 0.0;
  double potential_kj_per_mol = 0.0;
  double kinetic_kj_per_mol = 0.0;
  double temperature_k = 0.0;
  std::optional<double> volume_nm3;         // none for a non-periodic system
  std::optional<double> speed_ns_per_day;   // none while not yet measured
  std::optional<double> external_kj_per_mol;  // written only by a log with the external column
  std::optional<double> restraint_kj_per_mol;  // written by a log with the restraint column (0 when unset)
  std::optional<std::string> stage;            // written only by a log with the stage columns (restraint, stage)
};

inline constexpr const char* kStateLogHeader =
    "step,time_ps,potential_kj_per_mol,kinetic_kj_per_mol,total_kj_per_mol,temperature_k,volume_nm3,"
    "density_g_per_cm3,speed_ns_per_day";

// Density in g/cm^3 of `total_mass_amu` in `volume_nm3`.
double density_g_per_cm3(double total_mass_amu, double volume_nm3);

// The header with or without the external_kj_per_mol column, the stage columns (restraint_kj_per_mol, stage), or
// the restraint column alone.
std::string state_log_header(bool external_column, bool stage_columns = false, bool restraint_column = false);

// One CSV line (no newline) for a sample (with the external, restraint and stage columns where the sample has
// those values).
std::string format_state_line(const StateSample& sample, double total_mass_amu);

class StateLog {
 public:
  // Creates `path` (header line first). With `append_after_step` (restart from a checkpoint) an
  // existing log with the same header keeps its lines with step <= that value and new lines follow;
  // a missing file is created. Throws InputError when the folder is missing or not writable, or the
  // existing file has another header.
  // `external_column` adds external_kj_per_mol (runs with external forces), `stage_columns`
  // restraint_kj_per_mol and stage (staged runs), `restraint_column` restraint_kj_per_mol alone (restrained runs
  // without stages).
  StateLog(const std::string& path, double total_mass_amu, std::optional<std::int64_t> append_after_step = {},
           bool external_column = false, bool stage_columns = false, bool restraint_column = false);
  // Writes and flushes one line. Throws RuntimeError naming the file when the write fails (disk full).
  void write(const StateSample& sample);
  void close();  // throws RuntimeError when the final close fails

  const std::string& path() const { return log_.path(); }
  bool restraint_column() const { return restraint_column_; }  // restraint_kj_per_mol (stage columns or alone)

 private:
  CsvLog log_;
  double total_mass_amu_;
  bool restraint_column_;
};

}  // namespace mdsim
