// Each rank's host clock against rank 0's, estimated by ping-pong (Cristian's algorithm, 1989):
// rank 0 reads its clock (t0), sends a ping, rank r answers with its clock (tr), rank 0 reads t1.
// The answer was read between t0 and t1 on rank 0's clock, so with offset = tr - (t0 + t1) / 2
// the true offset lies within +- (t1 - t0) / 2 of it, whatever the delays one way and the other.
// Of `rounds` round trips the shortest gives the tightest bound, and is the one kept.
// Clocks drift apart after that (steady_clock on different hosts: some us a second at worst);
// the runs gpulb makes are seconds long, and docs/distributed.md states the bound as measured.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace gpulb::distributed::detail {

struct ClockEstimate {
  std::int64_t offset_ns = 0;  // this rank's clock minus rank 0's
  std::uint64_t error_ns = 0;  // |true offset - offset_ns| <= error_ns
};

// Collective over `comm`: every rank gets its own estimate (rank 0: {0, 0}).
ClockEstimate estimate_clock_offset(MPI_Comm comm, std::uint32_t rounds);

}  // namespace gpulb::distributed::detail
