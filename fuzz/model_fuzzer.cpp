// Fuzz target (c): bytes -> decode_trace -> the viewer's TraceModel, queried as the views do.
// Oracles: the model's documented invariants (zones sorted and apart, series sorted in time, busy
// counts within the workers, replay counts within the tasks).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fuzz_input.hpp"
#include "counter_tracks.hpp"
#include "findings.hpp"
#include "heat_scale.hpp"
#include "histogram.hpp"
#include "labels.hpp"
#include "occupancy.hpp"
#include "rank_transfers.hpp"
#include "range_stats.hpp"
#include "replay.hpp"
#include "summary_rows.hpp"
#include "task_details.hpp"
#include "timeline_layout.hpp"
#include "trace_model.hpp"

namespace {

// Past 2^53 ns a double cannot name every nanosecond: static_cast<double>(t) + 1 can be before t.
double first_double_at_or_after(std::uint64_t t) {
  const double d = static_cast<double>(t);
  if (d >= 0x1p64 || static_cast<std::uint64_t>(d) >= t) return d;
  return std::nextafter(d, HUGE_VAL);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulb;
  std::optional<trace::Trace> t = fuzz::decode(data, size, std::uint64_t{4} << 20);
  if (!t) return 0;
  const viewer::TraceModel model(std::make_shared<const trace::Trace>(std::move(*t)));

  GPULB_FUZZ_CHECK(model.begin_ns() <= model.end_ns());
  GPULB_FUZZ_CHECK(model.lanes().size() == model.header().tracks.size());
  std::uint64_t zones = 0;
  std::vector<double> durations;
  for (const viewer::Lane& lane : model.lanes()) {
    std::uint64_t busy = 0;
    for (std::size_t i = 0; i < lane.zones.size(); ++i) {
      GPULB_FUZZ_CHECK(lane.zones.busy_ns_before(i) == busy);
      const viewer::Zone z = lane.zones[i];
      busy += z.end_ns - z.begin_ns;
      GPULB_FUZZ_CHECK(z.begin_ns <= z.end_ns);
      GPULB_FUZZ_CHECK(i == 0 || lane.zones[i - 1].end_ns <= z.begin_ns);
      durations.push_back(static_cast<double>(z.end_ns - z.begin_ns));
    }
    GPULB_FUZZ_CHECK(lane.zones.busy_ns() == busy);
    for (std::size_t i = 1; i < lane.markers.size(); ++i)
      GPULB_FUZZ_CHECK(lane.markers[i - 1].time_ns <= lane.markers[i].time_ns);
    zones += lane.zones.size();
    if (lane.role == trace::TrackRole::Worker)
      GPULB_FUZZ_CHECK(model.worker_lane(lane.device, lane.worker) >= 0);
  }
  GPULB_FUZZ_CHECK(zones == model.task_count());
  for (const std::uint16_t k : model.kinds()) GPULB_FUZZ_CHECK(k <= model.max_kind());

  // What the timeline and occupancy views ask per frame: 64 columns over the whole run.
  const double t0 = static_cast<double>(model.begin_ns());
  const double span = std::max(1.0, static_cast<double>(model.end_ns() - model.begin_ns()));
  auto sorted_in_time = [](const viewer::StepSeries& series) {
    const auto p = series.points();
    for (std::size_t i = 1; i < p.size(); ++i) {
      if (p[i - 1].time_ns >= p[i].time_ns) return false;
    }
    return true;
  };
  for (const viewer::DeviceGroup& dev : model.devices()) {
    GPULB_FUZZ_CHECK(dev.groups.empty() == !dev.busy);
    for (const viewer::LaneGroup& g : dev.groups)
      GPULB_FUZZ_CHECK(g.busy && sorted_in_time(*g.busy));
    if (!dev.busy) continue;
    GPULB_FUZZ_CHECK(sorted_in_time(*dev.busy));
    GPULB_FUZZ_CHECK(dev.busy->min_value() >= 0);
    GPULB_FUZZ_CHECK(dev.busy->max_value() <= static_cast<std::int64_t>(dev.workers));
    for (const viewer::StepSeries::Column& c : dev.busy->columns(t0, span / 64, 64)) {
      GPULB_FUZZ_CHECK(c.min <= c.max);
    }
  }
  for (const viewer::QueueSeries& q : model.queues()) {
    GPULB_FUZZ_CHECK(sorted_in_time(q.level));
    (void)q.level.columns(t0, span / 64, 64);
    (void)q.level.integral(t0, t0 + span);
  }

  // The replay playhead at the start, the middle and the end.
  for (const double at : {t0, t0 + span / 2, t0 + span}) {
    const viewer::ReplayState r = viewer::replay_state_at(model, at);
    GPULB_FUZZ_CHECK(r.tasks_done <= model.task_count());
    GPULB_FUZZ_CHECK(r.running <= model.lanes().size());
  }

  // The histogram views.
  const viewer::Histogram h = viewer::log_histogram(durations, 32);
  std::uint64_t counted = 0;
  for (const std::uint64_t c : h.counts) counted += c;
  GPULB_FUZZ_CHECK(counted == durations.size());
  std::vector<double> per_worker;
  for (const trace::WorkerStats& w : model.stats().per_worker)
    per_worker.push_back(static_cast<double>(w.tasks));
  (void)viewer::linear_histogram(per_worker, 16);

  // The timeline's layout: rows top to bottom, the compact one within the view where it can be.
  const viewer::TextWidth width7 = [](const std::string& s) {
    return 7.0f * static_cast<float>(s.size());
  };
  for (const bool unfold : {false, true}) {
    const viewer::TimelineLayout l =
        viewer::layout_timeline(model, viewer::default_folds(model, unfold), 900.0f, 13.0f);
    float y = 0.0f;
    for (const viewer::TimelineRow& r : l.rows) {
      GPULB_FUZZ_CHECK(r.y >= y - 1e-3f && r.h > 0.0f);
      y = r.y + r.h;
    }
    GPULB_FUZZ_CHECK(l.lane_center.size() == model.lanes().size());
    for (const viewer::TimelineRow& r : l.rows)
      GPULB_FUZZ_CHECK(r.rank < static_cast<int>(model.ranks().size()));
  }
  // Ranks: every device in one rank group; transfers between ranks paired, in view, described.
  std::size_t ranked = 0;
  for (const viewer::RankGroup& g : model.ranks()) ranked += g.devices.size();
  GPULB_FUZZ_CHECK(model.ranks().empty() || ranked == model.devices().size());
  const std::vector<viewer::RankTransfer> transfers = viewer::rank_transfers(model);
  const viewer::RankTransfersInView in_view =
      viewer::rank_transfers_in_view(transfers, t0, t0 + span + 1);
  GPULB_FUZZ_CHECK(in_view.shown.size() <= viewer::kMaxRankArrows);
  for (const std::size_t i : in_view.shown) {
    GPULB_FUZZ_CHECK(i < transfers.size() && transfers[i].paired);
    (void)viewer::rank_transfer_lines(transfers[i], t0);
  }
  (void)viewer::label_column_width(model, width7);
  for (const viewer::DeviceGroup& dev : model.devices()) {
    for (const viewer::LaneGroup& g : dev.groups) {
      GPULB_FUZZ_CHECK(std::is_sorted(g.steals.begin(), g.steals.end()));
      GPULB_FUZZ_CHECK(g.idle && sorted_in_time(*g.idle));
      const auto counts = viewer::counts_per_column(g.steals, t0, span / 64, 64);
      std::uint64_t n = 0;
      for (const std::uint32_t c : counts) n += c;
      GPULB_FUZZ_CHECK(n <= g.steals.size());
      // The folded row's picture, whole and after a pan that reuses it.
      const viewer::HeatRow whole = viewer::heat_row_on_grid(*g.busy, g.idle.get(), g.steals,
                                                             g.lanes.size(), t0, span / 64, 0, 64);
      const viewer::HeatRow panned = viewer::heat_row_on_grid(
          *g.busy, g.idle.get(), g.steals, g.lanes.size(), t0, span / 64, 5, 64, &whole);
      GPULB_FUZZ_CHECK(whole.busy.size() == 64 && panned.busy.size() == 64 &&
                       panned.steal.size() == 64);
    }
  }
  for (const viewer::QueueSeries& q : model.queues()) {
    const viewer::GridColumns whole = viewer::grid_columns(q.level, t0, span / 64, -3, 64);
    GPULB_FUZZ_CHECK(viewer::grid_columns(q.level, t0, span / 64, 7, 64, &whole).columns.size() ==
                     64);
  }

  // The selection's statistics over the whole trace, and a task's details (the first of each lane).
  const viewer::RangeStats rs = viewer::range_stats(model, t0, t0 + span + 1);
  GPULB_FUZZ_CHECK(rs.all.tasks <= model.task_count());
  GPULB_FUZZ_CHECK(rs.all.busy_ns <= rs.all.alive_ns + 1.0);
  (void)viewer::range_stats_table(rs, t0);
  for (std::uint32_t l = 0; l < model.lanes().size() && l < 256; ++l) {
    if (model.lanes()[l].zones.empty()) continue;
    const viewer::TaskDetails d = viewer::task_details(model, {l, 0});
    GPULB_FUZZ_CHECK(d.begin_ns <= d.end_ns && !d.source.empty());
  }
  const auto occupancy = viewer::occupancy_plots(model);
  GPULB_FUZZ_CHECK(viewer::counter_layout(occupancy.plots.size(), 900.0f).height <= 900.0f);
  for (const viewer::SummaryRow& r : viewer::summary_rows(model, true))
    (void)viewer::wrapped_lines(r.value, 300.0f, width7);
  if (!model.lanes().empty()) (void)viewer::parse_task_query(model.lanes().front().label);
  // Compare's search over two runs (here the trace twice): each match in both, A's first.
  const auto found = viewer::find_tasks_in_runs(
      model, &model, viewer::TaskQuery{std::nullopt, std::uint16_t{0}}, 64);
  GPULB_FUZZ_CHECK(found.size() % 2 == 0 && (found.empty() || found.front().run == 0));
  (void)viewer::found_note(found, 0, true, false);
  // Findings: every one names a range inside the trace's events, and the figures of a lesson.
  for (const viewer::Finding& f : viewer::compute_findings(model)) {
    GPULB_FUZZ_CHECK(f.begin_ns < f.end_ns && !f.text.empty());
    GPULB_FUZZ_CHECK(f.begin_ns >= static_cast<double>(model.begin_ns()) - 0.02 * (span + 1.0));
  }
  for (const viewer::CompareFact& r : viewer::compare_facts(model, model))
    GPULB_FUZZ_CHECK(r.a == r.b);
  // A run is one input with itself; a queue's level is 0 once its kernel ended.
  GPULB_FUZZ_CHECK(viewer::compare_inputs(model.header().meta, model.header().meta).same);
  for (const viewer::QueueSeries& q : model.queues())
    GPULB_FUZZ_CHECK(q.end_ns == 0 || q.level.value_at(first_double_at_or_after(q.end_ns)) == 0);
  return 0;
}
