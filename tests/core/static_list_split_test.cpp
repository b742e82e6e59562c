// The static list across GPUs: how a generation is split between them (gpulb/static_list_split.hpp).
// Every count of children per GPU up to a small capacity, on 1 to 5 GPUs, is played out on host
// arrays: each GPU's share holds exactly its even, contiguous part of the concatenation, no slot
// that a copy reads is written in the same exchange, and nothing passes the capacity.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpulb/static_list_split.hpp"

namespace gpulb {
namespace {

constexpr std::uint32_t kEmpty = ~0u;

// Plays the copies out on host arrays and checks the outcome; `why` names the case.
void check_split(const std::vector<std::uint32_t>& produced, std::uint32_t capacity,
                 const std::string& why) {
  const auto gpus = static_cast<std::uint32_t>(produced.size());
  const std::vector<GenerationShare> shares = split_generation(produced, capacity);
  ASSERT_EQ(shares.size(), gpus) << why;
  // out[g][i]: the global position of GPU g's child i; other[g]: the array that is free.
  std::vector<std::vector<std::uint32_t>> out(gpus, std::vector<std::uint32_t>(capacity, kEmpty)),
      other = out;
  std::uint32_t total = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    for (std::uint32_t i = 0; i < produced[g]; ++i) out[g][i] = total + i;
    total += produced[g];
  }
  // Slots read from each output array, then slots written into each output array in place.
  std::vector<std::set<std::uint32_t>> read(gpus), written(gpus);
  for (const GenerationShare& share : shares) {
    for (const GenerationCopy& c : share.copies) {
      ASSERT_LT(c.from, gpus) << why;
      ASSERT_LE(c.from_slot + c.count, produced[c.from]) << why;
      for (std::uint32_t i = 0; i < c.count; ++i) read[c.from].insert(c.from_slot + i);
    }
  }
  std::vector<std::vector<std::uint32_t>> after = out;  // the output arrays after the exchange
  std::vector<std::vector<std::uint32_t>> other_after = other;
  std::uint64_t start = 0, moved = 0, owner_changes = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const GenerationShare& share = shares[g];
    const std::uint64_t expect = total / gpus + (g < total % gpus ? 1 : 0);
    ASSERT_EQ(share.count, expect) << why << ", GPU " << g;
    ASSERT_LE(std::uint64_t{share.first} + share.count, capacity) << why << ", GPU " << g;
    std::vector<std::uint32_t>& target = share.in_place ? after[g] : other_after[g];
    std::uint64_t received = 0;
    for (const GenerationCopy& c : share.copies) {
      ASSERT_GE(c.to_slot, share.first) << why << ", GPU " << g;
      ASSERT_LE(c.to_slot + c.count, share.first + share.count) << why << ", GPU " << g;
      if (c.from != g) received += c.count;
      for (std::uint32_t i = 0; i < c.count; ++i) {
        const std::uint32_t slot = c.to_slot + i;
        if (share.in_place) {
          ASSERT_TRUE(written[g].insert(slot).second)
              << why << ": GPU " << g << " slot " << slot << " written twice";
          ASSERT_EQ(read[g].count(slot), 0u) << why << ": GPU " << g << " slot " << slot
                                             << " is written while another copy reads it";
        }
        target[slot] = out[c.from][c.from_slot + i];
      }
    }
    EXPECT_EQ(share.received, received) << why << ", GPU " << g;
    moved += received;
    std::set<std::uint32_t> got;
    for (std::uint32_t i = share.first; i < share.first + share.count; ++i) got.insert(target[i]);
    std::set<std::uint32_t> want;
    for (std::uint64_t p = start; p < start + expect; ++p)
      want.insert(static_cast<std::uint32_t>(p));
    EXPECT_EQ(got, want) << why << ", GPU " << g;
    // Tasks whose GPU changes: their position is in g's share but not in g's segment.
    std::uint64_t seg_begin = 0;
    for (std::uint32_t h = 0; h < g; ++h) seg_begin += produced[h];
    for (std::uint64_t p = start; p < start + expect; ++p)
      owner_changes += p < seg_begin || p >= seg_begin + produced[g];
    start += expect;
  }
  EXPECT_EQ(moved, owner_changes) << why;
  if (gpus <= 2) {
    for (std::uint32_t g = 0; g < gpus; ++g)
      EXPECT_TRUE(shares[g].in_place) << why << ", GPU " << g;
  }
}

TEST(StaticListSplit, EveryCountOnOneToFiveGpusGivesEvenContiguousSharesWithoutAConflict) {
  constexpr std::uint32_t kCapacity = 6;
  for (std::uint32_t gpus = 1; gpus <= 5; ++gpus) {
    std::vector<std::uint32_t> produced(gpus, 0);
    for (;;) {
      std::string why = std::to_string(gpus) + " GPUs, produced";
      for (std::uint32_t c : produced) why += " " + std::to_string(c);
      check_split(produced, kCapacity, why);
      if (HasFatalFailure()) return;
      std::uint32_t g = 0;
      while (g < gpus && produced[g] == kCapacity) produced[g++] = 0;
      if (g == gpus) break;
      ++produced[g];
    }
  }
}

TEST(StaticListSplit, BalancedGenerationsMoveNothing) {
  const std::vector<std::uint32_t> produced{5, 5, 5, 5};
  for (const GenerationShare& share : split_generation(produced, 8)) {
    EXPECT_TRUE(share.in_place);
    EXPECT_EQ(share.first, 0u);
    EXPECT_EQ(share.count, 5u);
    EXPECT_TRUE(share.copies.empty());
    EXPECT_EQ(share.received, 0u);
  }
}

TEST(StaticListSplit, TwoGpusMoveTheExcessOfOneToTheOther) {
  const std::vector<std::uint32_t> produced{10, 2};
  const std::vector<GenerationShare> s = split_generation(produced, 16);
  // GPU 0 keeps [0, 6) in place; GPU 1 keeps its 2 and receives GPU 0's slots [6, 10) behind them.
  EXPECT_TRUE(s[0].in_place);
  EXPECT_EQ(s[0].first, 0u);
  EXPECT_EQ(s[0].count, 6u);
  EXPECT_TRUE(s[0].copies.empty());
  EXPECT_TRUE(s[1].in_place);
  EXPECT_EQ(s[1].count, 6u);
  EXPECT_EQ(s[1].copies, (std::vector<GenerationCopy>{{0, 6, 2, 4}}));
  EXPECT_EQ(s[1].received, 4u);
}

// A GPU in the middle: in place where the slots that receive are free, else assembled in its free
// array, its kept tasks copied there on the GPU.
TEST(StaticListSplit, AMiddleGpuReceivesInPlaceOnlyIntoFreeSlots) {
  const std::vector<std::uint32_t> produced{0, 6, 0};
  const std::vector<GenerationShare> s = split_generation(produced, 6);
  EXPECT_TRUE(s[1].in_place);  // [2, 4) kept, nothing arrives
  EXPECT_EQ(s[1].first, 2u);
  // Shares [0,5) [5,9) [9,13): GPU 1 keeps the last two of its six and receives two from GPU 2,
  // which would pass its capacity from slot 4 on.
  const std::vector<std::uint32_t> skewed{1, 6, 6};
  const std::vector<GenerationShare> t = split_generation(skewed, 6);
  EXPECT_FALSE(t[1].in_place);
  EXPECT_EQ(t[1].copies, (std::vector<GenerationCopy>{{1, 4, 0, 2}, {2, 0, 2, 2}}));
  EXPECT_EQ(t[1].received, 2u);
  const std::vector<std::uint32_t> middle{6, 0, 6,
                                          0};  // shares of 3: GPU 1 takes [3,6) of GPU 0...
  const std::vector<GenerationShare> m = split_generation(middle, 6);
  EXPECT_TRUE(m[1].in_place);  // nothing of its own: receives into its empty output array
  const std::vector<std::uint32_t> conflict{
      1, 6, 0};  // shares [0,3) [3,5) [5,7): GPU 1 keeps slots [2,4), sends [0,2) and [4,6)
  const std::vector<GenerationShare> c = split_generation(conflict, 6);
  EXPECT_TRUE(c[1].in_place);
  const std::vector<std::uint32_t> recv_low_send_high{
      4, 2, 0};  // shares [0,2) [2,4) [4,6): GPU 1 receives [2,4) of GPU 0, sends its [4,6)
  const std::vector<GenerationShare> r = split_generation(recv_low_send_high, 6);
  EXPECT_FALSE(r[1].in_place);
  EXPECT_EQ(r[1].first, 0u);
  EXPECT_EQ(r[1].copies, (std::vector<GenerationCopy>{{0, 2, 0, 2}}));
  EXPECT_EQ(r[1].received, 2u);
}

}  // namespace
}  // namespace gpulb
