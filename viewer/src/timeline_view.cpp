// The timeline: one row per worker lane, grouped device -> SM -> lane, tasks as zones. Where the
// rows go is the model's (timeline_layout.hpp); what is inside a row is timeline_lanes.cpp's;
// keys, search, marks and the picked task are timeline_tools.cpp's; counter tracks counter_strip.cpp's.
//
// [SECTION] Layout: which rows exist and where they are
// [SECTION] Overlays: ruler, steal arrows, playhead, selection
// [SECTION] Interaction: zoom at the cursor, pan, select, collapse
// [SECTION] One frame: toolbar, rows, overlays
// [SECTION] The view
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "counter_strip.hpp"
#include "draw.hpp"
#include "heat_scale.hpp"
#include "labels.hpp"
#include "lod.hpp"
#include "rank_transfers.hpp"
#include "run_span.hpp"
#include "steal_arrows.hpp"
#include "ticks.hpp"
#include "time_format.hpp"
#include "timeline_lanes.hpp"
#include "timeline_layout.hpp"
#include "timeline_tools.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;

constexpr float kRulerHeight = 24.0f;

// -------------------------------------------------------------------------------------------------
// [SECTION] Layout: which rows exist and where they are
// -------------------------------------------------------------------------------------------------

using Row = TimelineRow;
using Layout = TimelineLayout;

// The folds in use: the user's, or every group open where the zoom shows tasks (auto_fold).
Folds folds_in_use(const TraceModel& model, TimelineState& ts, const TimeAxis& axis, float width) {
  if (!ts.defaults_set) {
    ts.collapsed = default_folds(model, ts.unfold);
    ts.defaults_set = true;
  }
  if (!ts.auto_fold) return ts.collapsed;
  return effective_folds(model, ts.collapsed, true, axis.ns_per_px,
                         axis.ns_per_px * static_cast<double>(width));
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Overlays: ruler, steal arrows, playhead, selection
// -------------------------------------------------------------------------------------------------

// Ticks and labels come from the model (ticks.hpp): labels with the digits the step needs, the
// last one kept inside the ruler. `note` (the selection's length) goes at the right end, and the
// tick labels it would touch are left out.
void draw_ruler(ImDrawList* dl, const TimeAxis& axis, double origin_ns, const char* origin_label,
                float label_w, float left, float right, float y0, float grid_bottom,
                const std::string& note) {
  dl->AddRectFilled(ImVec2(left - label_w, y0), ImVec2(right, y0 + kRulerHeight), colours::kHeader);
  std::vector<Tick> ticks = time_ticks(axis, origin_ns, left, right, 110.0, text_width);
  const float note_x = right - text_width(note) - 6;
  if (!note.empty()) clear_labels_under(ticks, note_x, right, text_width);
  for (const Tick& t : ticks) {
    const float x = static_cast<float>(axis.x(t.at));
    dl->AddLine(ImVec2(x, y0 + kRulerHeight - 6), ImVec2(x, y0 + kRulerHeight), colours::kDimText);
    dl->AddLine(ImVec2(x, y0 + kRulerHeight), ImVec2(x, grid_bottom), IM_COL32(60, 65, 78, 90));
    if (!t.label.empty())
      dl->AddText(ImVec2(static_cast<float>(t.x), y0 + 3), colours::kText, t.label.c_str());
  }
  dl->AddText(ImVec2(left - label_w + 6, y0 + 3), colours::kDimText, origin_label);
  if (!note.empty()) dl->AddText(ImVec2(note_x, y0 + 3), colours::kChosen, note.c_str());
}

struct Arrow {
  float x, from_y, to_y;
  bool across = false;  // the victim is on another GPU: drawn thicker, in its own colour
};

void draw_arrow(ImDrawList* dl, const Arrow& a) {
  const float dir = a.to_y > a.from_y ? 1.0f : -1.0f;
  const ImU32 colour = a.across ? colours::kStealAcross : colours::kSteal;
  const ImVec2 p0(a.x - 14, a.from_y), p1(a.x, a.to_y - 5 * dir);
  dl->AddBezierCubic(p0, ImVec2(p0.x - 10, (p0.y + p1.y) * 0.5f),
                     ImVec2(p1.x - 10, (p0.y + p1.y) * 0.5f), p1, colour, a.across ? 2.5f : 1.5f);
  dl->AddTriangleFilled(ImVec2(a.x - 4, a.to_y - 7 * dir), ImVec2(a.x + 4, a.to_y - 7 * dir),
                        ImVec2(a.x, a.to_y), colour);
  dl->AddCircleFilled(p0, 2.5f, colour);
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Interaction: zoom at the cursor, pan, select, collapse
// -------------------------------------------------------------------------------------------------

// shift_ns: how much later this panel's clock reads A's (Compare's B panel): a selection is kept on A's clock.
void handle_input(const TraceModel& model, ViewState& vs, TimeAxis& axis, TimelineState& ts,
                  float left, float right, float max_scroll, double shift_ns) {
  ImGuiIO& io = ImGui::GetIO();
  if (!ImGui::IsWindowHovered()) return;
  const float mx = io.MousePos.x;
  const bool in_time = mx >= left && mx < right;
  if (io.MouseWheel != 0.0f && in_time) {
    if (io.KeyCtrl) {
      ts.scroll_y = std::clamp(ts.scroll_y - io.MouseWheel * 60.0f, 0.0f, max_scroll);
    } else {
      axis.zoom_at(mx, std::pow(1.25, io.MouseWheel));
    }
  }
  const bool selecting = io.KeyShift || ImGui::IsMouseDown(ImGuiMouseButton_Right);
  if (in_time && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    const TimeSpan fit = fit_span(model);
    axis = TimeAxis::fit(fit.begin_ns, fit.end_ns, left, right - left);
  }
  static double select_from = 0.0;
  if (in_time && (ImGui::IsMouseClicked(ImGuiMouseButton_Right) ||
                  (io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left)))) {
    select_from = axis.time_at(mx) - shift_ns;
  }
  if (selecting && (ImGui::IsMouseDragging(ImGuiMouseButton_Right) ||
                    ImGui::IsMouseDragging(ImGuiMouseButton_Left))) {
    const double t = axis.time_at(mx) - shift_ns;
    vs.selection = Selection{std::min(select_from, t), std::max(select_from, t)};
  } else if (ImGui::IsMouseDragging(ImGuiMouseButton_Left) && in_time) {
    axis.pan(io.MouseDelta.x);
    ts.scroll_y = std::clamp(ts.scroll_y - io.MouseDelta.y, 0.0f, max_scroll);
  }
}

// -------------------------------------------------------------------------------------------------
// Hover tooltips
// -------------------------------------------------------------------------------------------------

void lane_tooltip(const TraceModel& model, const Lane& lane, const TimeAxis& axis, float mx) {
  const double t = axis.time_at(mx), tol = axis.ns_per_px * 2;
  // Host events come before the run's start: measured as doubles, they read as negative times.
  const double origin = run_span(model).begin_ns;
  // To the pixel: 3 significant digits read "1.1 ms" for every task of a narrow window.
  const double resolution = tick_step(axis.ns_per_px, 1.0);
  auto since_start = [origin, resolution](std::uint64_t ns) {
    return format_time_at_step(static_cast<double>(ns) - origin, resolution);
  };
  const ZoneList& zones = lane.zones;
  const std::size_t i = first_ending_at_or_after(zones, t - tol);
  const std::string where =
      lane.sm == trace::Track::kNoSm ? lane.label : lane.label + ", SM " + std::to_string(lane.sm);
  if (i < zones.size() && static_cast<double>(zones[i].begin_ns) <= t + tol) {
    // Zones this close together are drawn merged: say so rather than naming one at random.
    const std::size_t j = first_beginning_at_or_after(zones, i, t + tol);
    ImGui::BeginTooltip();
    if (j - i > 1) {
      ImGui::Text("%zu tasks here (zoom in to see them apart)", j - i);
      ImGui::Text("%s .. %s", since_start(zones[i].begin_ns).c_str(),
                  since_start(zones[j - 1].end_ns).c_str());
    } else {
      const Zone z = zones[i];
      ImGui::Text("task %u", z.id);
      ImGui::Separator();
      ImGui::Text("kind      %u", z.kind);
      ImGui::Text("start     %s", since_start(z.begin_ns).c_str());
      ImGui::Text("duration  %s", format_time(static_cast<double>(z.end_ns - z.begin_ns)).c_str());
    }
    ImGui::Text("worker    %s", where.c_str());
    ImGui::EndTooltip();
    return;
  }
  const IntervalList& idle = lane.idle;
  const std::size_t k = first_ending_at_or_after(idle, t);
  if (k < idle.size() && static_cast<double>(idle[k].begin_ns) <= t) {
    ImGui::BeginTooltip();
    ImGui::Text("idle for %s (dequeues failed)",
                format_time(static_cast<double>(idle[k].end_ns - idle[k].begin_ns)).c_str());
    ImGui::Text("worker    %s", where.c_str());
    ImGui::EndTooltip();
    return;
  }
  const auto& m = lane.markers;
  auto it = std::partition_point(m.begin(), m.end(), [&](const Marker& q) {
    return static_cast<double>(q.time_ns) < t - tol;
  });
  if (it != m.end() && static_cast<double>(it->time_ns) <= t + tol) {
    ImGui::BeginTooltip();
    ImGui::Text("%s  arg %u  aux %u", trace::event_kind_name(it->kind), it->arg, it->aux);
    if (it->kind == EventKind::Steal || it->kind == EventKind::StealFailed) {
      const std::uint32_t device = trace::steal_victim_device(it->aux, lane.device);
      if (device == lane.device)
        ImGui::Text("%s worker %u", it->kind == EventKind::Steal ? "stole from" : "tried", it->arg);
      else
        ImGui::Text("%s worker %u of device %u (across GPUs)",
                    it->kind == EventKind::Steal ? "stole from" : "tried", it->arg, device);
    }
    if (it->kind == EventKind::RankSteal)
      ImGui::Text("%u tasks arrived from rank %u", it->aux, it->arg);
    if (it->kind == EventKind::RankLend) ImGui::Text("%u tasks lent to rank %u", it->aux, it->arg);
    ImGui::Text("at %s on %s", since_start(it->time_ns).c_str(), where.c_str());
    ImGui::EndTooltip();
  }
}

// -------------------------------------------------------------------------------------------------
// [SECTION] One frame: toolbar, rows, overlays
// -------------------------------------------------------------------------------------------------

// Fits are requested by other views and the menu (they do not know the time area's width), and
// served here, where that width is known (fit_span: the run, as the summary's makespan counts it).
void apply_pending_fit(const TraceModel& model, ViewState& vs, TimeAxis& axis, float left,
                       float right) {
  if (vs.fit_pending) {
    const TimeSpan fit = fit_span(model);
    axis = TimeAxis::fit(fit.begin_ns, fit.end_ns, left, right - left);
    vs.fit_pending = false;
  }
  if (vs.pending_range) {
    axis = TimeAxis::fit(vs.pending_range->begin_ns, vs.pending_range->end_ns, left, right - left);
    vs.pending_range.reset();
  }
}

// Where this frame's lanes are on screen; every piece below draws into it.
struct Frame {
  const TraceModel& model;
  const TimeAxis& axis;
  ImDrawList* dl;
  float x0, width;    // the whole area, labels included
  float left, right;  // the time area
  float top, height;  // the visible lanes
  float y_base;       // where content y 0 is, after scrolling
  ViewState& vs;
  int run;  // clicks pick tasks of this run (0: trace A, 1: compare's B)
  // off while a rank arrow is hovered: its tooltip, not the lane's under it
  bool lane_tooltips = true;

  bool visible(float y0, float y1) const { return y1 >= top && y0 <= top + height; }
};

// A device or group header: its name (click to fold), and when folded, its heat map. Thin
// folded rows (the compact layout) carry a label only where the layout gave them one.
void draw_header_row(const Frame& f, const LaneCtx& ctx, const Row& row, float y0, float y1,
                     bool row_hovered) {
  const DeviceGroup& dev = f.model.devices()[row.device];
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool is_dev = row.kind == RowKind::Device;
  // thin rows touch: the heat map reads as one picture
  const float gap = row.h >= 6.0f ? 1.0f : 0.0f;
  // A thin row's label runs down over the unlabelled rows below it: they leave the label column
  // unpainted so as not to cover it.
  const bool thin = row.h < ImGui::GetTextLineHeight();
  f.dl->AddRectFilled(ImVec2(thin ? f.left : f.x0, y0), ImVec2(f.x0 + f.width, y1 - gap),
                      is_dev ? colours::kHeader : IM_COL32(40, 44, 53, 255));
  std::string label;
  std::size_t lanes = 0;
  const StepSeries* busy = nullptr;
  const StepSeries* idle = nullptr;
  if (is_dev) {
    label = std::string(row.folded ? "> " : "v ") + dev.label;
    lanes = dev.workers;
    busy = dev.busy.get();
  } else {
    const LaneGroup& g = dev.groups[static_cast<std::size_t>(row.group)];
    label = std::string(row.folded ? "  > " : "  v ") + g.label + "  (" +
            std::to_string(g.lanes.size()) + ")";
    lanes = g.lanes.size();
    busy = g.busy.get();
    idle = g.idle.get();
  }
  if (row.label) {
    const float text_h = ImGui::GetTextLineHeight();
    const float ty = row.h >= text_h ? y0 + (row.h - text_h) * 0.5f : y0;
    f.dl->PushClipRect(ImVec2(f.x0, ty),
                       ImVec2(is_dev ? f.right : f.left - 4, std::max(y1, ty + text_h)), true);
    const float indent = row.rank >= 0 && is_dev ? 14.0f : 6.0f;  // a device under its rank's row
    f.dl->AddText(ImVec2(f.x0 + indent, ty),
                  row.h >= text_h || is_dev ? colours::kText : colours::kDimText, label.c_str());
    f.dl->PopClipRect();
  }
  if (row.folded && busy && !is_dev) {
    // On whole pixels: the clip rectangle becomes a scissor cut to whole pixels, and rows 1.7 px
    // tall at fractional y lost a pixel each to it, striping the picture with the background.
    // Rounded alike, one row's bottom is the next one's top.
    const float hy0 = std::round(y0), hy1 = std::round(y1 - gap);
    f.dl->PushClipRect(ImVec2(f.left, hy0), ImVec2(f.right, hy1), true);
    const auto cached = ctx.heat ? ctx.heat->rows.find({row.device, row.group})
                                 : HeatRowCache::Rows::const_iterator{};
    if (ctx.heat && cached != ctx.heat->rows.end()) {
      draw_heat_row(ctx, cached->second, hy0, hy1);
    } else {
      draw_heat_row(ctx, *busy, idle, dev.groups[static_cast<std::size_t>(row.group)].steals, lanes,
                    hy0, hy1);
    }
    f.dl->PopClipRect();
  } else if (row.folded && busy) {
    draw_heat_row(ctx, *busy, nullptr, {}, lanes, y0 + 2, y1 - 2);
  }
  if (row_hovered && row.folded && mouse.x >= f.left && busy) {
    const double t = f.axis.time_at(mouse.x);
    ImGui::SetTooltip("%s: %lld of %zu workers busy here, %lld idle",
                      label.c_str() + (is_dev ? 2 : 4), static_cast<long long>(busy->value_at(t)),
                      lanes, static_cast<long long>(idle ? idle->value_at(t) : 0));
  }
}

// A rank of a distributed run (timeline_layout.hpp): a band across the view with its name and
// what it drove; its host lanes and devices follow. Click its name to fold it.
void draw_rank_row(const Frame& f, const Row& row, float y0, float y1) {
  const RankGroup& rank = f.model.ranks()[static_cast<std::size_t>(row.rank)];
  f.dl->AddRectFilled(ImVec2(f.x0, y0), ImVec2(f.x0 + f.width, y1 - 1), colours::kRankHeader);
  f.dl->AddRectFilled(ImVec2(f.x0, y0), ImVec2(f.x0 + 3, y1 - 1), colours::kRankTransfer);
  const std::string label = std::string(row.folded ? "> " : "v ") + rank.label;
  const float ty = y0 + (row.h - ImGui::GetTextLineHeight()) * 0.5f;
  f.dl->PushClipRect(ImVec2(f.x0, y0), ImVec2(f.right, y1), true);
  f.dl->AddText(ImVec2(f.x0 + 8, ty), colours::kText, label.c_str());
  f.dl->PopClipRect();
}

// A worker or host lane: striped background, its label (indented under headers), its zones.
void draw_lane_row(const Frame& f, const LaneCtx& ctx, const Row& row, int lane_index, float y0,
                   float y1, bool row_hovered) {
  const Lane& lane = f.model.lanes()[row.lane];
  const float mouse_x = ImGui::GetIO().MousePos.x;
  f.dl->AddRectFilled(ImVec2(f.x0, y0), ImVec2(f.x0 + f.width, y1),
                      lane_index % 2 ? colours::kLaneOdd : colours::kLaneEven);
  f.dl->PushClipRect(ImVec2(f.x0, y0), ImVec2(f.left - 4, y1), true);
  const float indent = lane_label_indent(f.model, lane);
  const std::string name = fit_text(lane.label, f.left - 4 - (f.x0 + indent), text_width);
  f.dl->AddText(ImVec2(f.x0 + indent, y0 + (row.h - ImGui::GetTextLineHeight()) * 0.5f),
                lane.role == trace::TrackRole::Host ? colours::kHost : colours::kDimText,
                name.c_str());
  f.dl->PopClipRect();
  f.dl->PushClipRect(ImVec2(f.left, y0), ImVec2(f.right, y1), true);
  draw_lane(ctx, lane, y0, y1);
  f.dl->PopClipRect();
  if (row_hovered && mouse_x >= f.left && !ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    if (f.lane_tooltips) lane_tooltip(f.model, lane, f.axis, mouse_x);
    // A click (a press and release without a drag, which pans) picks the task under it.
    const ImGuiIO& io = ImGui::GetIO();
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !io.KeyShift &&
        io.MouseDragMaxDistanceSqr[0] < 16.0f) {
      if (const auto hit = pick_task(f.model, f.run, row.lane, f.axis, mouse_x)) f.vs.picked = hit;
    }
  }
}

// Rows off screen are skipped, but still counted, so that a lane keeps its stripe while scrolling.
// A click on a device's or group's name folds or opens it (row_for_label_click: a thin row's
// label covers the rows below it).
void fold_on_click(const Frame& f, const Layout& layout, TimelineState& ts) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!ImGui::IsWindowHovered() || mouse.x >= f.left ||
      !ImGui::IsMouseClicked(ImGuiMouseButton_Left))
    return;
  const int i = row_for_label_click(layout, mouse.y - f.y_base, ImGui::GetTextLineHeight());
  if (i < 0) return;
  const Row& row = layout.rows[static_cast<std::size_t>(i)];
  if (row.kind == RowKind::Lane) return;
  if (ts.auto_fold) {  // a fold by hand: from now on the user's folds hold, starting from what shows
    ts.collapsed = effective_folds(f.model, ts.collapsed, true, f.axis.ns_per_px,
                                   f.axis.ns_per_px * (f.right - f.left));
    ts.auto_fold = false;
  }
  const std::uint64_t key =
      row.kind == RowKind::Rank
          ? rank_fold_key(f.model.ranks()[static_cast<std::size_t>(row.rank)].rank)
      : row.kind == RowKind::Device ? device_fold_key(row.device)
                                    : group_fold_key(row.device, row.group);
  ts.collapsed[key] = !row.folded;
}

void draw_rows(const Frame& f, const LaneCtx& ctx, const Layout& layout, TimelineState& ts) {
  const float mouse_y = ImGui::GetIO().MousePos.y;
  const bool hovered = ImGui::IsWindowHovered();
  fold_on_click(f, layout, ts);
  // The folded groups on screen: their heat maps first, on every core (or from the last frame's).
  std::vector<std::pair<std::uint32_t, int>> heat_groups;
  for (const Row& row : layout.rows) {
    if (row.kind == RowKind::Group && row.folded &&
        f.visible(f.y_base + row.y, f.y_base + row.y + row.h))
      heat_groups.emplace_back(row.device, row.group);
  }
  prepare_heat_rows(ctx, heat_groups, ts.heat);
  int lane_index = 0;
  for (const Row& row : layout.rows) {
    const float y0 = f.y_base + row.y, y1 = y0 + row.h;
    if (row.kind == RowKind::Lane) ++lane_index;
    if (!f.visible(y0, y1)) continue;
    const bool row_hovered = hovered && mouse_y >= y0 && mouse_y < y1;
    if (row.kind == RowKind::Lane) {
      draw_lane_row(f, ctx, row, lane_index, y0, y1, row_hovered);
    } else if (row.kind == RowKind::Rank) {
      draw_rank_row(f, row, y0, y1);
    } else {
      draw_header_row(f, ctx, row, y0, y1, row_hovered);
    }
  }
}

// Steal arrows, victim -> thief, for steals in view. Lanes a little off screen still count: an
// arrow from them points into the view. More than kMaxStealArrows: too dense to read, so none (the note says so).
// Only lanes of groups with a steal in view are walked (the groups' sorted steal times say which):
// walking every lane's markers cost 40 ms a frame on a 2-GPU trace of 2.4 M failed dequeues.
std::vector<Arrow> visible_steal_arrows(const Frame& f, const Layout& layout,
                                        std::size_t steals_in_view) {
  std::vector<Arrow> arrows;
  if (steals_in_view == 0) return arrows;
  const double t0 = f.axis.time_at(f.left), t1 = f.axis.time_at(f.right);
  std::vector<char> may_steal(f.model.lanes().size(), 1);
  for (const DeviceGroup& d : f.model.devices()) {
    for (const LaneGroup& g : d.groups) {
      const auto from =
          std::partition_point(g.steals.begin(), g.steals.end(),
                               [t0](std::uint64_t t) { return static_cast<double>(t) < t0; });
      if (from != g.steals.end() && static_cast<double>(*from) <= t1) continue;
      for (const std::uint32_t l : g.lanes) may_steal[l] = 0;
    }
  }
  for (std::size_t l = 0; l < f.model.lanes().size(); ++l) {
    const float yc = f.y_base + layout.lane_center[l];
    if (!may_steal[l] || layout.lane_center[l] < 0 || yc < f.top - 200 ||
        yc > f.top + f.height + 200)
      continue;
    const Lane& lane = f.model.lanes()[l];
    const auto& m = lane.markers;
    for (auto it = std::partition_point(
             m.begin(), m.end(),
             [t0](const Marker& k) { return static_cast<double>(k.time_ns) < t0; });
         it != m.end() && static_cast<double>(it->time_ns) <= t1; ++it) {
      if (it->kind != EventKind::Steal) continue;
      const std::uint32_t device = trace::steal_victim_device(it->aux, lane.device);
      const int victim = f.model.worker_lane(device, it->arg);
      if (victim < 0 || layout.lane_center[static_cast<std::size_t>(victim)] < 0) continue;
      if (arrows.size() >= kMaxStealArrows) return {};  // steals_in_view says so above the lanes
      arrows.push_back({static_cast<float>(f.axis.x(static_cast<double>(it->time_ns))),
                        f.y_base + layout.lane_center[static_cast<std::size_t>(victim)], yc,
                        device != lane.device});
    }
  }
  return arrows;
}

// A note over the top right of the lanes, `row` lines down (steal arrows' is row 0).
void draw_view_note(const Frame& f, const std::string& note, ImU32 colour, int row) {
  const float line = ImGui::GetTextLineHeight() + 6;
  const ImVec2 at(f.right - ImGui::CalcTextSize(note.c_str()).x - 10,
                  f.top + 4 + line * static_cast<float>(row));
  f.dl->AddRectFilled(ImVec2(at.x - 4, at.y - 2),
                      ImVec2(f.right - 6, at.y + ImGui::GetTextLineHeight() + 2),
                      IM_COL32(24, 26, 31, 220), 3.0f);
  f.dl->AddText(at, colour, note.c_str());
}

// Chunks of tasks moved between ranks: an arrow from the lender's host track at the
// RankLend to the thief's host track at the RankSteal, capped like steal arrows. Where they go is
// worked out before the rows are drawn, so that a hovered arrow's tooltip replaces the lane's.
struct RankArrows {
  std::vector<RankArrow> arrows;
  std::string note;  // too many to draw, or some with one side only (rank_transfers_in_view)
  int hovered = -1;  // index into arrows
};

RankArrows rank_arrows(const Frame& f, const Layout& layout, TimelineState& ts) {
  RankArrows out;
  if (ts.transfers_model != &f.model) {
    ts.transfers_model = &f.model;
    ts.transfers = rank_transfers(f.model);
    std::vector<int> lane_of_track(f.model.header().tracks.size(), -1);
    for (std::size_t l = 0; l < f.model.lanes().size(); ++l)
      lane_of_track[f.model.lanes()[l].track] = static_cast<int>(l);
    const auto lane = [&](std::uint32_t track) {
      return track < lane_of_track.size() ? lane_of_track[track] : -1;
    };
    ts.transfer_lanes.clear();
    for (const RankTransfer& t : ts.transfers)
      ts.transfer_lanes.emplace_back(lane(t.lend_track), lane(t.arrive_track));
  }
  if (ts.transfers.empty()) return out;
  const RankTransfersInView v =
      rank_transfers_in_view(ts.transfers, f.axis.time_at(f.left), f.axis.time_at(f.right));
  out.note = v.note;
  for (const std::size_t i : v.shown) {
    const auto [from, to] = ts.transfer_lanes[i];
    if (from < 0 || to < 0) continue;
    const float y0 = layout.lane_center[static_cast<std::size_t>(from)],
                y1 = layout.lane_center[static_cast<std::size_t>(to)];
    if (y0 < 0 || y1 < 0) continue;
    out.arrows.push_back(
        {i, static_cast<float>(f.axis.x(static_cast<double>(ts.transfers[i].lend_ns))),
         f.y_base + y0,
         static_cast<float>(f.axis.x(static_cast<double>(ts.transfers[i].arrive_ns))),
         f.y_base + y1});
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && mouse.x >= f.left && mouse.x < f.right &&
      !ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    out.hovered = rank_arrow_at(out.arrows, mouse.x, mouse.y);
  }
  return out;
}

// The arrows, the hovered one white and its tooltip; the note `note_row` lines down (under the
// steals' note when that one shows).
void draw_rank_arrows(const Frame& f, const RankArrows& ra, const TimelineState& ts, int note_row) {
  if (!ra.note.empty()) draw_view_note(f, ra.note, colours::kRankTransfer, note_row);
  for (std::size_t k = 0; k < ra.arrows.size(); ++k) {
    const RankArrow& r = ra.arrows[k];
    const bool hot = static_cast<int>(k) == ra.hovered;
    const ImU32 colour = hot ? IM_COL32(255, 255, 255, 255) : colours::kRankTransfer;
    const ImVec2 a(r.x0, r.y0), b(r.x1, r.y1);
    const float dir = b.y > a.y ? 1.0f : -1.0f;
    f.dl->AddLine(a, ImVec2(b.x, b.y - 6 * dir), colour, hot ? 3.0f : 2.0f);
    f.dl->AddTriangleFilled(ImVec2(b.x - 4, b.y - 8 * dir), ImVec2(b.x + 4, b.y - 8 * dir), b,
                            colour);
    f.dl->AddCircleFilled(a, 2.5f, colour);
  }
  if (ra.hovered < 0) return;
  ImGui::BeginTooltip();
  const RankTransfer& t = ts.transfers[ra.arrows[static_cast<std::size_t>(ra.hovered)].transfer];
  for (const std::string& line : rank_transfer_lines(t, run_span(f.model).begin_ns))
    ImGui::TextUnformatted(line.c_str());
  ImGui::EndTooltip();
}

// The playhead, and a frame around every task running at that instant.
void draw_playhead(const Frame& f, const Layout& layout, double t) {
  const float x = static_cast<float>(f.axis.x(t));
  for (const Row& row : layout.rows) {
    if (row.kind != RowKind::Lane) continue;
    const float y0 = f.y_base + row.y, y1 = y0 + row.h;
    if (!f.visible(y0, y1)) continue;
    const Lane& lane = f.model.lanes()[row.lane];
    const LaneState s = lane_state_at(lane, t);
    if (s.running < 0) continue;
    const Zone& z = lane.zones[static_cast<std::size_t>(s.running)];
    f.dl->AddRect(
        ImVec2(std::max(static_cast<float>(f.axis.x(static_cast<double>(z.begin_ns))), f.left - 2),
               y0 + 1),
        ImVec2(std::min(static_cast<float>(f.axis.x(static_cast<double>(z.end_ns))), f.right + 2),
               y1 - 2),
        IM_COL32(255, 255, 255, 230), 0.0f, 0, 2.0f);
  }
  f.dl->AddLine(ImVec2(x, f.top), ImVec2(x, f.top + f.height), colours::kPlayhead, 2.0f);
}

void draw_selection(const Frame& f, const Selection& sel) {
  const float a = static_cast<float>(f.axis.x(sel.begin_ns)),
              b = static_cast<float>(f.axis.x(sel.end_ns));
  const float bottom = f.top + f.height;
  f.dl->AddRectFilled(ImVec2(a, f.top), ImVec2(b, bottom), colours::kSelection);
  f.dl->AddLine(ImVec2(a, f.top), ImVec2(a, bottom), colours::kChosen);
  f.dl->AddLine(ImVec2(b, f.top), ImVec2(b, bottom), colours::kChosen);
}

// The lanes scroll by drag and Ctrl+wheel, not by an ImGui scrollbar (it would take the wheel
// from zooming), so a thin indicator on the right edge says where the view is.
void draw_scroll_indicator(const Frame& f, const Layout& layout, float scroll_y) {
  if (layout.height <= f.height) return;
  const float frac = f.height / layout.height, pos = scroll_y / layout.height;
  f.dl->AddRectFilled(ImVec2(f.right - 4, f.top + pos * f.height),
                      ImVec2(f.right, f.top + (pos + frac) * f.height),
                      IM_COL32(150, 155, 165, 120), 2.0f);
}

}  // namespace

// -------------------------------------------------------------------------------------------------
// [SECTION] The view
// -------------------------------------------------------------------------------------------------

std::optional<bool> draw_timeline_toolbar(const TraceModel& model, ViewState& vs, TimelineState& ts,
                                          bool counters, const TraceModel* b, TimelineState* ts_b) {
  std::optional<bool> folded_all;
  if (ImGui::Button("Fit")) vs.fit_pending = true;
  ImGui::SameLine();
  draw_search_bar(model, b, vs, ts, ts_b);
  ImGui::SameLine();
  // Folding by hand ends the automatic unfolding of a zoom (timeline_layout.hpp). Only SMs fold.
  const bool sms = std::any_of(model.devices().begin(), model.devices().end(),
                               [](const DeviceGroup& d) { return d.has_sms; });
  for (const auto& [label, fold] : {std::pair{"Fold SMs", true}, std::pair{"Unfold SMs", false}}) {
    if (sms && ImGui::Button(label)) {
      folded_all = fold;
      set_all_folds(model, ts.collapsed, fold);
      ts.defaults_set = true;
      ts.auto_fold = false;
    }
    if (sms) ImGui::SameLine();
  }
  ImGui::BeginDisabled(!vs.selection);
  if (ImGui::Button("Zoom to selection") && vs.selection) vs.pending_range = vs.selection;
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (counters) {
    ImGui::Checkbox("counters", &ts.counters);
    ImGui::SameLine();
    if (ts.counters) {
      own_scale_checkbox(vs);
      ImGui::SameLine();
    }
  }
  int mode = vs.colour == ColourMode::ByKind ? 0 : 1;
  ImGui::SetNextItemWidth(130);
  if (ImGui::Combo("##colour", &mode, "colour by kind\0colour by duration\0")) {
    vs.colour = mode == 0 ? ColourMode::ByKind : ColourMode::ByDuration;
  }
  ImGui::SameLine(0, 18);
  draw_legend(model, vs.colour);
  return folded_all;
}

void draw_legend(const TraceModel& model, ColourMode mode) {
  if (mode == ColourMode::ByKind) {
    for (const std::uint16_t k : model.kinds()) {
      const std::string label = "kind " + std::to_string(k);
      legend_item(to_imgui(kind_colour(k)), label.c_str());
    }
  } else {
    const double lo = static_cast<double>(model.min_task_ns()),
                 hi = static_cast<double>(model.max_task_ns());
    for (int i = 0; i < 4; ++i) {
      const double ns = lo * std::pow(std::max(hi, lo + 1) / std::max(lo, 1.0), i / 3.0);
      legend_item(to_imgui(duration_colour(ns, lo, hi)), format_time(ns).c_str());
    }
  }
  legend_items(event_legend(model));
  const bool sms = std::any_of(model.devices().begin(), model.devices().end(),
                               [](const DeviceGroup& d) { return d.has_sms; });
  if (sms) {
    // The folded rows' own scale (heat_scale.hpp); their idle and steal colours are the ones above.
    const std::vector<LegendEntry> rows = sm_row_legend();
    float width = ImGui::CalcTextSize("SM rows:").x;
    for (const LegendEntry& e : rows)
      width += ImGui::GetTextLineHeight() + 24 + ImGui::CalcTextSize(e.label.c_str()).x;
    if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
    ImGui::TextDisabled("SM rows:");
    ImGui::SameLine();
    legend_items(rows);
  }
  ImGui::NewLine();
}

void draw_timeline(const TraceModel& model, ViewState& vs, TimelineState& ts, TimeAxis& axis,
                   ImVec2 size, const TimelineOptions& options) {
  ImGui::PushID(options.id);
  const ImVec2 start = ImGui::GetCursorScreenPos();
  if (options.toolbar) draw_timeline_toolbar(model, vs, ts, options.counters);
  if (!model.omitted().empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1), "%s", model.omitted().c_str());
  if (options.caption) ImGui::TextUnformatted(options.caption);

  const float used = ImGui::GetCursorScreenPos().y - start.y;
  const ImVec2 area(size.x, std::max(size.y - used, 60.0f));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* outer = ImGui::GetWindowDrawList();
  if (ts.label_w_model != &model) {  // measured once per trace: it walks every group's name
    ts.label_w = label_column_width(model, text_width);
    ts.label_w_model = &model;
  }
  const float label_w = options.label_width > 0 ? options.label_width : ts.label_w;
  const float left = p0.x + label_w, right = p0.x + area.x - 2;
  axis.set_origin(left);
  apply_pending_fit(model, vs, axis, left, right);
  if (options.keys) timeline_keys(vs, ts, axis, left, right);
  begin_reveal(model, ts, axis, left, right);

  const float lanes_top = p0.y + kRulerHeight;
  // Counter tracks take the bottom of the area; the lanes what is left.
  const OccupancyPlots counters =
      options.counters && ts.counters ? occupancy_plots(model, vs.counter_scale) : OccupancyPlots{};
  const Folds folds = folds_in_use(model, ts, axis, right - left);
  const float text_h = ImGui::GetTextLineHeight();
  const float lanes_min_h =
      counters.plots.empty() ? 0.0f : layout_timeline(model, folds, 0.0f, text_h).height;
  const CounterLayout strip =
      counter_layout(counters.plots.size(), area.y - kRulerHeight, lanes_min_h);
  const float view_h = area.y - kRulerHeight - strip.height;
  const Layout layout = layout_timeline(model, folds, view_h, text_h);
  scroll_to_revealed(ts, layout, view_h);
  const float max_scroll = std::max(0.0f, layout.height - view_h);
  ts.scroll_y = std::clamp(ts.scroll_y, 0.0f, max_scroll);

  // The lanes live in a child window so their clipping and hovering are theirs alone.
  ImGui::SetCursorScreenPos(ImVec2(p0.x, lanes_top));
  ImGui::BeginChild("lanes", ImVec2(area.x, view_h), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoScrollbar);
  handle_input(model, vs, axis, ts, left, right, max_scroll, options.playhead_shift_ns);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  Frame f{model, axis,       dl,        p0.x,   area.x,
          left,  right,      lanes_top, view_h, lanes_top - ts.scroll_y,
          vs,    options.run};
  const RankArrows ranks = rank_arrows(f, layout, ts);
  f.lane_tooltips = ranks.hovered < 0;
  dl->AddRectFilled(ImVec2(p0.x, lanes_top), ImVec2(p0.x + area.x, lanes_top + view_h),
                    colours::kBackground);

  std::vector<DrawRun> scratch;
  std::vector<double> xs;
  const LaneCtx ctx{model, axis, vs.colour, left, right, dl, scratch, xs, &ts.heat};
  draw_rows(f, ctx, layout, ts);

  dl->PushClipRect(ImVec2(left, lanes_top), ImVec2(right, lanes_top + view_h), true);
  const StealsInView steals = steals_in_view(model, axis.time_at(left), axis.time_at(right));
  if (steals.arrows) {
    for (const Arrow& a : visible_steal_arrows(f, layout, steals.steals)) draw_arrow(dl, a);
  } else {
    draw_view_note(f, steals.note, colours::kSteal, 0);
  }
  draw_rank_arrows(f, ranks, ts, steals.arrows ? 0 : 1);  // its note under the steals' one
  draw_picked(dl, model, options.run, vs, layout, axis, f.y_base, left, right);
  if (vs.playhead.active) draw_playhead(f, layout, vs.playhead.time_ns + options.playhead_shift_ns);
  draw_marks(dl, vs, axis, left, right, lanes_top, lanes_top + view_h);
  if (vs.selection)
    draw_selection(f, Selection{vs.selection->begin_ns + options.playhead_shift_ns,
                                vs.selection->end_ns + options.playhead_shift_ns});
  dl->PopClipRect();
  draw_scroll_indicator(f, layout, ts.scroll_y);
  ImGui::EndChild();

  const double origin = options.origin_ns.value_or(run_span(model).begin_ns);
  if (strip.shown > 0) {
    const float y0 = lanes_top + view_h;
    const bool hovered =
        !(ImGui::GetIO().ConfigFlags & ImGuiConfigFlags_NoMouse) &&
        ImGui::IsMouseHoveringRect(ImVec2(p0.x, y0), ImVec2(p0.x + area.x, y0 + strip.height));
    const std::optional<double> playhead =
        vs.playhead.active ? std::optional<double>(vs.playhead.time_ns) : std::nullopt;
    draw_counter_strip(CounterStrip{outer, axis, origin, p0.x, left, right, y0, hovered, playhead,
                                    &ts.counter_columns},
                       counters, strip);
  }
  const std::string selected =
      vs.selection ? "selection " + format_time(vs.selection->end_ns - vs.selection->begin_ns) : "";
  draw_ruler(outer, axis, origin, options.origin_ns ? "time from launch" : "time from start",
             label_w, left, right, p0.y, p0.y + kRulerHeight, selected);
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p0.y + area.y));
  ImGui::PopID();
}

}  // namespace gpulb::viewer
