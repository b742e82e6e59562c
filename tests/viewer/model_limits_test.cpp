// The trace model against hostile counts: what it builds is bounded by what the views
// can show, not by the device and track counts a file claims.
#include <gtest/gtest.h>

#include <memory>

#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;
using trace::make_event;

// `devices` GPUs; one worker track with a task and a queue level on each of `busy` of them.
std::shared_ptr<const trace::Trace> many_devices(std::uint32_t devices,
                                                 std::initializer_list<std::uint32_t> busy) {
  auto t = std::make_shared<trace::Trace>();
  for (std::uint32_t d = 0; d < devices; ++d)
    t->devices.push_back({trace::DeviceKind::Gpu, d, "G", 1, 1});
  for (const std::uint32_t d : busy) {
    trace::Track tr{trace::TrackRole::Worker, d, 0, 0, "block 0", 0, {}};
    tr.events = {make_event(100, EventKind::WorkerStart),
                 make_event(110, EventKind::QueueLevel, 3, 0),
                 make_event(120, EventKind::TaskBegin, 1, 0),
                 make_event(900, EventKind::TaskEnd, 1, 0), make_event(950, EventKind::WorkerEnd)};
    t->tracks.push_back(std::move(tr));
  }
  return t;
}

TEST(TraceModelLimits, AHundredThousandDevicesBuildOnlyTheDevicesShown) {
  const TraceModel m(many_devices(100'000, {0, 1, 50'000, 99'999}));
  EXPECT_LE(m.devices().size(), 64u) << "one device group and busy series per claimed device";
  EXPECT_LE(m.lanes().size(), 2u) << "the lanes of the devices shown only";
  EXPECT_LE(m.queues().size(), 2u) << "the queue series of the devices shown only";
  // What is shown still works: the first devices' lanes, their tasks and their time range.
  ASSERT_GE(m.devices().size(), 2u);
  EXPECT_EQ(m.devices()[1].groups.size(), 1u);
  EXPECT_EQ(m.begin_ns(), 100u);
  EXPECT_EQ(m.end_ns(), 950u);
  EXPECT_EQ(m.omitted(), "showing the first 64 of 100000 devices");
}

TEST(TraceModelLimits, LanesAndQueueSeriesStopAtTheirLimitsAndSaySo) {
  const auto t = many_devices(10, {0, 1, 2, 3, 4, 5});
  const TraceModel m(t, ModelLimits{64, 4, 2});
  EXPECT_EQ(m.lanes().size(), 4u);
  EXPECT_EQ(m.queues().size(), 2u);
  EXPECT_EQ(m.omitted(), "showing 4 of 6 tracks, the first 2 queue series");
  EXPECT_EQ(TraceModel(t).omitted(), "") << "within the default limits everything is shown";
}

}  // namespace
}  // namespace gpulb::viewer
