// Validation: temperature replica exchange samples each temperature's canonical ensemble.
// Alanine dipeptide in vacuum (amber14, HBonds, 2 fs, friction 1/ps), 4 replicas on the geometric ladder
// 300-400 K exchanging every 0.5 ps, 2 ns each, in one process; against it one plain LangevinMiddle run at
// 300 K of 2 ns with another seed. The potential energy sampled every 0.5 ps at 300 K (mdsim demux's state
// log) is compared with the plain run's:
//  - means within 3 combined standard errors (block averages, 20 blocks of 100 ps);
//  - a two-sample Kolmogorov-Smirnov test at the 0.1% level on samples one statistical inefficiency apart.
// And for each neighbouring pair the measured acceptance ratio is compared with the one predicted from the
// two temperatures' energy distributions, <min(1, exp[(beta_k - beta_k+1)(U_k - U_k+1)])> over independent
// draws from each, within 4 combined standard errors (the measured one's from block averages of its accepted
// attempts, the prediction's from its spread over 10 blocks of the samples).
#include "support/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/demux.hpp"
#include "engine/replicas.hpp"
#include "engine/simulation.hpp"
#include "io/config.hpp"
#include "physics/integrator_steps.hpp"
#include "support/scratch.hpp"
#include "support/statistics.hpp"

namespace fs = std::filesystem;
using namespace mdsim;

namespace {

constexpr int kSteps = 1000000;  // 2 ns at 2 fs
constexpr int kReport = 250;     // 0.5 ps

std::string config_text(const std::string& out, const std::string& replicas, const std::string& temperature) {
  std::ostringstream c;
  c << "system: {structure: " << MDSIM_TEST_DATA_DIR << "/systems/ala2_vacuum.pdb, forcefield: [amber14-all.xml], "
    << "nonbonded_method: no_cutoff, constraints: hbonds}\n"
    << "platform: cpu\n"
    << "minimize: {tolerance: 10 kJ/mol/nm}\n"
    << "integrator: {" << temperature << "friction: 1/ps, timestep: 2 fs, seed: " << (replicas.empty() ? 101 : 202) << "}\n"
    << replicas << "run: {steps: " << kSteps << "}\n"
    << "output: {directory: " << out << ", trajectory: null, state: {interval: " << kReport
    << "}, checkpoint: null, final_pdb: null, progress: false}\n";
  return c.str();
}

// Column `name` of a CSV file with a header line.
std::vector<double> column(const fs::path& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::stringstream header(line);
  int index = -1, i = 0;
  for (std::string cell; std::getline(header, cell, ','); ++i)
    if (cell == name) index = i;
  REQUIRE(index >= 0);
  std::vector<double> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (int k = 0; k <= index; ++k) std::getline(row, cell, ',');
    out.push_back(std::stod(cell));
  }
  return out;
}

// Every `every`-th sample.
std::vector<double> thinned(const std::vector<double>& x, int every) {
  std::vector<double> out;
  for (std::size_t i = 0; i < x.size(); i += static_cast<std::size_t>(every)) out.push_back(x[i]);
  return out;
}

// The two-sample Kolmogorov-Smirnov statistic.
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

// <min(1, exp[(beta_lo - beta_hi)(U_lo - U_hi)])> over every pair of the two samples.
double predicted_acceptance(const std::vector<double>& lo, const std::vector<double>& hi, double t_lo, double t_hi) {
  const double dbeta = 1.0 / (kBoltzmannKjPerMolK * t_lo) - 1.0 / (kBoltzmannKjPerMolK * t_hi);
  double sum = 0;
  for (const double u : lo)
    for (const double v : hi) sum += std::min(1.0, std::exp(dbeta * (u - v)));
  return sum / (static_cast<double>(lo.size()) * static_cast<double>(hi.size()));
}

}  // namespace

TEST_CASE("replica exchange: the 300 K ensemble of a ladder equals a plain 300 K run's; acceptance as predicted") {
  const fs::path dir = mdsim_test::scratch("ladder");
  const std::string ladder = "replicas: {exchange: temperature, temperatures: {min: 300 K, max: 400 K, count: 4}, "
                             "exchange_interval: 0.5 ps}\n";
  const RunConfig rex = parse_config(config_text("rex", ladder, ""), (dir / "rex.yaml").string(), dir.string());
  const RunConfig plain = parse_config(config_text("plain", "", "temperature: 300 K, "), (dir / "plain.yaml").string(),
                                       dir.string());
  SingleProcess alone;
  const EnsembleSummary summary = run_ensemble(rex, RunRequest{}, alone);
  run_simulation(plain, RunRequest{});
  demux_ensemble(rex);

  const std::vector<double>& t = rex.replicas->temperatures_k;
  std::vector<std::vector<double>> energies;
  for (int k = 0; k < 4; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "temperature_%02d_%.2fK.csv", k, t[k]);
    energies.push_back(column(dir / "rex" / "demux" / name, "potential_kj_per_mol"));
  }
  const std::vector<double> reference = column(dir / "plain" / "state.csv", "potential_kj_per_mol");
  REQUIRE(energies[0].size() == kSteps / kReport);
  REQUIRE(reference.size() == kSteps / kReport);

  // 300 K: means and distributions.
  const mdsim_test::BlockMean a = mdsim_test::block_mean(energies[0], 20), b = mdsim_test::block_mean(reference, 20);
  const double combined = std::sqrt(a.standard_error * a.standard_error + b.standard_error * b.standard_error);
  const int every = static_cast<int>(std::ceil(std::max(a.inefficiency, b.inefficiency)));
  const std::vector<double> xa = thinned(energies[0], every), xb = thinned(reference, every);
  const double d = ks_statistic(xa, xb);
  const double d_critical = 1.949 * std::sqrt(static_cast<double>(xa.size() + xb.size()) / (xa.size() * xb.size()));
  std::printf("[figure] REMD ala2_vacuum 300 K potential: %.3f +- %.3f kJ/mol (std %.3f, inefficiency %.1f) vs plain "
              "300 K %.3f +- %.3f (std %.3f, inefficiency %.1f): difference %.2f combined standard errors; KS D %.4f "
              "(critical %.4f at 0.1%%, %zu and %zu samples %d apart)\n",
              a.mean, a.standard_error, a.std_dev, a.inefficiency, b.mean, b.standard_error, b.std_dev, b.inefficiency,
              (a.mean - b.mean) / combined, d, d_critical, xa.size(), xb.size(), every);
  CHECK(std::abs(a.mean - b.mean) < 3 * combined);
  CHECK(d < d_critical);
  // The ladder's temperatures order the mean energies.
  for (int k = 0; k + 1 < 4; ++k)
    CHECK(mdsim_test::block_mean(energies[k], 20).mean < mdsim_test::block_mean(energies[k + 1], 20).mean);

  // Acceptance per pair, measured (the exchange log's accepted column) and predicted.
  std::vector<std::vector<double>> accepted(3);
  {
    std::ifstream log(dir / "rex" / "exchange.csv");
    std::string line;
    std::getline(log, line);
    while (std::getline(log, line)) {
      std::vector<std::string> cell;
      std::stringstream row(line);
      for (std::string x; std::getline(row, x, ',');) cell.push_back(x);
      accepted[static_cast<std::size_t>(std::stoi(cell[3]))].push_back(cell[13] == "1" ? 1.0 : 0.0);
    }
  }
  for (int k = 0; k + 1 < 4; ++k) {
    const mdsim_test::BlockMean m = mdsim_test::block_mean(accepted[k], 20);
    CHECK(m.mean == Catch::Approx(static_cast<double>(summary.pairs[k].accepted) / summary.pairs[k].attempts));
    // The prediction over 10 blocks of each temperature's samples (thinned to ~independent ones).
    const int stride = static_cast<int>(std::ceil(std::max(mdsim_test::block_mean(energies[k], 20).inefficiency,
                                                           mdsim_test::block_mean(energies[k + 1], 20).inefficiency)));
    const std::vector<double> lo = thinned(energies[k], stride), hi = thinned(energies[k + 1], stride);
    const double predicted = predicted_acceptance(lo, hi, t[k], t[k + 1]);
    std::vector<double> per_block;
    const std::size_t blocks = 10, per_lo = lo.size() / blocks, per_hi = hi.size() / blocks;
    for (std::size_t b2 = 0; b2 < blocks; ++b2)
      per_block.push_back(predicted_acceptance(std::vector<double>(lo.begin() + b2 * per_lo, lo.begin() + (b2 + 1) * per_lo),
                                               std::vector<double>(hi.begin() + b2 * per_hi, hi.begin() + (b2 + 1) * per_hi),
                                               t[k], t[k + 1]));
    const mdsim_test::BlockMean spread = mdsim_test::block_mean(per_block, static_cast<int>(blocks));
    const double sigma = std::sqrt(m.standard_error * m.standard_error + spread.standard_error * spread.standard_error);
    std::printf("[figure] REMD pair %.2f-%.2f K: acceptance %.4f +- %.4f measured (%lld attempts), %.4f +- %.4f "
                "predicted from the energy distributions: difference %.2f standard errors\n",
                t[k], t[k + 1], m.mean, m.standard_error, static_cast<long long>(summary.pairs[k].attempts), predicted,
                spread.standard_error, (m.mean - predicted) / sigma);
    CHECK(std::abs(m.mean - predicted) < 4 * sigma);
  }
  fs::remove_all(dir);
}
