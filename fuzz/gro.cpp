// libFuzzer target of the GROMACS .gro reader (io/gro_reader.hpp): the input is the text of a .gro file
// (parse_gro). It documents InputError for bad input; any other exception, a sanitizer report, a crash, a timeout
// or a blow-up of memory (an atom count far beyond the file's lines) is a finding, and so are accepted coordinates
// that are not finite or velocities not one per atom (fuzz/system_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "io/gro_reader.hpp"
#include "system_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    mdsim_fuzz::check_coordinates(mdsim::parse_gro(std::string(reinterpret_cast<const char*>(data), size), "fuzz.gro"));
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
