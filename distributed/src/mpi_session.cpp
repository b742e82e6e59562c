#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gpulb/distributed/mpi_distribution.hpp"
#include "mpi_check.hpp"

namespace gpulb::distributed {

MpiSession::MpiSession(int& argc, char**& argv) {
  // FUNNELED: only the thread that called MPI_Init_thread calls MPI (the local run's host thread
  // is the main thread; workers never touch MPI).
  int provided = 0;
  GPULB_MPI_TRY(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  if (provided < MPI_THREAD_FUNNELED) {
    (void)MPI_Finalize();  // on the way to the error below, which says what matters
    throw RunError("this MPI library does not support MPI_THREAD_FUNNELED (it gave level " + std::to_string(provided) + ")");
  }
  // Errors come back as return codes (GPULB_MPI_TRY throws them) instead of aborting in the library
  // with its own message: the caller names the rank and what it was doing.
  GPULB_MPI_TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int r = 0, n = 1;
  GPULB_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  GPULB_MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &n));
  rank_ = static_cast<std::uint32_t>(r);
  ranks_ = static_cast<std::uint32_t>(n);
}

MpiSession::~MpiSession() {
  if (MPI_Finalize() != MPI_SUCCESS) std::fprintf(stderr, "gpulb: warning: rank %u: MPI_Finalize failed\n", rank_);
}

void MpiSession::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  (void)MPI_Abort(MPI_COMM_WORLD, code);  // returns only if it failed, and then _Exit follows
  std::_Exit(code);  // MPI_Abort does not return; if it did, the process still must end
}

int MpiSession::broadcast_from_root(int value) {
  GPULB_MPI_TRY(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return value;
}

MpiSession::Agreement MpiSession::agree_with_root(const std::string& command) {
  Agreement a;
  int length = static_cast<int>(command.size());
  GPULB_MPI_TRY(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD));
  a.root_command = rank_ == 0 ? command : std::string(static_cast<std::size_t>(length), '\0');
  GPULB_MPI_TRY(MPI_Bcast(a.root_command.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD));
  int differs = a.root_command != command ? 1 : 0;
  std::vector<int> all(ranks_);
  GPULB_MPI_TRY(MPI_Allgather(&differs, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD));
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    if (all[r] != 0) a.differing.push_back(r);
  }
  return a;
}

}  // namespace gpulb::distributed
