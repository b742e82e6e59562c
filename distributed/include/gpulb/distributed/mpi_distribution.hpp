// A distributed run over MPI ranks: the process-wide MPI session, and the Distribution that core
// runs with (gpulb/distribution.hpp). The only public header of distributed/; MPI's own types stay
// in src/, so that a user of this header does not include <mpi.h>.
//
// What happens in a run (docs/distributed.md):
//   1. MpiSession starts MPI (threads: FUNNELED, only the host thread of the local run calls MPI)
//      with MPI_ERRORS_RETURN, so that every call's failure comes back to be reported.
//   2. MpiDistribution's constructor estimates each rank's clock offset to rank 0 by ping-pong.
//   3. gpulb::run runs the CPU backend's work-stealing on every rank; its host thread runs
//      balance(): random-victim steals of chunks between ranks, Safra's termination (safra.hpp).
//   4. The records and the traces meet on rank 0 (gather), which verifies and writes one trace.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/distribution.hpp"

namespace gpulb::distributed {

struct DistributedOptions {
  std::uint32_t rank_chunk = 20;  // tasks a thief rank asks for (the official UTS's chunk size)
  // a rank that answers nothing for this long is named and the job ends
  std::uint32_t timeout_ms = 5000;
  std::uint32_t clock_rounds = 32;  // ping-pong round trips per rank for the clock offset
};

// MPI_Init_thread .. MPI_Finalize, one per process. Every wait for another rank has a limit and
// names the rank it waited for; a rank that does not answer ends the job (exit 1, or 2 where the
// ranks are not all `gpulb run ... --distributed`).
class MpiSession {
 public:
  // `rank_timeout_ms` (--rank-timeout): how long a wait for one rank may last. MPI's own start and
  // end wait inside the library for every rank at once, and get kLibraryWaitFactor times that.
  MpiSession(int& argc, char**& argv, std::uint32_t rank_timeout_ms = 5000);
  ~MpiSession();  // MPI_Finalize, within its limit
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  std::uint32_t rank() const { return rank_; }
  std::uint32_t ranks() const { return ranks_; }
  // Ends every rank of the job (MPI_Abort): after an error on one rank the others would wait for it.
  [[noreturn]] void abort(int code);

  // Collective, before any work: every rank's `command` against rank 0's. Ranks started with other
  // arguments (an MPMD job, a script that varies them) would run a mixed job that no rank could
  // verify. Every rank gets the same answer. A rank that does not take part within the rank
  // timeout (stopped, or not gpulb) is named, and the job ends with exit 2.
  struct Agreement {
    std::string root_command;  // rank 0's
    std::vector<std::uint32_t>
        differing;  // the ranks whose command is not rank 0's; empty: all agree
  };
  Agreement agree_with_root(const std::string& command);

  // Collective, at the end of a run: rank 0's exit code `code` goes to every rank, and each rank's
  // answer comes back, so that no rank ends before every rank knows the run is over. Rank 0 waits
  // the rank timeout for the answers; the others wait `root_work_limit` for rank 0, which verifies
  // and writes the trace first. A rank that does not answer is named with `outcome` (rank 0's: what
  // it has done already, e.g. the verdict and the trace written), and the job ends with exit 1.
  // Returns rank 0's code.
  int end_run(int code, const std::string& outcome, std::chrono::milliseconds root_work_limit);

  static constexpr std::uint32_t kLibraryWaitFactor = 4;

 private:
  Agreement agree_as_root(const std::string& command);
  Agreement agree_as_other(const std::string& command);
  void finalize();
  std::string who() const;
  [[noreturn]] void fail(const std::string& text, int code);
  std::chrono::milliseconds library_wait_limit() const {
    return std::chrono::milliseconds(std::uint64_t{rank_timeout_ms_} * kLibraryWaitFactor);
  }

  std::uint32_t rank_ = 0, ranks_ = 1;
  std::uint32_t rank_timeout_ms_ = 5000;
  bool run_ended_ = false;  // end_run heard from every rank it waits for
};

class MpiDistribution final : public Distribution {
 public:
  // Collective: every rank constructs one (the clock offsets are measured here).
  MpiDistribution(MpiSession& session, const DistributedOptions& options);
  ~MpiDistribution() override;

  std::uint32_t rank() const override;
  std::uint32_t ranks() const override;
  std::uint32_t ranks_on_this_host() const override;
  // This rank's place among the ranks on its host (0 .. ranks_on_this_host() - 1).
  std::uint32_t local_rank() const;
  std::int64_t clock_offset_ns() const override;
  std::uint64_t clock_error_ns() const override;
  // An error while balancing (a rank that stops answering, this rank's watchdog, a failed MPI
  // call) is printed naming this rank, and the job is aborted here (MPI_Abort): it does not return.
  void balance(HostInserter& local) override;
  std::map<std::string, std::uint64_t> metrics() const override;
  void meet() override;
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override;
  // How long a rank other than 0 waits for rank 0 at the end (MpiSession::end_run), after gather.
  std::chrono::milliseconds end_wait_limit() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulb::distributed
