#include "app/mpi_comm.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"

#ifdef MDSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace mdsim {

namespace {

// The world size an MPI launcher announced in the environment (Open MPI, MPICH/Hydra; 1 for a PMIx rank of unknown count), 0 without one.
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return std::getenv("PMIX_RANK") || std::getenv("PMI_RANK") ? 1 : 0;
}

#ifdef MDSIM_HAVE_MPI

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw RuntimeError(fmt::format("MPI: {} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

class MpiComm final : public EnsembleComm {
 public:
  MpiComm() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    MPI_Comm host;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
    check(MPI_Comm_rank(host, &local_rank_), "MPI_Comm_rank");
    MPI_Comm_free(&host);
  }
  // Every rank waits here for the others (the one reporting an error has printed it), then MPI ends.
  ~MpiComm() override {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
  }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return fmt::format("MPI, {} rank{}", size_, size_ == 1 ? "" : "s"); }

  std::vector<double> all_gather(const std::vector<double>& mine) override {
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    const int n = static_cast<int>(mine.size());
    check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    const int total = layout(counts, offsets);
    std::vector<double> all(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    return all;
  }

  std::vector<double> gather(const std::vector<double>& mine) override {
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    const int n = static_cast<int>(mine.size());
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::vector<double> all;
    if (rank_ == 0) all.resize(static_cast<std::size_t>(layout(counts, offsets)));
    check(MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0,
                      MPI_COMM_WORLD),
          "MPI_Gatherv");
    return all;
  }

  int all_max(int value) override {
    int out = 0;
    check(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }

  std::uint64_t broadcast(std::uint64_t value) override {
    check(MPI_Bcast(&value, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return value;
  }

 private:
  static int layout(const std::vector<int>& counts, std::vector<int>& offsets) {
    int total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      offsets[r] = total;
      total += counts[r];
    }
    return total;
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

#endif

}  // namespace

bool built_with_mpi() {
#ifdef MDSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<EnsembleComm> launched_ensemble_comm() {
  const int world = launcher_world_size();
  if (world == 0) return nullptr;
#ifdef MDSIM_HAVE_MPI
  return std::make_unique<MpiComm>();
#else
  if (world > 1)
    throw InputError(fmt::format("an MPI launcher started {} processes, but this mdsim was built without MPI: each would "
                                 "run the whole config and write the same files; install Open MPI (libopenmpi-dev) and "
                                 "rebuild, or run `mdsim run` alone (a replica ensemble then runs in one process)",
                                 world));
  return nullptr;
#endif
}

}  // namespace mdsim
