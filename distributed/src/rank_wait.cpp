#include "rank_wait.hpp"

#include <thread>

#include "gpulb/errors.hpp"
#include "mpi_check.hpp"

namespace gpulb::distributed::detail {
namespace {

// As the balancer's idle poll: short enough for the pieces of a large gather to keep flowing
// (MPI progresses them inside MPI_Test), long enough to leave an oversubscribed core to the ranks
// still working.
constexpr std::chrono::microseconds kPoll{50};

}  // namespace

void wait_for_rank(MPI_Request& request, int rank, Patience& patience, const std::string& doing) {
  std::vector<MPI_Request> one{request};
  wait_for_ranks(one, {rank}, patience, doing);
  request = one[0];
}

void wait_for_ranks(std::vector<MPI_Request>& requests, const std::vector<int>& ranks,
                    Patience& patience, const std::string& doing) {
  for (;;) {
    bool all = true;
    for (MPI_Request& r : requests) {
      int done = 0;
      GPULB_MPI_TRY(MPI_Test(
          &r, &done, MPI_STATUS_IGNORE));  // a completed request is MPI_REQUEST_NULL, done at once
      all = all && done;
    }
    if (all) return;
    if (patience.run_out()) break;
    std::this_thread::sleep_for(kPoll);
  }
  // The job ends on this error (the caller aborts it): no buffer may be written after the caller's
  // stack unwinds, so the requests left are cancelled first.
  std::string silent;
  std::size_t count = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    (void)MPI_Cancel(&requests[i]);
    (void)MPI_Request_free(&requests[i]);
    silent += (silent.empty() ? "" : ", ") + std::to_string(ranks[i]);
    ++count;
  }
  throw RunError(
      (count == 1 ? "rank " + silent + " did not answer" : "ranks " + silent + " did not answer") +
      " within " + patience.limit_text() + " while " + doing + ": " +
      (count == 1 ? "it has" : "they have") + " stopped, hung or died, or " +
      (count == 1 ? "is" : "are") + " not running `gpulb run ... --distributed`");
}

void send_to_rank(const void* data, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                  Patience& patience, const std::string& doing) {
  MPI_Request request = MPI_REQUEST_NULL;
  GPULB_MPI_TRY(MPI_Isend(data, count, type, rank, tag, comm, &request));
  wait_for_rank(request, rank, patience, doing);
}

void receive_from_rank(void* data, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                       Patience& patience, const std::string& doing) {
  MPI_Request request = MPI_REQUEST_NULL;
  GPULB_MPI_TRY(MPI_Irecv(data, count, type, rank, tag, comm, &request));
  wait_for_rank(request, rank, patience, doing);
}

}  // namespace gpulb::distributed::detail
