// The timeline's compact layout (issue 13, defect 1a): with 13 px a folded SM, GPU 1 of the
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
    const TraceModel& m = testing::shipped(file);
    ASSERT_EQ(m.devices().size(), 2u);
    const TimelineLayout l = layout_timeline(m, default_folds(m), kViewH, kTextH);
    const TimelineRow* gpu1 = device_row(l, 1);
    ASSERT_NE(gpu1, nullptr);
    EXPECT_LT(gpu1->y, kViewH / 2 + kDeviceRowPx) << file << ": GPU 1 starts " << gpu1->y << " px down";
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
      EXPECT_GE(r.y, last_label_end - 0.01f) << "the last SM label of a device runs into the next device's header";
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
      EXPECT_EQ(row_for_label_click(l, r.y + dy, kTextH), static_cast<int>(i)) << "SM row " << r.group << " +" << dy;
    }
  }
  // A header row is itself.
  EXPECT_EQ(row_for_label_click(l, l.rows[0].y + 1, kTextH), 0);
  EXPECT_EQ(row_for_label_click(l, l.height + 5, kTextH), -1);
}

TEST(TimelineLayout, FewRowsKeepTheirFullHeight) {
  const TraceModel& m = testing::shipped(testing::kP3Paper2Gpu);
  Folds folds = default_folds(m);
  const TimelineLayout l = layout_timeline(m, folds, 50'000.0f, kTextH);
  EXPECT_EQ(l.folded_h, l.lane_h) << "room for all: no squeezing";
  for (const TimelineRow& r : l.rows) EXPECT_TRUE(r.label);
}

TEST(TimelineLayout, UnfoldOpensEveryGroupAndFoldAllFoldsThemAgain) {
  const TraceModel& m = testing::shipped(testing::kUts);
  Folds folds = default_folds(m, /*unfold=*/true);
  TimelineLayout l = layout_timeline(m, folds, kViewH, kTextH);
  std::size_t lane_rows = 0;
  for (const TimelineRow& r : l.rows) lane_rows += r.kind == RowKind::Lane;
  EXPECT_EQ(lane_rows, m.lanes().size()) << "--unfold: a row per lane";
  set_all_folds(m, folds, true);
  l = layout_timeline(m, folds, kViewH, kTextH);
  for (const TimelineRow& r : l.rows) {
    if (r.kind == RowKind::Lane) EXPECT_EQ(m.lanes()[r.lane].role, trace::TrackRole::Host);
  }
  // A lane of a folded group is drawn (steal arrows) at its group's row.
  for (const TimelineRow& r : l.rows) {
    if (r.kind != RowKind::Group) continue;
    const LaneGroup& g = m.devices()[r.device].groups[static_cast<std::size_t>(r.group)];
    EXPECT_FLOAT_EQ(l.lane_center[g.lanes.front()], r.y + r.h * 0.5f);
  }
}

TEST(TimelineLayout, ZoomedInFarEnoughToSeeTasksTheGroupsOpen) {
  const TraceModel& m = testing::shipped(testing::kP3Paper2Gpu);
  ASSERT_GT(m.mean_task_ns(), 0.0);
  const double run = static_cast<double>(m.stats().makespan_ns);
  const double fit_ns_per_px = run / 1200.0;
  EXPECT_FALSE(tasks_visible_at(m, fit_ns_per_px, run)) << "the whole run: the heat map is the overview";
  const double close = run / 8 / 1200;  // an eighth of the run: P3's mean task is some 160 px wide
  EXPECT_TRUE(tasks_visible_at(m, close, close * 1200));
  EXPECT_FALSE(tasks_visible_at(m, m.mean_task_ns(), run / 8)) << "zoomed in, but a mean task is a pixel wide";

  const Folds user = default_folds(m);
  const TimelineLayout far = layout_timeline(m, effective_folds(m, user, true, fit_ns_per_px, run), kViewH, kTextH);
  const TimelineLayout near = layout_timeline(m, effective_folds(m, user, true, close, close * 1200), kViewH, kTextH);
  auto lanes_shown = [](const TimelineLayout& l) {
    std::size_t n = 0;
    for (const TimelineRow& r : l.rows) n += r.kind == RowKind::Lane;
    return n;
  };
  EXPECT_LT(lanes_shown(far), 10u);
  EXPECT_EQ(lanes_shown(near), m.lanes().size()) << "every block's lane once the tasks can be seen";
  const TimelineLayout by_hand = layout_timeline(m, effective_folds(m, user, false, close, close * 1200), kViewH, kTextH);
  EXPECT_EQ(lanes_shown(by_hand), lanes_shown(far)) << "folded by hand: the zoom leaves the folds alone";
}

}  // namespace
}  // namespace gpulb::viewer
