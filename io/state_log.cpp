#include "io/state_log.hpp"

#include <fmt/format.h>

#include <charconv>

#include "common/errors.hpp"

namespace mdsim {

namespace {

constexpr double kGramsPerAmu = 1.66053906660e-24;
constexpr double kCm3PerNm3 = 1.0e-21;

std::string number(double v) { return fmt::format("{:.10g}", v); }

}  // namespace

double density_g_per_cm3(double total_mass_amu, double volume_nm3) {
  return total_mass_amu * kGramsPerAmu / (volume_nm3 * kCm3PerNm3);
}

std::string format_state_line(const StateSample& s, double total_mass_amu) {
  std::string line = fmt::format("{},{},{},{},{},{},", s.step, number(s.time_ps), number(s.potential_kj_per_mol),
                                 number(s.kinetic_kj_per_mol), number(s.potential_kj_per_mol + s.kinetic_kj_per_mol),
                                 number(s.temperature_k));
  if (s.volume_nm3) line += fmt::format("{},{}", number(*s.volume_nm3), number(density_g_per_cm3(total_mass_amu, *s.volume_nm3)));
  else line += ",";
  line += ",";
  if (s.speed_ns_per_day) line += number(*s.speed_ns_per_day);
  if (s.external_kj_per_mol) {
    line += ',';
    line += number(*s.external_kj_per_mol);
  }
  if (s.restraint_kj_per_mol || s.stage) {
    line += ',';
    line += number(s.restraint_kj_per_mol.value_or(0.0));
  }
  if (s.stage) {
    line += ',';
    line += *s.stage;
  }
  return line;
}

std::string state_log_header(bool external_column, bool stage_columns, bool restraint_column) {
  return std::string(kStateLogHeader) + (external_column ? ",external_kj_per_mol" : "") +
         (stage_columns || restraint_column ? ",restraint_kj_per_mol" : "") + (stage_columns ? ",stage" : "");
}

StateLog::StateLog(const std::string& path, double total_mass_amu, std::optional<std::int64_t> append_after_step,
                   bool external_column, bool stage_columns, bool restraint_column)
    : log_(path, state_log_header(external_column, stage_columns, restraint_column), append_after_step, "state log"),
      total_mass_amu_(total_mass_amu),
      restraint_column_(stage_columns || restraint_column) {}

void StateLog::write(const StateSample& sample) { log_.write_line(format_state_line(sample, total_mass_amu_), sample.step); }

void StateLog::close() { log_.close(); }

}  // namespace mdsim
