// Residue templates' <VirtualSite>s (io/forcefield_xml reads them, model/forcefield emits System::virtual_sites):
// the four types OpenMM's forcefield.py knows, both attribute spellings (siteName/atomName<i> and index/atom<i>),
// extra particles matched by name, exclusions shared through excludeWith, and the refusals, each naming file:line.
// The real case (TIP4P-Ew against OpenMM's energies): tests/kernels/cpu/test_cpu_ffxml_tip4pew.cpp.
#include <string>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

std::string forcefield_with(const std::string& sites) {
  return "<ForceField>\n"
         " <AtomTypes>\n"
         "  <Type name=\"c\" class=\"c\" element=\"C\" mass=\"12\"/>\n"
         "  <Type name=\"ep\" class=\"ep\" mass=\"0\"/>\n"
         " </AtomTypes>\n"
         " <Residues>\n"
         "  <Residue name=\"XYZ\">\n"
         "   <Atom name=\"C1\" type=\"c\" charge=\"0.1\"/>\n"
         "   <Atom name=\"C2\" type=\"c\" charge=\"0.2\"/>\n"
         "   <Atom name=\"C3\" type=\"c\" charge=\"0.3\"/>\n"
         "   <Atom name=\"S1\" type=\"ep\" charge=\"-0.2\"/>\n"
         "   <Atom name=\"S2\" type=\"ep\" charge=\"-0.2\"/>\n"
         "   <Atom name=\"S3\" type=\"ep\" charge=\"-0.2\"/>\n" +
         sites +
         "   <Bond atomName1=\"C1\" atomName2=\"C2\"/>\n"
         "   <Bond atomName1=\"C2\" atomName2=\"C3\"/>\n"
         "  </Residue>\n"
         " </Residues>\n"
         " <NonbondedForce coulomb14scale=\"0.5\" lj14scale=\"0.5\">\n"
         "  <UseAttributeFromResidue name=\"charge\"/>\n"
         "  <Atom type=\"c\" sigma=\"0.3\" epsilon=\"0.4\"/>\n"
         "  <Atom type=\"ep\" sigma=\"1\" epsilon=\"0\"/>\n"
         " </NonbondedForce>\n"
         "</ForceField>\n";
}

const std::string kSites =
    "   <VirtualSite type=\"average2\" siteName=\"S1\" atomName1=\"C1\" atomName2=\"C2\" weight1=\"0.25\" "
    "weight2=\"0.75\"/>\n"
    "   <VirtualSite type=\"outOfPlane\" siteName=\"S2\" atomName1=\"C1\" atomName2=\"C2\" atomName3=\"C3\" "
    "weight12=\"0.1\" weight13=\"0.2\" weightCross=\"0.5\" excludeWith=\"2\"/>\n"
    "   <VirtualSite type=\"localCoords\" index=\"5\" atom1=\"0\" atom2=\"1\" atom3=\"2\" wo1=\"1\" wo2=\"0\" wo3=\"0\" "
    "wx1=\"-1\" wx2=\"1\" wx3=\"0\" wy1=\"-1\" wy2=\"0\" wy3=\"1\" p1=\"0.1\" p2=\"0.2\" p3=\"0.3\"/>\n";

// One XYZ residue whose extra particles come in another order than the template's (S3, S1, S2).
Topology xyz_topology() {
  Topology t;
  t.source = "xyz.pdb";
  t.chains.push_back({"A", {0}});
  t.residues.push_back({"XYZ", 0, 1, ' ', {0, 1, 2, 3, 4, 5}, 1});
  const char* names[6] = {"C1", "C2", "C3", "S3", "S1", "S2"};
  const char* elements[6] = {"C", "C", "C", "", "", ""};
  for (int i = 0; i < 6; ++i) {
    t.atoms.push_back({names[i], elements[i], 0, i + 1, i + 1});
    t.positions_nm.push_back({0.1 * i, 0.05 * i * i, 0.0});
  }
  t.bonds = {{0, 1}, {1, 2}};
  return t;
}

ForceFieldOptions no_cutoff() {
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  return o;
}

}  // namespace

TEST_CASE("template virtual sites: four types, both spellings, extra particles matched by name") {
  const ForceFieldData ff = parse_forcefield_xml(forcefield_with(kSites), "xyz.xml");
  REQUIRE(ff.templates.size() == 1);
  REQUIRE(ff.templates[0].virtual_sites.size() == 3);
  CHECK(ff.templates[0].virtual_sites[2].site == 5);
  CHECK(ff.templates[0].virtual_sites[1].exclude_with == 2);
  CHECK(ff.templates[0].virtual_sites[0].exclude_with == 0);  // default: the first parent

  const System s = build_system(xyz_topology(), ff, no_cutoff());
  REQUIRE(s.virtual_sites.size() == 3);
  // Particle order: S3 (3), S1 (4), S2 (5).
  const VirtualSite& s3 = s.virtual_sites[0];
  const VirtualSite& s1 = s.virtual_sites[1];
  const VirtualSite& s2 = s.virtual_sites[2];
  CHECK(s3.particle == 3);
  CHECK(s3.type == VirtualSiteType::LocalCoordinates);
  CHECK(s3.parents == std::array<int, 3>{0, 1, 2});
  CHECK(s3.x_weights == std::array<double, 3>{-1, 1, 0});
  CHECK(s3.local_position_nm.z == 0.3);
  CHECK(s1.particle == 4);
  CHECK(s1.type == VirtualSiteType::TwoParticleAverage);
  CHECK(s1.num_parents == 2);
  CHECK(s1.parents[0] == 0);
  CHECK(s1.parents[1] == 1);
  CHECK(s1.weights[1] == 0.75);
  CHECK(s2.particle == 5);
  CHECK(s2.type == VirtualSiteType::OutOfPlane);
  CHECK(s2.weights == std::array<double, 3>{0.1, 0.2, 0.5});
  for (int p = 3; p < 6; ++p) CHECK(s.mass_amu[static_cast<std::size_t>(p)] == 0.0);
  CHECK(s.charge_e[4] == -0.2);
  // Each site shares its excludeWith atom's bonds: here every pair of the six particles is within two bonds, so
  // all 15 are excluded (without the sites' bonds, the sites would interact with everything).
  CHECK(s.exceptions.size() == 15);
  for (const NonbondedException& e : s.exceptions) {
    CHECK(e.charge_product_e2 == 0.0);
    CHECK(e.epsilon_kj_per_mol == 0.0);
  }
}

TEST_CASE("template virtual sites: refusals name file, line and the fix") {
  const auto error = [](const std::string& sites) {
    return mdsim_test::input_error_of([&] { parse_forcefield_xml(forcefield_with(sites), "bad.xml"); });
  };
  const std::string unknown = error("   <VirtualSite type=\"average4\" siteName=\"S1\"/>\n");
  CHECK(unknown.find("bad.xml:14:") == 0);
  CHECK(unknown.find("average2, average3, outOfPlane or localCoords") != std::string::npos);
  const std::string two = error(
      "   <VirtualSite type=\"localCoords\" siteName=\"S1\" atomName1=\"C1\" atomName2=\"C2\" wo1=\"1\" wo2=\"0\" "
      "wx1=\"-1\" wx2=\"1\" wy1=\"-1\" wy2=\"0\" p1=\"0\" p2=\"0\" p3=\"0\"/>\n");
  CHECK(two.find("bad.xml:14:") == 0);
  CHECK(two.find("exactly 3") != std::string::npos);
  const std::string self = error(
      "   <VirtualSite type=\"average2\" siteName=\"S1\" atomName1=\"C1\" atomName2=\"C2\" weight1=\"0.5\" "
      "weight2=\"0.5\" excludeWith=\"3\"/>\n");
  CHECK(self.find("names the site itself") != std::string::npos);
  const std::string twice = error(
      "   <VirtualSite type=\"average2\" siteName=\"S1\" atomName1=\"C1\" atomName2=\"C1\" weight1=\"0.5\" "
      "weight2=\"0.5\"/>\n");
  CHECK(twice.find("names atom 'C1' twice") != std::string::npos);
  const std::string heavy = error(
      "   <VirtualSite type=\"average2\" siteName=\"C3\" atomName1=\"C1\" atomName2=\"C2\" weight1=\"0.5\" "
      "weight2=\"0.5\"/>\n");
  CHECK(heavy.find("must be massless") != std::string::npos);
  const std::string missing = error(
      "   <VirtualSite type=\"average2\" siteName=\"S1\" atomName1=\"C1\" atomName2=\"CX\" weight1=\"0.5\" "
      "weight2=\"0.5\"/>\n");
  CHECK(missing.find("atom name 'CX' not found in residue template 'XYZ'") != std::string::npos);
}

TEST_CASE("an extra particle needs a template that has one") {
  std::string no_sites = forcefield_with("");
  for (const char* site : {"S1", "S2", "S3"}) {
    const std::size_t at = no_sites.find(std::string("   <Atom name=\"") + site);
    no_sites.erase(at, no_sites.find('\n', at) + 1 - at);
  }
  const ForceFieldData ff = parse_forcefield_xml(no_sites, "plain.xml");
  REQUIRE(ff.templates[0].atoms.size() == 3);
  const std::string m = mdsim_test::input_error_of([&] { build_system(xyz_topology(), ff, no_cutoff()); });
  CHECK(m.find("xyz.pdb:4:") == 0);
  CHECK(m.find("atom 'S3' of residue XYZ 1") != std::string::npos);
  CHECK(m.find("has no element (an extra particle)") != std::string::npos);
}
