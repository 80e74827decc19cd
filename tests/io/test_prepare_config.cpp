// The settings of `mdsim prepare`: one parser for the command line's text and the `prepare:` section.
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "io/prepare_config.hpp"
#include "support/catch.hpp"
#include "support/scratch.hpp"

using namespace mdsim;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  return mdsim_test::scratch_folder().write(name, text);
}

std::string error_of(const std::string& path) {
  try {
    load_prepare_settings(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("prepare settings from text: units, ranges and lists", "[prepare][config]") {
  PrepareSettings s;
  CHECK(set_prepare_value(s, "padding", "12 A").empty());
  CHECK(s.options.padding_nm == Catch::Approx(1.2));
  CHECK(set_prepare_value(s, "ionic_strength", "150 mM").empty());
  CHECK(s.options.ionic_strength_molar == Catch::Approx(0.15));
  CHECK(set_prepare_value(s, "ionic_strength", "0").empty());
  CHECK(s.options.ionic_strength_molar == 0.0);
  CHECK(set_prepare_value(s, "box", "5, 6,7 nm").empty());
  REQUIRE(s.options.box_nm);
  CHECK((*s.options.box_nm)[1] == Catch::Approx(6.0));
  CHECK(set_prepare_value(s, "box", "50A 60A 70A").empty());
  CHECK((*s.options.box_nm)[2] == Catch::Approx(7.0));
  CHECK(set_prepare_value(s, "box_shape", "dodecahedron").empty());
  CHECK(s.options.box_shape == BoxShape::Dodecahedron);
  CHECK(set_prepare_value(s, "variant", "A:45B=HIE").empty());
  CHECK(s.options.variants.at("A:45B") == "HIE");
  CHECK(set_prepare_value(s, "protocol.restraint_k", "2.39 kcal/mol/A^2").empty());
  CHECK(s.options.restraint_k_kj_per_mol_nm2 == Catch::Approx(2.39 * 418.4));
  CHECK(set_prepare_value(s, "protocol.nvt_time", "0.1 ns").empty());
  CHECK(s.options.nvt_time_ps == Catch::Approx(100.0));
  CHECK(set_prepare_value(s, "chain_breaks", "split").empty());
  CHECK(s.options.split_chain_breaks);

  CHECK(set_prepare_value(s, "ph", "15").find("pH from 0 to 14") != std::string::npos);
  CHECK(set_prepare_value(s, "padding", "-1 nm").find("greater than zero") != std::string::npos);
  CHECK(set_prepare_value(s, "padding", "1 ps").find("length") != std::string::npos);
  CHECK(set_prepare_value(s, "box", "5 6").find("three lengths") != std::string::npos);
  CHECK(set_prepare_value(s, "box_shape", "dodecahedrn").find("did you mean 'dodecahedron'") != std::string::npos);
  CHECK(set_prepare_value(s, "positive_ion", "Mg2+").find("Na+ | K+") != std::string::npos);
  CHECK(set_prepare_value(s, "variant", "45=HIE").find("CHAIN:NUMBER") != std::string::npos);
  CHECK(set_prepare_value(s, "protocol.restraint_k", "5 N/m").find("kcal/mol/A^2") != std::string::npos);
  CHECK(set_prepare_value(s, "seed", "-3").find("whole number") != std::string::npos);
}

TEST_CASE("prepare: section of a YAML file", "[prepare][config]") {
  const std::string path = write_temp("ok.yaml",
                                      "prepare:\n"
                                      "  input: raw/1abc.cif\n"
                                      "  output: system.pdb\n"
                                      "  config: run.yaml\n"
                                      "  ph: 6.5\n"
                                      "  variants: {\"A:12\": HID, \"B:7\": CYX}\n"
                                      "  box: [6 nm, 6 nm, 7 nm]\n"
                                      "  ionic_strength: 0.1 M\n"
                                      "  protocol: {nvt_time: 10 ps, npt_time: 10 ps, production_time: 0}\n");
  const PrepareSettings s = load_prepare_settings(path);
  const fs::path dir = fs::path(path).parent_path();
  CHECK(s.files.input == (dir / "raw/1abc.cif").lexically_normal().string());
  CHECK(s.files.config == (dir / "run.yaml").lexically_normal().string());
  CHECK(s.options.ph == Catch::Approx(6.5));
  CHECK(s.options.variants.size() == 2);
  CHECK((*s.options.box_nm)[2] == Catch::Approx(7.0));
  CHECK(s.options.production_time_ps == 0.0);
  CHECK(s.locations.at("prepare.ph").line == 5);

  const std::string typo = write_temp("typo.yaml", "prepare:\n  input: a.pdb\n  paddin: 1 nm\n");
  CHECK(error_of(typo).find("typo.yaml:3:3: unknown key 'paddin' in 'prepare' (did you mean 'padding'?)") != std::string::npos);
  const std::string unit = write_temp("unit.yaml", "prepare:\n  input: a.pdb\n  padding: 1 K\n");
  CHECK(error_of(unit).find("unit.yaml:3:12: 'prepare.padding'") != std::string::npos);
  const std::string none = write_temp("none.yaml", "system: {pdb: a.pdb}\n");
  CHECK(error_of(none).find("no 'prepare:' section") != std::string::npos);
  const std::string both = write_temp("both.yaml", "prepare:\n  input: a.pdb\n  box: [5, 5, 5]\n  padding: 1 nm\n");
  CHECK(error_of(both).find("'prepare.padding' and 'prepare.box' both given") != std::string::npos);
  const std::string noinput = write_temp("noinput.yaml", "prepare:\n  ph: 7\n");
  CHECK(error_of(noinput).find("'prepare.input' is missing") != std::string::npos);
  const std::string ff = write_temp("ff.yaml", "prepare:\n  input: a.pdb\n  forcefield: [nonexistent_ff.xml]\n");
  CHECK(error_of(ff).find("ff.yaml:3:16") != std::string::npos);
}

// Found by fuzz_prepare_config (fuzz/regressions/prepare_config/): a box whose last length has only e/E for
// letters threw std::out_of_range, a quantity that overflows in its unit was taken as inf, and a force-field name
// the system cannot look up threw std::filesystem::filesystem_error.
TEST_CASE("prepare settings: the fuzzer's findings are located errors", "[prepare][config]") {
  PrepareSettings s;
  CHECK(set_prepare_value(s, "box", "5, 6,7E") ==
        "unknown length unit 'E' (accepted: nm, Å, A, angstrom, Angstrom, pm, um)");
  CHECK(!s.options.box_nm);
  CHECK(set_prepare_value(s, "padding", "1e308 um") == "'1e308 um' is too large: it is not a finite number of nm");
  CHECK(s.options.padding_nm == 1.0);
  CHECK(set_prepare_value(s, "protocol.production_time", "1e306 ms") ==
        "'1e306 ms' is too large: it is not a finite number of ps");

  const std::string padding = write_temp("inf.yaml", "prepare:\n  input: a.pdb\n  padding: 1e308 um\n");
  CHECK(error_of(padding).find("inf.yaml:3:12: 'prepare.padding': '1e308 um' is too large: it is not a finite "
                               "number of nm") != std::string::npos);
  const std::string name(256, 'x');  // one component over NAME_MAX (255)
  const std::string ff = write_temp("long.yaml", "prepare:\n  input: a.pdb\n  forcefield: " + name + "\n");
  const std::string e = error_of(ff);
  CHECK(e.find("long.yaml:3:15: 'forcefield': ") != std::string::npos);
  CHECK(e.find(name + ": File name too long; name a force field XML file (bundled, or relative to the config's "
                      "folder)") != std::string::npos);
}
