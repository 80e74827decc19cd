// model/creation_options against OpenMM 7.7's AmberPrmtopFile.createSystem on alanine dipeptide in water
// (tests/data/amber/make_amber_reference.py: constraint counts and distances, bond and angle counts, masses), and the
// rules a GROMACS-style water (an H-O-H angle term, no H-H bond, an extra point) needs.
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/amber_prmtop.hpp"
#include "model/creation_options.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

bool close(double a, double b, double relative = 1e-12) {
  return std::fabs(a - b) <= relative * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

TopologyFileModel ala2_explicit() {
  TopologyFileOptions o;
  o.nonbonded.method = NonbondedMethod::PME;
  return read_amber_prmtop(std::string(MDSIM_TEST_DATA_DIR) + "/topologies/inputs/alanine-dipeptide-explicit.prmtop",
                           o);
}

struct Case {
  const char* name;
  CreationOptions options;
};

}  // namespace

TEST_CASE("constraints, rigid water, hydrogen mass and flexible constraints as OpenMM 7.7 applies them to a prmtop") {
  const mdsim_test::Json ref =
      mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/amber/amber_reference.json")["creation"];
  const TopologyFileModel flexible = ala2_explicit();
  const std::vector<Case> cases = {
      {"none_flexible", {ConstraintMode::None, false, std::nullopt, false}},
      {"none_rigid", {ConstraintMode::None, true, std::nullopt, false}},
      {"hbonds_rigid", {ConstraintMode::HBonds, true, std::nullopt, false}},
      {"hbonds_flexible_water", {ConstraintMode::HBonds, false, std::nullopt, false}},
      {"allbonds_rigid", {ConstraintMode::AllBonds, true, std::nullopt, false}},
      {"hangles_rigid", {ConstraintMode::HAngles, true, std::nullopt, false}},
      {"hangles_flexible_water", {ConstraintMode::HAngles, false, std::nullopt, false}},
      {"hbonds_hmass", {ConstraintMode::HBonds, true, 4.0, false}},
      {"hbonds_hmass_flexible_water", {ConstraintMode::HBonds, false, 3.0, false}},
      {"hbonds_flexible_constraints", {ConstraintMode::HBonds, true, std::nullopt, true}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const mdsim_test::Json& want = ref[c.name];
    System s = flexible.system;
    apply_creation_options(s, flexible.topology, c.options);
    CHECK(s.constraints.size() == static_cast<std::size_t>(want["constraints"].num()));
    CHECK(s.bonds.size() == static_cast<std::size_t>(want["bonds"].num()));
    CHECK(s.angles.size() == static_cast<std::size_t>(want["angles"].num()));
    double sum = 0.0;
    std::vector<DistanceConstraint> solute;
    for (const DistanceConstraint& d : s.constraints) {
      sum += d.distance_nm;
      if (d.i < 22 && d.j < 22) solute.push_back(d);
    }
    CHECK(close(sum, want["distance_sum_nm"].num(), 1e-12));
    REQUIRE(solute.size() == want["solute_constraints"].size());
    for (std::size_t k = 0; k < solute.size(); ++k) {
      INFO("solute constraint " << k);
      CHECK(solute[k].i == static_cast<int>(want["solute_constraints"][k][0].num()));
      CHECK(solute[k].j == static_cast<int>(want["solute_constraints"][k][1].num()));
      CHECK(close(solute[k].distance_nm, want["solute_constraints"][k][2].num(), 1e-12));
    }
    double hydrogen = 0.0, total = 0.0;
    for (int a = 0; a < s.num_particles(); ++a) {
      total += s.mass_amu[static_cast<std::size_t>(a)];
      if (flexible.topology.atoms[static_cast<std::size_t>(a)].element == "H") hydrogen += s.mass_amu[static_cast<std::size_t>(a)];
    }
    CHECK(close(hydrogen, want["hydrogen_mass_amu"].num(), 1e-12));
    CHECK(close(total, want["total_mass_amu"].num(), 1e-12));
    for (std::size_t a = 0; a < 22; ++a) CHECK(close(s.mass_amu[a], want["solute_masses_amu"][a].num(), 1e-12));
    CHECK(s.rigid_waters.size() == (c.options.rigid_water ? 749u : 0u));
  }
}

TEST_CASE("a water with an angle term and an extra point: H-H from the angle, the site never constrained") {
  // O, H, H, EP (mass 0, a virtual site) and a CH group; bonds O-H, O-H, O-EP; the H-O-H angle; C-H.
  System s;
  s.mass_amu = {15.9994, 1.008, 1.008, 0.0, 12.01, 1.008};
  s.charge_e.assign(6, 0.0);
  s.sigma_nm.assign(6, 0.3);
  s.epsilon_kj_per_mol.assign(6, 0.0);
  s.bonds = {{0, 1, 0.09572, 1000.0}, {0, 2, 0.09572, 1000.0}, {0, 3, 0.015, 1000.0}, {4, 5, 0.109, 1000.0}};
  const double angle = 104.52 * M_PI / 180.0;
  s.angles = {{1, 0, 2, angle, 300.0}};
  VirtualSite site;
  site.particle = 3;
  site.type = VirtualSiteType::ThreeParticleAverage;
  site.num_parents = 3;
  site.parents = {0, 1, 2};
  site.weights = {0.8, 0.1, 0.1};
  s.virtual_sites = {site};
  Topology top;
  top.source = "water.top";
  top.chains.push_back({"A", {0, 1}});
  top.residues = {{"SOL", 0, 1, ' ', {0, 1, 2, 3}, 1}, {"CH", 0, 2, ' ', {4, 5}, 5}};
  const char* elements[] = {"O", "H", "H", "", "C", "H"};
  const char* names[] = {"OW", "HW1", "HW2", "MW", "C", "H"};
  for (int a = 0; a < 6; ++a) top.atoms.push_back({names[a], elements[a], a < 4 ? 0 : 1, a + 1, a + 1});
  top.bonds = {{0, 1}, {0, 2}, {0, 3}, {4, 5}};

  System rigid = s;
  apply_creation_options(rigid, top, {ConstraintMode::AllBonds, true, 4.0, false});
  REQUIRE(rigid.constraints.size() == 4);  // O-H, O-H, C-H, then H-H from the angle; not O-EP
  CHECK(rigid.constraints[3].i == 1);
  CHECK(rigid.constraints[3].j == 2);
  CHECK(close(rigid.constraints[3].distance_nm, 2.0 * 0.09572 * std::sin(angle / 2.0), 1e-12));
  REQUIRE(rigid.bonds.size() == 1);  // the O-EP bond stays a term
  CHECK(rigid.bonds[0].j == 3);
  CHECK(rigid.angles.empty());
  REQUIRE(rigid.rigid_waters.size() == 1);
  CHECK(rigid.rigid_waters[0].oxygen == 0);
  CHECK(rigid.mass_amu[5] == 4.0);  // the CH hydrogen gains mass, the rigid water's do not
  CHECK(close(rigid.mass_amu[4], 12.01 - (4.0 - 1.008)));
  CHECK(rigid.mass_amu[1] == 1.008);

  System flexible = s;
  apply_creation_options(flexible, top, {ConstraintMode::None, false, std::nullopt, false});
  CHECK(flexible.constraints.empty());
  CHECK(flexible.bonds.size() == 4);
  CHECK(flexible.angles.size() == 1);
  CHECK(flexible.rigid_waters.empty());

  System too_heavy = s;
  CHECK(mdsim_test::input_error_of([&] {
          apply_creation_options(too_heavy, top, {ConstraintMode::HBonds, true, 14.0, false});
        }) == "water.top:5: hydrogen mass 14 amu leaves atom 5 'C' of residue CH 2 with mass -0.982 amu; use a smaller "
              "hydrogen mass");
}
