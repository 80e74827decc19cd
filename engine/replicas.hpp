// Replica ensembles (config `replicas:`; docs/replicas.md): temperature replica exchange, or
// independent copies, run by one process in turn or spread over MPI ranks. Each replica is a
// Simulation with its own context, seed and outputs (output.directory/replica_<k>/); a temperature
// ladder's exchanges (platform/replica_exchange: the same decisions on every rank from the same
// energies) move temperatures between replicas, so each replica's trajectory is continuous in
// configuration. One checkpoint file holds the whole ensemble.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/simulation.hpp"
#include "model/run_config.hpp"

namespace mdsim {

// The processes an ensemble runs on. Every rank calls the collective operations in the same order.
class EnsembleComm {
 public:
  virtual ~EnsembleComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // rank among the ranks on this host (picks the GPU)
  virtual std::string name() const = 0;  // "MPI, 4 ranks" / "one process"
  // Every rank's `mine` concatenated in rank order, on every rank.
  virtual std::vector<double> all_gather(const std::vector<double>& mine) = 0;
  // Every rank's `mine` concatenated in rank order on rank 0; empty on the others.
  virtual std::vector<double> gather(const std::vector<double>& mine) = 0;
  virtual int all_max(int value) = 0;
  virtual std::uint64_t broadcast(std::uint64_t value) = 0;  // rank 0's value on every rank
};

// One process alone: every replica runs here, in turn.
class SingleProcess final : public EnsembleComm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  std::string name() const override { return "one process"; }
  std::vector<double> all_gather(const std::vector<double>& mine) override { return mine; }
  std::vector<double> gather(const std::vector<double>& mine) override { return mine; }
  int all_max(int value) override { return value; }
  std::uint64_t broadcast(std::uint64_t value) override { return value; }
};

// Thrown on the ranks whose own work succeeded when another rank failed: the process exits with
// `status` (the failing rank's: 2 for bad input, 1 otherwise) after closing its files; the failing
// rank (the lowest one, when several failed) has printed the error.
class EnsembleStopped : public std::exception {
 public:
  explicit EnsembleStopped(int status) : status_(status) {}
  int status() const { return status_; }
  const char* what() const noexcept override { return "stopped because another rank failed"; }

 private:
  int status_;
};

// Runs `work` on every rank and agrees on the outcome: when it threw anywhere, the lowest failing rank
// rethrows its exception, every other rank throws EnsembleStopped with the worst status (2 for an
// InputError, 1 otherwise). Every rank must call it at the same point.
template <typename Work>
void collectively(EnsembleComm& comm, Work&& work);

struct ReplicaPairStatistics {
  double temperature_lower_k = 0, temperature_upper_k = 0;
  std::int64_t attempts = 0, accepted = 0;
};

struct EnsembleSummary {
  int replicas = 0, ranks = 0;
  std::string comm;                     // EnsembleComm::name()
  std::string exchange;                 // "temperature" | "none"
  std::int64_t first_step = 0, last_step = 0;
  double simulated_ps_per_replica = 0, wall_s = 0;
  double ns_per_day_per_replica = 0, ns_per_day_total = 0;
  bool stopped_early = false;
  bool stopped_in_minimization = false;  // a stop request during the replicas' minimisations: nothing written
  std::string platform;
  std::uint64_t ensemble_seed = 0, exchange_seed = 0;
  std::vector<ReplicaPairStatistics> pairs;  // temperature exchange: per neighbouring pair
  std::vector<int> round_trips;              // per replica
  std::vector<std::pair<std::string, std::string>> outputs;  // what, path (rank 0's view of the ensemble's)
};

struct EnsembleRun;  // engine/replicas.cpp

// An ensemble driven step by step (the Python package's Ensemble; run_ensemble drives one to its end). The
// constructor does what run_ensemble does before its steps: the model, this rank's replicas (a batch on CUDA), their
// minimisations on a fresh start (a stop request during them is a RuntimeError here) and their outputs opened.
// run_to() steps every replica to a step, with the exchange rounds and checkpoints due on the way; finish() writes
// the final checkpoint and outputs. Every rank calls each in the same order.
class Ensemble {
 public:
  Ensemble(RunConfig config, RunRequest request, EnsembleComm& comm);
  ~Ensemble();
  Ensemble(const Ensemble&) = delete;
  Ensemble& operator=(const Ensemble&) = delete;

  const RunConfig& config() const { return config_; }
  std::int64_t current_step() const;
  int first_replica() const;  // this rank's replicas: first_replica() .. first_replica() + replicas() - 1
  int replicas() const;
  bool batched() const;       // this rank's replicas are one batch (CUDA)
  Simulation& replica(int local_index);
  double bath_temperature(int replica) const;  // K: its ladder temperature now, or integrator.temperature
  // A force from outside on every replica of this rank's batch at once (ExternalForce::add_batch; the replicas'
  // potentials, and so the exchanges, include its energies); InputError when the replicas are not one batch.
  void add_batch_force(std::shared_ptr<ExternalForce> force);
  void remove_batch_force(const ExternalForce* force);
  // Steps to `step` (not before the current step; InputError past run.steps); false when a stop request ended it
  // early.
  bool run_to(std::int64_t step);
  // The final checkpoint and outputs (stopped_early: no final structures); then the summary. Once.
  EnsembleSummary finish(bool stopped_early = false);

 private:
  RunConfig config_;
  RunRequest request_;
  std::unique_ptr<EnsembleRun> run_;
};

// Runs the ensemble of a config with `replicas:` over `comm`: this rank's replicas (a contiguous block of
// replica indices) on its device (local rank modulo the visible GPUs, unless platform.device is set). InputError,
// located, for more ranks than replicas or replicas that do not fit one rank's memory; `request.resume`
// continues from the ensemble's checkpoint.
EnsembleSummary run_ensemble(const RunConfig& config, const RunRequest& request, EnsembleComm& comm);

// The replica's folder below output.directory: replica_<k>, k zero-padded to the width of count - 1 (at least 2).
std::string replica_directory_name(int replica, int count);

// The notice for an ensemble that leaves visible GPUs idle: `ranks` ranks (one GPU each, by local rank) on a
// host with `devices` GPUs, `replicas` replicas. Empty when every GPU has a rank or there are no more
// replicas than ranks.
std::string idle_devices_notice(int ranks, int devices, int replicas);

// The seed of replica k, mixed from the ensemble's seed (SplitMix64; nonzero).
std::uint64_t replica_seed(std::uint64_t ensemble_seed, int replica);

// ---- implementation of collectively ----

namespace detail {
// The agreed outcome of one collective step: 0 ok, or the status of the worst failure (see collectively).
void agree_on_failure(EnsembleComm& comm, int status, std::exception_ptr error);
}  // namespace detail

template <typename Work>
void collectively(EnsembleComm& comm, Work&& work) {
  int status = 0;
  std::exception_ptr error;
  try {
    work();
  } catch (const InputError&) {
    status = 2;
    error = std::current_exception();
  } catch (const EnsembleStopped& e) {
    status = e.status();
    error = std::current_exception();
  } catch (...) {
    status = 1;
    error = std::current_exception();
  }
  detail::agree_on_failure(comm, status, error);
}

}  // namespace mdsim
