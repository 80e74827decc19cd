// One rule for every command's outputs: before anything is written, each output path is resolved (absolute,
// symbolic links and ".." followed as far as the path exists) and compared with every input and every other
// output of the command; the same file twice (also through a hard link) would lose data and is refused.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mdsim {

// A file a command reads or writes, with what it is to the user ("the input structure", "--config",
// "output.state.file").
struct RoleFile {
  std::string role;
  std::string path;
};

// The same file: equal resolved paths, or two existing paths to one file (a hard link, a bind mount).
bool same_file(const std::string& a, const std::string& b);

// The first output that is an input or an earlier output: its index in `outputs` and a message naming both
// roles and paths with the fix. Empty paths are ignored.
struct PathClash {
  std::size_t output = 0;
  std::string message;
};
std::optional<PathClash> find_path_clash(const std::vector<RoleFile>& inputs, const std::vector<RoleFile>& outputs);

// Why `path` cannot take a new output, "" when it can: it exists and is not a regular file (a folder, a device),
// or its folder does not exist.
std::string output_place_problem(const std::string& path);

// Throws InputError with find_path_clash's message when there is a clash.
void check_outputs_apart(const std::vector<RoleFile>& inputs, const std::vector<RoleFile>& outputs);

}  // namespace mdsim
