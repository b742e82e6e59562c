// Waits for one rank with a limit, naming that rank when it does not answer: every wait between
// ranks outside the balancer (the agreement on the command, the gather of the results, the end of
// the run) goes through here, so none can wait forever for a rank that stopped or never started.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "patience.hpp"

namespace gpulb::distributed::detail {

// Completes `request` (a send to or a receive from `rank`), polling. Where `patience` runs out
// first, the request is cancelled and RunError says "rank R did not answer within N ms while
// <doing>" and what may be wrong with it.
void wait_for_rank(MPI_Request& request, int rank, Patience& patience, const std::string& doing);
// The same for one request a rank (requests[i] with ranks[i]); the error names every rank whose
// request had not completed.
void wait_for_ranks(std::vector<MPI_Request>& requests, const std::vector<int>& ranks,
                    Patience& patience, const std::string& doing);

// MPI_Send / MPI_Recv of `count` items, each under wait_for_rank.
void send_to_rank(const void* data, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                  Patience& patience, const std::string& doing);
void receive_from_rank(void* data, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                       Patience& patience, const std::string& doing);

}  // namespace gpulb::distributed::detail
