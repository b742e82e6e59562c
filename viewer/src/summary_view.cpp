// The run's figures: what ran where, how long, how well balanced, and whether the result verified.
// The rows come from the model (summary_rows.hpp); this draws them as a two-column table.
#include "summary_rows.hpp"
#include "draw.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

ImVec4 tone_colour(SummaryRow::Tone tone) {
  switch (tone) {
    case SummaryRow::Tone::Dim: return ImVec4(0.6f, 0.62f, 0.67f, 1);
    case SummaryRow::Tone::Good: return ImVec4(0.45f, 0.85f, 0.55f, 1);
    case SummaryRow::Tone::Bad: return ImVec4(1.0f, 0.45f, 0.45f, 1);
    case SummaryRow::Tone::Unchecked: return ImVec4(0.95f, 0.75f, 0.3f, 1);
    case SummaryRow::Tone::Normal: break;
  }
  return ImVec4(0.86f, 0.87f, 0.9f, 1);
}

}  // namespace

float summary_name_width(bool compact) { return compact ? 86.0f : 130.0f; }

void draw_summary(const TraceModel& model, bool compact) {
  if (!ImGui::BeginTable("summary", 2, ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, summary_name_width(compact));
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  for (const SummaryRow& r : summary_rows(model, compact)) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextColored(tone_colour(SummaryRow::Tone::Dim), "%s", r.name.c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::PushStyleColor(ImGuiCol_Text, tone_colour(r.tone));
    text_wrapped(r.value);
    ImGui::PopStyleColor();
  }
  ImGui::EndTable();
}

}  // namespace gpulb::viewer
