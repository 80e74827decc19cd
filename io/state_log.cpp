#include "io/state_log.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"

namespace mdsim {

namespace {

constexpr double kGramsPerAmu = 1.66053906660e-24;
constexpr double kCm3PerNm3 = 1.0e-21;

void check_folder(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{}: cannot write the state log: folder '{}' does not exist", path, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write the state log: folder '{}' is not writable ({})", path,
                                 folder.string(), std::strerror(errno)));
}

std::string number(double v) { return fmt::format("{:.10g}", v); }

// Keeps the header and the complete lines with step <= after_step; false if the file has another header.
bool truncate_log(const std::string& path, const std::string& header, std::int64_t after_step) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> keep;
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) break;  // an unfinished last line (killed while writing) is dropped
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (first) {
      if (line != header) return false;
      first = false;
      continue;
    }
    std::int64_t step = 0;
    const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), step);
    if (ec != std::errc() || p == line.data() + line.size() || *p != ',') continue;
    if (step <= after_step) keep.push_back(line);
  }
  if (first) return false;
  const std::string tmp = partial_path(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header << '\n';
    for (const std::string& l : keep) out << l << '\n';
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw RuntimeError(fmt::format("{}: cannot rewrite the state log for the restart", path));
    }
  }
  publish_partial(tmp, path, "the state log rewritten for the restart", /*durable=*/false);
  return true;
}

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
  if (s.stage) line += fmt::format(",{},{}", number(s.restraint_kj_per_mol), *s.stage);
  return line;
}

std::string state_log_header(bool external_column, bool stage_columns) {
  return std::string(kStateLogHeader) + (external_column ? ",external_kj_per_mol" : "") +
         (stage_columns ? ",restraint_kj_per_mol,stage" : "");
}

StateLog::StateLog(const std::string& path, double total_mass_amu, std::optional<std::int64_t> append_after_step,
                   bool external_column, bool stage_columns)
    : path_(path), header_(state_log_header(external_column, stage_columns)), total_mass_amu_(total_mass_amu) {
  check_folder(path_);
  bool appending = false;
  if (append_after_step && std::filesystem::exists(path_)) {
    if (!truncate_log(path_, header_, *append_after_step))
      throw InputError(fmt::format("{}: cannot append to the state log: its first line is not the header \"{}\"",
                                   path_, header_));
    appending = true;
  }
  if (appending) {
    file_ = std::fopen(path_.c_str(), "ab");
    if (!file_)
      throw InputError(fmt::format("{}: cannot open the state log for writing: {}", path_, std::strerror(errno)));
    return;
  }
  // A new log starts under a temporary name and replaces an older file at `path` only once its header
  // is written; the lines then go to the renamed file (the open stream follows it).
  const std::string partial = partial_path(path_);
  file_ = std::fopen(partial.c_str(), "wb");
  if (!file_)
    throw InputError(fmt::format("{}: cannot open the state log for writing: {}", path_, std::strerror(errno)));
  if (std::fprintf(file_, "%s\n", header_.c_str()) < 0 || std::fflush(file_) != 0) {
    const int err = errno;
    std::fclose(file_);
    file_ = nullptr;
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot write the state log: {}", path_, std::strerror(err)));
  }
  try {
    publish_partial(partial, path_, "the new state log", /*durable=*/false);
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

StateLog::~StateLog() {
  if (file_) std::fclose(file_);
}

void StateLog::write(const StateSample& sample) {
  if (!file_) throw RuntimeError(fmt::format("{}: the state log is closed", path_));
  const std::string line = format_state_line(sample, total_mass_amu_) + "\n";
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    const int err = errno;
    std::clearerr(file_);
    throw RuntimeError(fmt::format("{}: cannot write the state line of step {}: {}", path_, sample.step,
                                   err ? std::strerror(err) : "write error"));
  }
}

void StateLog::close() {
  if (!file_) return;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0)
    throw RuntimeError(fmt::format("{}: cannot close the state log: {}", path_, std::strerror(errno)));
}

}  // namespace mdsim
