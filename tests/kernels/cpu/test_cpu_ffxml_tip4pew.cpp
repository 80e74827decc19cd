// TIP4P-Ew through the force-field template path (model/forcefield: <VirtualSite> in residue templates) on the CPU
// platform: alanine dipeptide in TIP4P-Ew water (shared/topologies ffxml_amber14_tip4pew_ala2: its PDB holds the 749
// M extra points) built from the bundled amber14-all.xml + amber14/tip4pew.xml by name. Every energy term within 1e-6
// relative of OpenMM 7.7's Reference platform and the per-term forces within 1e-6 relative RMS (getState's site
// rows); counts, the first site and the first water's exclusions equal OpenMM's createSystem under three constraint
// settings (tests/data/make_ffxml_tip4pew_counts.py); the rigid water (SETTLE on O, H, H, site re-placed) runs.
#include <cmath>
#include <string>
#include <vector>

#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "model/forcefield.hpp"
#include "platform/virtual_sites.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/flexible_systems.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

const std::string kInputs = std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/inputs/";

const ForceFieldData& amber14_tip4pew() {
  static const ForceFieldData ff = load_forcefields({"amber14-all.xml", "amber14/tip4pew.xml"}, "");
  return ff;
}

// The System as the reference (and make_ffxml_tip4pew_counts.py) builds it: PME 1.0 nm, tolerance 5e-4.
System build(ConstraintMode constraints, bool rigid_water) {
  return mdsim_test::template_system(amber14_tip4pew(), kInputs + "ffxml_amber14_tip4pew_ala2.pdb", NonbondedMethod::PME,
                                     true, constraints, rigid_water);
}

void check_counts(const System& s, const Json& want) {
  CHECK(s.num_particles() == want["particles"].num());
  CHECK(static_cast<double>(s.constraints.size()) == want["constraints"].num());
  CHECK(static_cast<double>(s.virtual_sites.size()) == want["virtual_sites"].num());
  CHECK(static_cast<double>(s.bonds.size()) == want["bonds"].num());
  CHECK(static_cast<double>(s.angles.size()) == want["angles"].num());
  CHECK(static_cast<double>(s.exceptions.size()) == want["exceptions"].num());
  int massless = 0;
  for (double m : s.mass_amu) massless += m == 0.0;
  CHECK(massless == want["massless"].num());
  REQUIRE_FALSE(s.virtual_sites.empty());
  const VirtualSite& v = s.virtual_sites.front();
  const Json& first = want["first_site"];
  CHECK(v.type == VirtualSiteType::ThreeParticleAverage);
  CHECK(v.particle == first["particle"].num());
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(v.parents[k] == first["parents"][k].num());
    CHECK(v.weights[k] == first["weights"][k].num());
  }
  // The first water's exclusions (the site shares its oxygen's), in OpenMM's order.
  std::vector<const NonbondedException*> water;
  for (const NonbondedException& e : s.exceptions)
    if (e.i >= v.particle - 3 && e.j >= v.particle - 3 && e.i <= v.particle && e.j <= v.particle) water.push_back(&e);
  const Json& rows = want["first_water_exceptions"];
  REQUIRE(water.size() == rows.size());
  for (std::size_t n = 0; n < water.size(); ++n) {
    CHECK(water[n]->i == rows[n][0].num());
    CHECK(water[n]->j == rows[n][1].num());
    CHECK(water[n]->charge_product_e2 == rows[n][2].num());
    CHECK(water[n]->epsilon_kj_per_mol == rows[n][3].num());
  }
}

}  // namespace

TEST_CASE("TIP4P-Ew from amber14/tip4pew.xml: sites, exclusions and constraints as OpenMM's createSystem builds them") {
  const Json want = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/ffxml_tip4pew_counts.json");
  SECTION("flexible") { check_counts(build(ConstraintMode::None, false), want["flexible"]); }
  SECTION("rigid water") {
    const System s = build(ConstraintMode::None, true);
    check_counts(s, want["rigid_water"]);
    CHECK(s.rigid_waters.size() == 749);
  }
  SECTION("HBonds and rigid water") {
    const System s = build(ConstraintMode::HBonds, true);
    check_counts(s, want["hbonds_rigid_water"]);
    REQUIRE(s.rigid_waters.size() == 749);
    const RigidWater& w = s.rigid_waters.front();
    CHECK(w.oxygen == 22);
    CHECK(w.hydrogen1 == 23);
    CHECK(w.hydrogen2 == 24);
    CHECK(w.oh_distance_nm == 0.09572);
  }
}

TEST_CASE("TIP4P-Ew from the template path: CPU energies and forces by term equal OpenMM's") {
  const System s = build(ConstraintMode::None, false);
  CHECK_NOTHROW(check_virtual_sites(s));
  mdsim_test::check_tip4pew_terms(s);
}

TEST_CASE("rigid TIP4P-Ew from the template path runs on the CPU: SETTLE keeps the water rigid, the site placed") {
  const System s = build(ConstraintMode::HBonds, true);
  const DynamicsSettings settings = mdsim_test::langevin(5);
  auto ctx = make_cpu_context(s, settings);
  ctx->set_positions(mdsim_test::with_sites_displaced(s, mdsim_test::tip4pew_positions()));
  ctx->set_velocities_to_temperature(300.0, 11);
  ctx->step(10);
  const SimulationState st = ctx->state(StateRequest{true, true, true, true});
  CHECK(std::isfinite(st.potential.total));
  CHECK(st.degrees_of_freedom == 3 * (3018 - 749) - 2259 - 3);
  double worst_constraint = 0.0;
  for (const DistanceConstraint& c : s.constraints)
    worst_constraint = std::max(worst_constraint, std::fabs(norm(st.positions_nm[static_cast<std::size_t>(c.i)] -
                                                                 st.positions_nm[static_cast<std::size_t>(c.j)]) -
                                                            c.distance_nm) / c.distance_nm);
  std::vector<Vec3d> placed = st.positions_nm;
  place_virtual_sites(s, placed);
  const double misplaced = mdsim_test::max_abs_difference(placed, st.positions_nm);
  INFO("after 10 steps of 2 fs: largest relative constraint error " << worst_constraint << ", largest site misplacement "
                                                                     << misplaced << " nm, temperature "
                                                                     << st.temperature_k << " K");
  CHECK(worst_constraint <= 1e-5);
  CHECK(misplaced <= 1e-12);
  CHECK(st.temperature_k > 200.0);
  CHECK(st.temperature_k < 400.0);
}
