#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/errors.hpp"

namespace mdsim {

namespace {

bool sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string partial_path(const std::string& path) { return path + ".partial"; }

void publish_partial(const std::string& partial, const std::string& path, std::string_view what, bool durable) {
  if (durable && !sync_path(partial, 0)) {
    const int err = errno;
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot write {} (fsync: {})", path, what, std::strerror(err)));
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot move {} into place: {}", path, what, ec.message()));
  }
  if (durable) {
    std::string folder = std::filesystem::path(path).parent_path().string();
    sync_path(folder.empty() ? "." : folder, O_DIRECTORY);  // best effort: the rename is done either way
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what) {
  const std::string partial = partial_path(path);
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  if (!file)
    throw InputError(fmt::format("{}: cannot create {}: {}", path, what, std::strerror(errno)));
  errno = 0;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size() && std::fflush(file) == 0;
  const int err = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot write {}: {}", path, what, err ? std::strerror(err) : "write error"));
  }
  publish_partial(partial, path, what, false);
}

}  // namespace mdsim
