#include "timeline_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "draw.hpp"
#include "heat_scale.hpp"
#include "labels.hpp"
#include "parallel.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;

Rgb8 zone_colour(const LaneCtx& c, const Zone& z) {
  if (c.colour == ColourMode::ByKind) return kind_colour(z.kind);
  return duration_colour(static_cast<double>(z.end_ns - z.begin_ns),
                         static_cast<double>(c.model.min_task_ns()),
                         static_cast<double>(c.model.max_task_ns()));
}

// Markers in view, thinned and labelled by layout_markers (labels.hpp): a label shows only where
// it ends before the next marker's line.
void draw_markers(const LaneCtx& c, const Lane& lane, float y0, float y1) {
  const MarkerList& m = lane.markers;
  const double t0 = c.axis.time_at(c.left), t1 = c.axis.time_at(c.right);
  const std::size_t first = m.first_at_or_after(t0), last = m.first_after(t1);
  auto shown = [&](std::size_t i) { return m[first + i]; };
  c.xs.clear();
  for (std::size_t i = first; i < last; ++i)
    c.xs.push_back(c.axis.x(static_cast<double>(m.time_ns(i))));
  const bool zoomed = c.axis.ns_per_px < 50.0;  // room for a text label per spawn
  const MarkerLayout layout = layout_markers(
      c.xs, c.right,
      [&](std::size_t i) {
        const std::string t = marker_text(shown(i), zoomed);
        return t.empty() ? -1.0f : ImGui::CalcTextSize(t.c_str()).x;
      },
      [&](std::size_t i) { return marker_priority(m[first + i].kind); });
  for (std::size_t k = 0; k < layout.drawn.size(); ++k) {
    const Marker mk = shown(layout.drawn[k]);
    const float x = static_cast<float>(c.xs[layout.drawn[k]]);
    const trace::EventCategory category = trace::event_traits(mk.kind).category;
    switch (category) {
      case trace::EventCategory::Idle:
        c.dl->AddTriangleFilled(ImVec2(x - 3, y1), ImVec2(x + 3, y1), ImVec2(x, y1 - 5),
                                colours::kIdle);
        break;
      case trace::EventCategory::Steal:
        c.dl->AddCircleFilled(ImVec2(x, y0 + 4), 3.0f, colours::kSteal);
        break;
      case trace::EventCategory::Spawn:
        c.dl->AddTriangleFilled(ImVec2(x - 3, y0), ImVec2(x + 3, y0), ImVec2(x, y0 + 5),
                                colours::kSpawn);
        break;
      case trace::EventCategory::Host:
        c.dl->AddLine(ImVec2(x, y0 + 2), ImVec2(x, y1 - 2), colours::kHost, 2.0f);
        break;
      default: c.dl->AddLine(ImVec2(x, y0 + 3), ImVec2(x, y1 - 3), colours::kDimText); break;
    }
    if (layout.labelled[k]) {
      const bool host = category == trace::EventCategory::Host;
      c.dl->AddText(ImVec2(x + kMarkerLabelGapPx, y0 + (host ? 1.0f : -1.0f)),
                    host ? colours::kHost : colours::kSpawn, marker_text(mk, zoomed).c_str());
    }
  }
}

}  // namespace

void draw_lane(const LaneCtx& c, const Lane& lane, float y0, float y1) {
  // The worker's life as a thin line: gaps between zones on it are time it was not running a task.
  const float mid = (y0 + y1) * 0.5f;
  const float life0 =
      std::max(c.left, static_cast<float>(c.axis.x(static_cast<double>(lane.start_ns))));
  const float life1 =
      std::min(c.right, static_cast<float>(c.axis.x(static_cast<double>(lane.end_ns))));
  if (life1 > life0) c.dl->AddLine(ImVec2(life0, mid), ImVec2(life1, mid), colours::kGrid);

  c.runs.clear();
  lod_runs(lane.idle, c.axis, c.left, c.right, 1.0, c.runs);
  for (const DrawRun& r : c.runs) {
    c.dl->AddRectFilled(ImVec2(std::max(static_cast<float>(r.x0), c.left), y1 - 4),
                        ImVec2(std::min(static_cast<float>(r.x1) + 1, c.right), y1 - 1),
                        colours::kIdle);
  }

  c.runs.clear();
  lod_runs(lane.zones, c.axis, c.left, c.right, kMinZonePx, c.runs);
  const float zy0 = y0 + 2, zy1 = y1 - 3;
  for (const DrawRun& r : c.runs) {
    const Zone z = lane.zones[r.first];
    const float x0 = std::max(static_cast<float>(r.x0), c.left - 1);
    const float x1 = std::min(std::max(static_cast<float>(r.x1), x0 + 1.0f), c.right + 1);
    if (r.count == 1) {
      const Rgb8 rgb = zone_colour(c, z);
      const ImU32 col = to_imgui(rgb);
      c.dl->AddRectFilled(ImVec2(x0, zy0), ImVec2(x1, zy1), col);
      if (x1 - x0 > 6) c.dl->AddRect(ImVec2(x0, zy0), ImVec2(x1, zy1), scale_colour(col, 0.6f));
      if (x1 - x0 > 48 && zy1 - zy0 >= ImGui::GetTextLineHeight() - 2) {
        char t[24];
        std::snprintf(t, sizeof t, "#%u", z.id);
        c.dl->PushClipRect(ImVec2(x0, zy0), ImVec2(x1, zy1), true);
        c.dl->AddText(ImVec2(x0 + 4, zy0 + (zy1 - zy0 - ImGui::GetTextLineHeight()) * 0.5f),
                      to_imgui(text_on(rgb)), t);
        c.dl->PopClipRect();
      }
    } else {
      // Merged: the first zone's colour, darker, so dense stretches read as busy but not as one task.
      c.dl->AddRectFilled(ImVec2(x0, zy0 + 1), ImVec2(x1, zy1 - 1),
                          scale_colour(to_imgui(zone_colour(c, z)), 0.72f));
    }
  }
  draw_markers(c, lane, y0, y1);
}

HeatColumns heat_columns(const LaneCtx& c) {
  constexpr double kCol = 3.0;
  HeatColumns h;
  h.origin_ns = static_cast<double>(c.model.begin_ns());
  h.col_ns = c.axis.ns_per_px * kCol;
  if (!(h.col_ns > 0)) return h;
  h.first =
      static_cast<std::int64_t>(std::floor((c.axis.time_at(c.left) - h.origin_ns) / h.col_ns));
  const double t0 = h.origin_ns + static_cast<double>(h.first) * h.col_ns;
  h.count = std::max(0, static_cast<int>(std::ceil((c.axis.time_at(c.right) - t0) / h.col_ns)));
  return h;
}

// While a zoom is in progress (the column width changed since the last frame), the rows are made
// on a grid of 6 px columns: half the columns, each spanning twice the points, so that most take
// the series' O(1) coarse means (StepSeries::coarse_mean_columns, within 1/16 of the range). The
// first frame at rest draws them at 3 px again.
static HeatColumns while_zooming(const HeatColumns& view) {
  HeatColumns h = view;
  h.col_ns = view.col_ns * 2;
  h.first = view.first >= 0 ? view.first / 2 : -((1 - view.first) / 2);  // floor(first / 2)
  h.count = static_cast<int>((view.first + view.count - 2 * h.first + 1) / 2);
  return h;
}

void prepare_heat_rows(const LaneCtx& c, std::span<const std::pair<std::uint32_t, int>> groups,
                       HeatRowCache& cache) {
  const HeatColumns view = heat_columns(c);
  const bool zooming =
      cache.model == &c.model && cache.view_col_ns > 0 && cache.view_col_ns != view.col_ns;
  cache.view_col_ns = view.col_ns;
  const HeatColumns cols = zooming ? while_zooming(view) : view;
  const bool same_columns = cache.model == &c.model && cache.origin_ns == cols.origin_ns &&
                            cache.col_ns == cols.col_ns && cache.first == cols.first &&
                            cache.columns == cols.count;
  if (cache.model != &c.model) cache.rows.clear();
  cache.model = &c.model;
  cache.origin_ns = cols.origin_ns;
  cache.col_ns = cols.col_ns;
  cache.first = cols.first;
  cache.columns = cols.count;
  struct Todo {
    const LaneGroup* group;
    HeatRow* row;
  };
  std::vector<Todo> todo;
  HeatRowCache::Rows rows;
  for (const auto& [device, group] : groups) {
    if (device >= c.model.devices().size() || group < 0 ||
        static_cast<std::size_t>(group) >= c.model.devices()[device].groups.size())
      continue;
    const LaneGroup& g = c.model.devices()[device].groups[static_cast<std::size_t>(group)];
    if (!g.busy) continue;
    auto old = cache.rows.find({device, group});
    HeatRow& row = rows[{device, group}];
    if (old != cache.rows.end())
      row = std::move(old->second);  // reused as it is, or as a pan's source
    if (old == cache.rows.end() || !same_columns) todo.push_back({&g, &row});
  }
  auto make = [&](std::size_t i) {
    const LaneGroup& g = *todo[i].group;
    HeatRow& row = *todo[i].row;
    row = heat_row_on_grid(*g.busy, g.idle.get(), g.steals, g.lanes.size(), cols.origin_ns,
                           cols.col_ns, cols.first, cols.count, row.busy.empty() ? nullptr : &row);
  };
  // Each row's means are its own series' work: where every row is computed anew (a zoom, the
  // first frame) the rows (264 on a 2 x H200 trace) are split over the cores, which wait for the
  // frame's draw lists meanwhile. A pan's few columns a row are not worth waking threads for (on a
  // loaded machine a thread can wait milliseconds for a core).
  const bool pan = std::all_of(todo.begin(), todo.end(), [&](const Todo& t) {
    return !t.row->busy.empty() && t.row->col_ns == cols.col_ns &&
           t.row->origin_ns == cols.origin_ns;
  });
  if (pan) {
    for (std::size_t i = 0; i < todo.size(); ++i) make(i);
  } else {
    parallel_for(todo.size(), make);
  }
  cache.rows = std::move(rows);
}

// A folded group as a heat map (heat_scale.hpp): per 3 px column, the share of its lanes busy
// (grey to white) and idle (red). Neighbouring columns of one colour are drawn as one rectangle,
// so a steady stretch costs one quad, not hundreds.
void draw_heat_row(const LaneCtx& c, const HeatRow& row, float y0, float y1) {
  const float kCol = static_cast<float>(row.col_ns / c.axis.ns_per_px);  // 3 px
  const float x0 = static_cast<float>(c.axis.x(row.t0_ns));
  // Column i spans [x(i), x(i + 1)), clipped to the time area.
  auto x = [&](int i) { return std::clamp(x0 + kCol * static_cast<float>(i), c.left, c.right); };
  // Every (busy, idle) level pair's colour, made once, not per quad (it showed in profiles of still frames).
  static const std::vector<ImU32> heat_colours = [] {
    std::vector<ImU32> table;
    for (int b = 0; b <= kHeatLevels; ++b) {
      for (int i = 0; i <= kHeatLevels; ++i) {
        const Rgb8 rgb =
            heat_colour(b / static_cast<double>(kHeatLevels), i / static_cast<double>(kHeatLevels));
        table.push_back(IM_COL32(rgb.r, rgb.g, rgb.b, 255));
      }
    }
    return table;
  }();
  const int cols = static_cast<int>(row.busy.size());
  auto levels = [&](int i) {
    const auto k = static_cast<std::size_t>(i);
    return std::pair<int, int>{row.busy[k], row.idle.empty() ? 0 : row.idle[k]};
  };
  for (int i = 0; i < cols;) {
    const auto level = levels(i);
    int j = i + 1;
    while (j < cols && levels(j) == level) ++j;
    if (level != std::pair{0, 0}) {
      c.dl->AddRectFilled(
          ImVec2(x(i), y0), ImVec2(x(j), y1),
          heat_colours[static_cast<std::size_t>(level.first * (kHeatLevels + 1) + level.second)]);
    }
    i = j;
  }
  // Steals: a mark atop each column that holds any, the taller the more steals a worker;
  // neighbouring columns of one step share a quad.
  for (int i = 0; i < cols;) {
    const int st = row.steal[static_cast<std::size_t>(i)];
    int j = i + 1;
    while (j < cols && row.steal[static_cast<std::size_t>(j)] == st) ++j;
    if (st > 0) {
      const StealMark mark = steal_mark(st, y1 - y0);
      c.dl->AddRectFilled(ImVec2(x(i), y0), ImVec2(x(j), y0 + mark.height), to_imgui(mark.colour));
    }
    i = j;
  }
}

void draw_heat_row(const LaneCtx& c, const StepSeries& busy, const StepSeries* idle,
                   std::span<const std::uint64_t> steals, std::size_t lanes, float y0, float y1) {
  if (busy.empty() || lanes == 0) return;
  const HeatColumns cols = heat_columns(c);
  draw_heat_row(c,
                heat_row_on_grid(busy, idle, steals, lanes, cols.origin_ns, cols.col_ns, cols.first,
                                 cols.count),
                y0, y1);
}

}  // namespace gpulb::viewer
