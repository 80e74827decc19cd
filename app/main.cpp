// The `mdsim` command line (CLI11): one function wires each subcommand to its options and to the command
// (app/commands.hpp) it runs. Exit codes: 0 success, 1 runtime failure, 2 usage or input error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
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

namespace {

// A subcommand and what runs when the command line chose it. Options parse into the state the action holds.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

Subcommand add_run(CLI::App& app, std::unique_ptr<mdsim::EnsembleComm>& comm) {
  auto options = std::make_shared<mdsim::RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run the simulation a config file describes");
  cmd->add_option("CONFIG", options->config, "YAML config file")->required();
  cmd->add_flag("--resume", options->resume, "Continue from the config's checkpoint file");
  // The MPI world, when an MPI launcher started this process, is made only for `run` and kept by main (see
  // there).
  return {cmd, [options, &comm] {
            comm = mdsim::launched_ensemble_comm();
            return mdsim::command_run(*options, comm.get());
          }};
}

Subcommand add_energy(CLI::App& app) {
  auto options = std::make_shared<mdsim::EnergyOptions>();
  auto* cmd = app.add_subcommand("energy", "Compute the potential energy (and forces) of the config's system");
  cmd->add_option("CONFIG", options->config, "YAML config file")->required();
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->add_option("--platform", options->platform, "Platform to use (default: the config's)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--forces", options->forces_file,
                  "Write /forces (N×3, kJ/mol/nm) and /positions (N×3, nm) to this HDF5 file");
  return {cmd, [options] { return mdsim::command_energy(*options); }};
}

Subcommand add_check(CLI::App& app) {
  auto config = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("check", "Validate a config and its input files without simulating");
  cmd->add_option("CONFIG", *config, "YAML config file")->required();
  return {cmd, [config] { return mdsim::command_check(*config); }};
}

// A whole number 0..INT_MAX, said in one short line (CLI::NonNegativeNumber prints DBL_MAX in full).
CLI::Validator whole_steps() {
  return CLI::Validator(
      [](std::string& text) {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end == text.c_str() || *end != '\0' || errno == ERANGE || v < 0 || v > INT_MAX)
          return fmt::format("expected a whole number of steps from 0 to {}, got '{}'", INT_MAX, text);
        return std::string();
      },
      "INT>=0");
}

Subcommand add_bench(CLI::App& app) {
  struct Options {
    std::string config;
    int steps = 2000;
    bool timeline = false;
    int replicas = 1;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("bench", "Time force evaluations and steps for the config's system (after the "
                                          "config's minimize section, untimed, when it has one)");
  cmd->add_option("CONFIG", options->config, "YAML config file")->required();
  cmd->add_option("--steps", options->steps, "Full steps to time after the force evaluations (0: none)")
      ->check(whole_steps())
      ->capture_default_str();
  cmd->add_flag("--timeline", options->timeline,
                "CUDA: also time the points of a step on each stream (each step synchronised; diagnostic)");
  cmd->add_option("--replicas", options->replicas,
                  "CUDA: time a replica batch of this many copies of the system, evaluated and stepped together "
                  "(docs/replicas.md)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  return {cmd, [options] {
            return mdsim::command_bench(options->config, options->steps, options->timeline, options->replicas);
          }};
}

Subcommand add_platforms(CLI::App& app) {
  auto* cmd = app.add_subcommand("platforms", "List the platforms (CPU, CUDA devices) available on this machine");
  return {cmd, [] { return mdsim::command_platforms(); }};
}

Subcommand add_demux(CLI::App& app) {
  auto options = std::make_shared<std::pair<std::string, std::string>>();  // config, output folder
  auto* cmd = app.add_subcommand(
      "demux", "Sort a temperature replica-exchange run's trajectories and state logs by temperature");
  cmd->add_option("CONFIG", options->first, "The ensemble's YAML config (with replicas: exchange: temperature)")
      ->required();
  cmd->add_option("-o,--output", options->second, "Folder for the per-temperature files (default OUTPUT_DIR/demux)");
  return {cmd, [options] { return mdsim::command_demux(options->first, options->second); }};
}

// `mdsim prepare`: every option is also a key of a YAML file's `prepare:` section (io/prepare_config.hpp);
// values are kept as text, by key, and parsed by the same code as the file's.
Subcommand add_prepare(CLI::App& app) {
  auto prepare = std::make_shared<mdsim::PrepareCommandOptions>();
  auto* cmd = app.add_subcommand(
      "prepare", "Add hydrogens, water and ions to a PDB/mmCIF structure and write it with a run config");
  cmd->add_option("INPUT", prepare->input,
                  "Structure (.pdb, .cif, .mmcif, optionally .gz) or a YAML file with a prepare: section")
      ->required();
  auto& settings = prepare->settings;
  const auto text = [&](const char* flag, const std::string& key, const char* help) {
    cmd->add_option_function<std::string>(
        flag, [&settings, key](const std::string& v) { settings.emplace_back(key, v); }, help);
  };
  const auto list = [&](const char* flag, const std::string& key, const char* help) {
    cmd->add_option_function<std::vector<std::string>>(
           flag,
           [&settings, key](const std::vector<std::string>& values) {
             for (const auto& v : values) settings.emplace_back(key, v);
           },
           help)
        ->allow_extra_args(false);
  };
  const auto flag = [&](const char* name, const std::string& key, const char* value, const char* help) {
    cmd->add_flag_callback(name, [&settings, key, value]() { settings.emplace_back(key, value); }, help);
  };
  text("-o,--output", "output", "Prepared structure (.pdb or .cif; default INPUT_prepared.pdb)");
  text("--config", "config", "Also write an `mdsim run` config with an equilibration protocol");
  list("--forcefield", "forcefield", "Force-field XML files (default amber14-all.xml amber14/<water model>.xml)");
  flag("--remove-heterogens", "remove_heterogens", "true",
       "Remove every residue that is not a standard amino acid, nucleotide or water (as PDBFixer)");
  list("--keep-heterogens", "keep_heterogens", "With --remove-heterogens: residue names to keep, NAME[,NAME...]");
  text("--ph", "ph", "pH for protonation states (default 7.0)");
  list("--variant", "variant", "A residue's variant, CHAIN:NUMBER[ICODE]=NAME (A:45=HIE); repeatable");
  flag("--no-solvent", "solvent", "false", "Add no water or ions");
  text("--padding", "padding", "Solute to box edge (default 1.0 nm)");
  text("--box", "box", "Explicit rectangular box a,b,c (nm)");
  text("--box-shape", "box_shape", "cube | dodecahedron | octahedron (default cube)");
  text("--water-model", "water_model", "tip3p (default) | tip4pew; also the water force field amber14/<model>.xml");
  flag("--no-neutralize", "neutralize", "false", "Add no counter-ions");
  text("--ionic-strength", "ionic_strength", "Salt besides the counter-ions (default 0.15 M)");
  text("--positive-ion", "positive_ion", "Na+ (default) | K+");
  text("--negative-ion", "negative_ion", "Cl- (default)");
  text("--seed", "seed", "Which waters become ions (default 1)");
  text("--chain-breaks", "chain_breaks", "error (default) | split: at a gap in a chain");
  text("--restraint-k", "protocol.restraint_k", "Heavy-atom restraints while equilibrating (default 1000 kJ/mol/nm^2)");
  text("--nvt-time", "protocol.nvt_time", "Restrained NVT stage (default 100 ps)");
  text("--npt-time", "protocol.npt_time", "Restrained NPT stage (default 100 ps)");
  text("--production-time", "protocol.production_time", "Production stage (default 1000 ps)");
  text("--temperature", "protocol.temperature", "Temperature (default 300 K)");
  text("--pressure", "protocol.pressure", "Pressure (default 1 bar)");
  text("--cutoff", "protocol.cutoff", "Nonbonded cutoff (default 1.0 nm)");
  return {cmd, [prepare] { return mdsim::command_prepare(*prepare); }};
}

// The subcommands' names, and "a, b and c" of them for messages.
std::pair<std::vector<std::string>, std::string> command_names(const CLI::App& app) {
  const auto all = [](const CLI::App*) { return true; };
  std::vector<std::string> known;
  for (const CLI::App* sub : app.get_subcommands(all)) known.push_back(sub->get_name());
  std::string list;
  for (std::size_t i = 0; i < known.size(); ++i) list += (i == 0 ? "" : i + 1 == known.size() ? " and " : ", ") + known[i];
  return {known, list};
}

// An unknown first word is a misspelt subcommand, not a missing one (CLI11 would say "A subcommand is
// required"); so is an unknown option before any command. Returns the exit code, or 0 to go on.
int reject_unknown_command(const std::vector<std::string>& known, const std::string& list, int argc, char** argv) {
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
  return 0;
}

// CLI11's parse; a parse error is one line, as every other error: CLI11's message and where the help is.
// Returns the exit code, or -1 to go on.
int parse(CLI::App& app, const std::vector<std::string>& known, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string word = argv[1];
    const bool command = std::find(known.begin(), known.end(), word) != known.end();
    std::fprintf(stderr, "error: %s (mdsim %s--help)\n", e.what(), command ? (word + " ").c_str() : "");
    return 2;
  }
  return -1;
}

// Runs the chosen command; every failure becomes one line on stderr and its exit code.
int run_reporting_errors(const std::function<int()>& command) {
  try {
    return command();
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mdsim: GPU-accelerated molecular dynamics (units: nm, ps, kJ/mol, K, amu, e)", "mdsim"};
  app.set_version_flag("--version", std::string("mdsim ") + MDSIM_VERSION_STRING);
  app.require_subcommand(1);
  // The MPI world, when an MPI launcher started this process: it outlives the error reporting (its destructor
  // waits for every rank, then finalises MPI), so a rank that reports an error has printed it before any rank
  // exits and the launcher ends the job.
  std::unique_ptr<mdsim::EnsembleComm> comm;
  const std::vector<Subcommand> commands = {add_run(app, comm), add_energy(app),   add_check(app),   add_bench(app),
                                            add_platforms(app), add_demux(app),    add_prepare(app)};
  const auto [known, list] = command_names(app);
  if (const int status = reject_unknown_command(known, list, argc, argv); status != 0) return status;
  if (const int status = parse(app, known, argc, argv); status >= 0) return status;
  for (const Subcommand& c : commands)
    if (*c.app) return run_reporting_errors(c.run);
  return 0;
}
