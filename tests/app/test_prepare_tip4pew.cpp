// `mdsim prepare --water-model tip4pew`: alanine dipeptide solvated with the bundled TIP4P-Ew box compared with
// OpenMM 7.7's Modeller.addSolvent(model='tip4pew') (tests/data/solvent_reference.json, key ala2_tip4pew, made by
// tests/data/make_solvent_reference.py): the same box, waters and ions; every water O, H1, H2 and its extra
// particle M placed by amber14/tip4pew.xml's virtual site; then the command end to end, its config run on the CPU.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "model/forcefield.hpp"
#include "prepare/extra_particles.hpp"
#include "prepare/solvent.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim::test::run_mdsim;
using mdsim_test::contains;
using mdsim_test::Json;
using mdsim_test::scratch;

namespace {

const ForceFieldData& amber14_tip4pew() {
  static const ForceFieldData ff = load_forcefields({"amber14-all.xml", "amber14/tip4pew.xml"}, "");
  return ff;
}

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// Every HOH residue is O, H1, H2, M with M (no element) within `tolerance_nm` of where the force field's virtual
// site puts it; returns the number of waters.
int check_four_site_waters(const Topology& top, double tolerance_nm) {
  const FFResidueTemplate* t = water_site_template(amber14_tip4pew());
  REQUIRE(t != nullptr);
  REQUIRE(t->virtual_sites.size() == 1);
  const std::vector<double>& w = t->virtual_sites[0].weights;
  REQUIRE(w.size() == 3);
  int waters = 0, misplaced = 0, wrong_atoms = 0;
  double om_min = 1e9, om_max = 0;
  for (const TopologyResidue& r : top.residues) {
    if (r.name != "HOH") continue;
    ++waters;
    if (r.atoms.size() != 4) {
      ++wrong_atoms;
      continue;
    }
    const TopologyAtom &o = top.atoms[at(r.atoms[0])], &h1 = top.atoms[at(r.atoms[1])],
                       &h2 = top.atoms[at(r.atoms[2])], &m = top.atoms[at(r.atoms[3])];
    if (o.name != "O" || h1.name != "H1" || h2.name != "H2" || m.name != "M" || !m.element.empty()) ++wrong_atoms;
    const Vec3d& po = top.positions_nm[at(r.atoms[0])];
    const Vec3d site = po * w[0] + top.positions_nm[at(r.atoms[1])] * w[1] + top.positions_nm[at(r.atoms[2])] * w[2];
    if (norm(site - top.positions_nm[at(r.atoms[3])]) > tolerance_nm) ++misplaced;
    om_min = std::min(om_min, norm(top.positions_nm[at(r.atoms[3])] - po));
    om_max = std::max(om_max, norm(top.positions_nm[at(r.atoms[3])] - po));
  }
  CHECK(wrong_atoms == 0);
  CHECK(misplaced == 0);
  // TIP4P-Ew's O-M distance, 0.0125 nm (Horn et al. 2004), from the box's rigid geometry (3-decimal Å coordinates).
  CHECK(om_min == Catch::Approx(0.0125).margin(2e-4));
  CHECK(om_max == Catch::Approx(0.0125).margin(2e-4));
  return waters;
}

// The topology without its element-less atoms (the waters' M), bonds dropped (they hold none).
Topology without_extra_particles(const Topology& in) {
  Topology out = in;
  out.atoms.clear(), out.positions_nm.clear(), out.bonds.clear(), out.conect.clear();
  for (TopologyResidue& r : out.residues) {
    std::vector<int> kept;
    for (int a : r.atoms) {
      if (in.atoms[at(a)].element.empty()) continue;
      kept.push_back(out.num_atoms());
      out.atoms.push_back(in.atoms[at(a)]);
      out.positions_nm.push_back(in.positions_nm[at(a)]);
    }
    r.atoms = kept;
  }
  return out;
}

fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// ala2_vacuum.pdb's heavy atoms, as a PDB entry has them.
std::string ala2_heavy_atoms() {
  std::ifstream in(std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_vacuum.pdb");
  std::string out, line;
  while (std::getline(in, line)) {
    const bool atom = line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0;
    if ((atom && line.size() >= 78 && line.substr(76, 2) == " H") || line.rfind("CONECT", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("tip4pew: alanine dipeptide gets Modeller's box, waters and ions, each water with its M site", "[prepare]") {
  const Json all = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/solvent_reference.json");
  const Json& ref = all["ala2_tip4pew"];
  const ForceFieldData& ff = amber14_tip4pew();
  Topology solute = read_pdb(std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_vacuum.pdb");
  create_topology_bonds(solute, ff.standard);
  REQUIRE(solute.num_atoms() == static_cast<int>(ref["solute_atoms"].num()));
  ForceFieldOptions vacuum;
  vacuum.nonbonded.method = NonbondedMethod::NoCutoff;
  const System solute_system = build_system(solute, ff, vacuum);

  SolventOptions as_modeller;
  as_modeller.water_model = "tip4pew";
  as_modeller.drop_atom_clashes = false;  // Modeller's waters exactly
  SolventReport sr;
  Topology solvated = add_solvent(solute, solute_system, as_modeller, &sr);
  CHECK(sr.box.a.x == Catch::Approx(ref["box_vectors_nm"][0][0].num()).margin(1e-6));
  CHECK(sr.waters_added == static_cast<int>(ref["waters_before_ions"].num()));
  CHECK(add_water_extra_particles(solvated, ff) == sr.waters_added);
  CHECK(add_water_extra_particles(solvated, ff) == 0);  // complete waters are kept as they are

  IonReport ir;
  const Topology ionised = add_ions(solvated, 0.0, IonOptions{}, &ir);
  CHECK(ir.positive == static_cast<int>(ref["positive_ions"].num()));
  CHECK(ir.negative == static_cast<int>(ref["negative_ions"].num()));
  CHECK(ir.waters_left == static_cast<int>(ref["waters_after_ions"].num()));
  CHECK(ionised.num_atoms() == solute.num_atoms() + 4 * ir.waters_left + ir.positive + ir.negative);
  // The kept waters' oxygens and the ions (at replaced oxygens) sum as Modeller's.
  Vec3d sum(0, 0, 0);
  for (const TopologyResidue& r : ionised.residues)
    if (r.name == "HOH" || r.name == "NA" || r.name == "CL") sum += ionised.positions_nm[at(r.atoms[0])];
  const Json& ref_sum = ref["sum_water_oxygen_and_ion_positions_nm"];
  for (int d = 0; d < 3; ++d) CHECK(sum[d] == Catch::Approx(ref_sum[at(d)].num()).margin(1e-6));
  CHECK(check_four_site_waters(ionised, 1e-12) == ir.waters_left);

  // Built with amber14/tip4pew.xml: one virtual site per water, neutral.
  ForceFieldOptions pme;
  pme.nonbonded.method = NonbondedMethod::PME;
  pme.nonbonded.cutoff_nm = 1.0;
  const System whole = build_system(ionised, ff, pme);
  CHECK(static_cast<int>(whole.virtual_sites.size()) == ir.waters_left);
  double charge = 0;
  for (double q : whole.charge_e) charge += q;
  CHECK(charge == Catch::Approx(0.0).margin(1e-9));

  // Waters already there without M (an input's) get it as the new ones did.
  Topology stripped = without_extra_particles(ionised);
  CHECK(add_water_extra_particles(stripped, ff) == ir.waters_left);
  REQUIRE(stripped.num_atoms() == ionised.num_atoms());
  int differ = 0;
  for (int a = 0; a < ionised.num_atoms(); ++a)
    differ += stripped.atoms[at(a)].name != ionised.atoms[at(a)].name ||
              norm(stripped.positions_nm[at(a)] - ionised.positions_nm[at(a)]) != 0.0;
  CHECK(differ == 0);
}

TEST_CASE("mdsim prepare --water-model tip4pew writes 4-site waters and a config that runs", "[prepare]") {
  const fs::path dir = scratch("tip4pew");
  const fs::path in = write(dir / "ala2.pdb", ala2_heavy_atoms());
  const auto prep = run_mdsim("prepare " + in.string() + " --water-model tip4pew -o " + (dir / "system.pdb").string() +
                              " --config " + (dir / "run.yaml").string() +
                              " --padding 0.8nm --cutoff 0.8nm --nvt-time 0.02ps --npt-time 0.02ps --production-time 0.02ps");
  INFO(prep.out << prep.err);
  REQUIRE(prep.code == 0);
  CHECK(contains(prep.out, "-> +0 e"));
  const Topology top = read_pdb((dir / "system.pdb").string());
  int ions = 0;
  for (const TopologyResidue& r : top.residues) ions += r.name == "NA" || r.name == "CL";
  CHECK(ions > 0);
  // Read back from the PDB: coordinates rounded to 1e-4 nm, so the site agrees to the rounding (|w| sum 1).
  CHECK(check_four_site_waters(top, 2e-4) > 300);
  std::ifstream config_in(dir / "run.yaml");
  std::stringstream config;
  config << config_in.rdbuf();
  CHECK(contains(config.str(), "forcefield: [amber14-all.xml, amber14/tip4pew.xml]"));
  const auto run = run_mdsim("run " + (dir / "run.yaml").string());
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);
  CHECK(contains(run.out, "ran steps 0 to 30"));

  // A force-field list with the other water file contradicts the water model.
  const auto clash = run_mdsim("prepare " + in.string() + " --water-model tip4pew --forcefield amber14-all.xml "
                               "--forcefield amber14/tip3p.xml -o " + (dir / "other.pdb").string());
  CHECK(clash.code == 2);
  CHECK(contains(clash.err, "lists amber14/tip3p.xml but the water model is tip4pew"));
}
