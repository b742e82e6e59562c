#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "clock_sync.hpp"
#include "deadline.hpp"
#include "gpulb/distributed/mpi_distribution.hpp"
#include "mpi_check.hpp"
#include "rank_balancer.hpp"
#include "rank_wait.hpp"

namespace gpulb::distributed {
namespace {

constexpr int kTagSize = 20;
constexpr int kTagBytes = 21;
constexpr int kTagMeet = 22;
// MPI counts are ints: send in pieces of 1 GiB
constexpr std::size_t kPiece = std::size_t{1} << 30;
// a rank's part above 64 GiB is a corrupt size
constexpr std::uint64_t kMostBytes = std::uint64_t{1} << 36;
constexpr int kExitRunFailed = 1;  // a run that failed while running: the CLI's exit code for it

}  // namespace

struct MpiDistribution::Impl {
  MpiSession* session = nullptr;
  std::uint32_t rank = 0, ranks = 1;
  DistributedOptions options;
  // Separate communicators, so that the balancer's wildcard receives never see the gather's messages.
  MPI_Comm balance_comm = MPI_COMM_NULL;
  MPI_Comm gather_comm = MPI_COMM_NULL;
  detail::ClockEstimate clock;
  std::map<std::string, std::uint64_t> metrics;
  std::uint64_t part_bytes = 0;  // what this rank sent to rank 0 at the end
  std::uint32_t ranks_here = 1;  // ranks on this rank's host
  std::uint32_t local_rank = 0;  // this rank's place among them

  // Collectives and the gather wait for every rank, and the ranks arrive after their local runs
  // end (trace assembly and encoding take a second or two for millions of events): a generous limit.
  std::chrono::milliseconds collective_limit() const {
    return std::chrono::milliseconds(std::uint64_t{options.timeout_ms} * 4);
  }
  std::string who() const { return "rank " + std::to_string(rank); }
};

MpiDistribution::MpiDistribution(MpiSession& session, const DistributedOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.session = &session;
  m.rank = session.rank();
  m.ranks = session.ranks();
  m.options = options;
  if (options.rank_chunk == 0) throw ConfigError("--rank-chunk must be at least 1");
  detail::Deadline deadline(
      m.who() + ": meeting the other ranks to measure clock offsets",
      "a rank is stopped or hung (rank 0 meets each in turn; the others wait for it)",
      m.collective_limit());
  GPULB_MPI_TRY(
      MPI_Comm_dup(MPI_COMM_WORLD, &m.balance_comm));  // the duplicates keep MPI_ERRORS_RETURN
  GPULB_MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &m.gather_comm));
  m.clock = detail::estimate_clock_offset(m.gather_comm, options.clock_rounds);
  MPI_Comm host = MPI_COMM_NULL;
  GPULB_MPI_TRY(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host));
  int here = 1, local = 0;
  GPULB_MPI_TRY(MPI_Comm_size(host, &here));
  GPULB_MPI_TRY(MPI_Comm_rank(host, &local));
  m.local_rank = static_cast<std::uint32_t>(local);
  GPULB_MPI_TRY(MPI_Comm_free(&host));
  m.ranks_here = static_cast<std::uint32_t>(here);
}

MpiDistribution::~MpiDistribution() {
  for (MPI_Comm* c : {&impl_->balance_comm, &impl_->gather_comm}) {
    if (*c != MPI_COMM_NULL && MPI_Comm_free(c) != MPI_SUCCESS)
      std::fprintf(stderr, "gpulb: warning: %s: MPI_Comm_free failed\n", impl_->who().c_str());
  }
}

std::uint32_t MpiDistribution::rank() const { return impl_->rank; }
std::uint32_t MpiDistribution::ranks() const { return impl_->ranks; }
std::uint32_t MpiDistribution::ranks_on_this_host() const { return impl_->ranks_here; }
std::uint32_t MpiDistribution::local_rank() const { return impl_->local_rank; }
std::int64_t MpiDistribution::clock_offset_ns() const { return impl_->clock.offset_ns; }
std::uint64_t MpiDistribution::clock_error_ns() const { return impl_->clock.error_ns; }
std::map<std::string, std::uint64_t> MpiDistribution::metrics() const { return impl_->metrics; }

// An error here ends the job from here, rather than on its way up through the caller: the local run
// would first join its workers, and the error may be a task that never returns (the local
// watchdog, HostInserter::check), which would leave this rank waiting forever and the others naming
// it only as silent. The message is the one the CLI prints for a rank's error.
void MpiDistribution::balance(HostInserter& local) {
  try {
    detail::RankBalancer balancer(impl_->balance_comm, impl_->options);
    balancer.run(local);
    impl_->metrics = balancer.metrics();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulb: error: rank %u of %u: %s\n", impl_->rank, impl_->ranks, e.what());
    impl_->session->abort(kExitRunFailed);
  }
}

// Every rank tells rank 0 it is here, then rank 0 tells every rank to go on: point to point, each
// wait under the ranks' limit and naming the rank waited for (MPI_Barrier would wait forever).
void MpiDistribution::meet() {
  Impl& m = *impl_;
  detail::Patience patience(m.collective_limit());
  std::uint8_t here = 1;
  if (m.rank != 0) {
    detail::send_to_rank(&here, 1, MPI_UINT8_T, 0, kTagMeet, m.gather_comm, patience,
                         "this rank told rank 0 it is ready to launch");
    detail::receive_from_rank(&here, 1, MPI_UINT8_T, 0, kTagMeet, m.gather_comm, patience,
                              "this rank waited for rank 0's word to launch");
    return;
  }
  for (std::uint32_t r = 1; r < m.ranks; ++r) {
    detail::receive_from_rank(&here, 1, MPI_UINT8_T, static_cast<int>(r), kTagMeet, m.gather_comm,
                              patience, "rank 0 waited for every rank to be ready to launch");
  }
  for (std::uint32_t r = 1; r < m.ranks; ++r) {
    detail::send_to_rank(&here, 1, MPI_UINT8_T, static_cast<int>(r), kTagMeet, m.gather_comm,
                         patience, "rank 0 told the ranks to launch");
  }
}

// Point to point, rank by rank, rather than MPI_Gatherv: parts of a few GiB (a traced run of a
// hundred million tasks) pass MPI's int counts, and rank 0 holds one part at a time in flight.
// Each wait names the rank it waits for (a rank that stops here would otherwise hold every other).
std::vector<std::vector<std::byte>> MpiDistribution::gather(std::span<const std::byte> mine) {
  Impl& m = *impl_;
  detail::Patience patience(m.collective_limit());
  if (m.rank != 0) {
    const std::string doing = "this rank sent its results to rank 0";
    const std::uint64_t size = mine.size();
    m.part_bytes = size;
    detail::send_to_rank(&size, 1, MPI_UINT64_T, 0, kTagSize, m.gather_comm, patience, doing);
    for (std::size_t at = 0; at < mine.size(); at += kPiece) {
      const auto n = static_cast<int>(std::min(kPiece, mine.size() - at));
      detail::send_to_rank(mine.data() + at, n, MPI_BYTE, 0, kTagBytes, m.gather_comm, patience,
                           doing);
    }
    return {};
  }
  std::vector<std::vector<std::byte>> all(m.ranks);
  all[0].assign(mine.begin(), mine.end());
  for (std::uint32_t r = 1; r < m.ranks; ++r) {
    const int from = static_cast<int>(r);
    const std::string doing = "rank 0 gathered the ranks' results (rank by rank)";
    patience.restart();  // each rank's part has the whole limit
    std::uint64_t size = 0;
    detail::receive_from_rank(&size, 1, MPI_UINT64_T, from, kTagSize, m.gather_comm, patience,
                              doing);
    if (size > kMostBytes)
      throw RunError("rank " + std::to_string(r) + " announced " + std::to_string(size) +
                     " bytes of results");
    all[r].resize(size);
    for (std::size_t at = 0; at < size; at += kPiece) {
      const auto n = static_cast<int>(std::min<std::uint64_t>(kPiece, size - at));
      detail::receive_from_rank(all[r].data() + at, n, MPI_BYTE, from, kTagBytes, m.gather_comm,
                                patience, doing);
    }
  }
  return all;
}

// Rank 0 decodes every rank's part, merges, verifies and encodes the trace again before it ends
// the run: work in proportion to about ranks x this rank's part. On the 2-core CI VM under a load
// of 14, a 4-rank T1 job with a 6.7 MB trace took 22-27 s against 6.5 s untraced, about 3 ms a KB;
// kRootBytesPerMs allows five times that: the limit is for a rank 0 that stopped, not a slow one.
std::chrono::milliseconds MpiDistribution::end_wait_limit() const {
  constexpr std::uint64_t kRootBytesPerMs = 64;
  const Impl& m = *impl_;
  return m.collective_limit() + std::chrono::milliseconds(m.part_bytes * m.ranks / kRootBytesPerMs);
}

}  // namespace gpulb::distributed
