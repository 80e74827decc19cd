// CUDA platform versus the CPU reference platform for the RB torsion, the harmonic improper and CMAP (its
// patch table a device copy of the one the CPU platform reads): the alanine dipeptide systems of
// tests/support/torsion_terms_reference.hpp (the CPU platform equals OpenMM's there,
// test_cpu_forces_torsion_terms), each term alone and all three together, in six configurations. Mixed
// precision: each term's energy to 1e-5 relative, forces to 1e-5 relative RMS; double precision to 1e-9.
#include "support/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "support/reference_data.hpp"
#include "support/torsion_terms_reference.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

// The system with only the terms of one kind ("rb_torsion", "improper", "cmap"), or all three ("all").
System only(const System& full, const std::string& kind) {
  System s = full;
  if (kind != "all" && kind != "rb_torsion") s.rb_torsions.clear();
  if (kind != "all" && kind != "improper") s.impropers.clear();
  if (kind != "all" && kind != "cmap") s.cmap_torsions.clear();
  return s;
}

}  // namespace

TEST_CASE("CUDA RB torsions, harmonic impropers and CMAP match the CPU platform") {
  const Json& ref = mdsim_test::torsion_terms_reference();
  const System full = mdsim_test::torsion_terms_system(ref);
  for (const std::string kind : {"rb_torsion", "improper", "cmap", "all"}) {
    const System s = only(full, kind);
    for (const bool dbl : {false, true}) {
      CudaOptions opt;
      opt.double_precision = dbl;
      CudaForceEvaluator gpu(s, opt);
      const double tol = dbl ? 1e-9 : 1e-5;
      for (size_t c = 0; c < ref["configurations"].size(); ++c) {
        const std::vector<Vec3d> x = mdsim_test::json_vec3_list(ref["configurations"][c]["positions"]);
        std::vector<Vec3d> f_cpu, f_gpu;
        const EnergyTerms cpu = cpu_compute(s, x, &f_cpu);
        const EnergyTerms e = gpu.compute(x, &f_gpu);
        const double df = mdsim_test::relative_rms_difference(f_gpu, f_cpu);
        INFO(kind << (dbl ? " double" : " mixed") << " configuration " << c);
        std::printf("%-10s %-6s conf %zu | rb %.1e improper %.1e cmap %.1e total %.1e | forces rel RMS %.1e\n", kind.c_str(),
                    dbl ? "double" : "mixed", c, mdsim_test::relative_difference(e.rb_torsion, cpu.rb_torsion),
                    mdsim_test::relative_difference(e.improper, cpu.improper),
                    mdsim_test::relative_difference(e.cmap, cpu.cmap), mdsim_test::relative_difference(e.total, cpu.total),
                    df);
        for (const auto& k : mdsim_test::torsion_term_kinds()) {
          INFO(k.name);
          if (cpu.*k.energy == 0.0) CHECK(e.*k.energy == 0.0);
          else CHECK(mdsim_test::relative_difference(e.*k.energy, cpu.*k.energy) < tol);
        }
        CHECK(mdsim_test::relative_difference(e.total, cpu.total) < tol);
        CHECK(df < tol);
      }
    }
  }
}
