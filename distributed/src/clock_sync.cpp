#include "clock_sync.hpp"

#include <limits>

#include "gpulb/clock.hpp"
#include "mpi_check.hpp"

namespace gpulb::distributed::detail {
namespace {

constexpr int kTagPing = 1;
constexpr int kTagPong = 2;
constexpr int kTagResult = 3;

}  // namespace

ClockEstimate estimate_clock_offset(MPI_Comm comm, std::uint32_t rounds) {
  int rank = 0, ranks = 1;
  GPULB_MPI_TRY(MPI_Comm_rank(comm, &rank));
  GPULB_MPI_TRY(MPI_Comm_size(comm, &ranks));
  ClockEstimate mine;
  if (rank == 0) {
    // One rank at a time, so that the others' pongs do not queue behind each other's.
    for (int r = 1; r < ranks; ++r) {
      std::uint64_t best_rtt = std::numeric_limits<std::uint64_t>::max();
      std::int64_t best_offset = 0;
      for (std::uint32_t k = 0; k < rounds; ++k) {
        std::uint64_t theirs = 0;
        const std::uint64_t t0 = host_now_ns();
        GPULB_MPI_TRY(MPI_Send(nullptr, 0, MPI_BYTE, r, kTagPing, comm));
        GPULB_MPI_TRY(MPI_Recv(&theirs, 1, MPI_UINT64_T, r, kTagPong, comm, MPI_STATUS_IGNORE));
        const std::uint64_t t1 = host_now_ns();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          // theirs - (t0 + t1) / 2 without overflowing the sum
          best_offset =
              static_cast<std::int64_t>(theirs - t0) - static_cast<std::int64_t>((t1 - t0) / 2);
        }
      }
      const std::int64_t result[2] = {best_offset, static_cast<std::int64_t>((best_rtt + 1) / 2)};
      GPULB_MPI_TRY(MPI_Send(result, 2, MPI_INT64_T, r, kTagResult, comm));
    }
    return mine;
  }
  for (std::uint32_t k = 0; k < rounds; ++k) {
    GPULB_MPI_TRY(MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTagPing, comm, MPI_STATUS_IGNORE));
    const std::uint64_t now = host_now_ns();
    GPULB_MPI_TRY(MPI_Send(&now, 1, MPI_UINT64_T, 0, kTagPong, comm));
  }
  std::int64_t result[2] = {0, 0};
  GPULB_MPI_TRY(MPI_Recv(result, 2, MPI_INT64_T, 0, kTagResult, comm, MPI_STATUS_IGNORE));
  mine.offset_ns = result[0];
  mine.error_ns = static_cast<std::uint64_t>(result[1]);
  return mine;
}

}  // namespace gpulb::distributed::detail
