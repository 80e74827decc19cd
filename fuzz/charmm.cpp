// libFuzzer target of the CHARMM readers (io/charmm_parameters.hpp, io/charmm_psf.hpp, io/charmm_crd.hpp). The input
// is a stream file's text (`read rtf card` / `read para card` blocks), a line "@@", then a PSF's text; without the
// "@@" line, the whole input is a PSF read with a small fixed parameter set. The input is also read as a parameter
// file and as a CHARMM crd (without and with an expected count of 9 atoms). The readers document InputError for bad
// input; any other exception, a sanitizer report, a crash, a timeout or a blow-up of memory is a finding, and so is an
// accepted model or coordinate file that breaks what the engine relies on (fuzz/system_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/charmm_crd.hpp"
#include "io/charmm_psf.hpp"
#include "system_checks.hpp"

namespace {

const char* const kParameters =
    "ATOMS\nMASS 1 HW 1.008\nMASS 2 OW 15.999\nMASS 3 CT 12.011\nMASS 4 LP 0.0\n"
    "BONDS\nOW HW 450.0 0.9572\nCT HW 340.0 1.09\nCT OW 320.0 1.41\nCT CT 222.5 1.53\n"
    "ANGLES\nHW OW HW 55.0 104.52\nHW CT HW 35.5 109.0 5.4 1.802\nX CT X 30.0 110.0\n"
    "DIHEDRALS\nX CT CT X 0.2 3 0.0\nX CT OW X 0.2 3 0.0\nIMPROPER\nCT X X HW 96.0 0 0.0\n"
    "NONBONDED nbxmod 5 e14fac 1.0\nHW 0.0 -0.046 0.2245\nOW 0.0 -0.1521 1.7682 0.0 -0.1 1.6\nCT 0.0 -0.08 2.06\n"
    "LP 0.0 0.0 0.0\nNBFIX\nOW CT -0.2 3.6\nEND\n";

void read_psf(const std::string& psf, const mdsim::CharmmParameters& params) {
  mdsim::TopologyFileOptions options;
  options.nonbonded.method = mdsim::NonbondedMethod::PME;
  options.box = mdsim::Boxd{mdsim::Vec3d(3, 0, 0), mdsim::Vec3d(0, 3, 0), mdsim::Vec3d(0, 0, 3)};
  try {
    mdsim_fuzz::check_topology_file_model(mdsim::read_charmm_psf_text(psf, "fuzz.psf", params, options));
  } catch (const mdsim::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::size_t split = text.find("\n@@\n");
  mdsim::CharmmParameters params;
  try {
    if (split == std::string::npos) {
      mdsim::read_charmm_parameter_text(kParameters, "fixed.prm", mdsim::CharmmFileKind::Parameters, params);
      read_psf(text, params);
    } else {
      mdsim::read_charmm_parameter_text(text.substr(0, split), "fuzz.str", mdsim::CharmmFileKind::Stream, params);
      read_psf(text.substr(split + 4), params);
    }
  } catch (const mdsim::InputError&) {
  }
  try {
    mdsim::CharmmParameters other;
    mdsim::read_charmm_parameter_text(text, "fuzz.prm", mdsim::CharmmFileKind::Parameters, other);
  } catch (const mdsim::InputError&) {
  }
  for (const int expected : {-1, 9}) {
    try {
      const mdsim::CoordinateFile c = mdsim::read_charmm_crd_text(text, "fuzz.crd", expected);
      if (expected >= 0 && static_cast<int>(c.positions_nm.size()) != expected) std::abort();
      mdsim_fuzz::check_coordinates(c);
    } catch (const mdsim::InputError&) {
    }
  }
  return 0;
}
