// `mdsim energy` and `mdsim check` end to end: JSON output against OpenMM's reference energies and
// counts, the --forces HDF5 file against the reference forces, and input errors located in the config.
#include "support/catch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/hdf5_arrays.hpp"
#include "support/reference_data.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

// The number after "key": in a flat JSON text.
double json_number(const std::string& text, const std::string& key) {
  const auto at = text.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  return std::strtod(text.c_str() + at + key.size() + 3, nullptr);
}

fs::path write_config(const std::string& name, const std::string& body) {
  return mdsim_test::scratch_folder().write(name, body);
}

const std::string kData = MDSIM_TEST_DATA_DIR;

std::string reference_config_text(const std::string& system, bool periodic) {
  return "system:\n  pdb: " + kData + "/systems/" + system + ".pdb\n" +
         (periodic ? "  nonbonded_method: pme\n" : "  nonbonded_method: no_cutoff\n") +
         "  constraints: none\n  rigid_water: false\n";
}

}  // namespace

TEST_CASE("mdsim energy --json reproduces OpenMM's energies and counts") {
  for (const auto& [name, periodic] : {std::pair<std::string, bool>{"ala2_vacuum", false}, {"ala2_water", true}}) {
    INFO(name);
    const fs::path cfg = write_config(name + ".yaml", reference_config_text(name, periodic));
    const auto r = mdsim::test::run_mdsim("energy --json --platform cpu " + cfg.string());
    REQUIRE(r.code == 0);
    const auto ref = mdsim_test::read_json(kData + "/reference/" + name + ".json");
    const auto& e = ref["energies_kj_per_mol"];
    for (const char* term : {"bond", "angle", "torsion", "nonbonded", "total"}) {
      INFO(term);
      const double want = e[term].num();
      CHECK(std::abs(json_number(r.out, term) - want) <= 1e-6 * std::max(1.0, std::abs(want)));
    }
    // energies_kj_per_mol add up to the total; the nonbonded sum and the dispersion correction (part of
    // nonbonded_direct) are listed apart, in included_kj_per_mol.
    const mdsim_test::Json out = mdsim_test::JsonParser(r.out).parse();
    const auto& listed = out["energies_kj_per_mol"];
    double sum = 0.0;
    for (const auto& [term, value] : listed.object)
      if (term != "total") sum += value.num();
    // bond, angle, urey_bradley, torsion, rb_torsion, improper, cmap, nonbonded_direct, _reciprocal, total
    CHECK(listed.size() == 10);
    for (const char* term : {"urey_bradley", "rb_torsion", "improper", "cmap"})
      CHECK(listed[term].num() == 0.0);  // amber has none
    CHECK(sum == Catch::Approx(listed["total"].num()).epsilon(1e-12));
    CHECK(!listed.has("dispersion_correction"));
    CHECK(out["included_kj_per_mol"]["nonbonded"].num() ==
          Catch::Approx(listed["nonbonded_direct"].num() + listed["nonbonded_reciprocal"].num()).epsilon(1e-12));
    if (periodic)
      CHECK(out["included_kj_per_mol"]["dispersion_correction"].num() ==
            Catch::Approx(e["dispersion_correction"].num()).epsilon(1e-6));
    const auto& c = ref["counts"];
    CHECK(json_number(r.out, "atoms") == c["atoms"].num());
    CHECK(json_number(r.out, "bonds") == c["bonds"].num());
    CHECK(json_number(r.out, "angles") == c["angles"].num());
    CHECK(json_number(r.out, "torsion_terms") == c["torsion_terms"].num());
    CHECK(json_number(r.out, "exceptions") == c["exceptions"].num());
    for (const char* count : {"urey_bradleys", "rb_torsions", "impropers", "cmap_torsions", "cmap_maps"})
      CHECK(json_number(r.out, count) == 0);
    CHECK(json_number(r.out, "waters") == c["waters"].num());
    CHECK(std::abs(json_number(r.out, "net_charge")) < 1e-9);
    if (periodic) {
      CHECK(json_number(r.out, "alpha_per_nm") == Catch::Approx(ref["pme"]["alpha_per_nm"].num()).epsilon(1e-12));
    }
  }
}

TEST_CASE("mdsim energy counts constraints of the config's own settings") {
  const fs::path cfg = write_config("hb.yaml", "system:\n  pdb: " + kData + "/systems/ala2_water.pdb\n");
  const auto r = mdsim::test::run_mdsim("energy --json --platform cpu " + cfg.string());
  REQUIRE(r.code == 0);
  const auto ref = mdsim_test::read_json(kData + "/reference/ala2_water.json");
  CHECK(json_number(r.out, "constraints") == ref["counts"]["constraints_hbonds_rigidwater"].num());
  const double want = ref["energy_hbonds_rigidwater_total_kj_per_mol"].num();
  CHECK(std::abs(json_number(r.out, "total") - want) <= 1e-6 * std::abs(want));
}

TEST_CASE("mdsim energy --forces writes /forces and /positions matching OpenMM's forces") {
  const fs::path cfg = write_config("f.yaml", reference_config_text("ala2_water", true));
  const fs::path out = cfg.parent_path() / "forces.h5";
  fs::remove(out);
  const auto r = mdsim::test::run_mdsim("energy --platform cpu --forces " + out.string() + " " + cfg.string());
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(out));
  CHECK_FALSE(fs::exists(out.string() + ".partial"));
  const auto forces = mdsim::read_vec3_dataset_h5(out.string(), "forces");
  const auto positions = mdsim::read_vec3_dataset_h5(out.string(), "positions");
  const auto ref_forces = mdsim::read_vec3_dataset_h5(kData + "/reference/ala2_water.h5", "forces_kj_per_mol_nm/total");
  const auto ref_positions = mdsim::read_vec3_dataset_h5(kData + "/reference/ala2_water.h5", "positions_nm");
  REQUIRE(forces.size() == ref_forces.size());
  double num = 0, den = 0, pos_err = 0;
  for (std::size_t i = 0; i < forces.size(); ++i) {
    num += mdsim::norm2(forces[i] - ref_forces[i]);
    den += mdsim::norm2(ref_forces[i]);
    pos_err = std::max(pos_err, mdsim::norm(positions[i] - ref_positions[i]));
  }
  CHECK(std::sqrt(num / den) < 1e-6);
  CHECK(pos_err < 1e-9);
}

TEST_CASE("mdsim check reports the system; structure problems are located in the config") {
  const fs::path ok = write_config("ok.yaml", reference_config_text("ala2_water", true));
  const auto r = mdsim::test::run_mdsim("check " + ok.string());
  CHECK(r.code == 0);
  CHECK(r.out.find("2269 in 752 residues") != std::string::npos);
  CHECK(r.out.find("grid 27 x 27 x 26 (exact)") != std::string::npos);
  CHECK(r.out.find("config OK") != std::string::npos);

  // system.pme_grid: the grid printed is the one the platforms use.
  const fs::path friendly = write_config("fft.yaml", reference_config_text("ala2_water", true) + "  pme_grid: fft_friendly\n");
  const auto f = mdsim::test::run_mdsim("check " + friendly.string());
  CHECK(f.code == 0);
  CHECK(f.out.find("pme grid fft_friendly") != std::string::npos);
  CHECK(f.out.find("grid 27 x 27 x 27 (fft_friendly)") != std::string::npos);

  const fs::path long_cutoff =
      write_config("cut.yaml", "system:\n  pdb: " + kData + "/systems/ala2_water.pdb\n  cutoff: 1.7 nm\n");
  const auto c = mdsim::test::run_mdsim("check " + long_cutoff.string());
  CHECK(c.code == 2);
  CHECK(c.err.find("cut.yaml:3:3: cutoff 1.7 nm is longer than half the smallest box height") != std::string::npos);

  const fs::path no_box = write_config("nobox.yaml", "system:\n  pdb: " + kData + "/systems/ala2_vacuum.pdb\n");
  const auto b = mdsim::test::run_mdsim("check " + no_box.string());
  CHECK(b.code == 2);
  CHECK(b.err.find("nonbonded_method 'pme' needs a periodic box") != std::string::npos);
}
