// A hybrid run's trace (G-Charm's CPU+GPU scheduling): one trace with the CPU device
// (worker threads, the host track with launches and splits) and the GPU (blocks on SM lanes), on
// one time axis. The viewer shows both devices' lanes, the GPU's folded into SMs, and labels the
// split decisions and each side's launches.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "labels.hpp"
#include "timeline_layout.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;
using trace::make_event;

std::shared_ptr<trace::Trace> hybrid_trace() {
  auto t = std::make_shared<trace::Trace>();
  t->meta.scenario = "nbody";
  t->meta.policy = "hybrid";
  t->meta.backend = "cuda";
  t->devices.push_back({trace::DeviceKind::Cpu, 0, "CPU (16 threads)", 16, 2});
  t->devices.push_back({trace::DeviceKind::Gpu, 0, "NVIDIA H100 80GB HBM3", 132, 4});
  for (std::uint32_t w = 0; w < 2; ++w) {  // the CPU side's workers
    trace::Track tr;
    tr.role = trace::TrackRole::Worker;
    tr.device = 0;
    tr.worker = w;
    tr.name = "worker " + std::to_string(w);
    tr.events = {make_event(0, EventKind::WorkerStart, w, trace::kUnknownSm),
                 make_event(100 + w, EventKind::TaskBegin, w, 0),
                 make_event(900, EventKind::TaskEnd, w, 0), make_event(2000, EventKind::WorkerEnd)};
    t->tracks.push_back(tr);
  }
  trace::Track host;
  host.role = trace::TrackRole::Host;
  host.device = 0;
  host.name = "host: work group list";
  host.events = {make_event(50, EventKind::RequestSplit, 2, 12),
                 make_event(60, EventKind::KernelLaunch, 2, 1 | (1 << 8)),
                 make_event(61, EventKind::Transfer, 4096, 0),
                 make_event(62, EventKind::KernelLaunch, 4, 1 | (2 << 8)),
                 make_event(950, EventKind::KernelEnd, 2, 1 | (1 << 8)),
                 make_event(1000, EventKind::KernelEnd, 4, 1 | (2 << 8))};
  t->tracks.push_back(host);
  for (std::uint32_t b = 0; b < 4; ++b) {  // the GPU side's blocks, on two SMs
    trace::Track tr;
    tr.role = trace::TrackRole::SmLane;
    tr.device = 1;
    tr.worker = b % 2;
    tr.sm = b / 2;
    tr.name = "SM " + std::to_string(b / 2) + " lane " + std::to_string(b % 2);
    tr.events = {make_event(200, EventKind::WorkerStart, 2 + b, static_cast<std::uint16_t>(b / 2)),
                 make_event(210, EventKind::TaskBegin, 2 + b, 0),
                 make_event(700, EventKind::TaskEnd, 2 + b, 0)};
    t->tracks.push_back(tr);
  }
  return t;
}

TEST(HybridTrace, BothDevicesLanesAreShownTheGpusInSmGroups) {
  const TraceModel m(hybrid_trace());
  ASSERT_EQ(m.devices().size(), 2u);
  EXPECT_FALSE(m.devices()[0].has_sms);
  EXPECT_TRUE(m.devices()[1].has_sms);
  EXPECT_EQ(m.devices()[1].groups.size(), 2u);  // SM 0, SM 1
  EXPECT_EQ(m.devices()[0].host_lanes.size(), 1u);
  std::size_t zones = 0;
  for (const Lane& l : m.lanes()) zones += l.zones.size();
  EXPECT_EQ(zones, 6u);  // 2 CPU tasks, 4 GPU blocks
  const TimelineLayout layout = layout_timeline(m, Folds{}, 900.0f, 14.0f);
  int device_rows = 0;
  float cpu_y = -1, gpu_y = -1;
  for (const TimelineRow& r : layout.rows) {
    if (r.kind != RowKind::Device) continue;
    ++device_rows;
    (r.device == 0 ? cpu_y : gpu_y) = r.y;
  }
  EXPECT_EQ(device_rows, 2);
  EXPECT_LT(cpu_y, gpu_y);
  EXPECT_LE(layout.height, 900.0f);
}

TEST(HybridTrace, TheHostLaneLabelsTheSplitAndEachSidesLaunch) {
  const TraceModel m(hybrid_trace());
  const Lane* host = nullptr;
  for (const Lane& l : m.lanes()) {
    if (!l.markers.empty()) host = &l;
  }
  ASSERT_NE(host, nullptr);
  std::vector<std::string> texts;
  for (const Marker& k : host->markers) texts.push_back(marker_text(k, false));
  EXPECT_EQ(texts, (std::vector<std::string>{"split: cpu 2 (1.2%)", "cpu launch 2 full",
                                             "to device 4.1 kB", "gpu launch 4 full",
                                             "cpu end 2 full", "gpu end 4 full"}));
}

}  // namespace
}  // namespace gpulb::viewer
