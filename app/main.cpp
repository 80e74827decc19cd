// The `mdsim` command line (CLI11). Exit codes: 0 success, 1 runtime failure, 2 usage or input error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/mpi_comm.hpp"
#include "common/errors.hpp"
#include "engine/replicas.hpp"
#include "mdsim_version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mdsim: GPU-accelerated molecular dynamics (units: nm, ps, kJ/mol, K, amu, e)", "mdsim"};
  app.set_version_flag("--version", std::string("mdsim ") + MDSIM_VERSION_STRING);
  app.require_subcommand(1);

  mdsim::EnergyOptions energy;
  mdsim::RunOptions run;
  std::string config_path;

  auto* run_cmd = app.add_subcommand("run", "Run the simulation a config file describes");
  run_cmd->add_option("CONFIG", run.config, "YAML config file")->required();
  run_cmd->add_flag("--resume", run.resume, "Continue from the config's checkpoint file");

  auto* energy_cmd = app.add_subcommand("energy", "Compute the potential energy (and forces) of the config's system");
  energy_cmd->add_option("CONFIG", energy.config, "YAML config file")->required();
  energy_cmd->add_flag("--json", energy.json, "Print JSON instead of a table");
  energy_cmd->add_option("--platform", energy.platform, "Platform to use (default: the config's)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  energy_cmd->add_option("--forces", energy.forces_file,
                         "Write /forces (N×3, kJ/mol/nm) and /positions (N×3, nm) to this HDF5 file");

  auto* check_cmd = app.add_subcommand("check", "Validate a config and its input files without simulating");
  check_cmd->add_option("CONFIG", config_path, "YAML config file")->required();

  auto* bench_cmd = app.add_subcommand("bench", "Time force evaluations and steps for the config's system");
  bench_cmd->add_option("CONFIG", config_path, "YAML config file")->required();
  int bench_steps = 2000;
  // A whole number 0..INT_MAX, said in one short line (CLI::NonNegativeNumber prints DBL_MAX in full).
  const CLI::Validator whole_steps(
      [](std::string& text) {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end == text.c_str() || *end != '\0' || errno == ERANGE || v < 0 || v > INT_MAX)
          return fmt::format("expected a whole number of steps from 0 to {}, got '{}'", INT_MAX, text);
        return std::string();
      },
      "INT>=0");
  bench_cmd->add_option("--steps", bench_steps, "Full steps to time after the force evaluations (0: none)")
      ->check(whole_steps)
      ->capture_default_str();
  bool bench_timeline = false;
  bench_cmd->add_flag("--timeline", bench_timeline,
                      "CUDA: also time the points of a step on each stream (each step synchronised; diagnostic)");

  app.add_subcommand("platforms", "List the platforms (CPU, CUDA devices) available on this machine");

  std::string demux_config, demux_output;
  auto* demux_cmd = app.add_subcommand(
      "demux", "Sort a temperature replica-exchange run's trajectories and state logs by temperature");
  demux_cmd->add_option("CONFIG", demux_config, "The ensemble's YAML config (with replicas: exchange: temperature)")
      ->required();
  demux_cmd->add_option("-o,--output", demux_output, "Folder for the per-temperature files (default OUTPUT_DIR/demux)");

  // `mdsim prepare`: every option is also a key of a YAML file's `prepare:` section (io/prepare_config.hpp);
  // values are kept as text and parsed by the same code as the file's.
  mdsim::PrepareCommandOptions prepare;
  auto* prepare_cmd = app.add_subcommand(
      "prepare", "Add hydrogens, water and ions to a PDB/mmCIF structure and write it with a run config");
  prepare_cmd->add_option("INPUT", prepare.input,
                          "Structure (.pdb, .cif, .mmcif, optionally .gz) or a YAML file with a prepare: section")
      ->required();
  const auto text_option = [&](const char* flag, const std::string& key, const char* help) {
    prepare_cmd->add_option_function<std::string>(
        flag, [&prepare, key](const std::string& v) { prepare.settings.emplace_back(key, v); }, help);
  };
  const auto list_option = [&](const char* flag, const std::string& key, const char* help) {
    prepare_cmd->add_option_function<std::vector<std::string>>(
        flag,
        [&prepare, key](const std::vector<std::string>& values) {
          for (const auto& v : values) prepare.settings.emplace_back(key, v);
        },
        help)->allow_extra_args(false);
  };
  const auto flag_option = [&](const char* flag, const std::string& key, const char* value, const char* help) {
    prepare_cmd->add_flag_callback(flag, [&prepare, key, value]() { prepare.settings.emplace_back(key, value); }, help);
  };
  text_option("-o,--output", "output", "Prepared structure (.pdb or .cif; default INPUT_prepared.pdb)");
  text_option("--config", "config", "Also write an `mdsim run` config with an equilibration protocol");
  list_option("--forcefield", "forcefield", "Force-field XML files (default amber14-all.xml amber14/tip3p.xml)");
  text_option("--ph", "ph", "pH for protonation states (default 7.0)");
  list_option("--variant", "variant", "A residue's variant, CHAIN:NUMBER[ICODE]=NAME (A:45=HIE); repeatable");
  flag_option("--no-solvent", "solvent", "false", "Add no water or ions");
  text_option("--padding", "padding", "Solute to box edge (default 1.0 nm)");
  text_option("--box", "box", "Explicit rectangular box a,b,c (nm)");
  text_option("--box-shape", "box_shape", "cube | dodecahedron | octahedron (default cube)");
  text_option("--water-model", "water_model", "tip3p (default)");
  flag_option("--no-neutralize", "neutralize", "false", "Add no counter-ions");
  text_option("--ionic-strength", "ionic_strength", "Salt besides the counter-ions (default 0.15 M)");
  text_option("--positive-ion", "positive_ion", "Na+ (default) | K+");
  text_option("--negative-ion", "negative_ion", "Cl- (default)");
  text_option("--seed", "seed", "Which waters become ions (default 1)");
  text_option("--chain-breaks", "chain_breaks", "error (default) | split: at a gap in a chain");
  text_option("--restraint-k", "protocol.restraint_k", "Heavy-atom restraints while equilibrating (default 1000 kJ/mol/nm^2)");
  text_option("--nvt-time", "protocol.nvt_time", "Restrained NVT stage (default 100 ps)");
  text_option("--npt-time", "protocol.npt_time", "Restrained NPT stage (default 100 ps)");
  text_option("--production-time", "protocol.production_time", "Production stage (default 1000 ps)");
  text_option("--temperature", "protocol.temperature", "Temperature (default 300 K)");
  text_option("--pressure", "protocol.pressure", "Pressure (default 1 bar)");
  text_option("--cutoff", "protocol.cutoff", "Nonbonded cutoff (default 1.0 nm)");

  // An unknown first word is a misspelt subcommand, not a missing one (CLI11 would say "A subcommand is
  // required"); so is an unknown option before any command.
  const auto all = [](const CLI::App*) { return true; };
  std::vector<std::string> known;
  for (const CLI::App* sub : std::as_const(app).get_subcommands(all)) known.push_back(sub->get_name());
  std::string list;
  for (std::size_t i = 0; i < known.size(); ++i) list += (i == 0 ? "" : i + 1 == known.size() ? " and " : ", ") + known[i];
  if (argc == 1) {
    std::fprintf(stderr, "error: give a command: %s (mdsim --help)\n", list.c_str());
    return 2;
  }
  const std::string word = argv[1];
  if (word[0] != '-' && std::find(known.begin(), known.end(), word) == known.end()) {
    std::fprintf(stderr, "error: unknown command '%s'; the commands are %s (mdsim --help)\n", word.c_str(),
                 list.c_str());
    return 2;
  }
  if (word[0] == '-' && word != "-h" && word != "--help" && word != "--version") {
    std::fprintf(stderr, "error: unknown option '%s' before the command; the options there are --help and "
                 "--version, the commands %s (mdsim --help)\n", word.c_str(), list.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other error: CLI11's message and where the help is.
    const bool command = std::find(known.begin(), known.end(), word) != known.end();
    std::fprintf(stderr, "error: %s (mdsim %s--help)\n", e.what(), command ? (word + " ").c_str() : "");
    return 2;
  }

  // The MPI world, when an MPI launcher started this process: it outlives the error reporting below (its
  // destructor waits for every rank, then finalises MPI), so a rank that reports an error has printed it before
  // any rank exits and the launcher ends the job.
  std::unique_ptr<mdsim::EnsembleComm> comm;
  try {
    if (*run_cmd) {
      comm = mdsim::launched_ensemble_comm();
      return mdsim::command_run(run, comm.get());
    }
    if (*energy_cmd) return mdsim::command_energy(energy);
    if (*check_cmd) return mdsim::command_check(config_path);
    if (*bench_cmd) return mdsim::command_bench(config_path, bench_steps, bench_timeline);
    if (*prepare_cmd) return mdsim::command_prepare(prepare);
    if (*demux_cmd) return mdsim::command_demux(demux_config, demux_output);
    return mdsim::command_platforms();
  } catch (const mdsim::EnsembleStopped& e) {
    return e.status();  // another MPI rank failed and has reported why
  } catch (const mdsim::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const mdsim::RuntimeError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    // The up-front estimates (engine/resources) refuse what cannot fit by far; this is what slips past them.
    std::fprintf(stderr, "error: out of memory: the system and settings need more memory than this machine has "
                         "free (a smaller system.replicate, a coarser PME grid through system.ewald_tolerance, or "
                         "another machine)\n");
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    const std::string path = e.path1().empty() ? std::string("a file") : e.path1().string();
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), e.code().message().c_str());
    return 1;
  } catch (const std::exception& e) {
    // Every expected failure is an InputError or RuntimeError with its own message; anything else is a bug.
    std::fprintf(stderr, "error: internal error (%s); please report it with the config and input files\n", e.what());
    return 1;
  }
}
