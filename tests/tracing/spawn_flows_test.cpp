// The Perfetto export's memory of spawned ids (tracing/src/spawn_flows.hpp): merged ranges, one
// flow per id, and the bounds a damaged trace meets: the flows at most the trace's task begins, the
// ranges at most a cap.
#include "spawn_flows.hpp"

#include <gtest/gtest.h>

namespace gpulb::trace::detail {
namespace {

TEST(SpawnFlows, AnnouncedChildrenHaveTheirFlowStarted) {
  SpawnFlows f(100);
  EXPECT_FALSE(f.started(10));
  EXPECT_EQ(f.announce(10, 3), 3u);
  EXPECT_TRUE(f.started(10));
  EXPECT_TRUE(f.started(12));
  EXPECT_FALSE(f.started(13));
  EXPECT_FALSE(f.started(9));
}

TEST(SpawnFlows, NeighbouringBatchesMergeIntoOneRange) {
  SpawnFlows f(10'000);
  for (std::uint32_t b = 0; b < 1000; ++b)
    EXPECT_EQ(f.announce(3000 - 3 * (b + 1), 3), 3u);  // descending, touching
  for (std::uint32_t b = 0; b < 1000; ++b)
    EXPECT_EQ(f.announce(3000 + 3 * b, 3), 3u);  // ascending, touching
  EXPECT_EQ(f.ranges(), 1u);
  EXPECT_TRUE(f.started(0));
  EXPECT_TRUE(f.started(5999));
  EXPECT_FALSE(f.started(6000));
  EXPECT_EQ(f.announce(7000, 1), 1u);
  EXPECT_EQ(f.announce(6000, 1), 1u);  // between two ranges, touching neither
  EXPECT_EQ(f.ranges(), 2u);
  EXPECT_EQ(f.announce(6001, 999), 999u);  // fills the gap: the three become one
  EXPECT_EQ(f.ranges(), 1u);
}

// A damaged trace that names a child twice gets one flow for it, never a second start.
TEST(SpawnFlows, ABatchNamingAnAnnouncedChildGetsNoFlows) {
  SpawnFlows f(100);
  EXPECT_EQ(f.announce(10, 3), 3u);
  EXPECT_EQ(f.announce(12, 2), 0u);
  EXPECT_FALSE(f.started(13));
  EXPECT_EQ(f.announce(8, 3), 0u);
  EXPECT_FALSE(f.started(8));
  EXPECT_EQ(f.announce(10, 3), 0u);
  EXPECT_EQ(f.announce(13, 2), 2u);
}

TEST(SpawnFlows, NoMoreFlowsStartThanTheTraceHasTaskBegins) {
  SpawnFlows f(5);
  EXPECT_EQ(f.announce(0, 3), 3u);
  EXPECT_EQ(f.announce(3, 3), 0u) << "six flows for five task begins";
  EXPECT_EQ(f.announce(3, 2), 2u);
  EXPECT_EQ(f.announce(5, 1), 0u);
}

TEST(SpawnFlows, PastItsCapOfRangesNoFlowStarts) {
  SpawnFlows f(100, 2);
  EXPECT_EQ(f.announce(0, 1), 1u);
  EXPECT_EQ(f.announce(10, 1), 1u);
  EXPECT_EQ(f.announce(20, 1), 0u);
  EXPECT_FALSE(f.started(20));
  EXPECT_TRUE(f.started(10));
}

TEST(SpawnFlows, IdsPastTheLargestTaskIdAreCutOff) {
  SpawnFlows f(100);
  EXPECT_EQ(f.announce(0xFFFFFFFEu, 5), 2u);
  EXPECT_TRUE(f.started(0xFFFFFFFFu));
  EXPECT_EQ(f.announce(7, 0), 0u);
}

}  // namespace
}  // namespace gpulb::trace::detail
