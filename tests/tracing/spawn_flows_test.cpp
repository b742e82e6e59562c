// The Perfetto export's memory of spawned ids (tracing/src/spawn_flows.hpp): merged ranges, a
// flow visible to slices read after its batch at its time or later, and a cap past which no flow
// starts.
#include "spawn_flows.hpp"

#include <gtest/gtest.h>

namespace gpulb::trace::detail {
namespace {

TEST(SpawnFlows, AChildSeesItsFlowFromTheBatchsTimeOn) {
  SpawnFlows f;
  EXPECT_EQ(f.announce(10, 3, 100), 3u);
  EXPECT_FALSE(f.started(10, 99)) << "a begin placed before its parent's batch";
  EXPECT_TRUE(f.started(10, 100)) << "the same time, read after the batch: written after it";
  EXPECT_TRUE(f.started(10, 101));
  EXPECT_TRUE(f.started(12, 101));
  EXPECT_FALSE(f.started(13, 101));
  EXPECT_FALSE(f.started(9, 101));
}

TEST(SpawnFlows, NeighbouringBatchesMergeIntoOneRange) {
  SpawnFlows f;
  for (std::uint32_t b = 0; b < 1000; ++b) f.announce(1000 - 3 * (b + 1) + 3000, 3, b);  // descending, touching
  for (std::uint32_t b = 0; b < 1000; ++b) f.announce(3000 + 3 * b, 3, 1000 + b);        // ascending, touching
  f.started(0, 5000);
  EXPECT_EQ(f.ranges(), 1u);
  EXPECT_TRUE(f.started(1000, 5000));
  EXPECT_TRUE(f.started(5999, 5000));
  EXPECT_FALSE(f.started(6000, 5000));
}

TEST(SpawnFlows, PastItsCapNoFlowStarts) {
  SpawnFlows f(2);
  EXPECT_EQ(f.announce(0, 1, 1), 1u);
  EXPECT_EQ(f.announce(10, 1, 2), 1u);
  EXPECT_EQ(f.announce(20, 1, 3), 0u);
  EXPECT_FALSE(f.started(20, 4));
  EXPECT_TRUE(f.started(10, 4));
}

TEST(SpawnFlows, IdsPastTheLargestTaskIdAreCutOff) {
  SpawnFlows f;
  EXPECT_EQ(f.announce(0xFFFFFFFEu, 5, 1), 2u);
  EXPECT_TRUE(f.started(0xFFFFFFFFu, 2));
  EXPECT_EQ(f.announce(7, 0, 3), 0u);
}

}  // namespace
}  // namespace gpulb::trace::detail
