#include "rank_balancer.hpp"

#include <algorithm>
#include <thread>

#include "mpi_check.hpp"

namespace gpulb::distributed::detail {
namespace {

// Tags on the balancer's own communicator (a duplicate of MPI_COMM_WORLD: no other traffic).
constexpr int kTagSteal = 10;  // empty: "send me work"
constexpr int kTagWork = 11;   // 0..rank_chunk tasks: the answer (0: none to spare)
constexpr int kTagToken = 12;  // Safra's token: {q, black}
constexpr int kTagDone = 13;   // empty, from rank 0: the run is over
constexpr int kTagAlive = 14;  // empty, to the successor on the ring: this rank still answers

constexpr auto kIdlePoll = std::chrono::microseconds(50);
// Below this a message goes at once (Open MPI's eager limit for shared memory is 4 KiB, for TCP
// 64 KiB): a chunk of the CPU's 20 tasks never waits for progress.
constexpr std::size_t kOnePiece = 4096;

std::uint16_t saturate16(std::size_t n) {
  return static_cast<std::uint16_t>(std::min<std::size_t>(n, 0xFFFF));
}

// A failed send names the rank it was for: with a dead peer, that is the rank to look at.
template <class Send>
void send_to(int rank, Send&& send) {
  try {
    send();
  } catch (const RunError& e) {
    throw RunError("sending to rank " + std::to_string(rank) + ": " + e.what());
  }
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  GPULB_MPI_TRY(MPI_Comm_rank(comm, &rank));
  return rank;
}
int comm_size(MPI_Comm comm) {
  int size = 0;
  GPULB_MPI_TRY(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace

RankBalancer::RankBalancer(MPI_Comm comm, const DistributedOptions& options)
    : comm_(comm),
      rank_(comm_rank(comm)),
      ranks_(comm_size(comm)),
      options_(options),
      safra_(static_cast<std::uint32_t>(rank_), static_cast<std::uint32_t>(ranks_)),
      victims_(rank_, ranks_, 0x9E3779B9u ^ static_cast<std::uint32_t>(rank_) * 0x85EBCA6Bu) {
  next_ask_ = Clock::now();
  last_beat_sent_ = Clock::now();
  predecessor_silence_ = patience();
}

RankBalancer::~RankBalancer() {
  // Only after an error (run() completes every send otherwise): the requests are abandoned, the
  // job is about to be aborted.
  for (Outgoing& o : sends_) {
    if (o.request != MPI_REQUEST_NULL)
      (void)MPI_Request_free(&o.request);  // nothing to do about a failure here
  }
}

void RankBalancer::run(HostInserter& local) {
  while (!done_) {
    local.check();
    local.pump();
    const bool any = poll(local);
    if (done_) break;
    if (ranks_ > 1 && !asking_ && Clock::now() >= next_ask_ && local.hungry()) ask_for_work();
    if (safra_.holding() && local.idle()) pass_token();
    heartbeat();
    complete_sends(false);
    check_timeouts();
    // MPI moves a large message in pieces, and only inside MPI calls: while one is on its way (a
    // send not yet complete, or an answer to a request for chunks too large for one piece) this
    // loop polls again at once instead of sleeping, else each piece waited a sleep (chunks of 4096
    // tasks, 256 KiB, took 370-580 us from lender to thief between 2 ranks of one host).
    const bool in_flight =
        !sends_.empty() || (asking_ && options_.rank_chunk * sizeof(Task) > kOnePiece);
    if (!any && !in_flight)
      std::this_thread::sleep_for(kIdlePoll);
    else if (!any)
      std::this_thread::yield();
  }
  metrics_["termination_rounds"] = safra_.rounds();
  drain(local);
}

bool RankBalancer::poll(HostInserter& local) {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    GPULB_MPI_TRY(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st));
    if (!flag) return any;
    any = true;
    if (st.MPI_SOURCE == (rank_ + ranks_ - 1) % ranks_) predecessor_silence_.restart();
    switch (st.MPI_TAG) {
      case kTagSteal:
        GPULB_MPI_TRY(
            MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, kTagSteal, comm_, MPI_STATUS_IGNORE));
        serve_steal(local, st.MPI_SOURCE);
        break;
      case kTagWork: receive_work(local, st); break;
      case kTagToken: {
        std::int64_t t[2] = {0, 0};
        GPULB_MPI_TRY(
            MPI_Recv(t, 2, MPI_INT64_T, st.MPI_SOURCE, kTagToken, comm_, MPI_STATUS_IGNORE));
        safra_.token_arrived(SafraToken{t[0], t[1] != 0});
        break;
      }
      case kTagDone:
        GPULB_MPI_TRY(
            MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, kTagDone, comm_, MPI_STATUS_IGNORE));
        done_ = true;
        break;
      case kTagAlive:
        GPULB_MPI_TRY(
            MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, kTagAlive, comm_, MPI_STATUS_IGNORE));
        break;
      default:
        throw RunError("received a message with unknown tag " + std::to_string(st.MPI_TAG) +
                       " from rank " + std::to_string(st.MPI_SOURCE));
    }
  }
}

// The victim's side: up to rank_chunk of its oldest queued tasks (the biggest subtrees, in a tree
// search), or an empty answer. After termination every answer is empty: no rank has work.
void RankBalancer::serve_steal(HostInserter& local, int thief) {
  std::vector<Task> chunk(options_.rank_chunk);
  const std::uint32_t k = done_ ? 0 : local.take(chunk);
  chunk.resize(k);
  if (k > 0) {
    safra_.sent_work();  // counted before it leaves (safra.hpp)
    local.record(trace::EventKind::RankLend, static_cast<std::uint32_t>(thief), saturate16(k));
    ++metrics_["rank_lends"];
  }
  send_tasks(thief, std::move(chunk));
}

// The thief's side: the answer to our request, with work or without.
void RankBalancer::receive_work(HostInserter& local, const MPI_Status& status) {
  int bytes = 0;
  GPULB_MPI_TRY(MPI_Get_count(&status, MPI_BYTE, &bytes));
  const int from = status.MPI_SOURCE;
  if (bytes < 0 || bytes % static_cast<int>(sizeof(Task)) != 0 ||
      static_cast<std::size_t>(bytes) / sizeof(Task) > options_.rank_chunk) {
    throw RunError("received " + std::to_string(bytes) + " bytes of work from rank " +
                   std::to_string(from) + ", not a chunk of at most " +
                   std::to_string(options_.rank_chunk) + " tasks");
  }
  std::vector<Task> tasks(static_cast<std::size_t>(bytes) / sizeof(Task));
  GPULB_MPI_TRY(MPI_Recv(tasks.data(), bytes, MPI_BYTE, from, kTagWork, comm_, MPI_STATUS_IGNORE));
  if (!asking_ || asking_->victim != from) {
    throw RunError("received work from rank " + std::to_string(from) + ", which it had not asked");
  }
  asking_.reset();
  if (tasks.empty()) {
    // The next victim at once, until every other rank said no in this round; then back off, 20 us
    // doubling to 1.28 ms for each rank asked: an idle rank's requests, as many as one per back-off
    // however many ranks there are, must not flood the busy ones.
    ++metrics_["rank_steals_failed"];
    if (victims_.round_over()) {
      empty_rounds_ = std::min<std::uint32_t>(empty_rounds_ + 1, 7);
      next_ask_ = Clock::now() + std::chrono::microseconds(10) * (1u << empty_rounds_) *
                                     static_cast<std::uint32_t>(ranks_ - 1);
    }
    return;
  }
  if (done_) throw RunError("received work after the run had ended (a bug of the termination)");
  safra_.received_work();
  local.insert(tasks);
  local.record(trace::EventKind::RankSteal, static_cast<std::uint32_t>(from),
               saturate16(tasks.size()));
  ++metrics_["rank_steals"];
  metrics_["rank_tasks_stolen"] += tasks.size();
  empty_rounds_ = 0;
  victims_.restart();
}

void RankBalancer::ask_for_work() {
  const int victim = victims_.next();
  send_empty(victim, kTagSteal);
  asking_ = Request{victim, patience()};
  ++metrics_["rank_steal_requests"];
}

void RankBalancer::pass_token() {
  const SafraDetector::Step s = safra_.idle_with_token();
  if (s.terminated) {
    for (int r = 1; r < ranks_; ++r) send_empty(r, kTagDone);
    done_ = true;
    return;
  }
  Outgoing& o = sends_.emplace_back();
  o.token[0] = s.token.q;
  o.token[1] = s.token.black ? 1 : 0;
  send_to(static_cast<int>(s.to), [&] {
    GPULB_MPI_TRY(
        MPI_Isend(o.token, 2, MPI_INT64_T, static_cast<int>(s.to), kTagToken, comm_, &o.request));
  });
}

void RankBalancer::send_tasks(int to, std::vector<Task> tasks) {
  Outgoing& o = sends_.emplace_back();
  o.tasks = std::move(tasks);
  send_to(to, [&] {
    GPULB_MPI_TRY(MPI_Isend(o.tasks.data(), static_cast<int>(o.tasks.size() * sizeof(Task)),
                            MPI_BYTE, to, kTagWork, comm_, &o.request));
  });
}

void RankBalancer::send_empty(int to, int tag) {
  Outgoing& o = sends_.emplace_back();
  send_to(to, [&] { GPULB_MPI_TRY(MPI_Isend(nullptr, 0, MPI_BYTE, to, tag, comm_, &o.request)); });
}

void RankBalancer::complete_sends(bool wait) {
  Patience waited = patience();
  while (!sends_.empty()) {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int flag = 0;
      GPULB_MPI_TRY(MPI_Test(&it->request, &flag, MPI_STATUS_IGNORE));
      it = flag ? sends_.erase(it) : std::next(it);
    }
    if (!wait || sends_.empty()) return;
    if (waited.run_out()) {
      throw RunError(std::to_string(sends_.size()) + " messages were not taken within " +
                     std::to_string(options_.timeout_ms) +
                     " ms: a rank has died or stopped answering");
    }
    std::this_thread::sleep_for(kIdlePoll);
  }
}

void RankBalancer::heartbeat() {
  if (ranks_ < 2) return;
  const auto now = Clock::now();
  if (now - last_beat_sent_ >= std::chrono::milliseconds(options_.timeout_ms / 4)) {
    send_empty((rank_ + 1) % ranks_, kTagAlive);
    last_beat_sent_ = now;
  }
  if (predecessor_silence_.run_out()) {
    const int pred = (rank_ + ranks_ - 1) % ranks_;
    throw RunError("rank " + std::to_string(pred) + " sent nothing for " +
                   std::to_string(options_.timeout_ms) +
                   " ms (not even its heartbeat): it has died or stopped answering");
  }
}

void RankBalancer::check_timeouts() {
  if (asking_ && asking_->waited.run_out()) {
    throw RunError("rank " + std::to_string(asking_->victim) +
                   " did not answer a steal request within " + std::to_string(options_.timeout_ms) +
                   " ms: it has died or stopped answering");
  }
}

// After termination: requests sent before a rank learnt of the end are still in flight. Answer
// them (empty), wait for our own answer, then meet every rank at a barrier, still answering: once
// every rank is in the barrier, none has a request out, so none is left unanswered.
void RankBalancer::drain(HostInserter& local) {
  Patience waited = patience();
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool entered = false;
  for (;;) {
    const bool any = poll(local);
    if (!asking_ && !entered) {
      GPULB_MPI_TRY(MPI_Ibarrier(comm_, &barrier));
      entered = true;
    }
    if (entered) {
      int flag = 0;
      GPULB_MPI_TRY(MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE));
      if (flag) break;
    }
    complete_sends(false);
    check_timeouts();
    if (waited.run_out()) {
      throw RunError("not every rank reached the end of the run within " +
                     std::to_string(options_.timeout_ms) +
                     " ms of its termination: a rank has died or stopped answering");
    }
    if (!any) std::this_thread::sleep_for(kIdlePoll);
  }
  complete_sends(true);
}

}  // namespace gpulb::distributed::detail
