#include "gpulb/rank_gpus.hpp"

#include <gtest/gtest.h>

namespace gpulb {
namespace {

TEST(RankGpus, EachRankOfAHostTakesItsOwnGpusInLocalRankOrder) {
  EXPECT_EQ(rank_visible_devices(0, 4, 1, nullptr), "0");
  EXPECT_EQ(rank_visible_devices(3, 4, 1, nullptr), "3");
  EXPECT_EQ(rank_visible_devices(1, 2, 2, ""), "2,3");
  EXPECT_EQ(rank_visible_devices(0, 1, 0, nullptr), "0");  // 0: one a rank
}

TEST(RankGpus, AListTheJobSetIsSharedOutInstead) {
  EXPECT_EQ(rank_visible_devices(1, 2, 1, "4,6"), "6");
  EXPECT_EQ(rank_visible_devices(1, 2, 2, "GPU-a,GPU-b,GPU-c,GPU-d"), "GPU-c,GPU-d");
}

TEST(RankGpus, TooFewListedGpusForTheHostsRanksAreRefusedNamingTheNumbers) {
  try {
    rank_visible_devices(0, 3, 1, "0,1");
    FAIL() << "accepted 3 ranks on 2 listed GPUs";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("need 3 GPUs, and CUDA_VISIBLE_DEVICES lists 2 (0,1)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpulb
