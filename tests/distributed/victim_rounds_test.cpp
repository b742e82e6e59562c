// Whom a thief rank asks (distributed/src/victim_rounds.hpp): every other rank once a round.
#include "victim_rounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gpulb::distributed::detail {
namespace {

std::vector<int> one_round(VictimRounds& v) {
  std::vector<int> asked;
  do asked.push_back(v.next());
  while (!v.round_over());
  return asked;
}

TEST(VictimRounds, ARoundAsksEveryOtherRankOnceAndNeverItself) {
  VictimRounds v(2, 5, 7);
  for (int round = 0; round < 20; ++round) {
    std::vector<int> asked = one_round(v);
    std::sort(asked.begin(), asked.end());
    EXPECT_EQ(asked, (std::vector<int>{0, 1, 3, 4})) << "round " << round;
  }
}

TEST(VictimRounds, RoundsComeInDifferentOrders) {
  VictimRounds v(0, 8, 11);
  const std::vector<int> first = one_round(v);
  bool another_order = false;
  for (int round = 0; round < 10 && !another_order; ++round) another_order = one_round(v) != first;
  EXPECT_TRUE(another_order) << "every round asked the ranks in the same order";
}

TEST(VictimRounds, ARestartBeginsANewRoundAtTheNextRequest) {
  VictimRounds v(1, 4, 3);
  v.next();
  EXPECT_FALSE(v.round_over());
  v.restart();
  EXPECT_TRUE(v.round_over());
  EXPECT_EQ(one_round(v).size(), 3u) << "a whole round after the restart";
}

TEST(VictimRounds, TwoRanksAskEachOtherEveryTime) {
  VictimRounds v(1, 2, 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(v.next(), 0);
    EXPECT_TRUE(v.round_over());
  }
}

}  // namespace
}  // namespace gpulb::distributed::detail
