// `mdsim prepare`: settings from a `prepare:` section and/or the command line, the preparation (prepare/), the
// outputs and the summary.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "common/errors.hpp"
#include "io/prepare_config.hpp"
#include "prepare/prepare.hpp"

namespace mdsim {

int command_prepare(const PrepareCommandOptions& command) {
  const std::string& in = command.input;
  const auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return in.size() >= s.size() && in.compare(in.size() - s.size(), s.size(), s) == 0;
  };
  PrepareSettings settings;
  if (ends_with(".yaml") || ends_with(".yml")) settings = load_prepare_settings(in);
  else settings.files.input = in;

  bool forcefield_given = false;
  for (const auto& [key, value] : command.settings) {
    if (key == "forcefield" && !forcefield_given) {  // the command line's list replaces the file's (or default)
      settings.options.forcefield.clear();
      forcefield_given = true;
    }
    const std::string error = set_prepare_value(settings, key, value);
    if (!error.empty()) {
      std::string flag = key.rfind("protocol.", 0) == 0 ? key.substr(9) : key;
      for (char& c : flag)
        if (c == '_') c = '-';
      throw InputError(fmt::format("--{}: {}", flag, error));
    }
  }
  if (settings.files.input.empty()) throw InputError(fmt::format("{}: 'prepare.input' is missing", in));

  const PreparedSystem prepared = prepare_system(settings.files, settings.options);
  const std::vector<std::string> written = write_prepared(prepared, settings.files, settings.options);
  std::fputs(prepare_summary(prepared).c_str(), stdout);
  for (const std::string& path : written) std::printf("wrote %s\n", path.c_str());
  if (written.size() > 1) std::printf("next: mdsim run %s\n", written.back().c_str());
  return 0;
}

}  // namespace mdsim
