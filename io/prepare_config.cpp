#include "io/prepare_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/units.hpp"
#include "io/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace mdsim {

const std::vector<PrepareKey>& prepare_keys() {
  static const std::vector<PrepareKey> keys = {
      {"input", "the structure to prepare: PDB or PDBx/mmCIF (.pdb, .ent, .cif, .mmcif, optionally .gz)"},
      {"output", "the prepared structure (.pdb, or .cif; default <input>_prepared.pdb, .cif above 99,999 atoms)"},
      {"config", "an `mdsim run` config to write for the prepared structure"},
      {"forcefield", "force-field XML files (bundled names or paths)"},
      {"ph", "pH for protonation states (0 to 14)"},
      {"remove_heterogens", "true | false: remove every residue that is not a standard amino acid, nucleotide or water "
                            "(PDBFixer's removeHeterogens), before hydrogens are added"},
      {"keep_heterogens", "residue names to keep when removing heterogens (NAG,HEM; a list in a settings file)"},
      {"variant", "a residue's protonation variant, CHAIN:NUMBER[ICODE]=NAME (A:45=HIE; :45=HIE for a blank chain id)"},
      {"solvent", "true | false: add a box of water"},
      {"padding", "length (nm): solute to box edge"},
      {"box", "three lengths (nm): an explicit rectangular box a, b, c"},
      {"box_shape", "cube | dodecahedron | octahedron"},
      {"water_model", "tip3p | tip4pew (also picks the water force field, amber14/<model>.xml, unless forcefield is given)"},
      {"neutralize", "true | false: add counter-ions to make the net charge zero"},
      {"ionic_strength", "concentration (M) of added salt, besides the neutralising ions"},
      {"positive_ion", "Na+ | K+"},
      {"negative_ion", "Cl-"},
      {"seed", "a whole number: which waters become ions"},
      {"chain_breaks", "error | split: what to do where a chain has a gap (residues missing)"},
      {"protocol.restraint_k", "spring constant (kJ/mol/nm^2) of the solute's heavy-atom restraints while equilibrating"},
      {"protocol.nvt_time", "time (ps) of the restrained NVT stage"},
      {"protocol.npt_time", "time (ps) of the restrained NPT stage"},
      {"protocol.production_time", "time (ps) of the production stage"},
      {"protocol.temperature", "temperature (K)"},
      {"protocol.pressure", "pressure (bar)"},
      {"protocol.cutoff", "length (nm): nonbonded cutoff; the box must be at least twice as wide"},
  };
  return keys;
}

namespace {

std::string trimmed(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// A quantity > 0 (>= 0 with allow_zero) in `d`, or why not.
std::string quantity(const std::string& text, Dimension d, double& out, bool allow_zero = false) {
  const QuantityParse q = parse_quantity(text, d);
  if (!q.value) return q.error;  // also a number that overflows in nm ("1e308 um")
  if (!(*q.value > 0.0) && !(allow_zero && *q.value == 0.0))
    return fmt::format("must be {} than zero, got '{}'", allow_zero ? "no less" : "greater", text);
  out = *q.value;
  return "";
}

std::string boolean(const std::string& text, bool& out) {
  const std::string s = trimmed(text);
  if (s == "true" || s == "yes" || s == "on") out = true;
  else if (s == "false" || s == "no" || s == "off") out = false;
  else return fmt::format("expected true or false, got '{}'", text);
  return "";
}

std::string one_of(const std::string& text, const std::vector<std::string>& options, std::string& out) {
  const std::string s = trimmed(text);
  std::string list;
  for (const std::string& o : options) {
    if (o == s) {
      out = o;
      return "";
    }
    list += (list.empty() ? "" : " | ") + o;
  }
  const std::string near = closest_match(s, options);
  return fmt::format("expected {}, got '{}'{}", list, text, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near));
}

// The parsers of set_prepare_value: `v` is the trimmed value, `text` the value as given (for messages).

std::string parse_ph(const std::string& v, const std::string& text, double& out) {
  char* end = nullptr;
  const double ph = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(ph >= 0.0 && ph <= 14.0))
    return fmt::format("expected a pH from 0 to 14, got '{}'", text);
  out = ph;
  return "";
}

// CHAIN:NUMBER[ICODE]=VARIANT.
std::string parse_variant(const std::string& v, const std::string& text, std::map<std::string, std::string>& variants) {
  const std::size_t eq = v.find('=');
  const std::size_t colon = v.find(':');
  if (eq == std::string::npos || colon == std::string::npos || colon > eq || eq + 1 == v.size())
    return fmt::format("expected CHAIN:NUMBER[ICODE]=VARIANT (A:45=HIE), got '{}'", text);
  const std::string residue = trimmed(v.substr(0, eq));
  const std::string number = residue.substr(residue.find(':') + 1);
  char* end = nullptr;
  std::strtol(number.c_str(), &end, 10);
  if (end == number.c_str() || (*end != '\0' && end[1] != '\0'))
    return fmt::format("expected CHAIN:NUMBER[ICODE]=VARIANT (A:45=HIE; NUMBER a residue number, ICODE one "
                       "letter), got '{}'",
                       text);
  variants[residue] = trimmed(v.substr(eq + 1));
  return "";
}

// Residue names separated by commas ("NAG,HEM"), each 1 to 5 letters, digits, '+' or '-' (upper-cased), appended.
std::string parse_residue_names(const std::string& v, const std::string& text, std::vector<std::string>& names) {
  std::vector<std::string> found;
  std::stringstream in(v);
  for (std::string word; std::getline(in, word, ',');) {
    word = trimmed(word);
    const bool ok = !word.empty() && word.size() <= 5 && std::all_of(word.begin(), word.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '+' || c == '-';
    });
    if (!ok)
      return fmt::format("expected residue names separated by commas (NAG,HEM; each 1 to 5 letters or digits), got "
                         "'{}'",
                         text);
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
    found.push_back(word);
  }
  if (found.empty()) return fmt::format("expected residue names separated by commas (NAG,HEM), got '{}'", text);
  for (const std::string& name : found)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return "";
}

std::string parse_box(const std::string& v, const std::string& text, std::optional<std::array<double, 3>>& out) {
  std::string list = v;
  for (char& c : list)
    if (c == ',') c = ' ';
  // "6 6 6", "6,6,6", "6 6 6 nm", "6 nm, 6 nm, 7 nm", "60A 60A 70A": three numbers, each with an optional unit
  // (a word that starts with a letter belongs to the number before it); a unit only on the last applies to all.
  std::istringstream in(list);
  std::vector<std::string> words;
  for (std::string w; in >> w;) {
    const unsigned char c0 = static_cast<unsigned char>(w[0]);
    if (!words.empty() && !(std::isdigit(c0) || c0 == '.' || c0 == '-' || c0 == '+')) words.back() += " " + w;
    else words.push_back(w);
  }
  if (words.size() != 3) return fmt::format("expected three lengths a, b, c (nm), got '{}'", text);
  const auto has_unit = [](const std::string& w) {
    return std::any_of(w.begin(), w.end(), [](unsigned char c) { return std::isalpha(c) || c >= 0x80; });
  };
  std::string common_unit;
  if (!has_unit(words[0]) && !has_unit(words[1]) && has_unit(words[2])) {
    // The unit starts after the number; a last length whose letters are only e/E ("7E") has none, and is then
    // refused below as a length with an unknown unit (found by fuzz_prepare_config: substr(npos) threw).
    const std::size_t at = words[2].find_first_not_of("0123456789.eE+- ");
    if (at != std::string::npos) common_unit = " " + words[2].substr(at);
  }
  std::array<double, 3> box{};
  for (int i = 0; i < 3; ++i) {
    const std::string& w = words[static_cast<std::size_t>(i)];
    const std::string e = quantity(i < 2 ? w + common_unit : w, Dimension::Length,
                                   box[static_cast<std::size_t>(i)]);
    if (!e.empty()) return e;
  }
  out = box;
  return "";
}

std::string parse_seed(const std::string& v, const std::string& text, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long s = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || end == v.c_str() || *end != '\0' || errno == ERANGE)
    return fmt::format("expected a whole number from 0 to {}, got '{}'", std::numeric_limits<std::uint64_t>::max(),
                       text);
  out = s;
  return "";
}

// A stage's length: a whole number of the protocol's 2 fs steps (what `mdsim run` then accepts).
std::string protocol_time(const std::string& v, double& out_ps) {
  double t = 0;
  const std::string e = quantity(v, Dimension::Time, t, true);
  if (!e.empty()) return e;
  constexpr double kStepPs = 0.002;  // the protocol's time step (prepare/protocol)
  const double steps = t / kStepPs;
  if (std::abs(steps - std::round(steps)) > 1e-6 * std::max(1.0, steps))
    return fmt::format("{:g} ps is not a whole number of the protocol's 2 fs steps: e.g. {:g} ps", t,
                       std::max(1.0, std::round(steps)) * kStepPs);
  out_ps = t;
  return "";
}

}  // namespace

std::string set_prepare_value(PrepareSettings& st, const std::string& key, const std::string& text) {
  PrepareOptions& o = st.options;
  PrepareFiles& f = st.files;
  const std::string v = trimmed(text);
  if (key == "input" || key == "output" || key == "config") {
    if (v.empty()) return "expected a file name";
    (key == "input" ? f.input : key == "output" ? f.output : f.config) = v;
    return "";
  }
  if (key == "forcefield") {
    if (v.empty()) return "expected a force-field XML file name";
    o.forcefield.push_back(v);
    o.forcefield_given = true;
    return "";
  }
  if (key == "remove_heterogens") return boolean(v, o.remove_heterogens);
  if (key == "keep_heterogens") return parse_residue_names(v, text, o.keep_heterogens);
  if (key == "ph") return parse_ph(v, text, o.ph);
  if (key == "variant") return parse_variant(v, text, o.variants);
  if (key == "solvent") return boolean(v, o.solvate);
  if (key == "neutralize") return boolean(v, o.neutralize);
  if (key == "padding") {
    const std::string e = quantity(v, Dimension::Length, o.padding_nm);
    if (e.empty()) o.box_nm.reset();
    return e;
  }
  if (key == "box") return parse_box(v, text, o.box_nm);
  if (key == "box_shape") {
    std::string s;
    const std::string e = one_of(v, {"cube", "dodecahedron", "octahedron"}, s);
    if (!e.empty()) return e;
    o.box_shape = s == "cube" ? BoxShape::Cube : s == "dodecahedron" ? BoxShape::Dodecahedron : BoxShape::Octahedron;
    return "";
  }
  if (key == "water_model") return one_of(v, {"tip3p", "tip4pew"}, o.water_model);
  if (key == "ionic_strength") return quantity(v, Dimension::Concentration, o.ionic_strength_molar, true);
  if (key == "positive_ion") return one_of(v, {"Na+", "K+"}, o.positive_ion);
  if (key == "negative_ion") return one_of(v, {"Cl-"}, o.negative_ion);
  if (key == "seed") return parse_seed(v, text, o.seed);
  if (key == "chain_breaks") {
    std::string s;
    const std::string e = one_of(v, {"error", "split"}, s);
    if (e.empty()) o.split_chain_breaks = s == "split";
    return e;
  }
  if (key == "protocol.restraint_k") return quantity(v, Dimension::ForceConstant, o.restraint_k_kj_per_mol_nm2, true);
  if (key == "protocol.nvt_time") return protocol_time(v, o.nvt_time_ps);
  if (key == "protocol.npt_time") return protocol_time(v, o.npt_time_ps);
  if (key == "protocol.production_time") return protocol_time(v, o.production_time_ps);
  if (key == "protocol.temperature") return quantity(v, Dimension::Temperature, o.temperature_k);
  if (key == "protocol.pressure") return quantity(v, Dimension::Pressure, o.pressure_bar);
  if (key == "protocol.cutoff") return quantity(v, Dimension::Length, o.cutoff_nm);
  return fmt::format("unknown setting '{}'", key);
}

PrepareSettings load_prepare_settings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_prepare_settings(buffer.str(), path, fs::path(path).parent_path().string());
}

PrepareSettings parse_prepare_settings(const std::string& text, const std::string& path, const std::string& base) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(located(path, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                             "not valid YAML: " + e.msg));
  }
  const ConfigReader r(path, base);
  if (!root.IsMap() || !root["prepare"])
    r.fail(root, "no 'prepare:' section: the settings of `mdsim prepare` go under a top-level key 'prepare' "
                 "(docs/prepare.md)");
  const YAML::Node section = root["prepare"];
  std::vector<std::string> top, protocol;
  for (const PrepareKey& k : prepare_keys()) {
    const std::string name = k.key;
    if (name.rfind("protocol.", 0) == 0) protocol.push_back(name.substr(9));
    else if (name != "variant") top.push_back(name);
  }
  top.push_back("variants");
  top.push_back("protocol");
  r.check_keys(section, top, "prepare");
  if (section["box"] && section["padding"])
    r.fail(section["padding"], "'prepare.padding' and 'prepare.box' both given: a box is sized by one of them");
  if (section["box"] && section["box_shape"] && section["box_shape"].IsScalar() &&
      trimmed(section["box_shape"].Scalar()) != "cube")
    r.fail(section["box_shape"], "'prepare.box_shape' and 'prepare.box' both given: 'box' is a rectangular box; give "
                                 "'padding' with a box_shape instead");

  PrepareSettings st;
  st.source = path;
  const auto note = [&](const std::string& key, const YAML::Node& n) {
    const YAML::Mark m = n.Mark();
    if (!m.is_null()) st.locations["prepare." + key] = {m.line + 1, m.column + 1};
  };
  const auto set = [&](const std::string& key, const YAML::Node& n) {
    if (!n.IsScalar()) r.fail(n, fmt::format("'prepare.{}' must be a single value", key));
    const std::string e = set_prepare_value(st, key, n.Scalar());
    if (!e.empty()) r.fail(n, fmt::format("'prepare.{}': {}", key, e));
    note(key, n);
  };
  for (const auto& kv : section) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& n = kv.second;
    if (key == "forcefield") {
      st.options.forcefield.clear();
      if (n.IsSequence()) {
        if (n.size() == 0) r.fail(n, "'prepare.forcefield' is empty: name at least one force-field XML file");
        for (const auto& item : n) {
          set("forcefield", item);
          r.check_forcefield_file(item, item.Scalar());
        }
      } else {
        set("forcefield", n);
        r.check_forcefield_file(n, n.Scalar());
      }
    } else if (key == "box" && n.IsSequence()) {
      std::string joined;
      for (const auto& item : n) {
        if (!item.IsScalar()) r.fail(item, "'prepare.box' must list three lengths");
        joined += (joined.empty() ? "" : ",") + item.Scalar();
      }
      const std::string e = set_prepare_value(st, "box", joined);
      if (!e.empty()) r.fail(n, "'prepare.box': " + e);
      note(key, n);
    } else if (key == "keep_heterogens" && n.IsSequence()) {
      for (const auto& item : n) {
        if (!item.IsScalar()) r.fail(item, "'prepare.keep_heterogens' must list residue names, e.g. [NAG, HEM]");
        const std::string e = set_prepare_value(st, "keep_heterogens", item.Scalar());
        if (!e.empty()) r.fail(item, "'prepare.keep_heterogens': " + e);
      }
      note(key, n);
    } else if (key == "variants") {
      if (!n.IsMap()) r.fail(n, "'prepare.variants' must map residues to variants, e.g. {\"A:45\": HIE}");
      for (const auto& v : n) {
        if (!v.first.IsScalar() || !v.second.IsScalar()) r.fail(v.first, "'prepare.variants': expected \"CHAIN:NUMBER\": VARIANT");
        const std::string e = set_prepare_value(st, "variant", v.first.Scalar() + "=" + v.second.Scalar());
        if (!e.empty()) r.fail(v.first, "'prepare.variants': " + e);
      }
      note(key, n);
    } else if (key == "protocol") {
      r.check_keys(n, protocol, "prepare.protocol");
      for (const auto& p : n) set("protocol." + p.first.Scalar(), p.second);
    } else {
      set(key, n);
    }
  }
  for (std::string* file : {&st.files.input, &st.files.output, &st.files.config})
    if (!file->empty()) *file = r.path(*file);
  if (st.files.input.empty()) r.fail(section, "'prepare.input' is missing: name the structure to prepare");
  return st;
}

}  // namespace mdsim
