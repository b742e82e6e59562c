#include "timeline_lanes.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "draw.hpp"
#include "heat_scale.hpp"
#include "labels.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;

ImU32 zone_colour(const LaneCtx& c, const Zone& z) {
  if (c.colour == ColourMode::ByKind) return kind_colour(z.kind);
  return duration_colour(static_cast<double>(z.end_ns - z.begin_ns), static_cast<double>(c.model.min_task_ns()),
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
  for (std::size_t i = first; i < last; ++i) c.xs.push_back(c.axis.x(static_cast<double>(m.time_ns(i))));
  const bool zoomed = c.axis.ns_per_px < 50.0;  // room for a text label per spawn
  const MarkerLayout layout = layout_markers(c.xs, c.right, [&](std::size_t i) {
    const std::string t = marker_text(shown(i), zoomed);
    return t.empty() ? -1.0f : ImGui::CalcTextSize(t.c_str()).x;
  }, [&](std::size_t i) { return marker_priority(m[first + i].kind); });
  for (std::size_t k = 0; k < layout.drawn.size(); ++k) {
    const Marker mk = shown(layout.drawn[k]);
    const float x = static_cast<float>(c.xs[layout.drawn[k]]);
    const trace::EventCategory category = trace::event_traits(mk.kind).category;
    switch (category) {
      case trace::EventCategory::Idle:
        c.dl->AddTriangleFilled(ImVec2(x - 3, y1), ImVec2(x + 3, y1), ImVec2(x, y1 - 5), colours::kFailed);
        break;
      case trace::EventCategory::Steal:
        c.dl->AddCircleFilled(ImVec2(x, y0 + 4), 3.0f, colours::kSteal);
        break;
      case trace::EventCategory::Spawn:
        c.dl->AddTriangleFilled(ImVec2(x - 3, y0), ImVec2(x + 3, y0), ImVec2(x, y0 + 5), colours::kSpawn);
        break;
      case trace::EventCategory::Host:
        c.dl->AddLine(ImVec2(x, y0 + 2), ImVec2(x, y1 - 2), colours::kHost, 2.0f);
        break;
      default:
        c.dl->AddLine(ImVec2(x, y0 + 3), ImVec2(x, y1 - 3), colours::kDimText);
        break;
    }
    if (layout.labelled[k]) {
      const bool host = category == trace::EventCategory::Host;
      c.dl->AddText(ImVec2(x + kMarkerLabelGapPx, y0 + (host ? 1.0f : -1.0f)), host ? colours::kHost : colours::kSpawn,
                    marker_text(mk, zoomed).c_str());
    }
  }
}

}  // namespace

void draw_lane(const LaneCtx& c, const Lane& lane, float y0, float y1) {
  // The worker's life as a thin line: gaps between zones on it are time it was not running a task.
  const float mid = (y0 + y1) * 0.5f;
  const float life0 = std::max(c.left, static_cast<float>(c.axis.x(static_cast<double>(lane.start_ns))));
  const float life1 = std::min(c.right, static_cast<float>(c.axis.x(static_cast<double>(lane.end_ns))));
  if (life1 > life0) c.dl->AddLine(ImVec2(life0, mid), ImVec2(life1, mid), colours::kGrid);

  c.runs.clear();
  lod_runs(lane.idle, c.axis, c.left, c.right, 1.0, c.runs);
  for (const DrawRun& r : c.runs) {
    c.dl->AddRectFilled(ImVec2(std::max(static_cast<float>(r.x0), c.left), y1 - 4),
                        ImVec2(std::min(static_cast<float>(r.x1) + 1, c.right), y1 - 1), colours::kIdle);
  }

  c.runs.clear();
  lod_runs(lane.zones, c.axis, c.left, c.right, kMinZonePx, c.runs);
  const float zy0 = y0 + 2, zy1 = y1 - 3;
  for (const DrawRun& r : c.runs) {
    const Zone z = lane.zones[r.first];
    const float x0 = std::max(static_cast<float>(r.x0), c.left - 1);
    const float x1 = std::min(std::max(static_cast<float>(r.x1), x0 + 1.0f), c.right + 1);
    if (r.count == 1) {
      const ImU32 col = zone_colour(c, z);
      c.dl->AddRectFilled(ImVec2(x0, zy0), ImVec2(x1, zy1), col);
      if (x1 - x0 > 6) c.dl->AddRect(ImVec2(x0, zy0), ImVec2(x1, zy1), scale_colour(col, 0.6f));
      if (x1 - x0 > 48 && zy1 - zy0 >= ImGui::GetTextLineHeight() - 2) {
        char t[24];
        std::snprintf(t, sizeof t, "#%u", z.id);
        c.dl->PushClipRect(ImVec2(x0, zy0), ImVec2(x1, zy1), true);
        c.dl->AddText(ImVec2(x0 + 4, zy0 + (zy1 - zy0 - ImGui::GetTextLineHeight()) * 0.5f), IM_COL32(20, 20, 25, 255), t);
        c.dl->PopClipRect();
      }
    } else {
      // Merged: the first zone's colour, darker, so dense stretches read as busy but not as one task.
      c.dl->AddRectFilled(ImVec2(x0, zy0 + 1), ImVec2(x1, zy1 - 1), scale_colour(zone_colour(c, z), 0.72f));
    }
  }
  draw_markers(c, lane, y0, y1);
}

// A folded group as a heat map (heat_scale.hpp): per 3 px column, the share of its lanes busy
// (grey to white) and idle (red). Neighbouring columns of one colour are drawn as one rectangle,
// so a steady stretch costs one quad, not hundreds.
void draw_heat_row(const LaneCtx& c, const StepSeries& busy, const StepSeries* idle, std::span<const std::uint64_t> steals,
                   std::size_t lanes, float y0, float y1) {
  if (busy.empty() || lanes == 0) return;
  constexpr float kCol = 3.0f;
  const int cols = static_cast<int>((c.right - c.left) / kCol);
  const double t0 = c.axis.time_at(c.left), col_ns = c.axis.ns_per_px * kCol;
  // Coarse means: the colour quantises them to kHeatLevels steps, coarser than their error.
  const auto busy_cols = busy.coarse_mean_columns(t0, col_ns, cols);
  const auto idle_cols = idle && !idle->empty() ? idle->coarse_mean_columns(t0, col_ns, cols) : std::vector<StepSeries::Column>{};
  const double n = static_cast<double>(lanes);
  auto levels = [&](int i) {
    const auto k = static_cast<std::size_t>(i);
    return std::pair{heat_level(busy_cols[k].mean / n), idle_cols.empty() ? 0 : heat_level(idle_cols[k].mean / n)};
  };
  for (int i = 0; i < cols;) {
    const auto level = levels(i);
    int j = i + 1;
    while (j < cols && levels(j) == level) ++j;
    if (level != std::pair{0, 0}) {
      const Rgb8 rgb = heat_colour(level.first / static_cast<double>(kHeatLevels), level.second / static_cast<double>(kHeatLevels));
      c.dl->AddRectFilled(ImVec2(c.left + kCol * static_cast<float>(i), y0), ImVec2(c.left + kCol * static_cast<float>(j), y1),
                          IM_COL32(rgb.r, rgb.g, rgb.b, 255));
    }
    i = j;
  }
  // Steals: a mark atop each column that holds any, the more opaque the more steals a worker.
  if (steals.empty()) return;
  const std::vector<std::uint32_t> counts = counts_per_column(steals, t0, col_ns, cols);
  const float mark_h = std::max(1.0f, (y1 - y0) * 0.35f);
  // Neighbouring columns of one opacity step share a quad.
  auto step = [&](int i) {
    const std::uint32_t k = counts[static_cast<std::size_t>(i)];
    return k == 0 ? 0 : 1 + std::min(3, static_cast<int>(4 * k / std::max<std::size_t>(lanes, 1)));
  };
  for (int i = 0; i < cols;) {
    const int st = step(i);
    int j = i + 1;
    while (j < cols && step(j) == st) ++j;
    if (st > 0) {
      c.dl->AddRectFilled(ImVec2(c.left + kCol * static_cast<float>(i), y0), ImVec2(c.left + kCol * static_cast<float>(j), y0 + mark_h),
                          IM_COL32(255, 200, 60, 110 + 36 * st));
    }
    i = j;
  }
}

}  // namespace gpulb::viewer
