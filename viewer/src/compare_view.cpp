// Compare: two traces one above the other on one time scale (both from their own first kernel
// launch, compare_span.hpp), with their summaries side by side. The usual lesson: same input, two policies, see why one wins.
#include <algorithm>
#include <string>

#include "compare_layout.hpp"
#include "compare_span.hpp"
#include "display_text.hpp"
#include "draw.hpp"
#include "gpulb/builtin/registry.hpp"
#include "labels.hpp"
#include "timeline_layout.hpp"
#include "summary_rows.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

// "scenario / policy", "policy on backend": each part clipped, trace strings being untrusted.
std::string caption(const std::string& a, const char* joint, const std::string& b) {
  return display_label(a, 60) + joint + display_label(b, 60);
}

}  // namespace

// The height a compact summary box needs at width w: its caption line and its rows, wrapped.
static float summary_need(const TraceModel& m, float w) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float value_w = w - summary_name_width(true) - 2 * st.WindowPadding.x -
                        4 * st.CellPadding.x - st.ScrollbarSize;
  return ImGui::GetTextLineHeightWithSpacing() + 2 * st.WindowPadding.y + 2 +
         summary_height(summary_rows(m, true), value_w, ImGui::GetTextLineHeight(),
                        2 * st.CellPadding.y, text_width);
}

InputMatch compare_inputs(const TraceModel& a, const TraceModel& b) {
  const Scenario* scenario = builtin::registry().find(a.header().meta.scenario);
  if (!scenario)
    return compare_inputs(a.header().meta, b.header().meta);  // another build's scenario
  return compare_inputs(a.header().meta, b.header().meta,
                        [scenario](const std::string&, const std::string& param) {
                          const auto& specs = scenario->params();
                          return std::any_of(specs.begin(), specs.end(),
                                             [&](const ParamSpec& p) { return p.name == param; });
                        });
}

void draw_compare(const TraceModel& a, const TraceModel& b, ViewState& vs, ImVec2 size) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const float w = (size.x - style.ItemSpacing.x) * 0.5f;
  // Between the parts: the figures line, the toolbar (a second line where its legend wraps) and
  // the item spacings.
  const CompareLayout layout =
      compare_layout(size.y,
                     ImGui::GetTextLineHeightWithSpacing() +
                         2 * ImGui::GetFrameHeightWithSpacing() + 3 * style.ItemSpacing.y,
                     std::max(summary_need(a, w), summary_need(b, w)));
  const float summary_h = layout.summary_h;
  ImGui::BeginChild("summary a", ImVec2(w, summary_h), true);
  ImGui::TextColored(ImVec4(0.55f, 0.75f, 1, 1), "A: %s",
                     caption(a.header().meta.scenario, " / ", a.header().meta.policy).c_str());
  draw_summary(a, true);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("summary b", ImVec2(w, summary_h), true);
  ImGui::TextColored(ImVec4(1, 0.75f, 0.45f, 1), "B: %s",
                     caption(b.header().meta.scenario, " / ", b.header().meta.policy).c_str());
  draw_summary(b, true);
  ImGui::EndChild();

  // One scale: both runs measured from their own first launch, over the longer of the two.
  const std::string headline = compare_headline(a, b, compare_inputs(a, b));
  ImGui::Text("%s Both from their first kernel launch; click a task for its details.",
              headline.c_str());
  // One toolbar for both panels (their lanes then get the same height); what is left of the
  // view's own height, not ImGui's remaining region, which includes the replay bar's room.
  // Ctrl+F: the keys are off in both panels (each would take them), so compare serves this one.
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed(static_cast<int>('F')))
    vs.compare_a.focus_search = true;
  // The search covers both runs: its results and picks say which (RunTask).
  if (const std::optional<bool> fold =
          draw_timeline_toolbar(a, vs, vs.compare_a, false, &b, &vs.compare_b)) {
    set_all_folds(b, vs.compare_b.collapsed, *fold);
    vs.compare_b.defaults_set = true;
    vs.compare_b.auto_fold = false;
  }
  const float used = ImGui::GetCursorScreenPos().y - start.y;
  const float lanes_h = std::max((size.y - used - style.ItemSpacing.y) * 0.5f, 60.0f);
  // The shared axis counts time since each run's first launch; each timeline gets it shifted to its
  // trace's clock, and whatever the user does to one (zoom, pan) carries over to the other.
  std::optional<TimeSpan> range;
  if (vs.compare_range) range = TimeSpan{vs.compare_range->begin_ns, vs.compare_range->end_ns};
  const CompareSpan span = compare_span(a, b, range);
  // One label column for both, so that one time sits at one x in both panels.
  const float label_w =
      std::max(label_column_width(a, text_width), label_column_width(b, text_width));
  if (vs.fit_pending || vs.compare_fit_pending || vs.compare_range) {
    vs.compare_axis =
        TimeAxis::fit(span.shown.begin_ns, span.shown.end_ns, 0, size.x - label_w - 2.0f);
    vs.fit_pending = vs.compare_fit_pending = false;
    vs.compare_range.reset();  // --range applies once; Fit shows both runs again
  }
  const std::string cap_a =
      "A: " + caption(a.header().meta.policy, " on ", a.header().meta.backend);
  const std::string cap_b =
      "B: " + caption(b.header().meta.policy, " on ", b.header().meta.backend);
  TimeAxis axis_a = panel_axis(vs.compare_axis, span.origin_a);
  draw_timeline(a, vs, vs.compare_a, axis_a, ImVec2(size.x, lanes_h),
                {"cmp_a", false, cap_a.c_str(), span.origin_a, label_w, false, false, 0});
  TimeAxis axis_b = panel_axis(axis_a, span.origin_b - span.origin_a);
  draw_timeline(b, vs, vs.compare_b, axis_b, ImVec2(size.x, lanes_h),
                {"cmp_b", false, cap_b.c_str(), span.origin_b, label_w, false, false, 1,
                 span.origin_b - span.origin_a});
  vs.compare_axis = panel_axis(axis_b, -span.origin_b);
}

void draw_compare_hint(ImVec2 size) {
  ImGui::TextWrapped(
      "Compare shows two traces one above the other on one time scale. Open a second trace "
      "(File > Open) or run another policy from the panel, then choose it as B.");
  ImGui::Dummy(ImVec2(0, size.y - ImGui::GetTextLineHeightWithSpacing() * 2));
}

}  // namespace gpulb::viewer
