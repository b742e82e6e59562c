// Whom a thief rank asks next (rank_balancer.hpp): every other rank once per round, in a random
// order, so that a round reaches the one rank that has work however many are idle. Pure logic,
// unit-tested without MPI (tests/distributed/victim_rounds_test.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace gpulb::distributed::detail {

class VictimRounds {
 public:
  VictimRounds(int rank, int ranks, std::uint32_t seed) : rng_(seed) {
    for (int r = 0; r < ranks; ++r)
      if (r != rank) order_.push_back(r);
    next_ = order_.size();
  }
  // The next victim; a new round, shuffled, once the last one is used up.
  int next() {
    if (next_ >= order_.size()) {
      std::shuffle(order_.begin(), order_.end(), rng_);
      next_ = 0;
    }
    return order_[next_++];
  }
  // Every other rank was asked in this round (an empty answer from the last one ends it).
  bool round_over() const { return next_ >= order_.size(); }
  // Start a new round at the next request (after a chunk came).
  void restart() { next_ = order_.size(); }

 private:
  std::mt19937 rng_;
  std::vector<int> order_;
  std::size_t next_ = 0;
};

}  // namespace gpulb::distributed::detail
