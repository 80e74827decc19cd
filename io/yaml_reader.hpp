// The YAML walker of config files (io/config, the `prepare:` section of io/prepare_config): every error it raises
// is an InputError "file:line:column: what was expected" and, for an unknown key, names the closest valid key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/config.hpp"
#include "io/forcefield_xml.hpp"
#include "io/units.hpp"

namespace mdsim {

// Walks the YAML tree with the config file's name at hand, so every error carries file:line:column.
class ConfigReader {
 public:
  ConfigReader(std::string source, std::string base_dir) : source_(std::move(source)), base_(std::move(base_dir)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null()) throw InputError(located(source_, 0, 0, message));
    throw InputError(located(source_, m.line + 1, m.column + 1, message));
  }

  // Rejects keys outside `allowed`, suggesting the closest valid one.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& section) const {
    if (!map.IsMap()) fail(map, fmt::format("'{}' must be a mapping of keys to values", section));
    std::map<std::string, int> first_line;  // YAML keeps only one of two equal keys: refuse them
    for (const auto& kv : map) {
      if (!kv.first.IsScalar())  // YAML allows any node as a key ("? [a, b]"); a config key is a name
        fail(kv.first, fmt::format("a key {} must be a name, found a {}",
                                   section.empty() ? "at the top level" : fmt::format("in '{}'", section),
                                   kv.first.IsSequence() ? "list" : kv.first.IsMap() ? "mapping" : "null"));
      const auto key = kv.first.Scalar();
      const auto [seen, fresh] = first_line.emplace(key, kv.first.Mark().line + 1);
      if (!fresh)
        fail(kv.first, fmt::format("key '{}' appears twice {} (also on line {}); only one would be used: remove "
                                   "the other",
                                   key, section.empty() ? "at the top level" : fmt::format("in '{}'", section),
                                   seen->second));
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      const std::string near = closest_match(key, allowed);
      const std::string where = section.empty() ? "at the top level" : fmt::format("in '{}'", section);
      if (!near.empty()) fail(kv.first, fmt::format("unknown key '{}' {} (did you mean '{}'?)", key, where, near));
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(kv.first, fmt::format("unknown key '{}' {} (valid keys: {})", key, where, list));
    }
  }

  std::string str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, fmt::format("'{}' must be a string", key));
    return n.Scalar();
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) {
      try {
        return n.as<bool>();
      } catch (const YAML::Exception&) {
      }
    }
    fail(n, fmt::format("'{}' must be true or false", key));
  }

  // A whole number in [min_value, max_value]; the default maximum is what an int (steps, counts) holds.
  long long integer(const YAML::Node& n, const std::string& key, long long min_value,
                    long long max_value = std::numeric_limits<int>::max()) const {
    if (n.IsScalar()) {
      try {
        const long long v = n.as<long long>();
        if (v < min_value) fail(n, fmt::format("'{}' must be at least {}, got {}", key, min_value, v));
        if (v > max_value) fail(n, fmt::format("'{}' must be at most {}, got {}", key, max_value, v));
        return v;
      } catch (const YAML::Exception&) {
      }
    }
    fail(n, fmt::format("'{}' must be a whole number", key));
  }

  std::uint64_t unsigned_integer(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar() && !n.Scalar().empty() && n.Scalar()[0] != '-') {
      try {
        return n.as<std::uint64_t>();
      } catch (const YAML::Exception&) {
      }
    }
    fail(n, fmt::format("'{}' must be a non-negative whole number", key));
  }

  double number(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) {
      char* end = nullptr;
      const double v = std::strtod(n.Scalar().c_str(), &end);
      if (end != n.Scalar().c_str() && *end == '\0' && std::isfinite(v)) return v;
    }
    fail(n, fmt::format("'{}' must be a number", key));
  }

  double quantity(const YAML::Node& n, Dimension d, const std::string& key) const {
    if (!n.IsScalar()) fail(n, fmt::format("'{}' must be a {} (a number in {} or a string with a unit)", key,
                                           dimension_name(d), md_unit(d)));
    const QuantityParse q = parse_quantity(n.Scalar(), d);
    if (!q.value) fail(n, fmt::format("'{}': {}", key, q.error));
    return *q.value;
  }

  // A quantity that must be > 0 (or >= 0 when allow_zero).
  double positive(const YAML::Node& n, Dimension d, const std::string& key, bool allow_zero = false) const {
    const double v = quantity(n, d, key);
    if (v < 0 || (!allow_zero && v == 0))
      fail(n, fmt::format("'{}' must be {} than zero, got {} {}", key, allow_zero ? "no less" : "greater", v,
                          md_unit(d)));
    return v;
  }

  // A wall-clock duration in seconds (> 0): a bare number of seconds or a string with a unit
  // (`s`, `ms`, `min`). Not Dimension::Time, whose bare number means ps of simulated time.
  double wall_seconds(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) {
      const std::string text = n.Scalar();
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() && std::isfinite(v)) {
        std::string unit(end);
        unit.erase(std::remove_if(unit.begin(), unit.end(), [](unsigned char c) { return std::isspace(c); }), unit.end());
        double scale = 0.0;
        if (unit.empty() || unit == "s" || unit == "sec" || unit == "seconds") scale = 1.0;
        else if (unit == "ms") scale = 1e-3;
        else if (unit == "min") scale = 60.0;
        if (scale > 0.0) {
          if (!(v > 0.0)) fail(n, fmt::format("'{}' must be greater than zero, got {} s", key, v * scale));
          return v * scale;
        }
      }
    }
    fail(n, fmt::format("'{}' must be a wall-clock time in seconds (a number, or a string with a unit: \"2 s\", "
                        "\"500 ms\", \"1 min\"), got '{}'",
                        key, n.IsScalar() ? n.Scalar() : std::string("a non-scalar value")));
  }

  // An output file name: not empty (null turns an output off) and not a folder.
  std::string file_name(const YAML::Node& n, const std::string& key, const std::string& off) const {
    const std::string v = str(n, key);
    if (v.empty())
      fail(n, fmt::format("'{}' is empty: give a file name, or write '{}' to turn this output off", key, off));
    const std::filesystem::path p(v);
    if (v.back() == '/' || p.filename() == "." || p.filename() == "..")
      fail(n, fmt::format("'{}' ('{}') names a folder, not a file: give a file name", key, v));
    return v;
  }

  template <typename E>
  E choice(const YAML::Node& n, const std::string& key, const std::vector<std::pair<std::string, E>>& options) const {
    const std::string v = str(n, key);
    std::vector<std::string> names;
    for (const auto& [name, value] : options) {
      if (name == v) return value;
      names.push_back(name);
    }
    const std::string near = closest_match(v, names);
    std::string list;
    for (const auto& s : names) list += (list.empty() ? "" : " | ") + s;
    fail(n, fmt::format("'{}' must be one of {}, got '{}'{}", key, list, v,
                        near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
  }

  std::string path(const std::string& p) const {
    std::filesystem::path fp(p);
    if (fp.is_absolute() || base_.empty()) return fp.lexically_normal().string();
    return (std::filesystem::path(base_) / fp).lexically_normal().string();
  }

  const std::string& source() const { return source_; }

  // A force-field name the loader will find (bundled, or relative to the config's folder), else an error at
  // its place in the config.
  void check_forcefield_file(const YAML::Node& n, const std::string& name) const {
    try {
      resolve_forcefield_path(name, base_, default_forcefield_dirs());
    } catch (const InputError& e) {
      // The error_code form: a name the system cannot look up (a component over NAME_MAX bytes, a symlink loop)
      // is the config's error too, not a std::filesystem::filesystem_error (found by fuzz_prepare_config).
      std::error_code ec;
      if (std::filesystem::is_directory(path(name), ec))
        fail(n, fmt::format("'forcefield': {} is a directory; name a force field XML file", path(name)));
      if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
        fail(n, fmt::format("'forcefield': {}: {}; name a force field XML file (bundled, or relative to the "
                            "config's folder)",
                            path(name), ec.message()));
      fail(n, fmt::format("'forcefield': {}", e.what()));
    }
  }

 private:
  std::string source_;
  std::string base_;
};

}  // namespace mdsim
