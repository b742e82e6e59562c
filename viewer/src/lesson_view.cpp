// A lesson (builtin/lessons.hpp): a paper's claim, the two runs that test it, what to look for,
// what today's hardware shows, and the two traces' own figures side by side (findings.hpp).
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "findings.hpp"
#include <algorithm>
#include <set>
#include <tuple>

#include "draw.hpp"
#include "run_span.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

void paragraph(const char* heading, std::string_view text) {
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "%s", heading);
  text_wrapped(text);
  ImGui::Spacing();
}

}  // namespace

// A lesson sets A and B apart by what its two recipes differ in (P0 against P4, Solution 1 against
// the task queue): a difference there is the lesson's contrast, not another input.
InputMatch lesson_inputs(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel& b) {
  std::set<std::string> contrast;
  for (std::string_view kv : lesson.a.params) {
    const std::string key(kv.substr(0, kv.find('=')));
    if (builtin::recipe_value(lesson.a, key) != builtin::recipe_value(lesson.b, key))
      contrast.insert(key);
  }
  const auto is_input = [&](const std::string& scenario, const std::string& param) {
    if (contrast.count(param)) return false;
    const Scenario* s = builtin::registry().find(scenario);
    if (!s) return true;
    const auto& specs = s->params();
    return std::any_of(specs.begin(), specs.end(),
                       [&](const ParamSpec& p) { return p.name == param; });
  };
  return compare_inputs(a.header().meta, b.header().meta, is_input);
}

void draw_lesson(const builtin::Lesson& lesson, const TraceModel* a, const TraceModel* b,
                 const std::vector<Finding>* findings_a, const std::vector<Finding>* findings_b,
                 bool verdict_on_recording, ViewState& vs) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.45f, 1), "%.*s", static_cast<int>(lesson.title.size()),
                     lesson.title.data());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  paragraph("The paper", lesson.paper);
  paragraph("Its claim", lesson.claim);
  ImGui::TextColored(ImVec4(0.55f, 0.75f, 1, 1), "A:");
  ImGui::SameLine();
  text_wrapped(lesson.a.label);
  ImGui::TextColored(ImVec4(1, 0.75f, 0.45f, 1), "B:");
  ImGui::SameLine();
  text_wrapped(lesson.b.label);
  ImGui::Spacing();
  if (a && b) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.6f, 0.62f, 0.67f, 1));
    text_wrapped(verdict_on_recording
                     ? "What these two traces show (runs of their own, not the verdict's)"
                     : "What these two traces show");
    ImGui::PopStyleColor();
    // "B took 1.5x the time of A" only for one input under two policies; else what differs.
    const InputMatch input = lesson_inputs(lesson, *a, *b);
    // Green only where it is the verdict's comparison; the traces beside a recording's verdict stay dim.
    const bool own_verdict = input.same && !verdict_on_recording;
    ImGui::PushStyleColor(ImGuiCol_Text, own_verdict ? ImVec4(0.45f, 0.85f, 0.55f, 1)
                                                     : ImVec4(0.6f, 0.62f, 0.67f, 1));
    text_wrapped(compare_headline(*a, *b, input));
    ImGui::PopStyleColor();
    if (ImGui::BeginTable("lesson figures", 3,
                          ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.1f);
      ImGui::TableSetupColumn("A", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableSetupColumn("B", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableHeadersRow();
      for (const CompareFact& f : compare_facts(*a, *b)) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.6f, 0.62f, 0.67f, 1));
        text_wrapped(f.name);
        ImGui::PopStyleColor();
        ImGui::TableSetColumnIndex(1);
        text_wrapped(f.a);
        ImGui::TableSetColumnIndex(2);
        text_wrapped(f.b);
      }
      ImGui::EndTable();
    }
    ImGui::Spacing();
  } else {
    ImGui::TextDisabled("Choose the lesson's traces as A and B to see their figures.");
  }
  if (a && b) {
    // The first finding of each (findings.hpp orders them by what they cost): the why, in one line each.
    ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "What stands out (Findings)");
    for (const auto& [tag, colour, model, findings] :
         {std::tuple{"A:", ImVec4(0.55f, 0.75f, 1, 1), a, findings_a},
          std::tuple{"B:", ImVec4(1, 0.75f, 0.45f, 1), b, findings_b}}) {
      ImGui::TextColored(colour, "%s", tag);
      ImGui::SameLine();
      if (!findings || findings->empty()) {
        text_wrapped("nothing stands out");
        continue;
      }
      // The finding's time is a button: Compare zoomed there, the range selected.
      const Finding& f = findings->front();
      ImGui::PushID(tag);
      if (ImGui::SmallButton(("at " + format_time(f.begin_ns - run_span(*model).begin_ns)).c_str()))
        show_finding(*a, *model, f, true, vs);
      ImGui::PopID();
      ImGui::SameLine();
      text_wrapped(f.text);
    }
    ImGui::Spacing();
  }
  paragraph("What to look for", lesson.look_for);
  paragraph("What today's hardware shows", lesson.today);
  ImGui::TextDisabled("The Findings tab lists what each trace shows; click a time to zoom there.");
}

}  // namespace gpulb::viewer
