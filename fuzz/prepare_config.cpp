// libFuzzer target of the `mdsim prepare` settings (io/prepare_config.hpp): the input is the text of a settings
// file. It is read twice:
//   1. whole, by parse_prepare_settings (what load_prepare_settings does after reading the file), against
//      examples/ala2_water as the file's folder (relative paths and force-field names resolve there);
//   2. line by line, as the command line hands values to set_prepare_value: each line "key: value" or
//      "key=value" (the key trimmed, so a settings file's `  padding: 1.2 nm` sets padding) sets that key on one
//      PrepareSettings, whatever the key (a fuzzed key must come back as "unknown setting").
// parse_prepare_settings documents InputError for bad input and set_prepare_value returns why a value is wrong;
// any other exception, a sanitizer report, a crash or a timeout is a finding, and so are accepted settings that
// break what `mdsim prepare` relies on (checked below: finite, positive lengths, times, temperature, pressure,
// cutoff; a pH from 0 to 14; an input file).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/prepare_config.hpp"

namespace {

bool finite_at_least(double v, double low, bool allow_equal) {
  return std::isfinite(v) && (v > low || (allow_equal && v == low));
}

// What set_prepare_value promises for a value it accepted.
void check_options(const mdsim::PrepareOptions& o) {
  if (!(o.ph >= 0.0 && o.ph <= 14.0)) std::abort();
  if (!finite_at_least(o.padding_nm, 0.0, false)) std::abort();
  if (o.box_nm)
    for (double edge : *o.box_nm)
      if (!finite_at_least(edge, 0.0, false)) std::abort();
  if (!finite_at_least(o.ionic_strength_molar, 0.0, true)) std::abort();
  if (!finite_at_least(o.restraint_k_kj_per_mol_nm2, 0.0, true)) std::abort();
  for (double t : {o.nvt_time_ps, o.npt_time_ps, o.production_time_ps})
    if (!finite_at_least(t, 0.0, true)) std::abort();
  if (!finite_at_least(o.temperature_k, 0.0, false) || !finite_at_least(o.pressure_bar, 0.0, false) ||
      !finite_at_least(o.cutoff_nm, 0.0, false))
    std::abort();
  if (o.forcefield.empty()) std::abort();
  for (const auto& f : o.forcefield)
    if (f.empty()) std::abort();
}

std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = MDSIM_SOURCE_DIR "/examples/ala2_water";
  const std::string text(reinterpret_cast<const char*>(data), size);

  // 1. The whole file.
  try {
    const mdsim::PrepareSettings s = mdsim::parse_prepare_settings(text, "fuzz.yaml", base_dir);
    if (s.files.input.empty() || s.source != "fuzz.yaml") std::abort();
    check_options(s.options);
  } catch (const mdsim::InputError&) {
  }

  // 2. Its lines as key/value pairs of the command line (at most 64 lines, to keep each input fast).
  mdsim::PrepareSettings settings;
  std::size_t pos = 0;
  for (int n = 0; n < 64 && pos <= text.size(); ++n) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t split = line.find_first_of(":=");
    if (split == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, split));
    try {
      const std::string why = mdsim::set_prepare_value(settings, key, line.substr(split + 1));
      (void)why;
    } catch (const mdsim::InputError&) {
    }
    check_options(settings.options);
  }
  return 0;
}
