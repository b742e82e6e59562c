// A rank that starts MPI and then waits without a word: what gpulb's rank 0 meets when a rank of
// an MPMD job is some other MPI program (mpi_run_test.sh silent_rank). mpirun ends it.
#include <mpi.h>

#include <chrono>
#include <thread>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::this_thread::sleep_for(std::chrono::seconds(120));
  MPI_Finalize();
  return 0;
}
