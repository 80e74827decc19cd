#include "io/output_paths.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/config.hpp"  // file_kind

namespace fs = std::filesystem;

namespace mdsim {

namespace {

fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  if (resolved(a) == resolved(b)) return true;
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec;
}

std::optional<PathClash> find_path_clash(const std::vector<RoleFile>& inputs, const std::vector<RoleFile>& outputs) {
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const RoleFile& out = outputs[o];
    if (out.path.empty()) continue;
    for (const RoleFile& in : inputs)
      if (same_file(out.path, in.path))
        return PathClash{o, fmt::format("{} '{}' is {} '{}': writing it would overwrite that file; name another file",
                                        out.role, out.path, in.role, in.path)};
    for (std::size_t e = 0; e < o; ++e)
      if (same_file(out.path, outputs[e].path))
        return PathClash{o, fmt::format("{} '{}' and {} '{}' are the same file: one output would overwrite the other; "
                                        "give them different names",
                                        out.role, out.path, outputs[e].role, outputs[e].path)};
  }
  return std::nullopt;
}

std::string output_place_problem(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows links: the target is what gets written
  if (fs::exists(st) && !fs::is_regular_file(st))
    return fmt::format("the path exists and is {}; give a new or regular file", file_kind(st));
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec)) return fmt::format("the folder {} does not exist", folder.string());
  return "";
}

void check_outputs_apart(const std::vector<RoleFile>& inputs, const std::vector<RoleFile>& outputs) {
  if (const auto clash = find_path_clash(inputs, outputs)) throw InputError(clash->message);
}

}  // namespace mdsim
