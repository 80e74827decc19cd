// TIP5P through the force-field template path (model/forcefield: two outOfPlane <VirtualSite>s per water in the bundled
// tip5p.xml) on the CPU platform: 54 TIP5P waters from OpenMM's tip5p.pdb (tests/data/make_tip5p_reference.py) with
// PME. Energies by term within 1e-6 relative of OpenMM 7.7's Reference platform, forces within 1e-6 relative RMS in
// getState's convention (the sites' rows moved away first, so the evaluator places them; a site's row keeps the force
// on the site itself); the rigid water runs with both sites re-placed after SETTLE.
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
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

const std::string kData = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";

System build(ConstraintMode constraints, bool rigid_water) {
  static const ForceFieldData ff = load_forcefields({"tip5p.xml"}, "");
  return mdsim_test::template_system(ff, kData + "tip5p_box.pdb", NonbondedMethod::PME, true, constraints, rigid_water);
}

std::vector<Vec3d> displaced_sites(const System& s, std::vector<Vec3d> x) {
  for (const VirtualSite& v : s.virtual_sites) x[static_cast<std::size_t>(v.particle)] += Vec3d(10, -10, 10);
  return x;
}

}  // namespace

TEST_CASE("TIP5P from tip5p.xml: two out-of-plane sites per water; CPU energies and forces equal OpenMM's") {
  const Json ref = mdsim_test::read_json(kData + "tip5p_box.json");
  const System s = build(ConstraintMode::None, false);
  CHECK(s.num_particles() == ref["counts"]["particles"].num());
  CHECK(static_cast<double>(s.exceptions.size()) == ref["counts"]["exceptions"].num());
  REQUIRE(static_cast<double>(s.virtual_sites.size()) == ref["counts"]["virtual_sites"].num());
  CHECK(s.virtual_sites[0].type == VirtualSiteType::OutOfPlane);
  CHECK(s.virtual_sites[0].particle == 3);
  CHECK(s.virtual_sites[1].weights[2] == 6.4437903);
  const std::vector<Vec3d> want_x = mdsim_test::json_vec3_list(ref["positions_nm"]);
  std::vector<Vec3d> placed = displaced_sites(s, want_x);
  place_virtual_sites(s, placed);
  CHECK(mdsim_test::max_abs_difference(placed, want_x) < 1e-12);

  CpuForceEvaluator evaluator(s);
  std::vector<Vec3d> f;
  const EnergyTerms t = evaluator.compute(displaced_sites(s, want_x), &f, kTermAll);
  const Json& e = ref["energies_kj_per_mol"];
  const std::pair<const char*, double> terms[] = {
      {"bond", t.bond}, {"angle", t.angle}, {"nonbonded", t.nonbonded}, {"total", t.total}};
  for (const auto& [name, value] : terms) {
    INFO(name << ": mdsim " << value << ", OpenMM " << e[name].num());
    CHECK(std::fabs(value - e[name].num()) <= 1e-6 * std::max(1.0, std::fabs(e[name].num())));
  }
  const double rms = mdsim_test::relative_rms_difference(f, mdsim_test::json_vec3_list(ref["forces_kj_per_mol_nm"]));
  INFO("forces: relative RMS difference " << rms);
  CHECK(rms <= 1e-6);
}

TEST_CASE("rigid TIP5P runs on the CPU: SETTLE keeps the water rigid and both sites follow") {
  const System s = build(ConstraintMode::HBonds, true);
  REQUIRE(s.rigid_waters.size() == 54);
  const DynamicsSettings settings = mdsim_test::langevin(5);
  auto ctx = make_cpu_context(s, settings);
  const Json ref = mdsim_test::read_json(kData + "tip5p_box.json");
  ctx->set_positions(displaced_sites(s, mdsim_test::json_vec3_list(ref["positions_nm"])));
  ctx->apply_constraints(1e-10);
  ctx->set_velocities_to_temperature(300.0, 11);
  ctx->step(20);
  const SimulationState st = ctx->state(StateRequest{true, true, true, true});
  CHECK(std::isfinite(st.potential.total));
  CHECK(st.degrees_of_freedom == 3 * 54 * 3 - 3 * 54 - 3);
  std::vector<Vec3d> placed = st.positions_nm;
  place_virtual_sites(s, placed);
  CHECK(mdsim_test::max_abs_difference(placed, st.positions_nm) <= 1e-12);
}
