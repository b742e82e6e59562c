// Distributed termination detection: Safra's algorithm as Dijkstra wrote it down (EWD998,
// "Shmuel Safra's version of termination detection", 1987). Pure logic, no MPI: the balancer
// (rank_balancer.cpp) feeds it what happened and sends what it says; tests drive it by hand.
//
// The ranks form a ring 0 -> 1 -> ... -> N-1 -> 0. Work messages (a chunk of tasks: the only
// messages that can make an idle rank busy again) are counted: +1 at the sender, -1 at the
// receiver, and a rank that receives one turns black. A token carries a sum q and a colour. Rank 0,
// once idle, sends a white token with q = 0; each rank, once idle with the token, adds its count,
// blackens the token if it is black itself, whitens itself and passes it on. When the token comes
// back to an idle rank 0 white, with rank 0 white and q + its count == 0, no rank is busy and no
// work message is in flight: the run is over. Otherwise rank 0 starts another round.
// Why this is exact: the sum of the counts is the number of work messages in flight; a rank that
// received work after the token passed it is black and spoils the round; so a white round with a
// zero sum saw every rank idle with nothing in flight at once (EWD998 proves the invariant).
// Control messages (steal requests, empty replies, the token) carry no work and are not counted.
#pragma once

#include <cstdint>

namespace gpulb::distributed {

struct SafraToken {
  std::int64_t q = 0;
  bool black = false;
};

class SafraDetector {
 public:
  SafraDetector(std::uint32_t rank, std::uint32_t ranks)
      : rank_(rank), ranks_(ranks), holding_(rank == 0) {}

  void sent_work() { ++count_; }
  void received_work() {
    --count_;
    black_ = true;
  }
  void token_arrived(const SafraToken& t) {
    token_ = t;
    holding_ = true;
  }
  bool holding() const { return holding_; }
  std::int64_t count() const { return count_; }
  std::uint64_t rounds() const { return rounds_; }

  // What an idle rank holding the token does: pass `token` to `to`, or (rank 0) declare the end.
  struct Step {
    bool terminated = false;
    SafraToken token;
    std::uint32_t to = 0;
  };
  // Call only while this rank is idle (no local task queued or running) and holding().
  Step idle_with_token() {
    Step s;
    if (rank_ == 0) {
      if (ranks_ == 1 || (rounds_ > 0 && !token_.black && !black_ && token_.q + count_ == 0)) {
        s.terminated = true;
        holding_ = false;
        return s;
      }
      ++rounds_;  // a new round: a fresh white token, and rank 0 white
      black_ = false;
      s.token = SafraToken{};
      s.to = 1;
      holding_ = false;
      return s;
    }
    s.token = SafraToken{token_.q + count_, token_.black || black_};
    s.to = (rank_ + 1) % ranks_;
    black_ = false;
    holding_ = false;
    return s;
  }

 private:
  std::uint32_t rank_, ranks_;
  std::int64_t count_ = 0;  // work messages sent minus received
  bool black_ = false;      // received work since it last passed the token
  bool holding_;            // rank 0 holds the token before the first round
  SafraToken token_;
  std::uint64_t rounds_ = 0;  // rounds rank 0 started
};

}  // namespace gpulb::distributed
