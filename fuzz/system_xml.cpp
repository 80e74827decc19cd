// libFuzzer target of the OpenMM System XML and State XML readers (io/system_xml.hpp): the input is the text of one
// XML file, read as a serialized System (parse_system_xml) and as a serialized State (parse_state_xml). Both document
// InputError for bad input; any other exception, a sanitizer report, a crash or a timeout is a finding, and so is an
// accepted System that breaks what the engine relies on (fuzz/system_checks.hpp: every term's, site's and LJ type's
// particles in range, finite per-particle parameters) or a State with a non-finite position.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/system_xml.hpp"
#include "system_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    mdsim_fuzz::check_system(mdsim::parse_system_xml(text, "fuzz.xml").system);
  } catch (const mdsim::InputError&) {
  }
  try {
    const mdsim::StateXml state = mdsim::parse_state_xml(text, "fuzz.xml");
    for (const mdsim::Vec3d& x : state.positions_nm)
      if (!mdsim_fuzz::finite(x)) std::abort();
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
