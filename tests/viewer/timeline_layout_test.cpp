// The timeline's compact layout: with 13 px a folded SM, GPU 1 of the
// 2xH200 P3 traces started 1,716 px down; a 4-GPU trace must fit one screen.
#include <gtest/gtest.h>

#include <memory>

#include "shipped_traces.hpp"
#include "synthetic.hpp"
#include "timeline_layout.hpp"

namespace gpulb::viewer {
namespace {

constexpr float kViewH = 900.0f;  // lanes of a 1600x1000 window
constexpr float kTextH = 13.0f;

const TimelineRow* device_row(const TimelineLayout& l, std::uint32_t d) {
  for (const TimelineRow& r : l.rows) {
    if (r.kind == RowKind::Device && r.device == d) return &r;
  }
  return nullptr;
}

// A GPU-shaped trace on `gpus` devices of 132 SMs x 8 blocks: the synthetic trace, copied.
TraceModel many_gpus(std::uint32_t gpus) {
  SyntheticSpec spec;
  spec.events = 200'000;
  const trace::Trace one = make_synthetic_trace(spec);
  auto t = std::make_shared<trace::Trace>();
  t->meta = one.meta;
  for (std::uint32_t d = 0; d < gpus; ++d) {
    trace::Device dev = one.devices.at(0);
    dev.index = d;
    t->devices.push_back(dev);
    for (trace::Track tr : one.tracks) {
      tr.device = d;
      t->tracks.push_back(std::move(tr));
    }
  }
  return TraceModel(std::move(t));
}

TEST(TimelineLayout, TheSecondGpuOfA2xH200TraceStartsOnTheFirstScreen) {
  for (const char* file : {testing::kP3Paper2Gpu, testing::kP3Modern2Gpu}) {
    const TraceModel& m = testing::recorded(file);
    ASSERT_EQ(m.devices().size(), 2u);
    const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
    const TimelineRow* gpu1 = device_row(l, 1);
    ASSERT_NE(gpu1, nullptr);
    EXPECT_LT(gpu1->y, kViewH / 2 + kDeviceRowPx)
        << file << ": GPU 1 starts " << gpu1->y << " px down";
    EXPECT_LE(l.height, kViewH) << file;
  }
}

TEST(TimelineLayout, AFourGpuTraceFitsOneScreen) {
  const TraceModel m = many_gpus(4);
  const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
  EXPECT_LE(l.height, kViewH);
  std::size_t folded = 0;
  for (const TimelineRow& r : l.rows) {
    if (r.kind != RowKind::Group) continue;
    EXPECT_TRUE(r.folded);
    EXPECT_GE(r.h, kMinFoldedRowPx);
    ++folded;
  }
  EXPECT_EQ(folded, 4u * 132u) << "one row per SM";
}

TEST(TimelineLayout, ThinRowLabelsNeverOverlap) {
  const TraceModel m = many_gpus(4);
  const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
  ASSERT_LT(l.folded_h, kTextH) << "rows thinner than a line of text";
  float last_label_end = -1e9f;
  std::size_t labels = 0;
  for (const TimelineRow& r : l.rows) {
    if (r.kind == RowKind::Device) {
      EXPECT_GE(r.y, last_label_end - 0.01f)
          << "the last SM label of a device runs into the next device's header";
      last_label_end = r.y + r.h;
    }
    if (r.kind != RowKind::Group || !r.label) continue;
    EXPECT_GE(r.y, last_label_end - 0.01f) << "a label over the one above it";
    last_label_end = r.y + kTextH;
    ++labels;
  }
  EXPECT_GE(labels, 4u * 4u) << "each device still names some of its SMs";
}

TEST(TimelineLayout, AClickOnAThinRowsLabelFoldsThatRow) {
  const TraceModel m = many_gpus(2);
  const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
  ASSERT_LT(l.folded_h, kTextH);
  for (std::size_t i = 0; i < l.rows.size(); ++i) {
    const TimelineRow& r = l.rows[i];
    if (r.kind != RowKind::Group || !r.label) continue;
    // Anywhere on the label's text, below the row itself included, means this row.
    for (const float dy : {0.0f, kTextH * 0.5f, kTextH - 0.5f}) {
      EXPECT_EQ(row_for_label_click(l, r.y + dy, kTextH), static_cast<int>(i))
          << "SM row " << r.group << " +" << dy;
    }
  }
  // A header row is itself.
  EXPECT_EQ(row_for_label_click(l, l.rows[0].y + 1, kTextH), 0);
  EXPECT_EQ(row_for_label_click(l, l.height + 5, kTextH), -1);
}

TEST(TimelineLayout, FewRowsKeepTheirFullHeight) {
  const TraceModel& m = testing::recorded(testing::kP3Paper2Gpu);
  Folds folds = default_folds(m);
  const TimelineLayout l = layout_timeline(m, folds, 50'000.0f, kTextH);
  EXPECT_EQ(l.folded_h, l.lane_h) << "room for all: no squeezing";
  for (const TimelineRow& r : l.rows) EXPECT_TRUE(r.label);
}

TEST(TimelineLayout, UnfoldOpensEveryGroupAndFoldAllFoldsThemAgain) {
  const TraceModel& m = testing::recorded(testing::kUts);
  Folds folds = default_folds(m, /*unfold=*/true);
  TimelineLayout l = layout_timeline(m, folds, kViewH, kTextH);
  std::size_t lane_rows = 0;
  for (const TimelineRow& r : l.rows) lane_rows += r.kind == RowKind::Lane;
  EXPECT_EQ(lane_rows, m.lanes().size()) << "--unfold: a row per lane";
  set_all_folds(m, folds, true);
  l = layout_timeline(m, folds, kViewH, kTextH);
  for (const TimelineRow& r : l.rows) {
    if (r.kind == RowKind::Lane) {
      EXPECT_EQ(m.lanes()[r.lane].role, trace::TrackRole::Host);
    }
  }
  // A lane of a folded group is drawn (steal arrows) at its group's row.
  for (const TimelineRow& r : l.rows) {
    if (r.kind != RowKind::Group) continue;
    const LaneGroup& g = m.devices()[r.device].groups[static_cast<std::size_t>(r.group)];
    EXPECT_FLOAT_EQ(l.lane_center[g.lanes.front()], r.y + r.h * 0.5f);
  }
}

TEST(TimelineLayout, ZoomedInFarEnoughToSeeTasksTheGroupsOpen) {
  const TraceModel& m = testing::recorded(testing::kP3Paper2Gpu);
  ASSERT_GT(m.mean_task_ns(), 0.0);
  const double run = static_cast<double>(m.stats().makespan_ns);
  const double fit_ns_per_px = run / 1200.0;
  EXPECT_FALSE(tasks_visible_at(m, fit_ns_per_px, run))
      << "the whole run: the heat map is the overview";
  const double close = run / 8 / 1200;  // an eighth of the run: P3's mean task is some 160 px wide
  EXPECT_TRUE(tasks_visible_at(m, close, close * 1200));
  EXPECT_FALSE(tasks_visible_at(m, m.mean_task_ns(), run / 8))
      << "zoomed in, but a mean task is a pixel wide";

  const Folds user = default_folds(m);
  const TimelineLayout far =
      layout_timeline(m, effective_folds(m, user, true, fit_ns_per_px, run), kViewH, kTextH);
  const TimelineLayout near =
      layout_timeline(m, effective_folds(m, user, true, close, close * 1200), kViewH, kTextH);
  auto lanes_shown = [](const TimelineLayout& l) {
    std::size_t n = 0;
    for (const TimelineRow& r : l.rows) n += r.kind == RowKind::Lane;
    return n;
  };
  EXPECT_LT(lanes_shown(far), 10u);
  EXPECT_EQ(lanes_shown(near), m.lanes().size()) << "every block's lane once the tasks can be seen";
  const TimelineLayout by_hand =
      layout_timeline(m, effective_folds(m, user, false, close, close * 1200), kViewH, kTextH);
  EXPECT_EQ(lanes_shown(by_hand), lanes_shown(far))
      << "folded by hand: the zoom leaves the folds alone";
}

// "a level above the device (rank/host -> device -> SM -> lane)". A merged trace of
// `ranks` ranks as core/src/rank_merge.cpp writes it: per rank, a CPU device named for it, its
// worker tracks and then its host track.
TraceModel ranks_model(std::uint32_t ranks, std::uint32_t workers) {
  trace::Trace t;
  t.meta.ranks = ranks;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    trace::Device d{trace::DeviceKind::Cpu, 0, "rank " + std::to_string(r) + ": CPU (2 threads)", 2,
                    workers};
    d.rank = r;
    t.devices.push_back(d);
    for (std::uint32_t w = 0; w < workers; ++w) {
      trace::Track tr;
      tr.device = r;
      tr.worker = w;
      tr.name = "worker " + std::to_string(w);
      tr.events = {trace::make_event(100 + r, trace::EventKind::TaskBegin, w, 1),
                   trace::make_event(900, trace::EventKind::TaskEnd, w, 1)};
      t.tracks.push_back(tr);
    }
    trace::Track host;
    host.role = trace::TrackRole::Host;
    host.device = r;
    host.name = "host (sharing queue)";
    host.events = {trace::make_event(50, trace::EventKind::HostEnqueue, 4, 0)};
    t.tracks.push_back(host);
  }
  return TraceModel(std::move(t));
}

TEST(TimelineLayout, EachRankHasAHeaderRowWithItsHostLaneAboveItsDevices) {
  const TraceModel m = ranks_model(4, 2);
  ASSERT_EQ(m.ranks().size(), 4u);
  EXPECT_EQ(m.ranks()[1].label, "rank 1: 1 device, 2 workers");
  const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
  // Per rank: its row, its host lane, its device's row, its 2 worker lanes; in rank order.
  ASSERT_EQ(l.rows.size(), 4u * 5u);
  float last_host_y = -1.0f;
  for (std::uint32_t r = 0; r < 4; ++r) {
    const TimelineRow* row = &l.rows[r * 5];
    EXPECT_EQ(row[0].kind, RowKind::Rank);
    EXPECT_EQ(row[0].rank, static_cast<int>(r));
    EXPECT_EQ(m.ranks()[static_cast<std::size_t>(row[0].rank)].rank, r);
    EXPECT_EQ(row[1].kind, RowKind::Lane);
    EXPECT_EQ(m.lanes()[row[1].lane].role, trace::TrackRole::Host)
        << "the rank's host lane right under its row";
    EXPECT_EQ(m.header().devices[m.lanes()[row[1].lane].device].rank, r);
    EXPECT_EQ(row[2].kind, RowKind::Device);
    EXPECT_EQ(row[2].device, r);
    for (int k = 3; k < 5; ++k) {
      EXPECT_EQ(row[k].kind, RowKind::Lane);
      EXPECT_EQ(m.lanes()[row[k].lane].device, r);
      EXPECT_EQ(m.lanes()[row[k].lane].role, trace::TrackRole::Worker);
    }
    for (int k = 0; k < 5; ++k)
      EXPECT_EQ(row[k].rank, static_cast<int>(r)) << "every row under rank " << r << " says so";
    EXPECT_GT(l.lane_center[row[1].lane], last_host_y) << "ranks top to bottom on one time axis";
    last_host_y = l.lane_center[row[1].lane];
  }
  EXPECT_FLOAT_EQ(l.rows.back().y + l.rows.back().h, l.height);
}

TEST(TimelineLayout, AFoldedRankHidesItsDevicesAndLanesUnderItsRow) {
  const TraceModel m = ranks_model(3, 2);
  Folds folds = default_folds(m);
  folds[rank_fold_key(1)] = true;
  const TimelineLayout l = layout_timeline(m, folds, kViewH, kTextH);
  ASSERT_EQ(l.rows.size(), 5u + 1u + 5u);
  const TimelineRow& folded = l.rows[5];
  EXPECT_EQ(folded.kind, RowKind::Rank);
  EXPECT_TRUE(folded.folded);
  for (std::size_t i = 0; i < m.lanes().size(); ++i) {
    if (m.lanes()[i].device == 1) {
      EXPECT_FLOAT_EQ(l.lane_center[i], folded.y + folded.h * 0.5f);
    }
  }
  EXPECT_EQ(l.rows[6].kind, RowKind::Rank);
  EXPECT_EQ(row_for_label_click(l, folded.y + 2, kTextH), 5) << "a click on its name opens it";
}

TEST(TimelineLayout, AOneProcessTraceHasNoRankRowAndLaysOutAsBefore) {
  // The shipped H100 trace: device row, its host lanes, then its SM groups; no Rank row, nothing
  // marked as under a rank.
  const TraceModel& m = testing::recorded(testing::kUts);
  EXPECT_TRUE(m.ranks().empty());
  const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
  ASSERT_FALSE(l.rows.empty());
  EXPECT_EQ(l.rows[0].kind, RowKind::Device);
  for (const TimelineRow& r : l.rows) {
    EXPECT_NE(r.kind, RowKind::Rank);
    EXPECT_EQ(r.rank, -1);
  }
  const DeviceGroup& dev = m.devices()[0];
  for (std::size_t k = 0; k < dev.host_lanes.size(); ++k) {
    EXPECT_EQ(l.rows[1 + k].kind, RowKind::Lane);
    EXPECT_EQ(l.rows[1 + k].lane, dev.host_lanes[k]);
  }
  // One CPU process, rank 0 named in the metadata as 1: none either.
  const TraceModel one = ranks_model(1, 2);
  EXPECT_TRUE(one.ranks().empty());
}

}  // namespace
}  // namespace gpulb::viewer
