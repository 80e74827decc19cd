// libFuzzer target of the YAML config reader (io/config.hpp): the input is the text of a config file.
// It is parsed twice against a fixed base folder that exists (examples/ala2_water, whose PDB a config
// names as `pdb: ala2_water.pdb`): first without the file checks (check_files = false), so configs that
// name other PDB files still reach every section's validation, then, when that succeeds, with them.
// parse_config documents InputError for bad input; any other exception, a sanitizer report, a crash or
// a timeout is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "io/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = MDSIM_SOURCE_DIR "/examples/ala2_water";
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    mdsim::parse_config(text, "fuzz.yaml", base_dir, false);
  } catch (const mdsim::InputError&) {
    return 0;
  }
  try {
    mdsim::parse_config(text, "fuzz.yaml", base_dir, true);
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
