// The settings of `mdsim prepare` from a YAML file's `prepare:` section or from the command line: one key
// set, one parser per key, so `--padding 1.2nm` and `prepare: {padding: 1.2 nm}` mean the same (docs/prepare.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/prepare_options.hpp"
#include "model/run_config.hpp"  // SourceLocation

namespace mdsim {

struct PrepareSettings {
  PrepareFiles files;
  PrepareOptions options;
  std::string source;                               // the settings file ("" = command line only)
  std::map<std::string, SourceLocation> locations;  // "prepare.padding" -> where it is written
};

// A key of the `prepare:` section ("padding", "protocol.nvt_time", ...), with what its value is.
struct PrepareKey {
  const char* key;
  const char* value;  // "length (nm)", "true | false", ...
};
const std::vector<PrepareKey>& prepare_keys();

// Sets `key` from its text form (a scalar, as the command line gives it; "variant" takes "A:45=HIE", "box"
// takes "a,b,c" lengths, "forcefield" appends one file, "keep_heterogens" appends names "NAG,HEM", upper-cased).
// Returns "" or why the value is wrong (for the caller to locate). Paths are taken as given.
std::string set_prepare_value(PrepareSettings& settings, const std::string& key, const std::string& text);

// Reads the `prepare:` section of a YAML file (other top-level sections are allowed and ignored, so one file can
// hold both this and a run config). Relative paths resolve against the file's folder. InputError
// "file:line:column: ..." on bad input.
PrepareSettings load_prepare_settings(const std::string& path);

// The same from the file's text: `source` names it in messages and in PrepareSettings::source, relative paths
// resolve against `base_dir` (taken as given when empty). load_prepare_settings reads the file and calls this;
// the fuzz target (fuzz/prepare_config.cpp) calls it directly.
PrepareSettings parse_prepare_settings(const std::string& text, const std::string& source, const std::string& base_dir);

}  // namespace mdsim
