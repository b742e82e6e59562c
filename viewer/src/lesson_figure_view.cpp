// The Lesson view: a lesson on one screen. Its verdict in one line at the top, then its key
// figure (each quantity the claim is about as a pair of bars, A and B, with the paper's figure and
// the measured one beside them), the claim and the two runs, and buttons to the evidence.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "draw.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "display_text.hpp"
#include "findings.hpp"
#include "moments.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

const ImVec4 kSideA = ImGui::ColorConvertU32ToFloat4(to_imgui(palette::kRunA));
const ImVec4 kSideB = ImGui::ColorConvertU32ToFloat4(to_imgui(palette::kRunB));
const ImVec4 kDim(0.6f, 0.62f, 0.67f, 1.0f);

ImVec4 verdict_colour(const std::string& verdict) {
  if (verdict == "holds") return ImVec4(0.30f, 0.70f, 0.40f, 1.0f);
  if (verdict == "reversed" || verdict == "does not hold") return ImVec4(0.80f, 0.30f, 0.30f, 1.0f);
  if (verdict == "holds partly") return ImVec4(0.85f, 0.62f, 0.20f, 1.0f);
  return ImVec4(0.45f, 0.47f, 0.52f, 1.0f);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The verdict as a coloured box; beside it where it was measured, the measured figures (the
// numbers a reader repeats), and the paper's, dimmer.
void verdict_banner(const builtin::LessonVerdict& v) {
  const std::string word = upper(v.verdict);
  const ImVec2 pad(14, 8);
  const ImVec2 text = ImGui::CalcTextSize(word.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + text.x + 2 * pad.x, p.y + text.y + 2 * pad.y),
                    ImGui::GetColorU32(verdict_colour(v.verdict)), 4.0f);
  dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), IM_COL32(255, 255, 255, 255), word.c_str());
  ImGui::Dummy(ImVec2(text.x + 2 * pad.x, text.y + 2 * pad.y));
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextColored(kDim, "the verdict, measured on %s:", v.measured_on.c_str());
  std::string measured, paper;
  for (const builtin::MeasuredQuantity& q : v.quantities) {
    measured += (measured.empty() ? "" : "; ") + q.name + ": " + q.measured;
    paper += (paper.empty() ? "" : "; ") + q.paper;
  }
  text_wrapped(measured);
  ImGui::PushStyleColor(ImGuiCol_Text, kDim);
  text_wrapped("the paper: " + paper);
  ImGui::PopStyleColor();
  ImGui::EndGroup();
}

// One quantity: its name, a bar for A and one for B on a shared scale, and the verdict's words.
void quantity_bars(const builtin::MeasuredQuantity& q, float width) {
  ImGui::TextColored(ImVec4(0.86f, 0.87f, 0.9f, 1), "%s", q.name.c_str());
  ImGui::SameLine();
  if (q.a_within && q.b_within &&
      q.bound) {  // a bound on each run: what each measured against it, a fact, not a verdict
    const char* a = *q.a_within ? "within" : "over";
    const char* b = *q.b_within ? "within" : "over";
    if (*q.a_within == *q.b_within)
      ImGui::TextColored(kDim, "  both %s %.1f", a, *q.bound);
    else
      ImGui::TextColored(kDim, "  A %s %.1f, B %s it", a, *q.bound, b);
  } else if (q.holds) {
    ImGui::TextColored(*q.holds ? verdict_colour("holds") : verdict_colour("reversed"),
                       *q.holds ? "  holds" : "  does not hold");
  } else {
    ImGui::TextColored(kDim, "  not measured");
  }
  const float label_w = 90.0f, bar_h = 26.0f, value_gap = 8.0f;
  const float bars_w = std::max(120.0f, width * 0.55f);
  double top = q.bound.value_or(0.0) * 1.25;  // a bound stands inside the scale, with room past it
  for (const auto& v : {q.a, q.b}) {
    if (v && std::isfinite(*v)) top = std::max(top, *v);
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 bars0 = ImGui::GetCursorScreenPos();
  for (int side = 0; side < 2; ++side) {
    const std::optional<double>& v = side == 0 ? q.a : q.b;
    const ImVec4 colour = side == 0 ? kSideA : kSideB;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddText(ImVec2(p.x, p.y + 4), ImGui::GetColorU32(colour), side == 0 ? "A" : "B");
    const ImVec2 b0(p.x + label_w * 0.3f, p.y);
    float len = 0.0f;
    std::string text = "not in this trace";
    if (v) {
      const double frac = std::isfinite(*v) ? (top > 0.0 ? *v / top : 0.0) : 1.0;
      len = static_cast<float>(std::max(frac, 0.004)) * bars_w;
      text = builtin::format_quantity(q.quantity, *v);
      dl->AddRectFilled(b0, ImVec2(b0.x + len, b0.y + bar_h), ImGui::GetColorU32(colour), 3.0f);
    }
    // The value after its bar, and past the claim's line where the line is further right.
    float text_x = b0.x + len + value_gap;
    if (q.bound && top > 0.0)
      text_x = std::max(text_x, b0.x + static_cast<float>(*q.bound / top) * bars_w + value_gap);
    dl->AddText(ImVec2(text_x, p.y + 4), colours::kText, text.c_str());
    ImGui::Dummy(ImVec2(width, bar_h + 4));
  }
  if (q.bound && top > 0.0) {  // the claim's limit across both bars, named at its foot
    const float x = bars0.x + label_w * 0.3f + static_cast<float>(*q.bound / top) * bars_w;
    const float y1 = ImGui::GetCursorScreenPos().y;
    dl->AddLine(ImVec2(x, bars0.y - 2), ImVec2(x, y1), colours::kText, 2.0f);
    char label[48];
    std::snprintf(label, sizeof label, "claim: at most %.1f", *q.bound);
    dl->AddText(ImVec2(x + 4, y1 - 2), colours::kText, label);
    ImGui::Dummy(ImVec2(width, ImGui::GetTextLineHeight()));
  }
  ImGui::TextColored(kDim, "paper:   ");
  ImGui::SameLine();
  text_wrapped(q.paper);
  ImGui::TextColored(kDim, "measured:");
  ImGui::SameLine();
  text_wrapped(q.measured);
}

// "lookahead 5, on CPU threads": the key parameter's value and the device, strings from the file.
std::string run_setting(const builtin::Lesson& lesson, const TraceModel& m) {
  const trace::RunMetadata& meta = m.header().meta;
  std::string key;
  if (const auto it = meta.parameters.find(std::string(lesson.key_parameter));
      !lesson.key_parameter.empty() && it != meta.parameters.end()) {
    key = it->first + " " + it->second + ", ";
  }
  std::string device = meta.backend == "cpu" ? "CPU threads" : "GPU";
  if (!m.header().devices.empty()) device = m.header().devices.front().name;
  if (m.header().devices.size() > 1)
    device += " and " + std::to_string(m.header().devices.size() - 1) + " more";
  return key + "on " + device;
}

// "connect4 under static-list, lookahead 5, on CPU threads", clipped.
std::string run_line(const builtin::Lesson& lesson, const TraceModel& m) {
  const trace::RunMetadata& meta = m.header().meta;
  return display_label(meta.scenario + " under " + meta.policy + ", " + run_setting(lesson, m));
}

// What A and B are. Where the verdict is the recording's, the traces opened as A and B are other
// runs (lookahead 4 against the recording's 7) whose figures may point the other way: one dim line
// says so, with their own figure, so that none of theirs reads as the verdict's.
void sides(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel& b,
           bool on_recording) {
  ImGui::TextColored(kSideA, "A");
  ImGui::SameLine();
  text_wrapped(std::string(lesson.a.label) + (on_recording ? "" : ": " + run_line(lesson, a)));
  ImGui::TextColored(kSideB, "B");
  ImGui::SameLine();
  text_wrapped(std::string(lesson.b.label) + (on_recording ? "" : ": " + run_line(lesson, b)));
  if (!on_recording) return;
  ImGui::PushStyleColor(ImGuiCol_Text, kDim);
  text_wrapped(
      "Not the verdict's runs: the traces opened as A and B (the evidence) are runs of their own "
      "(" +
      display_label(run_setting(lesson, a)) + "); there " +
      compare_headline(a, b, lesson_inputs(lesson, a, b)));
  ImGui::PopStyleColor();
}

// The lesson's "look here" steps: each a button that opens Compare on its moment, selected; a
// moment the open run does not have (a CPU run without steals) greys its button out.
void look_here_buttons(const builtin::Lesson& lesson, const LessonTraces& t, ViewState& vs) {
  ImGui::TextColored(kDim, "Look here:");
  for (const builtin::LessonStep& step : lesson.steps) {
    ImGui::SameLine();
    const TraceModel& side = step.side == 0 ? t.a : t.b;
    const std::vector<Finding>& findings = step.side == 0 ? t.findings_a : t.findings_b;
    const std::optional<Moment> moment = moment_from_name(step.moment);
    const std::optional<MomentRange> at =
        moment ? find_moment(side, findings, *moment) : std::nullopt;
    const std::string label(step.label);
    ImGui::BeginDisabled(!at);
    ImGui::PushStyleColor(ImGuiCol_Text, step.side == 0 ? kSideA : kSideB);
    if (ImGui::Button(label.c_str()) && at) show_moment(t.a, side, *at, vs);
    ImGui::PopStyleColor();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::SetTooltip(at ? "Compare, zoomed to this moment of run %s and selected"
                           : "run %s has no such moment",
                        step.side == 0 ? "A" : "B");
    }
  }
}

void evidence_buttons(ViewState& vs, const std::function<void()>& run_controls) {
  ImGui::TextColored(kDim, "The evidence:");
  ImGui::SameLine();
  if (ImGui::Button("Both timelines (Compare)")) vs.switch_view = "compare";
  ImGui::SameLine();
  if (ImGui::Button("What stands out (Findings)")) vs.switch_view = "findings";
  ImGui::SameLine();
  if (ImGui::Button("Load per worker (Histograms)")) vs.switch_view = "histograms";
  if (run_controls) {  // the key parameter and "Run both on this CPU": the figure redraws from the runs
    ImGui::SameLine(0.0f, 40.0f);
    ImGui::TextColored(kDim, "Try it here:");
    ImGui::SameLine();
    run_controls();
  }
}

}  // namespace

builtin::LessonVerdict shown_verdict(const builtin::Lesson& lesson, const TraceModel& a,
                                     const TraceModel& b, bool shipped) {
  return builtin::lesson_verdict(lesson, {a.header().meta, a.stats()}, {b.header().meta, b.stats()},
                                 shipped ? lesson_recording(lesson) : nullptr);
}

bool measured_on_recording(const builtin::LessonVerdict& v) {
  return v.measured_on != "the two traces";
}

void show_moment(const TraceModel& a, const TraceModel& side, const MomentRange& m, ViewState& vs) {
  const CompareJump j = compare_jump(a, side, m);
  vs.compare_range = Selection{j.range.begin_ns, j.range.end_ns};
  vs.selection = Selection{j.selection.begin_ns, j.selection.end_ns};
  vs.switch_view = "compare";
}

std::string show_lesson_step(const builtin::Lesson& lesson, const LessonTraces& t,
                             std::size_t index, ViewState& vs) {
  if (index >= lesson.steps.size())
    return "lesson " + std::string(lesson.name) + " has " + std::to_string(lesson.steps.size()) +
           " step(s)";
  const builtin::LessonStep& step = lesson.steps[index];
  const std::optional<Moment> moment = moment_from_name(step.moment);
  const TraceModel& side = step.side == 0 ? t.a : t.b;
  const std::optional<MomentRange> at =
      moment ? find_moment(side, step.side == 0 ? t.findings_a : t.findings_b, *moment)
             : std::nullopt;
  if (!at)
    return "step " + std::to_string(index + 1) + " (" + std::string(step.label) +
           "): its run has no such moment";
  show_moment(t.a, side, *at, vs);
  return "";
}

void draw_lesson_figure(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel* b,
                        const std::vector<Finding>& findings_a,
                        const std::vector<Finding>* findings_b, ViewState& vs, ImVec2 size,
                        const std::function<void()>& run_controls, bool shipped) {
  ImGui::BeginChild("lesson figure", size, false);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.45f, 1), "%.*s", static_cast<int>(lesson.title.size()),
                     lesson.title.data());
  ImGui::TextColored(kDim, "%.*s", static_cast<int>(lesson.paper.size()), lesson.paper.data());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  if (!b) {
    ImGui::TextDisabled(
        "The lesson needs its two traces as A and B: choose them in the trace choosers on the "
        "left.");
    ImGui::EndChild();
    return;
  }
  const builtin::LessonVerdict v = shown_verdict(lesson, a, *b, shipped);
  verdict_banner(v);
  ImGui::Spacing();
  ImGui::TextColored(kDim, "The claim");
  text_wrapped(lesson.claim);
  ImGui::Spacing();
  const bool on_recording = measured_on_recording(v);
  sides(lesson, a, *b, on_recording);
  ImGui::Separator();
  // The pair's bars, and beside them the series (the paper's own figure) where the lesson has one;
  // the look-here steps and the evidence buttons keep the last lines.
  const bool steps = !lesson.steps.empty() && findings_b;
  const float footer = ImGui::GetFrameHeightWithSpacing() * (steps ? 2.0f : 1.0f) +
                       ImGui::GetStyle().ItemSpacing.y * 2.0f;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float figure_h = std::max(160.0f, avail.y - footer);
  const bool series =
      lesson.series.has_value() || lesson.trace_figure != builtin::TraceFigure::None;
  const float pair_w = series ? std::floor(avail.x * 0.40f) : avail.x;
  ImGui::BeginChild("pair bars", ImVec2(pair_w, figure_h), false);
  ImGui::TextColored(kDim, "%s",
                     on_recording ? "The verdict's figures, from the recording:"
                                  : "The verdict's figures, from the two traces:");
  for (const builtin::MeasuredQuantity& q : v.quantities) {
    quantity_bars(q, ImGui::GetContentRegionAvail().x);
    ImGui::Spacing();
  }
  ImGui::EndChild();
  if (series) {
    ImGui::SameLine(0.0f, 12.0f);
    ImGui::BeginChild("series figure", ImVec2(0.0f, figure_h), false);
    if (lesson.series)
      draw_lesson_series(lesson, ImGui::GetContentRegionAvail());
    else
      draw_lesson_trace_figure(lesson, a, *b, ImGui::GetContentRegionAvail());
    ImGui::EndChild();
  }
  ImGui::Separator();
  if (steps) look_here_buttons(lesson, LessonTraces{a, *b, findings_a, *findings_b}, vs);
  evidence_buttons(vs, run_controls);
  ImGui::EndChild();
}

void draw_lesson_hint(ImVec2 size) {
  ImGui::BeginChild("lesson hint", size, false);
  ImGui::TextColored(
      kDim, "No lesson open. Each lesson tests a paper's claim on two runs and gives its verdict:");
  ImGui::Spacing();
  for (const builtin::Lesson& l : builtin::lessons()) {
    ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.45f, 1), "%.*s", static_cast<int>(l.name.size()),
                       l.name.data());
    ImGui::SameLine(260.0f);
    ImGui::TextUnformatted(l.title.data(), l.title.data() + l.title.size());
  }
  ImGui::Spacing();
  ImGui::TextColored(kDim,
                     "Open one from the Lessons menu, or start with gpulb-viewer --lesson NAME.");
  ImGui::EndChild();
}

}  // namespace gpulb::viewer
