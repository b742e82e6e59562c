// The host task pool's meeting points (kernels/detail/host_pool.hpp): the GPUs' control threads
// launch together, so that one GPU's start-up is not the others' idle time, and a run that aborts
// meanwhile lets every waiting thread go. Host code only: runs without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gpulb/kernels/detail/host_pool.hpp"

namespace gpulb::kernels::detail {
namespace {

TEST(HostTaskPoolLaunch, NoGpuLaunchesBeforeTheLastIsReady) {
  const std::vector<Task> tasks(8);
  HostTaskPool pool(tasks);
  constexpr std::uint32_t kGpus = 3;
  pool.expect_starters(kGpus);
  std::atomic<bool> abort_all{false};
  std::atomic<std::uint32_t> launched{0};
  std::vector<std::thread> early;
  std::atomic<int> results{0};
  for (std::uint32_t g = 0; g + 1 < kGpus; ++g) {
    early.emplace_back([&] {
      if (pool.ready_to_launch(abort_all)) results.fetch_add(1);
      launched.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(launched.load(), 0u) << "a GPU launched while another was still allocating";
  EXPECT_TRUE(pool.ready_to_launch(abort_all));
  for (std::thread& t : early) t.join();
  EXPECT_EQ(launched.load(), kGpus - 1);
  EXPECT_EQ(results.load(), static_cast<int>(kGpus - 1));
}

TEST(HostTaskPoolLaunch, OneGpuLaunchesAtOnce) {
  const std::vector<Task> tasks(1);
  HostTaskPool pool(tasks);
  pool.expect_starters(1);
  std::atomic<bool> abort_all{false};
  EXPECT_TRUE(pool.ready_to_launch(abort_all));
}

TEST(HostTaskPoolLaunch, AnAbortedRunReleasesTheWaitingGpusWithFalse) {
  const std::vector<Task> tasks(4);
  HostTaskPool pool(tasks);
  pool.expect_starters(2);
  std::atomic<bool> abort_all{false};
  std::atomic<int> outcome{-1};
  std::thread waiting([&] { outcome = pool.ready_to_launch(abort_all) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(outcome.load(), -1);
  abort_all = true;  // the other GPU failed while it allocated
  waiting.join();
  EXPECT_EQ(outcome.load(), 0);
}

TEST(HostTaskPoolLaunch, AnOpenPoolWaitsForTheRanksEvenWhenEveryGpuIsReady) {
  const std::vector<Task> tasks(4);
  HostTaskPool pool(tasks);
  pool.open_to_ranks(4);
  pool.expect_starters(1);
  std::atomic<bool> abort_all{false};
  std::atomic<bool> launched{false};
  std::thread gpu([&] { launched = pool.ready_to_launch(abort_all); });
  EXPECT_TRUE(pool.wait_until_ready(1, abort_all));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(launched.load()) << "launched before the ranks met";
  pool.let_launch();
  gpu.join();
  EXPECT_TRUE(launched.load());
}

}  // namespace
}  // namespace gpulb::kernels::detail
