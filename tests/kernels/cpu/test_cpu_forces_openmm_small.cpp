// CPU reference platform against OpenMM 7.7's Reference platform on small synthetic systems
// (tests/data/cpu_openmm_small.json, made by tests/data/make_cpu_openmm_small.py): random bonded
// terms, and 64 charged LJ particles with exclusions and scaled exceptions under every nonbonded
// method, with and without switching, dispersion correction, orthorhombic and triclinic PME.
#include <string>
#include <vector>

#include "kernels/cpu/cpu_forces.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::box_from;
using mdsim_test::Json;

namespace {

const Json& data() {
  static const Json j = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/cpu_openmm_small.json");
  return j;
}

System nonbonded_system(const Json& c) {
  System s;
  const size_t n = c["charges"].size();
  for (size_t i = 0; i < n; ++i) {
    s.mass_amu.push_back(1.0);
    s.charge_e.push_back(c["charges"][i].num());
    s.sigma_nm.push_back(c["sigmas"][i].num());
    s.epsilon_kj_per_mol.push_back(c["epsilons"][i].num());
  }
  for (const Json& e : c["exceptions"].array)
    s.exceptions.push_back({int(e[0].num()), int(e[1].num()), e[2].num(), e[3].num(), e[4].num()});
  const std::string method = c["method"].string;
  s.nonbonded.method = method == "NoCutoff"            ? NonbondedMethod::NoCutoff
                       : method == "CutoffNonPeriodic" ? NonbondedMethod::CutoffNonPeriodic
                       : method == "CutoffPeriodic"    ? NonbondedMethod::CutoffPeriodic
                                                       : NonbondedMethod::PME;
  if (!c["cutoff"].is_null()) s.nonbonded.cutoff_nm = c["cutoff"].num();
  if (!c["switch"].is_null()) s.nonbonded.switch_distance_nm = c["switch"].num();
  s.nonbonded.dispersion_correction = c["dispersion_correction"].boolean;
  if (!c["ewald_tolerance"].is_null()) s.nonbonded.ewald_tolerance = c["ewald_tolerance"].num();
  if (!c["box"].is_null()) s.box = box_from(c["box"]);
  return s;
}

}  // namespace

TEST_CASE("bonded terms match OpenMM", "[cpu][openmm]") {
  const Json& b = data()["bonded"];
  System s;
  const std::vector<Vec3d> x = mdsim_test::json_vec3_list(b["positions"]);
  for (size_t i = 0; i < x.size(); ++i) {
    s.mass_amu.push_back(12.0);
    s.charge_e.push_back(0.0);
    s.sigma_nm.push_back(0.3);
    s.epsilon_kj_per_mol.push_back(0.0);
  }
  for (const Json& t : b["bonds"].array) s.bonds.push_back({int(t[0].num()), int(t[1].num()), t[2].num(), t[3].num()});
  for (const Json& t : b["angles"].array)
    s.angles.push_back({int(t[0].num()), int(t[1].num()), int(t[2].num()), t[3].num(), t[4].num()});
  for (const Json& t : b["torsions"].array)
    s.torsions.push_back({int(t[0].num()), int(t[1].num()), int(t[2].num()), int(t[3].num()), int(t[4].num()), t[5].num(), t[6].num()});
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  s.nonbonded.dispersion_correction = false;

  CpuForceEvaluator ev(s);
  const struct {
    const char* name;
    unsigned mask;
  } terms[] = {{"bond", kTermBond}, {"angle", kTermAngle}, {"torsion", kTermTorsion}};
  for (const auto& t : terms) {
    std::vector<Vec3d> f;
    const EnergyTerms e = ev.compute(x, &f, t.mask);
    const Json& ref = b["results"][t.name];
    const double energy = t.mask == kTermBond ? e.bond : t.mask == kTermAngle ? e.angle : e.torsion;
    INFO(t.name);
    CHECK(energy == Catch::Approx(ref["energy"].num()).epsilon(1e-12));
    CHECK(mdsim_test::relative_rms_difference(f, mdsim_test::json_vec3_list(ref["forces"])) < 1e-12);
  }
}

TEST_CASE("nonbonded methods match OpenMM on 64 random particles", "[cpu][openmm]") {
  for (const auto& [name, c] : data()["nonbonded"].object) {
    INFO("case " << name);
    const System s = nonbonded_system(c);
    const std::vector<Vec3d> x = mdsim_test::json_vec3_list(c["positions"]);
    CpuForceEvaluator ev(s);
    if (c.has("pme")) {
      CHECK(ev.pme_parameters().alpha_per_nm == Catch::Approx(c["pme"]["alpha"].num()).epsilon(1e-14));
      for (int d = 0; d < 3; ++d) CHECK(ev.pme_parameters().grid[d] == int(c["pme"]["grid"][size_t(d)].num()));
    }
    std::vector<Vec3d> f_direct, f_recip, f_all;
    const EnergyTerms direct = ev.compute(x, &f_direct, kTermNonbondedDirect);
    const EnergyTerms recip = ev.compute(x, &f_recip, kTermNonbondedReciprocal);
    const EnergyTerms all = ev.compute(x, &f_all, kTermAll);
    const Json& rd = c["results"]["direct"];
    const Json& rr = c["results"]["reciprocal"];
    CHECK(direct.nonbonded_direct == Catch::Approx(rd["energy"].num()).epsilon(1e-10));
    CHECK(recip.nonbonded_reciprocal == Catch::Approx(rr["energy"].num()).epsilon(1e-10).margin(1e-12));
    CHECK(all.total == Catch::Approx(rd["energy"].num() + rr["energy"].num()).epsilon(1e-10));
    CHECK(mdsim_test::relative_rms_difference(f_direct, mdsim_test::json_vec3_list(rd["forces"])) < 1e-10);
    if (c.has("pme")) CHECK(mdsim_test::relative_rms_difference(f_recip, mdsim_test::json_vec3_list(rr["forces"])) < 1e-10);
    if (c.has("dispersion_energy")) CHECK(all.dispersion_correction == Catch::Approx(c["dispersion_energy"].num()).epsilon(1e-9));
  }
}
