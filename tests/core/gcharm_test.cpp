// G-Charm's decisions: kernel combining, the CPU/GPU split, the device cache table and
// the combined request, as pure functions driven by scripted arrivals and a scripted clock (no
// timing in the tests). The request loop that carries them out: gcharm_loop_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "gpulb/gcharm/combined_request.hpp"
#include "gpulb/gcharm/combining.hpp"
#include "gpulb/gcharm/data_cache.hpp"
#include "gpulb/gcharm/hybrid_split.hpp"

namespace gpulb::gcharm {
namespace {

constexpr std::uint64_t us = 1000;

// Feeds arrivals at the given times, checks the list every `tick` ns, launches what the
// controller says; returns the launches as (time, count, reason).
struct Launch {
  std::uint64_t at, count;
  LaunchReason reason;
};
std::vector<Launch> simulate(CombiningController& c, const std::vector<std::uint64_t>& arrivals,
                             std::uint64_t tick, std::uint64_t until) {
  std::vector<Launch> out;
  std::uint64_t waiting = 0;
  std::size_t next = 0;
  for (std::uint64_t now = 0; now <= until; now += tick) {
    while (next < arrivals.size() && arrivals[next] <= now) {
      c.on_arrival(arrivals[next++]);
      ++waiting;
    }
    const bool ended = next == arrivals.size();
    for (LaunchDecision d; (d = c.next_launch(now, waiting, ended)).count > 0;) {
      out.push_back({now, d.count, d.reason});
      waiting -= d.count;
    }
  }
  return out;
}

TEST(Combining, AdaptiveLaunchesMaxSizeAsSoonAsThatManyWait) {
  CombiningController c(CombineStrategy::Adaptive, 4, 100);
  // A burst of 10 arrivals 1 us apart, then silence.
  std::vector<std::uint64_t> arrivals;
  for (int i = 0; i < 10; ++i) arrivals.push_back(100 * us + i * us);
  const auto launches = simulate(c, arrivals, us, 200 * us);
  ASSERT_GE(launches.size(), 3u);
  EXPECT_EQ(launches[0].count, 4u);
  EXPECT_EQ(launches[0].reason, LaunchReason::Full);
  EXPECT_EQ(launches[0].at, 103 * us);  // the 4th arrival
  EXPECT_EQ(launches[1].count, 4u);
  EXPECT_EQ(launches[1].reason, LaunchReason::Full);
  EXPECT_EQ(c.max_interval_ns(), us);
  // The last 2 go when the arrivals have ended (all scripted arrivals are in).
  EXPECT_EQ(launches[2].count, 2u);
  EXPECT_EQ(launches[2].reason, LaunchReason::Drain);
}

TEST(Combining, AdaptiveTimesOutAfterTwiceTheLargestGap) {
  CombiningController c(CombineStrategy::Adaptive, 100, 100);
  // Gaps of 10 us, then a long pause, then one late arrival (so the arrivals have not ended during the pause).
  const std::vector<std::uint64_t> arrivals = {0, 10 * us, 20 * us, 30 * us, 500 * us};
  const auto launches = simulate(c, arrivals, us, 600 * us);
  ASSERT_GE(launches.size(), 3u);
  // The first request is alone with maxInterval still 0: any wait times out (the rule as written).
  EXPECT_EQ(launches[0].reason, LaunchReason::Timeout);
  EXPECT_EQ(launches[0].count, 1u);
  EXPECT_EQ(launches[0].at, 1 * us);
  // Then maxInterval is 10 us: the next 3 wait until the last arrival is more than 20 us ago.
  EXPECT_EQ(launches[1].reason, LaunchReason::Timeout);
  EXPECT_EQ(launches[1].count, 3u);
  EXPECT_EQ(launches[1].at, 51 * us);
  EXPECT_EQ(c.max_interval_ns(), 470 * us);  // the pause before the late arrival
  EXPECT_EQ(launches[2].count, 1u);
}

TEST(Combining, StaticCombinesEveryKArrivalsAndEagerLaunchesEachAlone) {
  std::vector<std::uint64_t> arrivals(25);
  std::iota(arrivals.begin(), arrivals.end(), 0);
  for (auto& a : arrivals) a *= 10 * us;
  CombiningController s(CombineStrategy::Static, 1000, 10);
  const auto st = simulate(s, arrivals, us, 300 * us);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].count, 10u);
  EXPECT_EQ(st[0].reason, LaunchReason::Static);
  EXPECT_EQ(st[1].count, 10u);
  EXPECT_EQ(st[2].count, 5u);
  EXPECT_EQ(st[2].reason, LaunchReason::Drain);

  CombiningController e(CombineStrategy::Eager, 1000, 10);
  const auto ea = simulate(e, arrivals, us, 300 * us);
  ASSERT_EQ(ea.size(), 25u);
  for (const Launch& l : ea) {
    EXPECT_EQ(l.count, 1u);
    EXPECT_EQ(l.reason, LaunchReason::Eager);
  }
}

TEST(Combining, EveryRequestIsLaunchedExactlyOnce) {
  for (CombineStrategy strategy :
       {CombineStrategy::Adaptive, CombineStrategy::Static, CombineStrategy::Eager}) {
    CombiningController c(strategy, 7, 13);
    std::vector<std::uint64_t> arrivals;
    std::uint64_t t = 0;
    for (int i = 0; i < 500; ++i)
      arrivals.push_back(t += (i * 7919) % 50 * us);  // irregular gaps, some 0
    const auto launches = simulate(c, arrivals, us, t + 10 * us);
    std::uint64_t launched = 0;
    for (const Launch& l : launches) launched += l.count;
    EXPECT_EQ(launched, 500u) << "strategy " << static_cast<int>(strategy);
  }
}

TEST(HybridSplit, UncalibratedSplitsInHalfThenFollowsTheMeasuredRatio) {
  HybridSplitter h(HybridStrategy::Adaptive, 0.0);
  const std::vector<std::uint32_t> items(10, 100);  // 10 requests of 100 items
  EXPECT_FALSE(h.calibrated());
  EXPECT_EQ(h.cpu_requests(items), 5u);
  // Each side's first launch is a warm-up, left out however slow it was.
  h.record(Side::Cpu, 500, 1'000'000);
  h.record(Side::Gpu, 500, 9'000'000);
  EXPECT_FALSE(h.calibrated());
  EXPECT_EQ(h.cpu_requests(items), 5u);
  // The GPU takes 1 ns an item, the CPU 3 ns: the CPU should get a quarter of the items.
  h.record(Side::Cpu, 500, 1500);
  h.record(Side::Gpu, 500, 500);
  EXPECT_TRUE(h.calibrated());
  EXPECT_DOUBLE_EQ(h.cpu_fraction(), 0.25);
  // 1000 items, 250 for the CPU: the scan stops at the request that crosses 250 (the third).
  EXPECT_EQ(h.cpu_requests(items), 3u);
}

TEST(HybridSplit, TheCrossingRequestGoesToTheCpuAndUnevenRequestsAreWeighedByTheirItems) {
  HybridSplitter h(HybridStrategy::Static, 0.5);
  // 1 + 1 + 1 + 97 items: half is 50, crossed by the fourth request.
  EXPECT_EQ(h.cpu_requests(std::vector<std::uint32_t>{1, 1, 1, 97}), 4u);
  // 97 + 1 + 1 + 1: crossed by the first.
  EXPECT_EQ(h.cpu_requests(std::vector<std::uint32_t>{97, 1, 1, 1}), 1u);
  HybridSplitter none(HybridStrategy::Static, 0.0), all(HybridStrategy::Static, 1.0);
  EXPECT_EQ(none.cpu_requests(std::vector<std::uint32_t>{5, 5}), 0u);
  EXPECT_EQ(all.cpu_requests(std::vector<std::uint32_t>{5, 5}), 2u);
}

TEST(HybridSplit, RunningAveragesFollowAChangingWorkload) {
  HybridSplitter h(HybridStrategy::Adaptive, 0.0);
  h.record(Side::Gpu, 100, 7);  // warm-ups
  h.record(Side::Cpu, 100, 7);
  h.record(Side::Gpu, 100, 100);  // 1 ns an item
  h.record(Side::Cpu, 100, 100);  // 1 ns an item
  EXPECT_DOUBLE_EQ(h.cpu_fraction(), 0.5);
  h.record(Side::Cpu, 100, 500);  // the CPU slows down: mean (1 + 5) / 2 = 3 ns an item
  EXPECT_DOUBLE_EQ(h.cpu_ns_per_item(), 3.0);
  EXPECT_DOUBLE_EQ(h.cpu_fraction(), 0.25);
}

// A splitter calibrated with scripted times: after the warm-ups, `cpu` and `gpu` ns a work unit
// (per worker on a side of workers).
HybridSplitter calibrated(double cpu, double gpu, std::uint32_t cpu_workers = 0) {
  HybridSplitter h(HybridStrategy::Adaptive, 0.0, cpu_workers, 0);
  h.record(Side::Cpu, 100, 1);  // warm-ups
  h.record(Side::Gpu, 100, 1);
  h.record(Side::Cpu, 1000, static_cast<std::uint64_t>(cpu * 1000));
  h.record(Side::Gpu, 1000, static_cast<std::uint64_t>(gpu * 1000));
  return h;
}

TEST(HybridSplit, ASmallPartWeighsByItsSizeNotAsMuchAsAFullBatch) {
  HybridSplitter h(HybridStrategy::Adaptive, 0.0);
  h.record(Side::Gpu, 100, 1);                // warm-up
  h.record(Side::Gpu, 1'000'000, 1'000'000);  // a full batch: 1 ns a unit
  h.record(Side::Gpu, 1'000, 21'000);         // a leftover of 1,000 units that paid a 20 us launch
  EXPECT_DOUBLE_EQ(h.gpu_ns_per_item(), 1'021'000.0 / 1'001'000.0);  // about 1.02, not (1 + 21) / 2
}

TEST(HybridSplit, IdleSidesGetThePapersRatioWithTheCrossingRequestWhereItFinishesEarlier) {
  const HybridSplitter h = calibrated(3, 1);  // the CPU should get a quarter of the work
  const std::vector<std::uint64_t> even(8, 100);
  const SplitPlan p = h.plan(even, {true, 0}, {true, 0});
  EXPECT_EQ(p.cpu, 2u);  // 200 of 800 units: CPU 600 ns, GPU 600 ns
  EXPECT_EQ(p.cpu + p.gpu, even.size());
  // 10 + 10 + 200 + 10 units: the paper gives the CPU the crossing request (the third: 660 ns on
  // the CPU against 10 on the GPU); finishing earliest keeps it on the GPU.
  const std::vector<std::uint64_t> uneven = {10, 10, 200, 10};
  EXPECT_EQ(h.cpu_requests(std::span<const std::uint64_t>(uneven)), 3u);
  const SplitPlan q = h.plan(uneven, {true, 0}, {true, 0});
  EXPECT_EQ(q.cpu, 2u);
  EXPECT_EQ(q.gpu, 2u);
}

TEST(HybridSplit, AFreeSideTakesItsPartWhileTheOtherIsBusy) {
  const HybridSplitter h = calibrated(1, 1);
  const std::vector<std::uint64_t> work(10, 100);
  // Both idle and equally fast: half each.
  EXPECT_EQ(h.plan(work, {true, 0}, {true, 0}).cpu, 5u);
  // The CPU is busy for another 600 ns: the GPU (free) takes 8 of 10 (CPU 600 + 200, GPU 800)
  // now; the CPU's 2 wait for its slot.
  const SplitPlan p = h.plan(work, {false, 600}, {true, 0});
  EXPECT_EQ(p.cpu, 2u);
  EXPECT_EQ(p.gpu, 8u);
  // The GPU is busy for longer than the whole batch would take the CPU: all to the CPU.
  const SplitPlan q = h.plan(work, {true, 0}, {false, 5000});
  EXPECT_EQ(q.cpu, 10u);
  EXPECT_EQ(q.gpu, 0u);
  // Neither side free: nothing now.
  const SplitPlan none = h.plan(work, {false, 0}, {false, 0});
  EXPECT_EQ(none.cpu + none.gpu, 0u);
}

TEST(HybridSplit, StaticAndUncalibratedWaitForBothSidesAsThePaper) {
  const std::vector<std::uint64_t> work(4, 10);
  const HybridSplitter s(HybridStrategy::Static, 0.5);
  EXPECT_EQ(s.plan(work, {true, 0}, {true, 0}).cpu, 2u);
  EXPECT_EQ(s.plan(work, {true, 0}, {false, 0}).cpu + s.plan(work, {true, 0}, {false, 0}).gpu, 0u);
  const HybridSplitter fresh(HybridStrategy::Adaptive,
                             0.0);  // a wide CPU, uncalibrated: the paper's half
  EXPECT_EQ(fresh.plan(work, {false, 0}, {true, 0}).gpu, 0u);
  EXPECT_EQ(fresh.plan(work, {true, 0}, {true, 0}).cpu, 2u);
}

TEST(HybridSplit, UncalibratedCpuWorkersGetAProbeWhileTheGpuTakesTheRest) {
  const HybridSplitter h(HybridStrategy::Adaptive, 0.0, 2, 0);  // 2 workers
  const std::vector<std::uint64_t> work(10, 10);
  // One request a worker, not half the batch; the GPU's part goes now even if the CPU is busy.
  const SplitPlan p = h.plan(work, {false, 0}, {true, 0});
  EXPECT_EQ(p.cpu, 2u);
  EXPECT_EQ(p.gpu, 8u);
  // Never more than half the batch's work: a large front request is left to the GPU. (The probe
  // was the front requests, and got nothing here; it is now the smallest: the two 1s.)
  const std::vector<std::uint64_t> large = {100, 1, 1};
  const SplitPlan q = h.plan(large, {true, 0}, {true, 0});
  EXPECT_EQ(q.cpu, 2u);
  ASSERT_EQ(q.order.size(), 3u);
  EXPECT_EQ(q.order[2], 0u);  // the large one is the GPU's
  // Half the work bounds it: of 10 + 1 + 10, the 1 (with a 10 it would hold 11 of 21).
  const std::vector<std::uint64_t> heavy = {10, 1, 10};
  const SplitPlan r = h.plan(heavy, {true, 0}, {true, 0});
  EXPECT_EQ(r.cpu, 1u);
  EXPECT_EQ(r.order.front(), 1u);
}

TEST(HybridSplit, ACpuPartRunsOnOneWorkerPerRequestAndTheLargestBoundsIt) {
  // 8 workers. A part of 2 requests of 800 units took 8000 ns: 10 ns a unit per worker (on 2 of
  // the 8 workers), not 5 ns a unit over the whole CPU.
  HybridSplitter h(HybridStrategy::Adaptive, 0.0, 8, 0);
  h.record(Side::Cpu, PartShape{1600, 800, 2}, 1);  // warm-up
  h.record(Side::Cpu, PartShape{1600, 800, 2}, 8000);
  EXPECT_DOUBLE_EQ(h.cpu_ns_per_item(), 10.0);
  // 16 requests of 100 units: two rounds of 8 workers, 200 units each: 2000 ns.
  EXPECT_DOUBLE_EQ(h.predict(Side::Cpu, PartShape{1600, 100, 16}), 2000.0);
  // One request of 1000 units and 7 of 10: the large one bounds the part.
  EXPECT_DOUBLE_EQ(h.predict(Side::Cpu, PartShape{1070, 1000, 8}), 10000.0);
  // The GPU, one wide device, is linear in the work: 1 ns a unit.
  h.record(Side::Gpu, PartShape{1000, 10, 100}, 1);
  h.record(Side::Gpu, PartShape{1000, 10, 100}, 1000);
  EXPECT_DOUBLE_EQ(h.predict(Side::Gpu, PartShape{5000, 5000, 1}), 5000.0);
  // A batch of one large request and many small ones: the CPU gets small requests spread over
  // its workers, not the large one (alone, it would keep the CPU 5 x as long as the whole batch the GPU).
  // (In list order the large one came first and the CPU got nothing; it now chooses by size.)
  std::vector<std::uint64_t> work = {4000};
  for (int i = 0; i < 64; ++i) work.push_back(50);
  const SplitPlan p = h.plan(work, {true, 0}, {true, 0});
  EXPECT_GT(p.cpu, 32u);
  EXPECT_EQ(p.cpu + p.gpu, work.size());
  ASSERT_EQ(p.order.size(), work.size());
  for (std::size_t i = 0; i < p.cpu; ++i) EXPECT_NE(p.order[i], 0u);  // the large one is the GPU's
  EXPECT_EQ(p.order[p.cpu], 0u);                                      // and leads its part
  std::vector<std::uint64_t> small(64, 50);
  const SplitPlan q = h.plan(small, {true, 0}, {true, 0});  // GPU: 1 ns a unit; CPU: 10 / 8 ns
  EXPECT_GT(q.cpu, 16u);
  EXPECT_LT(q.cpu, 40u);
}

// A splitter of 8 CPU workers and a GPU of 1000 resident blocks, calibrated with scripted times:
// the CPU `cpu` ns a work unit per worker, the GPU `gpu` ns a unit of its largest request's work.
HybridSplitter calibrated_workers(double cpu, double gpu) {
  HybridSplitter h(HybridStrategy::Adaptive, 0.0, 8, 1000);
  h.record(Side::Cpu, PartShape{800, 100, 8}, 1);  // warm-ups
  h.record(Side::Gpu, PartShape{800, 100, 8}, 1);
  h.record(Side::Cpu, PartShape{800, 100, 8}, static_cast<std::uint64_t>(cpu * 100));
  h.record(Side::Gpu, PartShape{800, 100, 8}, static_cast<std::uint64_t>(gpu * 100));
  return h;
}

TEST(HybridSplit, AGpuOfResidentBlocksTakesAsLongAsItsLargestRequest) {
  const HybridSplitter h = calibrated_workers(10, 100);
  // 8 requests, at most 1000 blocks at once: the part spans its largest request, not its work.
  EXPECT_DOUBLE_EQ(h.predict(Side::Gpu, PartShape{800, 100, 8}), 10'000.0);
  EXPECT_DOUBLE_EQ(h.predict(Side::Gpu, PartShape{100'000, 100, 1000}),
                   10'000.0);  // 1000 x 100: still one round
  EXPECT_DOUBLE_EQ(h.predict(Side::Gpu, PartShape{200'000, 100, 2000}),
                   20'000.0);  // two rounds of 1000 blocks
}

TEST(HybridSplit, ACpuOfWorkersTakesTheSmallestRequestsOfTheBatchNotItsFront) {
  // GPU: 100 ns a unit of its largest request; CPU: 200 ns a unit per worker (a request takes a
  // worker twice as long as a block).
  const HybridSplitter h = calibrated_workers(200, 100);
  // In list order three large requests (1000 units: 100 us on the GPU, 200 us on a worker) come
  // first, 40 small ones (10 or 20 units) after them.
  std::vector<std::uint64_t> work = {1000, 1000, 900};
  for (int i = 0; i < 40; ++i) work.push_back(i % 2 ? 10 : 20);
  const SplitPlan p = h.plan(work, {true, 0}, {true, 0});
  ASSERT_EQ(p.order.size(), work.size());
  // The GPU keeps the three large ones (its time, 100 us, is the largest's whatever else it runs)
  // and the CPU takes every small one: 600 units over 8 workers, 15 us (x 1.1 of margin). A
  // prefix cut could only have offered it the front's large requests, and given it nothing.
  EXPECT_EQ(p.cpu, 40u);
  EXPECT_EQ(p.gpu, 3u);
  for (std::size_t i = 0; i < p.cpu; ++i) EXPECT_GE(p.order[i], 3u);
  // Each part largest first: the CPU's 20s before its 10s (its workers end together), the GPU's
  // 1000s before its 900.
  for (std::size_t i = 1; i < p.cpu; ++i) EXPECT_GE(work[p.order[i - 1]], work[p.order[i]]);
  EXPECT_EQ(work[p.order[p.cpu]], 1000u);
  EXPECT_EQ(work[p.order[p.cpu + 2]], 900u);
}

TEST(HybridSplit, TheCpusPartIsPlannedToEndBeforeTheGpusByItsMargin) {
  // GPU: its largest request takes 10 us (100 units x 100 ns). CPU: 10 ns a unit per worker, so
  // 10 us is 8000 units over its 8 workers; with 10% of margin it takes what fits in 10 / 1.1 us.
  const HybridSplitter h = calibrated_workers(10, 100);
  std::vector<std::uint64_t> work = {100};
  for (int i = 0; i < 200; ++i) work.push_back(50);
  const SplitPlan p = h.plan(work, {true, 0}, {true, 0});
  const double cpu_ns = h.predict(Side::Cpu, PartShape{50 * p.cpu, 50, p.cpu});
  EXPECT_LE(HybridSplitter::kCpuMargin * cpu_ns, 10'000.0);
  // One more request would break the margin: the CPU got all that fits, not fewer.
  EXPECT_GT(
      HybridSplitter::kCpuMargin * h.predict(Side::Cpu, PartShape{50 * (p.cpu + 1), 50, p.cpu + 1}),
      10'000.0);
  EXPECT_EQ(p.cpu, 145u);  // 145 x 50 / 8 x 10 = 9,062 ns; x 1.1 = 9,969 ns
}

TEST(HybridSplit, TheGpusLargestRequestsLeadItsPartAsALaunchOfTheirOwn) {
  const HybridSplitter h = calibrated_workers(1000, 1);  // a slow CPU: the GPU takes everything
  // The GPU's requests of at least half its largest's work (1000, 800, 500) lead; the rest follow.
  const std::vector<std::uint64_t> work = {10, 800, 499, 1000, 20, 500};
  const SplitPlan p = h.plan(work, {true, 0}, {true, 0});
  ASSERT_EQ(p.cpu, 0u);
  ASSERT_EQ(p.gpu, work.size());
  EXPECT_EQ(p.gpu_lead, 3u);
  EXPECT_EQ(p.order, (std::vector<std::size_t>{3, 1, 5, 2, 4, 0}));
  // All of a similar size: no lead (one launch; nothing would be gained by two).
  const std::vector<std::uint64_t> even = {100, 90, 80, 100};
  EXPECT_EQ(h.plan(even, {true, 0}, {true, 0}).gpu_lead, 0u);
  // Static keeps the paper's prefix (the request crossing the CPU's half goes to it), and each
  // part launches in adaptive's order: largest first, the GPU's lead apart.
  const HybridSplitter s(HybridStrategy::Static, 0.5, 8, 1000);
  const std::vector<std::uint64_t> uneven = {10, 30, 20, 100,
                                             5,  5,  60};  // 230: the CPU's 115 is crossed at 100
  const SplitPlan q = s.plan(uneven, {true, 0}, {true, 0});
  EXPECT_EQ(q.cpu, 4u);
  EXPECT_EQ(q.gpu, 3u);
  EXPECT_EQ(q.order, (std::vector<std::size_t>{3, 1, 2, 0, 6, 4, 5}));
  EXPECT_EQ(q.gpu_lead, 1u);
  // Nothing for the CPU (the GPU-only reference): the GPU's part is the whole batch, so ordered.
  const HybridSplitter gpu_only(HybridStrategy::Static, 0.0, 8, 1000);
  const SplitPlan g = gpu_only.plan(uneven, {true, 0}, {true, 0});
  EXPECT_EQ(g.cpu, 0u);
  EXPECT_EQ(g.order, (std::vector<std::size_t>{3, 6, 1, 2, 0, 4, 5}));
  EXPECT_EQ(g.gpu_lead, 2u);
}

TEST(HybridSplit, TheLeadGoesAloneOnlyWhereTheRunningLaunchesFreeTheirSlotInTime) {
  const HybridSplitter h = calibrated_workers(10, 100);
  const PartShape lead{3000, 1000, 4};                         // spans its largest: 1000
  const std::vector<PartShape> first_alone = {{400, 400, 1}};  // the first request alone
  EXPECT_TRUE(h.lead_goes_alone(lead, first_alone));
  const std::vector<PartShape> large = {
      {700, 700, 1}};  // would free its slot too late for the rest
  EXPECT_FALSE(h.lead_goes_alone(lead, large));
  // An earlier lead (the rest of a batch whose lead went alone never goes alone in turn).
  const std::vector<PartShape> earlier_lead = {{3000, 1000, 4}};
  EXPECT_FALSE(h.lead_goes_alone(PartShape{900, 500, 3}, earlier_lead));
  // Nothing running: a device of one slot would start the rest only after the lead.
  EXPECT_FALSE(h.lead_goes_alone(lead, {}));
  // Uncalibrated: never (the rest would be offered to the CPU again as a probe).
  const HybridSplitter fresh(HybridStrategy::Adaptive, 0.0, 8, 1000);
  EXPECT_FALSE(fresh.lead_goes_alone(lead, first_alone));
}

TEST(DataCacheTable, CopiesOnlyMissingItemsAndReusesResidentOnes) {
  DataCacheTable t(4);
  const auto first = t.place(std::vector<std::uint32_t>{10, 11, 10});
  EXPECT_EQ(first.missing_items, (std::vector<std::uint32_t>{10, 11}));
  EXPECT_EQ(first.slot_of[0], first.slot_of[2]);
  const auto second = t.place(std::vector<std::uint32_t>{11, 12});
  EXPECT_EQ(second.missing_items, (std::vector<std::uint32_t>{12}));
  EXPECT_EQ(second.slot_of[0], first.slot_of[1]);  // 11 stayed where it was
}

TEST(DataCacheTable, EvictsTheLeastRecentlyUsedButNeverAnItemOfTheSameRequest) {
  DataCacheTable t(3);
  const auto a = t.place(std::vector<std::uint32_t>{1, 2, 3});
  (void)t.place(std::vector<std::uint32_t>{1});  // 2 is now the least recently used
  const auto b = t.place(std::vector<std::uint32_t>{4});
  EXPECT_EQ(b.missing_slots, (std::vector<std::uint32_t>{a.slot_of[1]}));  // 4 took 2's slot
  EXPECT_THROW((void)t.place(std::vector<std::uint32_t>{5, 6, 7, 8}), std::length_error);
}

// ---- the combined request ----

std::vector<PendingRequest> requests_reading(const std::vector<std::vector<std::uint32_t>>& lists,
                                             std::uint32_t ordered) {
  std::vector<PendingRequest> out;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    PendingRequest p;
    p.task.id = static_cast<std::uint32_t>(i);
    p.items = lists[i];
    p.ordered_items = ordered;
    out.push_back(std::move(p));
  }
  return out;
}

TEST(CombinedRequest, RedundantCopiesEveryItemInItsRequestsOrder) {
  const std::vector<std::uint32_t> table = {100, 101, 102, 103, 104};
  const auto bytes = std::as_bytes(std::span<const std::uint32_t>(table));
  CombinedRequest c = assemble(requests_reading({{4, 1}, {1, 1, 0}}, 0), TransferMode::Redundant,
                               nullptr, bytes, 4);
  std::vector<std::uint32_t> copied(c.upload_items.size() / 4);
  std::memcpy(copied.data(), c.upload_items.data(), c.upload_items.size());
  EXPECT_EQ(copied, (std::vector<std::uint32_t>{104, 101, 101, 101, 100}));
  EXPECT_TRUE(c.slot_lists.empty());
  bind(c, 4, {.cache = 0, .items = 1000, .slot_lists = 0, .outputs = 0});
  EXPECT_EQ(c.tasks[1].payload[2],
            1000u + 2 * 4);              // the second request's items start after the first's two
  EXPECT_EQ(c.tasks[1].payload[0], 0u);  // no index buffer: contiguous
  EXPECT_EQ(c.tasks[1].payload[1], 3u);
}

TEST(CombinedRequest, ReuseSortedSortsEachRequestPastItsOrderedPrefixOnly) {
  std::vector<std::uint32_t> table(64);
  std::iota(table.begin(), table.end(), 0u);
  const auto bytes = std::as_bytes(std::span<const std::uint32_t>(table));
  DataCacheTable cache(64);
  (void)cache.place(std::vector<std::uint32_t>{9, 8, 7, 6, 5});  // slots 0..4 hold 9..5: reversed
  CombinedRequest c =
      assemble(requests_reading({{5, 6, 9, 8, 7}}, 2), TransferMode::ReuseSorted, &cache, bytes, 4);
  // Items 5 and 6 (slots 4 and 3) keep their order; 9, 8, 7 (slots 0, 1, 2) are sorted by slot.
  EXPECT_EQ(c.slot_lists, (std::vector<std::uint32_t>{4, 3, 0, 1, 2}));
  EXPECT_TRUE(c.upload_items.empty());  // all resident: nothing to copy
}

// A large combined request is assembled by several threads (kParallelAssemblyItems): hits in
// parallel, misses in order on one thread. Where the cache has room, the slots, the index buffer,
// the copies and their order are those of one thread, for every transfer mode that uses it.
TEST(CombinedRequest, SeveralThreadsAssembleWhatOneThreadAssembles) {
  constexpr std::uint32_t kItems = 50000;
  std::vector<std::uint32_t> table(kItems);
  std::iota(table.begin(), table.end(), 0u);
  const auto bytes = std::as_bytes(std::span<const std::uint32_t>(table));
  std::mt19937 rng(5);
  std::vector<std::vector<std::uint32_t>> lists(400);
  for (auto& l :
       lists) {  // ranges and repeats, as md2d's pieces and nbody's interaction lists read them
    const std::uint32_t from = rng() % (kItems - 800), n = 100 + rng() % 700;
    for (std::uint32_t i = 0; i < n; ++i) l.push_back(from + i);
    for (int k = 0; k < 20; ++k) l.push_back(rng() % kItems);
  }
  std::uint64_t total = 0;
  for (const auto& l : lists) total += l.size();
  ASSERT_GE(total, kParallelAssemblyItems);
  for (const TransferMode mode : {TransferMode::Reuse, TransferMode::ReuseSorted}) {
    DataCacheTable one(kItems), four(kItems);
    for (DataCacheTable* t : {&one, &four})
      (void)t->place(std::vector<std::uint32_t>{7, 70, 700, 7000});  // a few resident
    const CombinedRequest a = assemble(requests_reading(lists, 100), mode, &one, bytes, 4, 1);
    const CombinedRequest b = assemble(requests_reading(lists, 100), mode, &four, bytes, 4, 4);
    EXPECT_EQ(a.slot_lists, b.slot_lists);
    EXPECT_EQ(a.upload_slots, b.upload_slots);
    EXPECT_EQ(a.upload_items, b.upload_items);
    EXPECT_EQ(a.first_item, b.first_item);
    EXPECT_EQ(a.output_offset, b.output_offset);
    EXPECT_LT(b.upload_slots.size(), kItems);  // a repeated item is copied once
    // The next combined request finds what this one left: all hits.
    const CombinedRequest again = assemble(requests_reading(lists, 100), mode, &four, bytes, 4, 4);
    EXPECT_TRUE(again.upload_items.empty());
    EXPECT_EQ(again.slot_lists, b.slot_lists);
  }
}

// With a full cache the threads' placement still gives every item one slot that holds it, and
// copies each item that was not resident once.
TEST(CombinedRequest, SeveralThreadsPlaceEveryItemWhenTheCacheEvicts) {
  constexpr std::uint32_t kItems = 40000;
  std::vector<std::uint32_t> table(kItems);
  std::iota(table.begin(), table.end(), 0u);
  const auto bytes = std::as_bytes(std::span<const std::uint32_t>(table));
  std::vector<std::vector<std::uint32_t>> lists(200);
  for (std::size_t r = 0; r < lists.size(); ++r) {
    for (std::uint32_t i = 0; i < 700; ++i)
      lists[r].push_back(static_cast<std::uint32_t>((r * 97 + i * 13) % kItems));
  }
  DataCacheTable cache(36000);
  std::vector<std::uint32_t> old(30000);
  std::iota(old.begin(), old.end(), 10000u);
  (void)cache.place(old);  // mostly items the request does not read: they make room
  const CombinedRequest c =
      assemble(requests_reading(lists, 0), TransferMode::Reuse, &cache, bytes, 4, 4);
  std::map<std::uint32_t, std::uint32_t> slot_of_item, item_of_slot;
  for (std::size_t r = 0; r < lists.size(); ++r) {
    for (std::size_t i = 0; i < lists[r].size(); ++i) {
      const std::uint32_t item = lists[r][i], slot = c.slot_lists[c.first_item[r] + i];
      ASSERT_LT(slot, 36000u);
      EXPECT_EQ(slot_of_item.emplace(item, slot).first->second, slot)
          << "item " << item << " in two slots";
      EXPECT_EQ(item_of_slot.emplace(slot, item).first->second, item)
          << "slot " << slot << " holds two items";
    }
  }
  std::set<std::uint32_t> copied(c.upload_slots.begin(), c.upload_slots.end());
  EXPECT_EQ(copied.size(), c.upload_slots.size());  // each copied once
  for (const auto& [item, slot] : slot_of_item) {
    const bool was_resident = item >= 10000 && item < 40000;
    EXPECT_EQ(copied.count(slot), was_resident ? 0u : 1u) << "item " << item;
  }
}

}  // namespace
}  // namespace gpulb::gcharm
