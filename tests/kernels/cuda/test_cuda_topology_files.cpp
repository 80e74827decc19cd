// Systems from topology files on the CUDA platform against the CPU reference (issue "Every system users bring": CUDA
// within float accuracy of the CPU on the same systems): CHARMM psf files (io/charmm_psf: ala3 in water with PME, the
// NBFIX table, CMAP, Urey-Bradley and impropers; cholesterol with NBFIX; chlorobenzene's colinear lone pair, a
// LocalCoordinates site), and from the template path TIP5P (two OutOfPlane sites per water, PME), charmm36.xml on BPTI
// (DISU patches, CMAP, Urey-Bradley, impropers) and on ala3 in water (PME, the ions' NBFIX table). Energies by term within
// 1e-5 relative (1e-5 kJ/mol below 1 kJ/mol), the sites' rows moved away first so that each evaluation places them.
// Forces: double precision within 1e-9 of the CPU's relative RMS; mixed precision within 1e-5 relative RMS of the
// size of what is summed (per atom, |bonded force| + |nonbonded force| from the CPU): a minimised molecule in vacuum has
// net forces of a few kJ/mol/nm made of terms of hundreds, and float rounds the terms, not the net.
#include <cmath>
#include <string>
#include <vector>

#include "io/charmm_crd.hpp"
#include "io/charmm_psf.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/energy_terms.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;

namespace {

const std::string kData = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";

void check_term(const std::string& name, const char* term, double cuda, double cpu) {
  INFO(name << " " << term << ": CUDA " << cuda << ", CPU " << cpu);
  CHECK(std::fabs(cuda - cpu) <= 1e-5 * std::max(1.0, std::fabs(cpu)));
}

// sqrt(mean over atoms of (|F_bonded| + |F_nonbonded|)^2), from the CPU platform.
double summed_force_scale(const System& s, const std::vector<Vec3d>& x) {
  CpuForceEvaluator evaluator(s);
  std::vector<Vec3d> bonded, nonbonded;
  evaluator.compute(x, &bonded, kTermBonded);
  evaluator.compute(x, &nonbonded, kTermNonbonded);
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double m = norm(bonded[i]) + norm(nonbonded[i]);
    sum += m * m;
  }
  return std::sqrt(sum / static_cast<double>(x.size()));
}

void compare(const std::string& name, const System& s, std::vector<Vec3d> x) {
  for (const VirtualSite& v : s.virtual_sites) x[static_cast<std::size_t>(v.particle)] += Vec3d(10, -10, 10);
  std::vector<Vec3d> cpu_forces;
  const EnergyTerms cpu = cpu_compute(s, x, &cpu_forces);
  double net = 0.0;
  for (const Vec3d& f : cpu_forces) net += norm2(f);
  net = std::sqrt(net / static_cast<double>(x.size()));
  const double scale = summed_force_scale(s, x);
  for (const bool double_precision : {false, true}) {
    INFO(name << ", " << (double_precision ? "double" : "mixed") << " precision");
    CudaOptions options;
    options.double_precision = double_precision;
    CudaForceEvaluator evaluator(s, options);
    std::vector<Vec3d> cuda_forces;
    const EnergyTerms cuda = evaluator.compute(x, &cuda_forces);
    check_term(name, "bond", cuda.bond, cpu.bond);
    check_term(name, "urey_bradley", cuda.urey_bradley, cpu.urey_bradley);
    check_term(name, "angle", cuda.angle, cpu.angle);
    check_term(name, "torsion", cuda.torsion, cpu.torsion);
    check_term(name, "improper", cuda.improper, cpu.improper);
    check_term(name, "cmap", cuda.cmap, cpu.cmap);
    check_term(name, "nonbonded_direct", cuda.nonbonded_direct, cpu.nonbonded_direct);
    check_term(name, "nonbonded_reciprocal", cuda.nonbonded_reciprocal, cpu.nonbonded_reciprocal);
    check_term(name, "total", cuda.total, cpu.total);
    const double rms = mdsim_test::relative_rms_difference(cuda_forces, cpu_forces);
    const double of_scale = rms * net / scale;
    std::printf("%-12s %-6s precision: total CUDA %.6f CPU %.6f kJ/mol; forces: RMS difference %.3g of the net "
                "(%.3g kJ/mol/nm), %.3g of the summed terms' size (%.3g kJ/mol/nm)\n",
                name.c_str(), double_precision ? "double" : "mixed", cuda.total, cpu.total, rms, net, of_scale, scale);
    INFO("forces: relative RMS difference " << rms << " of the net, " << of_scale << " of the summed terms' size");
    CHECK((double_precision ? rms <= 1e-9 : of_scale <= 1e-5));
  }
}

TopologyFileModel charmm(const std::string& psf, std::vector<std::string> parameters, NonbondedMethod method) {
  TopologyFileOptions o = mdsim_test::flexible_topology_options(method, 1.0, false);
  o.parameters = std::move(parameters);
  o.box = Boxd{{3.271195, 0, 0}, {0, 3.299596, 0}, {0, 0, 3.300715}};
  return read_charmm_psf(psf, o);
}

}  // namespace

TEST_CASE("CHARMM psf systems (NBFIX table, CMAP, Urey-Bradley, impropers, a lone pair): CUDA equals the CPU") {
  const std::string shared = kData + "shared/topologies/inputs/", c = kData + "charmm/";
  const TopologyFileModel ala3 = charmm(shared + "ala3_solv.psf",
                                        {shared + "par_all36_prot.prm", shared + "toppar_water_ions.str"},
                                        NonbondedMethod::PME);
  REQUIRE(ala3.system.lj_types.has_value());
  compare("charmm_ala3", ala3.system, read_charmm_crd(shared + "ala3_solv.crd", 2776).positions_nm);
  const TopologyFileModel chl1 =
      charmm(c + "chl1.psf", {c + "lipid_chl1.prm", c + "cgenff_chl1.prm", c + "cholesterol_chl1.str"},
             NonbondedMethod::NoCutoff);
  compare("chl1", chl1.system, read_charmm_crd(c + "chl1.crd", chl1.system.num_particles()).positions_nm);
  const TopologyFileModel chlb =
      charmm(c + "chlb_cgenff.psf", {c + "cgenff_chlb.rtf", c + "cgenff_chlb.prm"}, NonbondedMethod::NoCutoff);
  REQUIRE(chlb.system.virtual_sites.size() == 1);
  compare("chlb_cgenff", chlb.system, read_charmm_crd(c + "chlb_cgenff.crd", 13).positions_nm);
}

namespace {

// A PDB through the template path with these force fields (flexible, no dispersion correction), and its positions.
std::pair<System, std::vector<Vec3d>> template_system(const std::vector<std::string>& forcefields,
                                                      const std::string& pdb, NonbondedMethod method) {
  Topology top;
  System s = mdsim_test::template_system(load_forcefields(forcefields, ""), kData + pdb, method, false,
                                         ConstraintMode::None, false, nullptr, &top);
  return {std::move(s), top.positions_nm};
}

}  // namespace

TEST_CASE("template-path systems (TIP5P sites, charmm36 with DISU, CMAP and the NBFIX table): CUDA equals the CPU") {
  const auto [tip5p, tip5p_x] = template_system({"tip5p.xml"}, "tip5p_box.pdb", NonbondedMethod::PME);
  compare("tip5p", tip5p, mdsim_test::json_vec3_list(mdsim_test::read_json(kData + "tip5p_box.json")["positions_nm"]));
  const auto [bpti, bpti_x] = template_system({"charmm36.xml"}, "charmm36_bpti.pdb", NonbondedMethod::NoCutoff);
  compare("charmm36_bpti", bpti, bpti_x);
  const auto [ala3, ala3_x] =
      template_system({"charmm36.xml", "charmm36/water.xml"}, "charmm36_ala3_water.pdb", NonbondedMethod::PME);
  REQUIRE(ala3.lj_types.has_value());
  compare("charmm36_ala3", ala3, ala3_x);
}
