// CUDA platform versus the CPU reference platform for pair-specific LJ (System::lj_types, the tile kernel's TABLE
// instantiation): the CHARMM system with NBFIX (tests/data/system_xml_charmm_ala3.system.xml.gz, 2,776 atoms, 13 LJ
// types, PME 1.0 nm; the CPU platform equals OpenMM there, test_system_xml_charmm) at the reference positions, and
// the tiny table system (make_lj_table_reference.py: CutoffPeriodic, switching, long-range correction) in a cutoff
// setting. Mixed precision: each term's energy to 1e-5 relative, forces to 1e-5 relative RMS; double to 1e-9.
#include "support/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/system_xml.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "support/reference_data.hpp"
#include "support/system_xml_cases.hpp"

using namespace mdsim;

namespace {

void compare(const System& s, const std::vector<Vec3d>& x, const char* name) {
  std::vector<Vec3d> f_cpu;
  const EnergyTerms cpu = cpu_compute(s, x, &f_cpu);
  for (const bool dbl : {false, true}) {
    CudaOptions opt;
    opt.double_precision = dbl;
    CudaForceEvaluator gpu(s, opt);
    std::vector<Vec3d> f_gpu;
    const EnergyTerms e = gpu.compute(x, &f_gpu);
    const double tol = dbl ? 1e-9 : 1e-5;
    const double df = mdsim_test::relative_rms_difference(f_gpu, f_cpu);
    INFO(name << (dbl ? " double" : " mixed"));
    std::printf("%-6s %-6s | direct %.1e recip %.1e bonded %.1e total %.1e | forces rel RMS %.1e\n", name,
                dbl ? "double" : "mixed", mdsim_test::relative_difference(e.nonbonded_direct, cpu.nonbonded_direct),
                mdsim_test::relative_difference(e.nonbonded_reciprocal, cpu.nonbonded_reciprocal),
                mdsim_test::relative_difference(e.bonded_sum(), cpu.bonded_sum()),
                mdsim_test::relative_difference(e.total, cpu.total), df);
    for (const auto& [term, value] : named_terms(cpu)) {
      INFO(term);
      double gpu_value = 0.0;
      for (const auto& [t, v] : named_terms(e))
        if (std::string(t) == term) gpu_value = v;
      // Relative above 1 kJ/mol, absolute below (the CHARMM box's impropers sum to 4e-18 kJ/mol: zero in the
      // device's fixed-point energy).
      CHECK(std::fabs(gpu_value - value) <= tol * std::max(1.0, std::fabs(value)));
    }
    CHECK(df < tol);
  }
}

}  // namespace

TEST_CASE("CUDA pair-specific LJ (CHARMM NBFIX, PME) matches the CPU platform") {
  const SystemXml x = read_system_xml(mdsim_test::system_xml_data() + "system_xml_charmm_ala3.system.xml.gz");
  REQUIRE(x.system.lj_types.has_value());
  const std::vector<Vec3d> positions = mdsim_test::read_h5_vec3(
      std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/reference/charmm_ala3_solv.h5", "positions_nm");
  compare(x.system, positions, "charmm");
}

TEST_CASE("CUDA pair-specific LJ with switching and long-range correction matches the CPU platform") {
  const SystemXml x = read_system_xml(mdsim_test::system_xml_data() + "lj_table_tiny.system.xml");
  const mdsim_test::Json ref =
      mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/lj_table_reference.json");
  compare(x.system, mdsim_test::json_vec3_list(ref["positions_nm"]), "tiny");
}
