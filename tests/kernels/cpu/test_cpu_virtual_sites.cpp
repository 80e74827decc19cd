// Virtual sites on the CPU platform, on a real system: the serialized OpenMM System of alanine dipeptide in TIP4P-Ew
// water (749 ThreeParticleAverageSites; tests/data/make_system_xml_tip4pew.py) read by io/system_xml. Sites placed as
// OpenMM places them (1e-9 nm); every energy term within 1e-6 relative of OpenMM 7.7's Reference platform and the
// per-term and total forces within 1e-6 relative RMS, in getState's convention (a site's row keeps the force on the
// site, its parents' rows include the spread share); the reader's refusals name file, line and particle; a short
// NVE run conserves energy, keeps the sites placed and counts no degrees of freedom for them.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/virtual_sites.hpp"
#include "support/catch.hpp"
#include "support/thrown.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;

namespace {

double max_site_misplacement(const System& s, const std::vector<Vec3d>& x) {
  std::vector<Vec3d> placed = x;
  place_virtual_sites(s, placed);
  return mdsim_test::max_abs_difference(placed, x);
}

}  // namespace

TEST_CASE("the TIP4P-Ew System's virtual sites are read as OpenMM wrote them and placed as OpenMM places them") {
  const System s = mdsim_test::tip4pew_system();
  REQUIRE(s.num_particles() == 3018);
  REQUIRE(s.virtual_sites.size() == 749);
  const VirtualSite& first = s.virtual_sites.front();
  CHECK(first.type == VirtualSiteType::ThreeParticleAverage);
  CHECK(first.particle == 25);  // the PDB's first water: O 22, H1 23, H2 24, M 25 (0-based)
  CHECK(first.parents == std::array<int, 3>{22, 23, 24});
  CHECK(first.weights[0] == Catch::Approx(0.786646558).epsilon(1e-9));
  CHECK(s.mass_amu[25] == 0.0);
  CHECK_NOTHROW(check_virtual_sites(s));
  const std::vector<Vec3d> x = mdsim_test::tip4pew_positions();
  std::vector<Vec3d> placed = mdsim_test::with_sites_displaced(s, x);
  place_virtual_sites(s, placed);
  const double worst = mdsim_test::max_abs_difference(placed, x);
  INFO("largest site position difference from OpenMM's: " << worst << " nm");
  CHECK(worst <= 1e-9);
}

TEST_CASE("TIP4P-Ew with virtual sites: CPU energies and forces by term equal OpenMM's") {
  const System s = mdsim_test::tip4pew_system();
  mdsim_test::check_tip4pew_terms(s);  // the evaluator places the sites itself
}

TEST_CASE("the System XML reader refuses virtual sites it cannot hold, naming file, line and particle") {
  const std::string head =
      "<?xml version=\"1.0\" ?>\n<System openmmVersion=\"7.7\" type=\"System\" version=\"1\">\n<Particles>\n"
      "<Particle mass=\"16\"/>\n<Particle mass=\"1\"/>\n<Particle mass=\"1\"/>\n<Particle mass=\"1\"/>\n";
  const std::string tail = "</Particles>\n<Constraints/>\n<Forces/>\n</System>\n";
  const std::string four =
      "<Particle mass=\"0\">\n<LocalCoordinatesSite p1=\"0\" p2=\"1\" p3=\"2\" p4=\"3\" wo1=\"1\" wo2=\"0\" wo3=\"0\" "
      "wo4=\"0\" wx1=\"-1\" wx2=\"1\" wx3=\"0\" wx4=\"0\" wy1=\"-1\" wy2=\"0\" wy3=\"1\" wy4=\"0\" pos1=\"0\" pos2=\"0\" "
      "pos3=\"0\"/>\n</Particle>\n";
  const std::string m1 = mdsim_test::input_error_of([&] { parse_system_xml(head + four + tail, "four.xml"); });
  CHECK(m1.find("four.xml:9:") == 0);
  CHECK(m1.find("virtual site 4") != std::string::npos);
  CHECK(m1.find("4 parent particles") != std::string::npos);
  const std::string far =
      "<Particle mass=\"0\">\n<ThreeParticleAverageSite p1=\"0\" p2=\"1\" p3=\"7\" w1=\".8\" w2=\".1\" w3=\".1\"/>\n"
      "</Particle>\n";
  const std::string m2 = mdsim_test::input_error_of([&] { parse_system_xml(head + far + tail, "far.xml"); });
  CHECK(m2.find("far.xml:9:") == 0);
  CHECK(m2.find("virtual site 4: parent particle p3 = 7 is out of range") != std::string::npos);
  const std::string heavy =
      "<Particle mass=\"2\">\n<TwoParticleAverageSite p1=\"0\" p2=\"1\" w1=\".5\" w2=\".5\"/>\n</Particle>\n";
  const std::string m3 = mdsim_test::input_error_of([&] { parse_system_xml(head + heavy + tail, "heavy.xml"); });
  CHECK(m3.find("heavy.xml:9:") == 0);
  CHECK(m3.find("must have mass 0") != std::string::npos);
  const std::string ok = "<Particle mass=\"0\">\n<OutOfPlaneSite p1=\"0\" p2=\"1\" p3=\"2\" w12=\".1\" w13=\".2\" wc=\"1\"/>\n</Particle>\n";
  const SystemXml read = parse_system_xml(head + ok + tail, "ok.xml");
  REQUIRE(read.system.virtual_sites.size() == 1);
  CHECK(read.system.virtual_sites[0].type == VirtualSiteType::OutOfPlane);
  CHECK(read.system.virtual_sites[0].weights == std::array<double, 3>{0.1, 0.2, 1.0});
}

TEST_CASE("TIP4P-Ew NVE on the CPU: energy conserved, sites stay placed, no degrees of freedom for sites") {
  const System s = mdsim_test::tip4pew_system();
  DynamicsSettings settings;
  settings.integrator.type = IntegratorType::Verlet;
  // Flexible water: Verlet's energy error of the O-H stretches (period ~9 fs) grows as dt^2, tens of kJ/mol at 0.5 fs.
  settings.integrator.timestep_ps = 0.0001;
  settings.remove_cm_motion = false;
  auto ctx = make_cpu_context(s, settings);
  ctx->set_positions(mdsim_test::with_sites_displaced(s, mdsim_test::tip4pew_positions()));
  CHECK(max_site_misplacement(s, ctx->state(StateRequest{}).positions_nm) <= 1e-12);  // placed on set_positions
  ctx->set_velocities_to_temperature(300.0, 7);
  const StateRequest all{true, true, true, true};
  const SimulationState start = ctx->state(all);
  CHECK(start.degrees_of_freedom == 3 * (3018 - 749));
  for (const VirtualSite& v : s.virtual_sites) CHECK(norm(start.velocities_nm_per_ps[static_cast<std::size_t>(v.particle)]) == 0.0);
  const double e0 = start.potential.total + start.kinetic_kj_per_mol;
  double worst = 0.0;
  for (int block = 0; block < 5; ++block) {
    ctx->step(10);
    const SimulationState st = ctx->state(all);
    worst = std::max(worst, std::fabs(st.potential.total + st.kinetic_kj_per_mol - e0));
    CHECK(max_site_misplacement(s, st.positions_nm) <= 1e-12);
  }
  INFO("kinetic energy " << start.kinetic_kj_per_mol << " kJ/mol, largest total-energy change " << worst << " kJ/mol");
  CHECK(start.temperature_k == Catch::Approx(300.0).epsilon(0.05));
  CHECK(worst <= 1e-3 * start.kinetic_kj_per_mol);
}

TEST_CASE("water_sites: each water's one accepted site whose parents are all its atoms") {
  // Three waters: (0, 1, 2) with its site 3; (4, 5, 6) with two sites 7 and 8; (9, 10, 11) with a site 12 whose
  // parents reach into the first water. Only the first water has one.
  System s;
  s.mass_amu.assign(13, 1.0);
  const auto site = [](int particle, int a, int b, int c) {
    VirtualSite v;
    v.particle = particle;
    v.type = VirtualSiteType::ThreeParticleAverage;
    v.num_parents = 3;
    v.parents = {a, b, c};
    return v;
  };
  s.virtual_sites = {site(3, 0, 1, 2), site(7, 4, 5, 6), site(8, 6, 5, 4), site(12, 9, 10, 0)};
  const std::vector<std::array<int, 3>> waters{{0, 1, 2}, {4, 5, 6}, {9, 10, 11}};
  CHECK(water_sites(s, waters, [](const VirtualSite&) { return true; }) == std::vector<int>{0, -1, -1});
  // The water with two sites has one when the filter takes only one of them.
  CHECK(water_sites(s, waters, [](const VirtualSite& v) { return v.particle != 8; }) == std::vector<int>{0, 1, -1});
  CHECK(water_sites(s, waters, [](const VirtualSite&) { return false; }) == std::vector<int>{-1, -1, -1});
}
