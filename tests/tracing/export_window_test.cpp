// The export window: the run, the host work leading up to it and following it, not a host event
// far from it; every export's clock starts at its start.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpulb/tracing/export_window.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

constexpr std::uint64_t kUs = 1000, kMs = 1000 * kUs;

// One worker running from `begin` for `length`, and a host track with `host` events.
Trace run_with_host(std::uint64_t begin, std::uint64_t length, std::vector<Event> host_events) {
  Trace t;
  t.devices.push_back({DeviceKind::Gpu, 0, "GPU", 1, 1});
  Track worker;
  worker.name = "block 0";
  worker.events = {make_event(begin, EventKind::WorkerStart),
                   make_event(begin + 1, EventKind::TaskBegin, 1, 0),
                   make_event(begin + length - 1, EventKind::TaskEnd, 1, 0),
                   make_event(begin + length, EventKind::WorkerEnd)};
  Track host;
  host.role = TrackRole::Host;
  host.name = "GPU 0 control thread";
  host.events = std::move(host_events);
  t.tracks = {worker, host};
  return t;
}

TEST(ExportWindow, IsTheRunWhereEveryHostEventIsInsideIt) {
  // the host's enqueue at 0, where the workers start
  const Trace t = gpulb::testing::make_trace(2, 3, 100);
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.origin_ns, 0u);
  EXPECT_EQ(w.range.begin_ns, 0u);
  EXPECT_EQ(w.range.end_ns, 301u);
  EXPECT_EQ(w.left_out, 0u);
}

// uts on four H200s: work-stealing writes the initial task 45.6 ms before the blocks start.
TEST(ExportWindow, LeavesOutALoneEnqueueLongBeforeTheLaunch) {
  const Trace t = run_with_host(46 * kMs, 2 * kMs,
                                {make_event(0, EventKind::HostEnqueue, 1, 0),
                                 make_event(46 * kMs - 20 * kUs, EventKind::KernelLaunch, 4224)});
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.origin_ns, 46 * kMs - 20 * kUs) << "the clock starts at the launch";
  EXPECT_EQ(w.left_out, 1u);
  EXPECT_FALSE(w.keeps(0));
}

// combining: the host fills its queue for 17 ms before the first launch, a level every 5 us.
TEST(ExportWindow, KeepsTheHostWorkLeadingUpToTheRun) {
  std::vector<Event> host;
  for (std::uint64_t t = 3 * kMs; t < 20 * kMs; t += 5 * kUs)
    host.push_back(make_event(t, EventKind::QueueLevel, 1, 0));
  host.push_back(make_event(20 * kMs, EventKind::KernelLaunch, 1, 0));
  const Trace t = run_with_host(20 * kMs + 80 * kUs, 170 * kMs, host);
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.origin_ns, 3 * kMs);
  EXPECT_EQ(w.left_out, 0u);
}

// A launch is part of the run however long its blocks take to start: patterns P4 on an H200
// launches 41 us before a 237 us run, more than a tenth of it.
TEST(ExportWindow, KeepsTheLaunchHoweverLongTheBlocksTakeToStart) {
  const Trace t =
      run_with_host(100 * kUs, 237 * kUs, {make_event(59 * kUs, EventKind::KernelLaunch, 1584)});
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.origin_ns, 59 * kUs);
  EXPECT_EQ(w.left_out, 0u);
}

TEST(ExportWindow, KeepsTheHostWorkAfterTheRunUpToAGap) {
  const Trace t = run_with_host(0, 100 * kUs,
                                {make_event(150 * kUs, EventKind::KernelEnd, 1),
                                 make_event(155 * kUs, EventKind::Transfer, 4096, 1),
                                 make_event(2 * kMs, EventKind::Transfer, 8, 1)});
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.range.end_ns, 155 * kUs + 1) << "the kernel's end, then a transfer 5 us after it";
  EXPECT_EQ(w.left_out, 1u);
}

TEST(ExportWindow, ARequestedRangeIsCutToTheWindowOnTheWindowsClock) {
  const Trace t = run_with_host(10 * kMs, 1 * kMs, {make_event(0, EventKind::HostEnqueue, 1, 0)});
  const ExportWindow w = export_window(t, TimeRange{0, 10 * kMs + 500 * kUs});
  EXPECT_EQ(w.origin_ns, 10 * kMs);
  EXPECT_EQ(w.range.begin_ns, 10 * kMs);
  EXPECT_EQ(w.range.end_ns, 10 * kMs + 500 * kUs);
  EXPECT_EQ(w.at(10 * kMs + 5), 5u);
}

TEST(ExportWindow, IsEveryEventOfATraceWithoutWorkers) {
  Trace t = run_with_host(0, 1,
                          {make_event(5, EventKind::HostEnqueue, 1, 0),
                           make_event(9 * kMs, EventKind::Transfer, 1, 0)});
  t.tracks.erase(t.tracks.begin());
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.origin_ns, 5u);
  EXPECT_EQ(w.range.end_ns, 9 * kMs + 1);
  EXPECT_EQ(w.left_out, 0u);
  EXPECT_EQ(export_window(Trace{}).left_out, 0u);
}

// The recordings the rule was made for.
TEST(ExportWindow, OfTheShippedUtsOnFourGpusLeavesOutTheInitialEnqueueOnly) {
  const Trace t = read_trace(std::filesystem::path(GPULB_SHIPPED_TRACES) /
                             "uts-geometric-d7-work-stealing-4xh200.gpulb");
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.left_out, 1u);
  std::uint64_t first_launch = ~std::uint64_t{0};
  for (const Track& tr : t.tracks) {
    for (const Event& e : tr.events) {
      if (e.kind == EventKind::KernelLaunch) first_launch = std::min(first_launch, e.time_ns);
    }
  }
  EXPECT_EQ(w.origin_ns, first_launch);
}

TEST(ExportWindow, OfTheShippedCombiningRunKeepsItsQueueFilling) {
  const Trace t = read_trace(std::filesystem::path(GPULB_SHIPPED_TRACES) /
                             "nbody-20k-combining-adaptive-h200.gpulb");
  const ExportWindow w = export_window(t);
  EXPECT_EQ(w.left_out, 0u);
  std::uint64_t first = ~std::uint64_t{0};
  for (const Track& tr : t.tracks) {
    if (!tr.events.empty()) first = std::min(first, tr.events.front().time_ns);
  }
  EXPECT_EQ(w.origin_ns, first) << "17.5 ms of queue levels before the first launch are the run's";
}

}  // namespace
}  // namespace gpulb::trace
