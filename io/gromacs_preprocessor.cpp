// GROMACS's preprocessor subset (see the header). Conditionals are tracked per file stack as one stack of
// (active, else seen) entries: a line is used only when every enclosing conditional is active.
#include "io/gromacs_preprocessor.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/errors.hpp"

namespace mdsim {

namespace fs = std::filesystem;

std::vector<std::string> gromacs_include_search_path(const std::string& including_dir,
                                                     const GromacsPreprocessorOptions& options) {
  std::vector<std::string> dirs{including_dir.empty() ? std::string(".") : including_dir};
  dirs.insert(dirs.end(), options.include_dirs.begin(), options.include_dirs.end());
  if (options.search_environment) {
    if (const char* gmxlib = std::getenv("GMXLIB")) {
      std::stringstream list(gmxlib);
      for (std::string dir; std::getline(list, dir, ':');)
        if (!dir.empty()) dirs.push_back(dir);
    }
    dirs.emplace_back("/usr/share/gromacs/top");
  }
  return dirs;
}

namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

class Preprocessor {
 public:
  explicit Preprocessor(const GromacsPreprocessorOptions& options) : options_(options) {
    for (const auto& [name, value] : options.defines) defines_[name] = value;
  }

  void read_file(const std::string& path, int depth) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(located(path, 0, 0, "cannot open the GROMACS topology file"));
    const std::size_t open_before = conditions_.size();
    std::string physical, logical;
    int number = 0, first = 0;
    while (std::getline(in, physical)) {
      ++number;
      if (logical.empty()) first = number;
      const std::string code = physical.substr(0, physical.find(';'));
      const std::string t = trimmed(code);
      if (!t.empty() && t.back() == '\\' && physical.find(';') == std::string::npos) {
        logical += t.substr(0, t.size() - 1) + " ";  // continued on the next line
        continue;
      }
      logical += code;
      process(path, first, trimmed(logical), depth);
      logical.clear();
    }
    if (!trimmed(logical).empty()) process(path, first, trimmed(logical), depth);
    if (conditions_.size() != open_before)
      throw InputError(located(path, conditions_.back().line, 0,
                               fmt::format("#{} {} is not closed by an #endif in this file", conditions_.back().kind,
                                           conditions_.back().name)));
  }

  std::vector<GromacsLine> lines;

 private:
  struct Condition {
    bool active;
    bool else_seen;
    int line;
    std::string kind, name;
  };

  bool active() const {
    for (const Condition& c : conditions_)
      if (!c.active) return false;
    return true;
  }

  void process(const std::string& file, int line, const std::string& text, int depth) {
    if (text.empty() || text[0] == '*') return;  // '*' starts a comment line in old force-field files
    if (text[0] == '#') return directive(file, line, text, depth);
    if (!active()) return;
    lines.push_back({file, line, substitute(text), guard()});
  }

  // The enclosing conditionals as GromacsLine::guard writes them (every one active here).
  std::string guard() const {
    std::string out;
    for (const Condition& c : conditions_)
      out += (out.empty() ? "" : " and ") + std::string((c.kind == "ifdef") != c.else_seen ? "" : "not ") + c.name;
    return out;
  }

  // Replaces every blank-separated token that is a define with a value by that value.
  std::string substitute(const std::string& text) const {
    if (defines_.empty()) return text;
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t b = text.find_first_not_of(" \t", i);
      out += text.substr(i, (b == std::string::npos ? text.size() : b) - i);
      if (b == std::string::npos) break;
      std::size_t e = text.find_first_of(" \t", b);
      if (e == std::string::npos) e = text.size();
      const std::string token = text.substr(b, e - b);
      const auto it = defines_.find(token);
      out += (it != defines_.end() && !it->second.empty()) ? it->second : token;
      i = e;
    }
    return out;
  }

  void directive(const std::string& file, int line, const std::string& text, int depth);
  void include(const std::string& file, int line, const std::string& argument, int depth);

  const GromacsPreprocessorOptions& options_;
  std::map<std::string, std::string> defines_;
  std::vector<Condition> conditions_;
};

void Preprocessor::directive(const std::string& file, int line, const std::string& text, int depth) {
  std::istringstream fields(text.substr(1));
  std::string command, name;
  fields >> command >> name;
  auto fail = [&](const std::string& m) { throw InputError(located(file, line, 0, m)); };
  auto need_name = [&] {
    if (name.empty()) fail(fmt::format("#{} needs a name (\"#{} NAME\")", command, command));
  };
  if (command == "ifdef" || command == "ifndef") {
    need_name();
    const bool defined = defines_.count(name) > 0;
    conditions_.push_back({command == "ifdef" ? defined : !defined, false, line, command, name});
  } else if (command == "else") {
    if (conditions_.empty()) fail("#else without an #ifdef or #ifndef before it");
    if (conditions_.back().else_seen) fail(fmt::format("a second #else for the #{} {} of line {}",
                                                       conditions_.back().kind, conditions_.back().name,
                                                       conditions_.back().line));
    conditions_.back().active = !conditions_.back().active;
    conditions_.back().else_seen = true;
  } else if (command == "endif") {
    if (conditions_.empty()) fail("#endif without an #ifdef or #ifndef before it");
    conditions_.pop_back();
  } else if (!active()) {
    return;  // #define, #undef, #include inside an inactive block
  } else if (command == "define") {
    need_name();
    const std::size_t at = text.find(name, text.find("define") + 6) + name.size();
    defines_[name] = trimmed(text.substr(at));
  } else if (command == "undef") {
    need_name();
    defines_.erase(name);
  } else if (command == "include") {
    include(file, line, trimmed(text.substr(text.find("include") + 7)), depth);
  } else {
    fail(fmt::format("unknown preprocessor directive #{} (GROMACS topologies use #include, #define, #undef, "
                     "#ifdef, #ifndef, #else and #endif)",
                     command));
  }
}

void Preprocessor::include(const std::string& file, int line, const std::string& argument, int depth) {
  auto fail = [&](const std::string& m) { throw InputError(located(file, line, 0, m)); };
  if (argument.size() < 3 || !((argument.front() == '"' && argument.back() == '"') ||
                               (argument.front() == '<' && argument.back() == '>')))
    fail(fmt::format("#include {}: expected a file name in quotes (#include \"forcefield.itp\")", argument));
  if (depth >= 64) fail("#include nested more than 64 deep (a file including itself?)");
  const std::string name = argument.substr(1, argument.size() - 2);
  const auto dirs = gromacs_include_search_path(fs::path(file).parent_path().string(), options_);
  for (const std::string& dir : dirs) {
    const fs::path candidate = fs::path(name).is_absolute() ? fs::path(name) : fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return read_file(candidate.lexically_normal().string(), depth + 1);
  }
  std::string searched;
  for (const std::string& dir : dirs) searched += (searched.empty() ? "" : ", ") + dir;
  fail(fmt::format("#include \"{}\": file not found; searched {} (add the force field's folder to "
                   "system.include_dirs, or set GMXLIB)",
                   name, searched));
}

}  // namespace

std::vector<GromacsLine> preprocess_gromacs(const std::string& path, const GromacsPreprocessorOptions& options) {
  Preprocessor p(options);
  p.read_file(path, 0);
  return std::move(p.lines);
}

}  // namespace mdsim
