// YAML config v1 (yaml-cpp) → RunConfig. Every key, default and unit: docs/config.md.
// Errors are InputError with "file:line:column: what was expected" and, for an unknown key, the
// closest valid key. Parsing writes nothing to disk.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "model/run_config.hpp"

namespace mdsim {

// Reads and validates the file; relative paths inside resolve against the file's folder. `text`, when
// given, receives the bytes read (what outputs hash as the config).
RunConfig load_config(const std::string& path, std::string* text = nullptr);

// Same, from text; `source` names it in messages and `base_dir` resolves relative paths.
// check_files = false skips the existence check of system.pdb (tests of pure parsing) and the reading of
// system.topology (a serialized System's settings then stay the config's; build_model uses the System's own).
RunConfig parse_config(const std::string& text, const std::string& source, const std::string& base_dir,
                       bool check_files = true);

// The candidate closest to `word` by edit distance, or "" if none is plausibly meant.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// What a path is, for messages: "a regular file", "a directory", "a FIFO (named pipe)", "a character device", ...
const char* file_kind(const std::filesystem::file_status& status);

}  // namespace mdsim
