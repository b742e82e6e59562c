// Work stealing between ranks, by message: what a rank's host thread does while its workers run
// (MpiDistribution::balance). The official UTS's MPI work-stealing manager (uts_dm's
// mpi_workstealing.c) works the same way: a rank that wants work (HostInserter::hungry: an idle
// work-stealing run, or a task-queue host pool below one refill of its queues) asks another rank
// for a chunk; the victim answers with up to rank_chunk of its oldest queued tasks, or with none;
// the thief tries another victim after an empty answer. DEPARTURE: uts_dm picks each victim
// uniformly at random; here a thief asks every other rank once per round, in a random order, and
// backs off only after a round of empty answers. With 4 GPU ranks and the work on one, uniform
// picks with a back-off after each empty answer leave the other three waiting about 4 ms for their
// first chunk, in a 1-million-node tree that one rank runs in 9 ms. Termination is Safra's
// (safra.hpp); after it, a drain phase answers the requests still in flight and meets every rank
// at a barrier, so that no message outlives the run.
//
// Liveness: a rank that dies is seen by mpirun, which ends the job naming it; a rank that stops
// (SIGSTOP, a hung node) is not. So each rank sends a heartbeat to its successor on the ring every
// timeout/4 and names its predecessor when nothing came from it for timeout_ms; a victim that does
// not answer a steal request within timeout_ms is named too. Those times count only while this
// rank runs (patience.hpp): a rank stopped and resumed blames no other for its own stop.
//
// Polling, not a progress thread: MPI is called from this one thread (MPI_THREAD_FUNNELED), which
// the local run leaves free while its workers run. A poll that finds nothing sleeps 50 us, so an
// idle host thread costs the workers little on an oversubscribed machine.
//
// Trace (the local run's host track): RankSteal (arg: victim rank, aux: tasks) when a chunk
// arrives, RankLend (arg: thief rank, aux: tasks) when one leaves; both carry the ranks, so that a
// reader can pair a lend with its steal and draw the arrow between ranks.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpulb/distributed/mpi_distribution.hpp"
#include "gpulb/distributed/safra.hpp"
#include "gpulb/exec_plan.hpp"
#include "patience.hpp"
#include "victim_rounds.hpp"

namespace gpulb::distributed::detail {

class RankBalancer {
 public:
  RankBalancer(MPI_Comm comm, const DistributedOptions& options);
  ~RankBalancer();
  // Returns at distributed termination, after the drain; throws RunError naming a rank that stops answering.
  void run(HostInserter& local);
  const std::map<std::string, std::uint64_t>& metrics() const { return metrics_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Outgoing {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<Task> tasks;  // the send buffer lives until the send completes
    std::int64_t token[2] = {0, 0};
  };
  struct Request {
    int victim;
    Patience waited;  // since the request was sent
  };

  bool poll(HostInserter& local);  // receives every message that has arrived; true if any did
  void serve_steal(HostInserter& local, int thief);
  void receive_work(HostInserter& local, const MPI_Status& status);
  void ask_for_work();
  void pass_token();
  void send_tasks(int to, std::vector<Task> tasks);
  void send_empty(int to, int tag);
  void complete_sends(bool wait);
  void check_timeouts();
  Patience patience() const { return Patience(std::chrono::milliseconds(options_.timeout_ms)); }
  void heartbeat();
  void drain(HostInserter& local);

  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  DistributedOptions options_;
  SafraDetector safra_;
  std::optional<Request> asking_;   // our steal request waiting for its answer
  VictimRounds victims_;            // whom to ask next
  Clock::time_point next_ask_;      // backoff after a round of empty answers
  std::uint32_t empty_rounds_ = 0;  // in a row, capped
  bool done_ = false;
  Clock::time_point last_beat_sent_;
  Patience predecessor_silence_{std::chrono::milliseconds(0)};  // since the last message from it
  std::list<Outgoing> sends_;
  std::map<std::string, std::uint64_t> metrics_;
};

}  // namespace gpulb::distributed::detail
