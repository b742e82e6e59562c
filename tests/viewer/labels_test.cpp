// Timeline texts that covered each other: host labels ("+1024 q1") crossed
// by the next marker's line, "GPU 0 control thre" cut by the label column.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixed_width_text.hpp"
#include "labels.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(LabelColumn, EveryHostLaneNameFitsWhole) {
  for (const char* file : {testing::kP3Paper2Gpu, testing::kP4Queue, testing::kUts}) {
    const TraceModel& m = testing::recorded(file);
    const float column = label_column_width(m, width7);
    for (const DeviceGroup& dev : m.devices()) {
      for (const std::uint32_t i : dev.host_lanes) {
        const Lane& lane = m.lanes()[i];
        const float room = column - 4 - lane_label_indent(m, lane);
        EXPECT_EQ(fit_text(lane.label, room, width7), lane.label)
            << file << ": \"" << lane.label << "\" in " << column << " px";
      }
    }
  }
}

TEST(LabelColumn, ANameTooLongIsElidedWithinItsRoom) {
  const std::string name = "GPU 0 control thread";
  const std::string fitted = fit_text(name, 100.0f, width7);
  EXPECT_LE(width7(fitted), 100.0f);
  EXPECT_EQ(fitted.substr(fitted.size() - 3), "...");
  EXPECT_EQ(name.rfind(fitted.substr(0, fitted.size() - 3), 0), 0u) << "a prefix of the name";
  EXPECT_EQ(fit_text("ü ü ü ü ü", 30.0f, width7).find('\xc3' + std::string("...")),
            std::string::npos)
      << "never half a character";
}

// The host lane's markers of a shipped trace at Fit across `width` px.
void expect_labels_clear(const TraceModel& m, double width) {
  const TimeSpan fit = fit_span(m);
  const double left = 200.0, right = left + width;
  const TimeAxis axis = TimeAxis::fit(fit.begin_ns, fit.end_ns, left, width);
  std::size_t labelled = 0;
  for (const DeviceGroup& dev : m.devices()) {
    for (const std::uint32_t i : dev.host_lanes) {
      std::vector<double> xs;
      std::vector<std::string> texts;
      for (const Marker& k : m.lanes()[i].markers) {
        const double x = axis.x(static_cast<double>(k.time_ns));
        if (x < left || x > right) continue;
        xs.push_back(x);
        texts.push_back("+" + std::to_string(k.arg) + " q" + std::to_string(k.aux));
      }
      const MarkerLayout l =
          layout_markers(xs, right, [&](std::size_t j) { return width7(texts[j]); });
      for (std::size_t k = 0; k < l.drawn.size(); ++k) {
        if (k > 0) {
          EXPECT_GE(xs[l.drawn[k]] - xs[l.drawn[k - 1]], kMarkerMinGapPx);
        }
        if (!l.labelled[k]) continue;
        ++labelled;
        const double end = xs[l.drawn[k]] + kMarkerLabelGapPx + width7(texts[l.drawn[k]]);
        EXPECT_LE(end, right);
        if (k + 1 < l.drawn.size()) {
          EXPECT_LT(end, xs[l.drawn[k + 1]])
              << "the next marker's line crosses \"" << texts[l.drawn[k]] << "\"";
        }
      }
    }
  }
  EXPECT_GT(labelled, 0u) << "some labels still show";
}

TEST(MarkerLabels, NoLabelIsCrossedByTheNextMarker) {
  expect_labels_clear(testing::recorded(testing::kP3Paper2Gpu), 1200);
  expect_labels_clear(testing::recorded(testing::kP3Modern2Gpu), 1200);
  expect_labels_clear(testing::recorded(testing::kP4Queue), 1200);
}

TEST(MarkerLabels, LabelsOnlyWhereThereIsRoom) {
  const std::vector<double> xs = {10, 11, 20, 100, 130};  // 11 is under 2 px from 10: not drawn
  const MarkerLayout l =
      layout_markers(xs, 200, [](std::size_t i) { return i == 3 ? -1.0f : 40.0f; });
  EXPECT_EQ(l.drawn, (std::vector<std::uint32_t>{0, 2, 3, 4}));
  // 10: the next line at 20; 20: fits before 100; 100: no label; 130: ends at 173 <= 200.
  EXPECT_EQ(l.labelled, (std::vector<bool>{false, true, false, true}));
}

// A thief's host track records the HostEnqueue of a stolen chunk's tasks and
// then, microseconds later, the RankSteal: closer than kMarkerMinGapPx at any zoom but the deepest,
// so only the enqueue ("+20 q0") was drawn and "+20 from rank 3" never showed. The only rank label
// left on the thief's row was its own lend ("-20 to rank 3" on rank 1's row, next to the +20 q0),
// which read as the lend drawn on the wrong rank. The marker that names another rank is drawn.
TEST(MarkerLabels, ARankStealIsDrawnOverTheEnqueueOfItsTasks) {
  using trace::EventKind;
  trace::Trace t;
  t.meta.ranks = 2;
  for (std::uint32_t r = 0; r < 2; ++r) {
    trace::Device d{trace::DeviceKind::Cpu, 0, "CPU", 4, 1};
    d.rank = r;
    t.devices.push_back(d);
  }
  trace::Track host;
  host.role = trace::TrackRole::Host;
  host.device = 1;
  host.name = "host (sharing queue)";
  // As rank_balancer.cpp writes them: insert (HostEnqueue), then RankSteal; later a lend of its own.
  host.events = {trace::make_event(1'000'000, EventKind::HostEnqueue, 20, 0),
                 trace::make_event(1'003'000, EventKind::RankSteal, 3, 20),
                 trace::make_event(40'000'000, EventKind::RankLend, 3, 20)};
  t.tracks.push_back(host);
  const TraceModel m(std::move(t));
  const Lane& lane = m.lanes()[0];
  ASSERT_EQ(lane.markers.size(), 3u);
  for (const double ns_per_px :
       {1e4, 1e5, 1e6}) {  // 10 us to 1 ms a pixel: the first two share a pixel or two
    std::vector<double> xs;
    for (const Marker& k : lane.markers) xs.push_back(static_cast<double>(k.time_ns) / ns_per_px);
    const MarkerLayout l = layout_markers(
        xs, 1e9, [&](std::size_t i) { return width7(marker_text(lane.markers[i], false)); },
        [&](std::size_t i) { return marker_priority(lane.markers[i].kind); });
    ASSERT_EQ(l.drawn.size(), 2u) << ns_per_px;
    EXPECT_EQ(marker_text(lane.markers[l.drawn[0]], false), "+20 from rank 3")
        << ns_per_px << " ns a pixel";
    EXPECT_EQ(marker_text(lane.markers[l.drawn[1]], false), "-20 to rank 3");
  }
  // Markers of equal rank keep the first of the close ones.
  const MarkerLayout same = layout_markers(
      std::vector<double>{10, 11, 20}, 200, [](std::size_t) { return 5.0f; },
      [](std::size_t) { return 0; });
  EXPECT_EQ(same.drawn, (std::vector<std::uint32_t>{0, 2}));
}

// The viewer shows the combining decisions and a hybrid run's splits as host labels.
TEST(MarkerText, LaunchesNameTheirReasonAndSideTransfersTheirBytesSplitsTheirShare) {
  using trace::EventKind;
  EXPECT_EQ(marker_text({0, 1024, 1, EventKind::HostEnqueue}, false), "+1024 q1");
  EXPECT_EQ(marker_text({0, 2112, 0, EventKind::KernelLaunch}, false),
            "launch 2112");  // hardware, chunked
  EXPECT_EQ(marker_text({0, 1584, 1, EventKind::KernelLaunch}, false),
            "launch 1584 full");  // combining adaptive
  EXPECT_EQ(marker_text({0, 37, 2, EventKind::KernelEnd}, false), "end 37 timeout");
  EXPECT_EQ(marker_text({0, 100, 3, EventKind::KernelLaunch}, false), "launch 100 static");
  EXPECT_EQ(marker_text({0, 12, 1 | (1 << 8), EventKind::KernelLaunch}, false),
            "cpu launch 12 full");  // hybrid's sides
  EXPECT_EQ(marker_text({0, 1580, 1 | (2 << 8), EventKind::KernelLaunch}, false),
            "gpu launch 1580 full");
  EXPECT_EQ(marker_text({0, 12'345'678, 0, EventKind::Transfer}, false), "to device 12.3 MB");
  EXPECT_EQ(marker_text({0, 640, 1, EventKind::Transfer}, false), "to host 640 B");
  EXPECT_EQ(marker_text({0, 12, 45, EventKind::RequestSplit}, false), "split: cpu 12 (4.5%)");
  EXPECT_EQ(marker_text({0, 3, 0, EventKind::Spawn}, false), "");  // spawns only when zoomed in
  EXPECT_EQ(marker_text({0, 3, 0, EventKind::Spawn}, true), "+3");
  EXPECT_EQ(marker_text({0, 4000, 3, EventKind::SpawnBatch}, true),
            "+3");  // arg: the first child's id
  EXPECT_EQ(marker_text({0, 4000, 3, EventKind::SpawnBatch}, false), "");
  EXPECT_EQ(marker_text({0, 0, 0, EventKind::Steal}, true), "");
  EXPECT_EQ(marker_text({0, 3, 20, EventKind::RankSteal}, false),
            "+20 from rank 3");  // arg: the victim, aux: tasks
  EXPECT_EQ(marker_text({0, 1, 20, EventKind::RankLend}, false),
            "-20 to rank 1");  // arg: the thief
}

}  // namespace
}  // namespace gpulb::viewer
