// Safra's termination detection (distributed/include/gpulb/distributed/safra.hpp) driven by hand:
// the ring, the counts and the colours, without MPI.
#include <gtest/gtest.h>

#include <vector>

#include "gpulb/distributed/safra.hpp"

namespace gpulb::distributed {
namespace {

// N detectors and the token in flight between them, as the balancer would move it.
struct Ring {
  explicit Ring(std::uint32_t n) {
    for (std::uint32_t r = 0; r < n; ++r) ranks.emplace_back(r, n);
  }
  // Every rank idle: pass the token around once from wherever it is; true if rank 0 declared the end.
  bool one_round_all_idle() {
    for (std::size_t hops = 0; hops <= ranks.size(); ++hops) {
      for (std::uint32_t r = 0; r < ranks.size(); ++r) {
        if (!ranks[r].holding()) continue;
        const SafraDetector::Step s = ranks[r].idle_with_token();
        if (s.terminated) return true;
        ranks[s.to].token_arrived(s.token);
        break;
      }
    }
    return false;
  }
  std::vector<SafraDetector> ranks;
};

TEST(Safra, OneRankEndsAsSoonAsItIsIdle) {
  SafraDetector d(0, 1);
  ASSERT_TRUE(d.holding());
  EXPECT_TRUE(d.idle_with_token().terminated);
}

TEST(Safra, IdleRanksWithNothingInFlightEndAfterOneWhiteRound) {
  Ring ring(4);
  // The first visit to rank 0 only starts a round: rank 0 has not yet seen the others idle.
  const SafraDetector::Step first = ring.ranks[0].idle_with_token();
  ASSERT_FALSE(first.terminated);
  EXPECT_EQ(first.to, 1u);
  ring.ranks[1].token_arrived(first.token);
  EXPECT_TRUE(ring.one_round_all_idle());
  EXPECT_EQ(ring.ranks[0].rounds(), 1u);
}

TEST(Safra, WorkInFlightKeepsTheRunGoing) {
  Ring ring(3);
  ring.ranks[1].sent_work();  // a chunk from rank 1 to rank 2 that rank 2 has not received
  EXPECT_FALSE(ring.one_round_all_idle());
  EXPECT_FALSE(ring.one_round_all_idle()) << "the sum of the counts is 1: a chunk is in flight";
  ring.ranks[2].received_work();  // it arrives: rank 2 is black for one round
  EXPECT_FALSE(ring.one_round_all_idle()) << "a black rank spoils the round after it received work";
  EXPECT_TRUE(ring.one_round_all_idle());
}

TEST(Safra, WorkReceivedBehindTheTokenSpoilsTheRound) {
  Ring ring(3);
  // The token has passed rank 1 (white, count 0); then rank 2 lends to rank 1, which receives it.
  SafraDetector::Step s = ring.ranks[0].idle_with_token();
  ring.ranks[1].token_arrived(s.token);
  s = ring.ranks[1].idle_with_token();
  ring.ranks[2].token_arrived(s.token);
  ring.ranks[2].sent_work();
  ring.ranks[1].received_work();  // rank 1 is busy again; its count is now -1, rank 2's +1
  s = ring.ranks[2].idle_with_token();
  EXPECT_EQ(s.token.q, 1) << "rank 2 adds its +1; rank 1's -1 was not counted in this round";
  ring.ranks[0].token_arrived(s.token);
  EXPECT_FALSE(ring.ranks[0].idle_with_token().terminated) << "q + c0 = 1: work is unaccounted for";
}

}  // namespace
}  // namespace gpulb::distributed
