// libFuzzer target of the OpenMM System XML and State XML readers (io/system_xml.hpp): the input is the text of one
// XML file, read as a serialized System (parse_system_xml) and as a serialized State (parse_state_xml). Both document
// InputError for bad input; any other exception, a sanitizer report, a crash or a timeout is a finding, and so is an
// accepted System that breaks what the engine relies on (checked below: every term's particles in range, finite
// per-particle parameters and positions).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "io/system_xml.hpp"

namespace {

void check_system(const mdsim::System& s) {
  const int n = s.num_particles();
  if (static_cast<int>(s.charge_e.size()) != n || static_cast<int>(s.sigma_nm.size()) != n ||
      static_cast<int>(s.epsilon_kj_per_mol.size()) != n)
    std::abort();
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (!std::isfinite(s.mass_amu[k]) || !std::isfinite(s.charge_e[k]) || !std::isfinite(s.sigma_nm[k]) ||
        !std::isfinite(s.epsilon_kj_per_mol[k]))
      std::abort();
  }
  auto in_range = [n](int a) { return a >= 0 && a < n; };
  s.for_each_bonded([&](const auto& terms) {
    for (const auto& term : terms)
      for (const int a : term.atoms())
        if (!in_range(a)) std::abort();
  });
  for (const auto& c : s.constraints)
    if (!in_range(c.i) || !in_range(c.j)) std::abort();
  for (const auto& e : s.exceptions)
    if (!in_range(e.i) || !in_range(e.j)) std::abort();
  for (const auto& w : s.rigid_waters)
    if (!in_range(w.oxygen) || !in_range(w.hydrogen1) || !in_range(w.hydrogen2)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_system(mdsim::parse_system_xml(text, "fuzz.xml").system);
  } catch (const mdsim::InputError&) {
  }
  try {
    const mdsim::StateXml state = mdsim::parse_state_xml(text, "fuzz.xml");
    for (const mdsim::Vec3d& x : state.positions_nm)
      if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) std::abort();
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
