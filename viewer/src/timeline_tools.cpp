#include "timeline_tools.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "draw.hpp"
#include "run_span.hpp"
#include "time_format.hpp"

namespace gpulb::viewer {
namespace {

// Dear ImGui 1.86 (Debian's) indexes keys by the backend's codes: GLFW's letters are their ASCII
// capitals.
bool key(char c) { return ImGui::IsKeyPressed(static_cast<int>(c)); }

// Picks the match `at` (modulo their count) and reveals it in its run's panel (B's: ts_b).
void show_found(TimelineState& ts, TimelineState* ts_b, ViewState& vs, int at) {
  if (ts.found.empty()) return;
  ts.found_at = (at % static_cast<int>(ts.found.size()) + static_cast<int>(ts.found.size())) %
                static_cast<int>(ts.found.size());
  vs.picked = ts.found[static_cast<std::size_t>(ts.found_at)];
  (vs.picked->run == 1 && ts_b ? *ts_b : ts).reveal = vs.picked->task;
}

}  // namespace

void clear_search(TimelineState& ts) {
  ts.found.clear();
  ts.found_capped = false;
  ts.found_at = -1;
  ts.searched.clear();
  ts.search_note.clear();
}

void search_tasks(const TraceModel& a, const TraceModel* b, ViewState& vs, TimelineState& ts,
                  TimelineState* ts_b) {
  const std::optional<TaskQuery> q = parse_task_query(ts.search);
  if (!q) {
    ts.found.clear();
    ts.search_note = "a task id, k<kind>, or both";
  } else if (!ts.found.empty() && ts.searched == ts.search) {
    show_found(ts, ts_b, vs, ts.found_at + 1);  // the same query again: the next match
  } else {
    // On demand, not per frame: a scan of every task (3 million in the bench's trace).
    ts.found = find_tasks_in_runs(a, b, *q, kMaxFound);
    const auto in_b = static_cast<std::size_t>(std::count_if(
        ts.found.begin(), ts.found.end(), [](const RunTask& t) { return t.run == 1; }));
    ts.found_capped = ts.found.size() - in_b >= kMaxFound || in_b >= kMaxFound;
    ts.searched = ts.search;
    ts.search_note = std::string("'") + ts.search + "': no task" + (b ? " in A or B" : "");
    show_found(ts, ts_b, vs, 0);
  }
}

void timeline_keys(ViewState& vs, TimelineState& ts, TimeAxis& axis, float left, float right) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  const float mid = (left + right) * 0.5f, width = right - left;
  if (io.KeyCtrl) {
    if (key('F')) ts.focus_search = true;
    return;
  }
  if (key('W')) axis.zoom_at(mid, 1.5);
  if (key('S')) axis.zoom_at(mid, 1 / 1.5);
  if (key('A')) axis.pan(width * 0.15);
  if (key('D')) axis.pan(-width * 0.15);
  if (key('M')) {
    const float mx = io.MousePos.x;
    vs.marks.push_back(axis.time_at(mx >= left && mx < right ? mx : mid));
  }
  if (key('N') && !ts.found.empty())
    show_found(ts, nullptr, vs, ts.found_at + (io.KeyShift ? -1 : 1));
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    vs.selection.reset();
    vs.picked.reset();
    clear_search(ts);
  }
}

void draw_search_bar(const TraceModel& a, const TraceModel* b, ViewState& vs, TimelineState& ts,
                     TimelineState* ts_b) {
  ImGui::SetNextItemWidth(150);
  if (ts.focus_search) {
    ImGui::SetKeyboardFocusHere();
    ts.focus_search = false;
  }
  const bool enter =
      ImGui::InputTextWithHint("##find", b ? "find in A and B: id, k2" : "find: id, k2 (Ctrl+F)",
                               ts.search, sizeof ts.search, ImGuiInputTextFlags_EnterReturnsTrue);
  if (enter) search_tasks(a, b, vs, ts, ts_b);
  if (!ts.search_note.empty() || !ts.found.empty()) {
    ImGui::SameLine();
    if (ts.found.empty()) {
      ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.5f, 1), "%s", ts.search_note.c_str());
    } else {
      ImGui::TextUnformatted(
          found_note(ts.found, ts.found_at, b != nullptr, ts.found_capped).c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(b ? "Enter: next (A's matches, then B's)"
                            : "Enter or N: next, Shift+N: previous, Esc: clear");
    }
  }
}

void begin_reveal(const TraceModel& model, TimelineState& ts, TimeAxis& axis, float left,
                  float right) {
  if (!ts.reveal || ts.reveal->lane >= model.lanes().size()) return;
  const Lane& lane = model.lanes()[ts.reveal->lane];
  if (ts.reveal->zone >= lane.zones.size()) return;
  const Zone& z = lane.zones[ts.reveal->zone];
  const double a = static_cast<double>(z.begin_ns), b = static_cast<double>(z.end_ns);
  const bool on_screen = axis.x(a) >= left && axis.x(b) <= right;
  if (!on_screen || axis.x(b) - axis.x(a) < 12) {
    const double span = std::max((b - a) * 12, 2000.0), mid = (a + b) / 2;
    axis = TimeAxis::fit(mid - span / 2, mid + span / 2, left, right - left);
  }
  // Open what hides its lane; the other folds stay as they are.
  if (!ts.defaults_set) {
    ts.collapsed = default_folds(model, ts.unfold);
    ts.defaults_set = true;
  }
  if (lane.device < model.devices().size()) {
    ts.collapsed[device_fold_key(lane.device)] = false;
    const DeviceGroup& dev = model.devices()[lane.device];
    for (std::size_t g = 0; g < dev.groups.size(); ++g) {
      const auto& ls = dev.groups[g].lanes;
      if (std::find(ls.begin(), ls.end(), ts.reveal->lane) != ls.end())
        ts.collapsed[group_fold_key(lane.device, static_cast<int>(g))] = false;
    }
  }
}

void scroll_to_revealed(TimelineState& ts, const TimelineLayout& layout, float view_h) {
  if (!ts.reveal) return;
  const float y = layout.lane_center[ts.reveal->lane];
  if (y >= 0)
    ts.scroll_y = std::clamp(y - view_h * 0.5f, 0.0f, std::max(0.0f, layout.height - view_h));
  ts.reveal.reset();
}

void draw_marks(ImDrawList* dl, const ViewState& vs, const TimeAxis& axis, float left, float right,
                float top, float bottom) {
  for (std::size_t i = 0; i < vs.marks.size(); ++i) {
    const float x = static_cast<float>(axis.x(vs.marks[i]));
    if (x < left || x > right) continue;
    for (float y = top; y < bottom; y += 8)
      dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 4, bottom)), colours::kSpawn, 1.5f);
    // From the second mark on, its distance from the one before: what a class measures with them.
    char t[48];
    if (i == 0) {
      std::snprintf(t, sizeof t, "M1");
    } else {
      std::snprintf(t, sizeof t, "M%zu  +%s", i + 1,
                    format_time(vs.marks[i] - vs.marks[i - 1]).c_str());
    }
    dl->AddRectFilled(ImVec2(x + 2, top + 2),
                      ImVec2(x + 6 + text_width(t), top + 4 + ImGui::GetTextLineHeight()),
                      IM_COL32(24, 26, 31, 220));
    dl->AddText(ImVec2(x + 4, top + 3), colours::kSpawn, t);
  }
}

void draw_picked(ImDrawList* dl, const TraceModel& model, int run, const ViewState& vs,
                 const TimelineLayout& layout, const TimeAxis& axis, float y_base, float left,
                 float right) {
  if (!vs.picked || vs.picked->run != run) return;
  const TaskRef picked = vs.picked->task;
  if (picked.lane >= model.lanes().size()) return;
  const Lane& lane = model.lanes()[picked.lane];
  if (picked.zone >= lane.zones.size()) return;
  const float yc = layout.lane_center[picked.lane];
  if (yc < 0) return;
  const Zone& z = lane.zones[picked.zone];
  const float x0 = std::max(static_cast<float>(axis.x(static_cast<double>(z.begin_ns))), left - 3);
  const float x1 = std::min(
      std::max(static_cast<float>(axis.x(static_cast<double>(z.end_ns))), x0 + 2), right + 3);
  const float h = std::max(layout.lane_h * 0.5f, 4.0f);
  dl->AddRect(ImVec2(x0 - 2, y_base + yc - h), ImVec2(x1 + 2, y_base + yc + h),
              IM_COL32(255, 255, 255, 255), 2.0f, 0, 2.5f);
}

void draw_task_details(const TraceModel& model, ViewState& vs) {
  if (!vs.picked) return;
  const TaskDetails d = task_details(model, vs.picked->task);
  const double origin = run_span(model).begin_ns;
  const ImVec4 dim(0.6f, 0.62f, 0.67f, 1);
  const bool in_b = vs.picked->run == 1;
  ImGui::Text("task %u, kind %u%s", d.id, d.kind, in_b ? ", trace B" : "");
  ImGui::TextColored(dim, "worker  ");
  ImGui::SameLine();
  text_wrapped(d.worker);
  ImGui::TextColored(dim, "runs    ");
  ImGui::SameLine();
  ImGui::Text("%s .. %s (%s)", format_time(static_cast<double>(d.begin_ns) - origin).c_str(),
              format_time(static_cast<double>(d.end_ns) - origin).c_str(),
              format_time(static_cast<double>(d.end_ns - d.begin_ns)).c_str());
  if (d.interpolated) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(dim,
                       "Timed with its batch of short tasks (one clock read a batch): its times "
                       "are interpolated.");
    ImGui::PopTextWrapPos();
  }
  ImGui::TextColored(dim, "from    ");
  ImGui::SameLine();
  text_wrapped(d.source);
  ImGui::TextColored(dim, "spawned ");
  ImGui::SameLine();
  if (d.first_child && d.spawned > 0)
    ImGui::Text("%u children (ids %u .. %u)", d.spawned, *d.first_child,
                *d.first_child + (d.spawned - 1));
  else
    ImGui::Text("%u children", d.spawned);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(
      dim, "Payload and parent are not in the trace (its events carry a task's id and kind only).");
  ImGui::PopTextWrapPos();
  // B's tasks are on screen only in Compare's lower panel.
  if (ImGui::SmallButton(in_b ? "Show in Compare" : "Show in timeline"))
    (in_b ? vs.compare_b : vs.timeline).reveal = vs.picked->task;
  ImGui::SameLine();
  if (ImGui::SmallButton("Unpick")) vs.picked.reset();
}

}  // namespace gpulb::viewer
