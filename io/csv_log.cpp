#include "io/csv_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"

namespace mdsim {

namespace {

void check_folder(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{}: cannot write the {}: folder '{}' does not exist", path, what, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write the {}: folder '{}' is not writable ({})", path, what,
                                 folder.string(), std::strerror(errno)));
}

// Keeps the header and the complete lines with step <= after_step; false if the file has another header.
bool truncate_log(const std::string& path, const std::string& header, std::int64_t after_step, const std::string& what) {
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
      throw RuntimeError(fmt::format("{}: cannot rewrite the {} for the restart", path, what));
    }
  }
  publish_partial(tmp, path, fmt::format("the {} rewritten for the restart", what), /*durable=*/false);
  return true;
}

}  // namespace

CsvLog::CsvLog(const std::string& path, const std::string& header, std::optional<std::int64_t> append_after_step,
               const std::string& what)
    : path_(path), header_(header), what_(what) {
  check_folder(path_, what_);
  if (append_after_step && std::filesystem::exists(path_)) {
    if (!truncate_log(path_, header_, *append_after_step, what_))
      throw InputError(fmt::format("{}: cannot append to the {}: its first line is not the header \"{}\"", path_,
                                   what_, header_));
    file_ = std::fopen(path_.c_str(), "ab");
    if (!file_)
      throw InputError(fmt::format("{}: cannot open the {} for writing: {}", path_, what_, std::strerror(errno)));
    return;
  }
  // A new log starts under a temporary name and replaces an older file at `path` only once its header
  // is written; the lines then go to the renamed file (the open stream follows it).
  const std::string partial = partial_path(path_);
  file_ = std::fopen(partial.c_str(), "wb");
  if (!file_) throw InputError(fmt::format("{}: cannot open the {} for writing: {}", path_, what_, std::strerror(errno)));
  if (std::fprintf(file_, "%s\n", header_.c_str()) < 0 || std::fflush(file_) != 0) {
    const int err = errno;
    std::fclose(file_);
    file_ = nullptr;
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot write the {}: {}", path_, what_, std::strerror(err)));
  }
  try {
    publish_partial(partial, path_, fmt::format("the new {}", what_), /*durable=*/false);
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

CsvLog::~CsvLog() {
  if (file_) std::fclose(file_);
}

void CsvLog::write_line(const std::string& text, std::int64_t step) {
  if (!file_) throw RuntimeError(fmt::format("{}: the {} is closed", path_, what_));
  const std::string line = text + "\n";
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    const int err = errno;
    std::clearerr(file_);
    throw RuntimeError(fmt::format("{}: cannot write the {} line of step {}: {}", path_, what_, step,
                                   err ? std::strerror(err) : "write error"));
  }
}

void CsvLog::close() {
  if (!file_) return;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) throw RuntimeError(fmt::format("{}: cannot close the {}: {}", path_, what_, std::strerror(errno)));
}

}  // namespace mdsim
