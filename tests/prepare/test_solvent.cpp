// prepare/solvent: water and ions as OpenMM 7.7's Modeller.addSolvent, compared with Modeller's result on the
// protein residues of the shared villin and DHFR systems (tests/data/solvent_reference.json, made by
// tests/data/make_solvent_reference.py), plus the geometric rules checked directly (no water overlaps the
// solute, no two waters clash across the boundary, ions apart and off the solute), repeatability by seed,
// the dodecahedron and octahedron boxes, the bad-input errors, and the solvated villin's energy (amber14, PME).
#include <chrono>
#include <cstdio>
#include <functional>
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "io/pdb_writer.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "model/forcefield.hpp"
#include "prepare/data_files.hpp"
#include "prepare/solvent.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using mdsim_test::input_error_of;
using mdsim_test::Json;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
constexpr double kWaterRadius = 0.31507524065751241 * 0.5612310241546864907;

const ForceFieldData& amber14() {
  static const ForceFieldData ff = load_forcefields({"amber14-all.xml", "amber14/tip3p.xml"}, "");
  return ff;
}

const Json& reference() {
  static const Json j = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/solvent_reference.json");
  return j;
}

// The protein of a shared system: its waters and single-atom (ion) residues left out, as the reference script
// deletes them; bonds as the PDB reader's caller creates them.
Topology protein_only(const std::string& pdb_name) {
  const Topology full = read_pdb(kShared + "/systems/" + pdb_name);
  Topology top;
  top.source = full.source;
  top.box = full.box;
  for (const auto& chain : full.chains) {
    TopologyChain c;
    c.id = chain.id;
    for (int r : chain.residues) {
      const TopologyResidue& src = full.residues[static_cast<std::size_t>(r)];
      if (src.name == "HOH" || src.atoms.size() == 1) continue;
      TopologyResidue res = src;
      res.chain = static_cast<int>(top.chains.size());
      res.atoms.clear();
      for (int a : src.atoms) {
        TopologyAtom atom = full.atoms[static_cast<std::size_t>(a)];
        atom.residue = static_cast<int>(top.residues.size());
        res.atoms.push_back(top.num_atoms());
        top.atoms.push_back(atom);
        top.positions_nm.push_back(full.positions_nm[static_cast<std::size_t>(a)]);
      }
      c.residues.push_back(static_cast<int>(top.residues.size()));
      top.residues.push_back(std::move(res));
    }
    if (!c.residues.empty()) top.chains.push_back(std::move(c));
  }
  create_topology_bonds(top, amber14().standard);
  return top;
}

System vacuum_system(const Topology& top) {
  ForceFieldOptions options;
  options.nonbonded.method = NonbondedMethod::NoCutoff;
  return build_system(top, amber14(), options);
}

System pme_system(const Topology& top) {
  ForceFieldOptions options;
  options.constraints = ConstraintMode::HBonds;
  options.nonbonded.method = NonbondedMethod::PME;
  options.nonbonded.cutoff_nm = 1.0;
  return build_system(top, amber14(), options);
}

struct Solute {
  Topology topology;
  System system;
};

const Solute& villin() {
  static const Solute s = [] {
    Solute v;
    v.topology = protein_only("villin_water.pdb");
    v.system = vacuum_system(v.topology);
    return v;
  }();
  return s;
}

// Oxygen positions of the HOH residues, and every atom outside them.
struct Split {
  std::vector<Vec3d> water_oxygen, solute, ions;
  std::vector<int> solute_atom;  // topology index of each solute position
};
Split split(const Topology& top) {
  Split s;
  for (const auto& residue : top.residues) {
    if (residue.name == "HOH") {
      for (int a : residue.atoms)
        if (top.atoms[static_cast<std::size_t>(a)].element == "O") s.water_oxygen.push_back(top.positions_nm[static_cast<std::size_t>(a)]);
    } else if (residue.name == "NA" || residue.name == "CL" || residue.name == "K") {
      s.ions.push_back(top.positions_nm[static_cast<std::size_t>(residue.atoms[0])]);
    } else {
      for (int a : residue.atoms) {
        s.solute.push_back(top.positions_nm[static_cast<std::size_t>(a)]);
        s.solute_atom.push_back(a);
      }
    }
  }
  return s;
}

// Brute force over all pairs: no water oxygen closer to a solute atom than the sum of their radii, and no two
// water oxygens closer than the water radius (by minimum image: clashes across the boundary included).
void check_no_overlaps(const Topology& top, const System& solute_system) {
  REQUIRE(top.box.has_value());
  const Boxd& box = *top.box;
  const Split s = split(top);
  int overlaps = 0;
  for (const Vec3d& o : s.water_oxygen)
    for (std::size_t i = 0; i < s.solute.size(); ++i) {
      const std::size_t atom = static_cast<std::size_t>(s.solute_atom[i]);
      const double radius = kWaterRadius + (solute_system.epsilon_kj_per_mol[atom] != 0
                                                ? solute_system.sigma_nm[atom] * 0.5612310241546864907
                                                : 0.0);
      if (norm(box.minimum_image(o - s.solute[i])) < radius) ++overlaps;
    }
  CHECK(overlaps == 0);
  int clashes = 0;
  for (std::size_t i = 0; i < s.water_oxygen.size(); ++i)
    for (std::size_t j = i + 1; j < s.water_oxygen.size(); ++j)
      if (norm(box.minimum_image(s.water_oxygen[j] - s.water_oxygen[i])) < kWaterRadius) ++clashes;
  CHECK(clashes == 0);
}

Vec3d sum_water_oxygen_and_ions(const Topology& top) {
  const Split s = split(top);
  Vec3d sum(0, 0, 0);
  for (const Vec3d& p : s.water_oxygen) sum += p;
  for (const Vec3d& p : s.ions) sum += p;
  return sum;
}

double smallest_lattice_vector(const Boxd& box) {
  double best = 1e300;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      for (int k = -2; k <= 2; ++k)
        if (i || j || k) best = std::min(best, norm(box.a * double(i) + box.b * double(j) + box.c * double(k)));
  return best;
}

bool reduced_form(const Boxd& b) {
  return b.a.y == 0 && b.a.z == 0 && b.b.z == 0 && b.a.x > 0 && b.b.y > 0 && b.c.z > 0 && std::abs(b.b.x) <= b.a.x / 2 &&
         std::abs(b.c.x) <= b.a.x / 2 && std::abs(b.c.y) <= b.b.y / 2;
}

// Solvate and ionise a solute as Modeller (padding 1 nm, 0.15 M NaCl) and compare with the reference.
void compare_with_modeller(const std::string& key, const Solute& solute) {
  INFO("system " << key);
  const Json& ref = reference()[key];
  REQUIRE(solute.topology.num_atoms() == static_cast<int>(ref["solute_atoms"].num()));
  SolventReport sr;
  SolventOptions as_modeller;
  as_modeller.drop_atom_clashes = false;  // Modeller's waters exactly
  const auto start = std::chrono::steady_clock::now();
  const Topology solvated = add_solvent(solute.topology, solute.system, as_modeller, &sr);
  const double solvate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double edge = ref["box_vectors_nm"][0][0].num();
  CHECK(sr.box.a.x == Catch::Approx(edge).margin(1e-6));
  CHECK(sr.box.b.y == Catch::Approx(edge).margin(1e-6));
  CHECK(sr.box.c.z == Catch::Approx(edge).margin(1e-6));
  CHECK_FALSE(sr.box.triclinic());
  CHECK(sr.waters_added == static_cast<int>(ref["waters_before_ions"].num()));

  const double charge = solute.system.charge_e.empty() ? 0.0 : [&] {
    double q = 0;
    for (double c : solute.system.charge_e) q += c;
    return q;
  }();
  CHECK(charge == Catch::Approx(ref["total_charge_e"].num()).margin(1e-6));
  IonReport ir;
  const auto ion_start = std::chrono::steady_clock::now();
  const Topology ionised = add_ions(solvated, charge, IonOptions{}, &ir);
  const double ions_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - ion_start).count();
  CHECK(ir.positive == static_cast<int>(ref["positive_ions"].num()));
  CHECK(ir.negative == static_cast<int>(ref["negative_ions"].num()));
  CHECK(ir.waters_left == static_cast<int>(ref["waters_after_ions"].num()));
  CHECK(ir.net_charge_after == 0);
  // The same set of water positions: ions sit where a water oxygen was, so the sum is independent of which
  // waters became ions.
  const Vec3d sum = sum_water_oxygen_and_ions(ionised);
  const Json& ref_sum = ref["sum_water_oxygen_and_ion_positions_nm"];
  for (int d = 0; d < 3; ++d) CHECK(sum[d] == Catch::Approx(ref_sum[static_cast<std::size_t>(d)].num()).margin(1e-6));
  WARN(key << ": add_solvent " << solvate_s << " s, add_ions " << ions_s << " s (" << sr.waters_added << " waters, "
           << sr.removed_near_solute << " dropped near the solute, " << sr.removed_boundary_clashes
           << " across the boundary; Modeller " << ref["modeller_seconds"].num() << " s in Python)");
}

}  // namespace

TEST_CASE("find_data_file finds the bundled water box and names the folders it searched") {
  CHECK(read_pdb(find_data_file("tip3p.pdb")).residues.size() == 895);
  try {
    find_data_file("no_such_box.pdb");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("no_such_box.pdb") != std::string::npos);
    CHECK(m.find("data") != std::string::npos);
  }
}

TEST_CASE("shaped boxes: OpenMM 8's vectors in reduced form, volumes relative to the cube") {
  const double w = 5.3;
  const Boxd cube = shaped_box(BoxShape::Cube, w);
  const Boxd dodecahedron = shaped_box(BoxShape::Dodecahedron, w);
  const Boxd octahedron = shaped_box(BoxShape::Octahedron, w);
  CHECK(cube.volume() == Catch::Approx(w * w * w).epsilon(1e-14));
  CHECK(dodecahedron.volume() / cube.volume() == Catch::Approx(std::sqrt(0.5)).epsilon(1e-12));  // 0.7071
  CHECK(octahedron.volume() / cube.volume() == Catch::Approx(4 * std::sqrt(3.0) / 9).epsilon(1e-12));  // 0.7698
  for (const Boxd* b : {&cube, &dodecahedron, &octahedron}) {
    CHECK(reduced_form(*b));
    CHECK(smallest_lattice_vector(*b) == Catch::Approx(w).epsilon(1e-12));  // same minimum image distance
    CHECK(norm(b->a) == Catch::Approx(w).epsilon(1e-12));
    CHECK(norm(b->b) == Catch::Approx(w).epsilon(1e-12));
    CHECK(norm(b->c) == Catch::Approx(w).epsilon(1e-12));
  }
  CHECK(dodecahedron.triclinic());
  CHECK(octahedron.triclinic());
}

TEST_CASE("villin: the same box, waters and ions as OpenMM's Modeller; no overlaps; a finite PME energy") {
  const Solute& v = villin();
  compare_with_modeller("villin", v);

  SolventReport sr;
  const Topology solvated = add_solvent(v.topology, v.system, SolventOptions{}, &sr);
  check_no_overlaps(solvated, v.system);
  // The solute is copied unchanged and the waters are whole TIP3P molecules with their O-H bonds.
  for (int a = 0; a < v.topology.num_atoms(); ++a) {
    CHECK(solvated.atoms[static_cast<std::size_t>(a)].name == v.topology.atoms[static_cast<std::size_t>(a)].name);
    CHECK(solvated.positions_nm[static_cast<std::size_t>(a)].x == v.topology.positions_nm[static_cast<std::size_t>(a)].x);
  }
  CHECK(solvated.num_atoms() == v.topology.num_atoms() + 3 * sr.waters_added);
  CHECK(solvated.bonds.size() == v.topology.bonds.size() + 2 * static_cast<std::size_t>(sr.waters_added));
  CHECK(solvated.chains.size() == v.topology.chains.size() + 1);
  CHECK(solvated.chains.back().id != v.topology.chains.front().id);

  IonReport ir;
  const Topology ionised = add_ions(solvated, rounded_total_charge(v.system), IonOptions{}, &ir);
  CHECK(ir.net_charge_before == 2);
  CHECK(ir.neutralizing == 2);
  CHECK(ir.net_charge_after == 0);
  CHECK(ir.near_solute == 0);
  CHECK(ir.ionic_strength_molar == Catch::Approx(0.15).margin(0.15 / 2 / ir.pairs));  // within half a pair

  // One ion per residue, in one chain after the others, named as amber14's tip3p.xml templates.
  const TopologyChain& ion_chain = ionised.chains.back();
  REQUIRE(static_cast<int>(ion_chain.residues.size()) == ir.positive + ir.negative);
  for (std::size_t k = 0; k < ion_chain.residues.size(); ++k) {
    const TopologyResidue& r = ionised.residues[static_cast<std::size_t>(ion_chain.residues[k])];
    REQUIRE(r.atoms.size() == 1);
    const TopologyAtom& atom = ionised.atoms[static_cast<std::size_t>(r.atoms[0])];
    const bool positive = static_cast<int>(k) < ir.positive;
    CHECK(r.name == (positive ? "NA" : "CL"));
    CHECK(atom.name == r.name);
    CHECK(atom.element == (positive ? "Na" : "Cl"));
  }
  // Ions apart from each other and at least 0.5 nm from every solute atom (enough waters here).
  const Split s = split(ionised);
  for (std::size_t i = 0; i < s.ions.size(); ++i) {
    for (std::size_t j = i + 1; j < s.ions.size(); ++j) CHECK(norm(sr.box.minimum_image(s.ions[j] - s.ions[i])) > 0.05);
    double closest = 1e300;
    for (const Vec3d& p : s.solute) closest = std::min(closest, norm(sr.box.minimum_image(p - s.ions[i])));
    CHECK(closest >= 0.5);
  }

  // amber14 parameterises the result and it is neutral; its energy (PME, 1 nm) is finite.
  const System system = pme_system(ionised);
  double q = 0;
  for (double c : system.charge_e) q += c;
  CHECK(q == Catch::Approx(0.0).margin(1e-6));
  CHECK(rounded_total_charge(system) == 0);
  const EnergyTerms e = cpu_compute(system, ionised.positions_nm, nullptr);
  INFO("solvated villin with ions: total " << e.total << " kJ/mol, nonbonded " << e.nonbonded);
  CHECK(std::isfinite(e.total));
  CHECK(e.nonbonded < 0);
}

TEST_CASE("villin solvated without ions: the same energy as OpenMM's for Modeller's result (CPU, PME)") {
  // The waters are deterministic, so the solvated system equals Modeller's atom for atom; its energy under
  // amber14 (PME 1 nm, HBonds, rigid water) matches OpenMM's Reference platform term by term.
  const Solute& v = villin();
  SolventOptions as_modeller;
  as_modeller.drop_atom_clashes = false;
  const Topology solvated = add_solvent(v.topology, v.system, as_modeller);
  const Json& ref = reference()["villin"]["solvated_energy"];
  REQUIRE(solvated.num_atoms() == static_cast<int>(ref["atoms"].num()));
  const EnergyTerms e = cpu_compute(pme_system(solvated), solvated.positions_nm, nullptr);
  const Json& terms = ref["terms_kj_per_mol"];
  CHECK(e.bond == Catch::Approx(terms["HarmonicBondForce"].num()).epsilon(1e-6));
  CHECK(e.angle == Catch::Approx(terms["HarmonicAngleForce"].num()).epsilon(1e-6));
  CHECK(e.torsion == Catch::Approx(terms["PeriodicTorsionForce"].num()).epsilon(1e-6));
  CHECK(e.nonbonded == Catch::Approx(terms["NonbondedForce"].num()).epsilon(1e-6));
  CHECK(e.total == Catch::Approx(ref["total_kj_per_mol"].num()).epsilon(1e-6));
}

TEST_CASE("DHFR: the same box, waters and ions as OpenMM's Modeller (timed)") {
  Solute dhfr;
  dhfr.topology = protein_only("dhfr.pdb");
  dhfr.system = vacuum_system(dhfr.topology);
  compare_with_modeller("dhfr", dhfr);

  // Written as PDB and read back (as `mdsim prepare` output is read by `mdsim run`): the same atoms and
  // residues, a box, and amber14 parameterises it, neutral.
  SolventReport sr;
  const Topology ionised = add_ions(add_solvent(dhfr.topology, dhfr.system, SolventOptions{}, &sr),
                                    rounded_total_charge(dhfr.system), IonOptions{});
  // By default waters whose atoms nearly coincide with a water's across the boundary are dropped as well, so
  // the engine's overlap check (no two atoms within 0.05 nm) accepts the result; Modeller's rule alone does not.
  INFO("waters dropped for atom clashes across the boundary: " << sr.removed_atom_clashes);
  CHECK(sr.removed_atom_clashes >= 0);
  CHECK_NOTHROW(check_overlaps(ionised));
  const std::string path = "prepare_solvent_dhfr.pdb";
  write_pdb(path, ionised, ionised.positions_nm, ionised.box);
  Topology back = read_pdb(path);
  REQUIRE(back.num_atoms() == ionised.num_atoms());
  CHECK(back.residues.size() == ionised.residues.size());
  CHECK(back.chains.size() == ionised.chains.size());
  REQUIRE(back.box.has_value());
  CHECK(back.box->a.x == Catch::Approx(ionised.box->a.x).margin(1e-4));
  for (int a = 0; a < back.num_atoms(); a += 97) {
    CHECK(back.atoms[static_cast<std::size_t>(a)].name == ionised.atoms[static_cast<std::size_t>(a)].name);
    CHECK(back.atoms[static_cast<std::size_t>(a)].element == ionised.atoms[static_cast<std::size_t>(a)].element);
  }
  create_topology_bonds(back, amber14().standard);
  const System system = pme_system(back);
  CHECK(system.num_particles() == ionised.num_atoms());
  CHECK(rounded_total_charge(system) == 0);
  std::remove(path.c_str());
}

TEST_CASE("ions: the seed decides which waters become ions, repeatably") {
  const Solute& v = villin();
  const Topology solvated = add_solvent(v.topology, v.system, SolventOptions{});
  IonOptions options;
  options.seed = 7;
  const Topology a = add_ions(solvated, 2.0, options);
  const Topology b = add_ions(solvated, 2.0, options);
  options.seed = 8;
  const Topology c = add_ions(solvated, 2.0, options);
  REQUIRE(a.num_atoms() == b.num_atoms());
  REQUIRE(a.num_atoms() == c.num_atoms());
  bool same_ab = true, same_ac = true;
  for (std::size_t i = 0; i < a.positions_nm.size(); ++i) {
    same_ab = same_ab && a.positions_nm[i].x == b.positions_nm[i].x && a.positions_nm[i].y == b.positions_nm[i].y &&
              a.positions_nm[i].z == b.positions_nm[i].z && a.atoms[i].name == b.atoms[i].name;
    same_ac = same_ac && a.positions_nm[i].x == c.positions_nm[i].x && a.positions_nm[i].y == c.positions_nm[i].y &&
              a.positions_nm[i].z == c.positions_nm[i].z;
  }
  CHECK(same_ab);
  CHECK_FALSE(same_ac);
  // Whichever waters were taken, the water and ion sites are the same set.
  const Vec3d sa = sum_water_oxygen_and_ions(a), sc = sum_water_oxygen_and_ions(c);
  for (int d = 0; d < 3; ++d) CHECK(sa[d] == Catch::Approx(sc[d]).margin(1e-6));

  // K+ instead of Na+; no salt and no neutralisation leaves the topology as it was.
  options.positive_ion = "K+";
  IonReport ir;
  const Topology k = add_ions(solvated, 2.0, options, &ir);
  CHECK(k.residues[static_cast<std::size_t>(k.chains.back().residues.front())].name == (ir.positive > 0 ? "K" : "CL"));
  CHECK_NOTHROW(build_system(k, amber14(), ForceFieldOptions{}));
  options.neutralize = false;
  options.ionic_strength_molar = 0;
  const Topology none = add_ions(solvated, 2.0, options, &ir);
  CHECK(none.num_atoms() == solvated.num_atoms());
  CHECK(ir.positive + ir.negative == 0);
  CHECK(ir.net_charge_after == 2);
}

TEST_CASE("dodecahedron and octahedron: reduced triclinic boxes, the same minimum image distance, fewer waters") {
  const Solute& v = villin();
  SolventReport cube;
  add_solvent(v.topology, v.system, SolventOptions{}, &cube);
  for (BoxShape shape : {BoxShape::Dodecahedron, BoxShape::Octahedron}) {
    INFO("shape " << to_string(shape));
    SolventOptions options;
    options.shape = shape;
    SolventReport sr;
    const Topology solvated = add_solvent(v.topology, v.system, options, &sr);
    const double ratio = shape == BoxShape::Dodecahedron ? 0.7071 : 0.7698;
    CHECK_FALSE(sr.enlarged);  // villin is compact enough for the cube's width
    CHECK(sr.width_nm == cube.width_nm);
    CHECK(sr.box.volume() / cube.box.volume() == Catch::Approx(ratio).margin(1e-4));
    CHECK(reduced_form(sr.box));
    CHECK(sr.box.triclinic());
    CHECK(smallest_lattice_vector(sr.box) == Catch::Approx(cube.box.a.x).epsilon(1e-12));
    check_no_overlaps(solvated, v.system);
    // The same water density: the solute takes the same volume in each box.
    const double solute_volume_waters = cube.box.volume() * 33.4 - cube.waters_added;  // waters the solute displaces
    const double expected = sr.box.volume() * 33.4 - solute_volume_waters;
    CHECK(sr.waters_added == Catch::Approx(expected).epsilon(0.03));
    // Parameterised and evaluated in the triclinic box: finite, water-dominated.
    IonReport ir;
    const Topology ionised = add_ions(solvated, 2.0, IonOptions{}, &ir);
    const EnergyTerms e = cpu_compute(pme_system(ionised), ionised.positions_nm, nullptr);
    INFO("energy " << e.total << " kJ/mol, " << ir.waters_left << " waters");
    CHECK(std::isfinite(e.total));
    CHECK(e.nonbonded < 0);
  }
}

TEST_CASE("a solute longer than the dodecahedron's height: waters kept off its periodic images") {
  // Villin turned (a rotation: axes cycled) so that its largest extent lies along z, in a dodecahedron whose
  // height c.z = w / sqrt(2) is shorter than that extent: the solute crosses the faces of the region the
  // waters fill, so the overlap test must find the solute's periodic images.
  const Solute& v = villin();
  Topology turned = v.topology;
  Vec3d lo = turned.positions_nm[0], hi = lo;
  for (const Vec3d& p : turned.positions_nm)
    for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
  int longest = 0;
  for (int d = 1; d < 3; ++d)
    if (hi[d] - lo[d] > hi[longest] - lo[longest]) longest = d;
  for (Vec3d& p : turned.positions_nm) {
    const Vec3d q = p;
    for (int d = 0; d < 3; ++d) p[d] = q[(d + longest + 1) % 3];  // the longest axis becomes z
  }
  SolventOptions options;
  options.shape = BoxShape::Dodecahedron;
  options.padding_nm = 0.3;
  SolventReport sr;
  const Topology solvated = add_solvent(turned, v.system, options, &sr);
  REQUIRE(sr.box.c.z < hi[longest] - lo[longest]);
  CHECK(sr.waters_added > 0);
  check_no_overlaps(solvated, v.system);
  // Finite. (Not necessarily negative: Modeller's boundary rule leaves water pairs 0.18-0.25 nm apart at the
  // faces, several hundred kJ/mol each, and this thin water layer has many faces for its volume; minimisation
  // removes them, as after Modeller.)
  const EnergyTerms e = cpu_compute(pme_system(solvated), solvated.positions_nm, nullptr);
  CHECK(std::isfinite(e.total));
}

TEST_CASE("a rod along the dodecahedron's slanted vector: the box widened to keep padding from its images") {
  // 61 carbon-like atoms 0.1 nm apart along (1/2, 1/2, 1/sqrt(2)), the direction of the dodecahedron's c: at
  // the width extent + 2 * padding (4.24 + 1 nm) the rod (6 nm) would overlap its image shifted by c.
  Topology rod;
  rod.source = "rod";
  rod.chains.push_back({"A", {}});
  System system;
  const Vec3d axis(0.5, 0.5, std::sqrt(0.5));
  for (int i = 0; i <= 60; ++i) {
    rod.chains[0].residues.push_back(i);
    rod.residues.push_back({"ROD", 0, i + 1, ' ', {i}, 0});
    rod.atoms.push_back({"C", "C", i, i + 1, 0});
    rod.positions_nm.push_back(axis * (0.1 * i));
    system.mass_amu.push_back(12.0);
    system.charge_e.push_back(0.0);
    system.sigma_nm.push_back(0.34);
    system.epsilon_kj_per_mol.push_back(0.36);
  }
  SolventOptions options;
  options.shape = BoxShape::Dodecahedron;
  options.padding_nm = 0.5;
  SolventReport sr;
  const Topology solvated = add_solvent(rod, system, options, &sr);
  const double extent = 6.0 * std::sqrt(0.5);
  CHECK(sr.enlarged);
  CHECK(sr.width_nm > extent + 1.0);
  CHECK(smallest_lattice_vector(sr.box) == Catch::Approx(sr.width_nm).epsilon(1e-12));
  CHECK(reduced_form(sr.box));
  double closest = 1e300;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      for (int k = -2; k <= 2; ++k) {
        if (!i && !j && !k) continue;
        const Vec3d shift = sr.box.a * double(i) + sr.box.b * double(j) + sr.box.c * double(k);
        for (const Vec3d& p : rod.positions_nm)
          for (const Vec3d& q : rod.positions_nm) closest = std::min(closest, norm(p + shift - q));
      }
  CHECK(closest >= 0.5 * (1 - 1e-9));
  CHECK(closest < 0.5 + 0.1);  // widened by no more than needed (within a step of 0.1 nm)
  check_no_overlaps(solvated, system);
  // The cube of the same padding needs no widening.
  options.shape = BoxShape::Cube;
  add_solvent(rod, system, options, &sr);
  CHECK_FALSE(sr.enlarged);
  CHECK(sr.width_nm == Catch::Approx(extent + 1.0).epsilon(1e-12));
}

TEST_CASE("every ion kind gets amber14's template names and parameters") {
  const Solute& v = villin();
  const Topology solvated = add_solvent(v.topology, v.system, SolventOptions{});
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"Na+", "Cl-"}, {"K+", "Br-"}, {"Li+", "F-"}, {"Rb+", "I-"}, {"Cs+", "Cl-"}};
  for (const auto& [pos, neg] : kinds) {
    INFO(pos << " " << neg);
    IonOptions options;
    options.positive_ion = pos;
    options.negative_ion = neg;
    IonReport ir;
    const Topology ionised = add_ions(solvated, 2.0, options, &ir);
    TemplateAssignment assignment;
    const System system = build_system(ionised, amber14(), ForceFieldOptions{}, &assignment);
    int positive = 0, negative = 0;
    for (int r : ionised.chains.back().residues) {
      const TopologyResidue& residue = ionised.residues[static_cast<std::size_t>(r)];
      const double q = system.charge_e[static_cast<std::size_t>(residue.atoms[0])];
      CHECK(assignment.residue_template[static_cast<std::size_t>(r)] == residue.name);
      CHECK(ionised.atoms[static_cast<std::size_t>(residue.atoms[0])].name == (residue.name == "IOD" ? "I" : residue.name));
      (q > 0 ? positive : negative) += 1;
      CHECK(std::abs(q) == 1.0);
    }
    CHECK(positive == ir.positive);
    CHECK(negative == ir.negative);
    CHECK(rounded_total_charge(system) == 0);
  }
}

TEST_CASE("an explicit rectangular box around the solute") {
  const Solute& v = villin();
  SolventOptions options;
  options.box_nm = std::array<double, 3>{5.0, 4.5, 4.8};
  SolventReport sr;
  const Topology solvated = add_solvent(v.topology, v.system, options, &sr);
  CHECK(sr.box.a.x == 5.0);
  CHECK(sr.box.b.y == 4.5);
  CHECK(sr.box.c.z == 4.8);
  CHECK_FALSE(sr.box.triclinic());
  check_no_overlaps(solvated, v.system);
}

// The message shown when it lacks the part.
#define CHECK_HAS(text, part)              \
  do {                                     \
    const std::string t_ = (text);         \
    INFO("message: " << t_);               \
    CHECK(mdsim_test::contains(t_, part)); \
  } while (false)

TEST_CASE("bad input: a located, one-line error that says how to fix it") {
  const Solute& v = villin();
  SolventOptions options;
  options.padding_nm = 0;
  std::string m = input_error_of([&] { add_solvent(v.topology, v.system, options); });
  CHECK_HAS(m, "padding must be positive");

  options.padding_nm = 0.1;
  options.cutoff_nm = 2.0;
  m = input_error_of([&] { add_solvent(v.topology, v.system, options); });
  CHECK_HAS(m, "too small for the cutoff 2 nm");
  CHECK_HAS(m, "increase padding to at least");
  // The suggested padding is enough.
  const std::string suggested = m.substr(m.rfind("at least ") + 9);
  options.padding_nm = std::stod(suggested);
  CHECK_NOTHROW(add_solvent(v.topology, v.system, options));
  options.shape = BoxShape::Dodecahedron;  // its height c.z is w/sqrt(2): needs more padding for the same cutoff
  m = input_error_of([&] { add_solvent(v.topology, v.system, options); });
  CHECK_HAS(m, "dodecahedron box is too small");
  options.padding_nm = std::stod(m.substr(m.rfind("at least ") + 9));
  CHECK_NOTHROW(add_solvent(v.topology, v.system, options));

  SolventOptions boxed;
  boxed.box_nm = std::array<double, 3>{2.0, 5.0, 5.0};
  m = input_error_of([&] { add_solvent(v.topology, v.system, boxed); });
  CHECK_HAS(m, "the solute spans");
  CHECK_HAS(m, "along x");
  boxed.box_nm = std::array<double, 3>{5.0, 5.0, 1.5};
  boxed.cutoff_nm = 1.0;
  m = input_error_of([&] { add_solvent(v.topology, v.system, boxed); });
  CHECK_HAS(m, "the solute spans");

  SolventOptions other_water;
  other_water.water_model = "tip5p";
  CHECK_HAS(input_error_of([&] { add_solvent(v.topology, v.system, other_water); }), "unknown water model 'tip5p'");
  Topology fewer = v.topology;
  fewer.atoms.pop_back();
  fewer.positions_nm.pop_back();
  CHECK_HAS(input_error_of([&] { add_solvent(fewer, v.system, SolventOptions{}); }),
            "build the system from this structure");

  const Topology solvated = add_solvent(v.topology, v.system, SolventOptions{});
  IonOptions ions;
  ions.positive_ion = "Mg2+";
  m = input_error_of([&] { add_ions(solvated, 2.0, ions); });
  CHECK_HAS(m, "unknown positive ion 'Mg2+'");
  CHECK_HAS(m, "Na+");
  ions = IonOptions{};
  ions.negative_ion = "Cl";
  CHECK_HAS(input_error_of([&] { add_ions(solvated, 2.0, ions); }), "unknown negative ion 'Cl'");
  ions = IonOptions{};
  ions.ionic_strength_molar = 60.0;  // more ion pairs than waters
  m = input_error_of([&] { add_ions(solvated, 2.0, ions); });
  CHECK_HAS(m, "there are only");
  CHECK_HAS(m, "lower ionic_strength");
  ions.ionic_strength_molar = -1;
  CHECK_HAS(input_error_of([&] { add_ions(solvated, 2.0, ions); }), "ionic strength must be zero or positive");
  ions = IonOptions{};
  CHECK_HAS(input_error_of([&] { add_ions(v.topology, 2.0, ions); }),
            "cannot neutralise a net charge of 2 e with 0 waters");
}
