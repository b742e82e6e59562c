#include <mpi.h>

#include <cstdio>

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

}  // namespace gpulb::distributed
