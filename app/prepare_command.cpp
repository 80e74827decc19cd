// `mdsim prepare`: settings from a `prepare:` section and/or the command line, the preparation (prepare/), the
// outputs and the summary.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/commands.hpp"
#include "common/errors.hpp"
#include "io/prepare_config.hpp"
#include "prepare/prepare.hpp"

namespace mdsim {

namespace {

// "--ionic-strength" for the key "ionic_strength", "--nvt-time" for "protocol.nvt_time".
std::string flag_of(const std::string& key) {
  std::string flag = key.rfind("protocol.", 0) == 0 ? key.substr(9) : key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return "--" + flag;
}

// Options of the command line that contradict each other (the settings file's own are refused where it is read;
// the command line's values replace the file's).
void check_conflicting_options(const PrepareCommandOptions& command) {
  std::map<std::string, std::string> given;  // key -> value (the last)
  std::map<std::string, std::string> variants;  // residue -> variant
  for (const auto& [key, value] : command.settings) {
    if (key == "variant") {
      const std::string residue = value.substr(0, value.find('='));
      const std::string variant = value.substr(std::min(value.size(), value.find('=') + 1));
      if (const auto it = variants.find(residue); it != variants.end() && it->second != variant)
        throw InputError(fmt::format("--variant: residue {} is given two variants ({} and {}); give one", residue,
                                     it->second, variant));
      variants[residue] = variant;
    }
    given[key] = value;
  }
  if (given.count("box") && given.count("padding"))
    throw InputError("--box and --padding both given: a box is sized by one of them (--box: explicit edges; "
                     "--padding: the solute plus padding)");
  if (given.count("box") && given.count("box_shape") && given["box_shape"] != "cube")
    throw InputError(fmt::format("--box and --box-shape {} both given: --box is a rectangular box; give --padding "
                                 "with a box shape instead",
                                 given["box_shape"]));
}

// A keep list needs remove_heterogens, from the command line or the settings file (located there when the list is).
void check_keep_list(const PrepareSettings& settings, bool keep_on_command_line) {
  const PrepareOptions& o = settings.options;
  if (o.keep_heterogens.empty() || o.remove_heterogens) return;
  const std::string names = fmt::format("{}", fmt::join(o.keep_heterogens, ","));
  const auto at = settings.locations.find("prepare.keep_heterogens");
  if (!keep_on_command_line && at != settings.locations.end())
    throw InputError(located(settings.source, at->second.line, at->second.column,
                             fmt::format("'prepare.keep_heterogens' ({}) given without 'prepare.remove_heterogens: "
                                         "true' (--remove-heterogens): the keep list names the heterogens "
                                         "remove_heterogens leaves in place; add it, or leave out the keep list",
                                         names)));
  throw InputError(fmt::format("--keep-heterogens {} given without --remove-heterogens: the keep list names the "
                               "heterogens --remove-heterogens leaves in place; add --remove-heterogens, or leave "
                               "out --keep-heterogens",
                               names));
}

}  // namespace

int command_prepare(const PrepareCommandOptions& command) {
  check_conflicting_options(command);
  const std::string& in = command.input;
  const auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return in.size() >= s.size() && in.compare(in.size() - s.size(), s.size(), s) == 0;
  };
  PrepareSettings settings;
  if (ends_with(".yaml") || ends_with(".yml")) settings = load_prepare_settings(in);
  else settings.files.input = in;

  bool forcefield_given = false, keep_given = false;
  for (const auto& [key, value] : command.settings) {
    if (key == "forcefield" && !forcefield_given) {  // the command line's list replaces the file's (or default)
      settings.options.forcefield.clear();
      forcefield_given = true;
    }
    if (key == "keep_heterogens" && !keep_given) {  // so does its keep list
      settings.options.keep_heterogens.clear();
      keep_given = true;
    }
    const std::string error = set_prepare_value(settings, key, value);
    if (!error.empty()) throw InputError(fmt::format("{}: {}", flag_of(key), error));
  }
  if (settings.files.input.empty()) throw InputError(fmt::format("{}: 'prepare.input' is missing", in));
  check_keep_list(settings, keep_given);

  check_prepare_files(settings.files, settings.source);  // before any work: outputs apart from inputs and each other
  const PreparedSystem prepared = prepare_system(settings.files, settings.options);
  const std::vector<std::string> written = write_prepared(prepared, settings.files, settings.options, settings.source);
  std::fputs(prepare_summary(prepared).c_str(), stdout);
  for (const std::string& path : written) std::printf("wrote %s\n", path.c_str());
  if (written.size() > 1) std::printf("next: mdsim run %s\n", written.back().c_str());
  return 0;
}

}  // namespace mdsim
