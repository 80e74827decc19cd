// libFuzzer target of the AMBER coordinates reader (io/amber_coordinates.hpp): the input is the text of an inpcrd or
// rst7 file, read without an expected atom count (as the engine reads it) and expecting 22 atoms (as the tests'
// alanine dipeptide). read_amber_coordinates_text documents InputError for bad input; any other exception, a
// sanitizer report, a crash, a timeout or a blow-up of memory (an atom count far beyond the file's lines) is a
// finding, and so are accepted coordinates that are not finite, velocities not one per atom, or a count that is not
// the expected one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/amber_coordinates.hpp"
#include "system_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    mdsim_fuzz::check_coordinates(mdsim::read_amber_coordinates_text(text, "fuzz.inpcrd", -1));
  } catch (const mdsim::InputError&) {
  }
  try {
    const mdsim::CoordinateFile c = mdsim::read_amber_coordinates_text(text, "fuzz.inpcrd", 22);
    if (c.positions_nm.size() != 22) std::abort();
    mdsim_fuzz::check_coordinates(c);
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
