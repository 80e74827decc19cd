// libFuzzer target of the AMBER prmtop reader (io/amber_prmtop.hpp): the input is the text of a prmtop (parm7) file,
// read as the engine reads it for PME, with a 3 nm box given by the caller (the coordinates' box, used when the prmtop
// has none; with a box given, the nonbonded method changes nothing else in the reader). read_amber_prmtop_text documents InputError for bad input; any
// other exception, a sanitizer report, a crash, a timeout or a blow-up of memory (a count in POINTERS far beyond what
// the file holds) is a finding, and so is an accepted model that breaks what the engine relies on
// (fuzz/system_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "io/amber_prmtop.hpp"
#include "system_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mdsim::TopologyFileOptions options;
  options.nonbonded.method = mdsim::NonbondedMethod::PME;
  options.box = mdsim::Boxd{mdsim::Vec3d(3, 0, 0), mdsim::Vec3d(0, 3, 0), mdsim::Vec3d(0, 0, 3)};
  try {
    mdsim_fuzz::check_topology_file_model(mdsim::read_amber_prmtop_text(text, "fuzz.prmtop", options));
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
