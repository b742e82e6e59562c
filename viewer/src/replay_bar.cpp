// Replay: a playhead that plays the run back at a chosen speed, or follows a scrubber. The
// histograms and occupancy views show the state at the playhead; the timeline marks it.
#include <algorithm>
#include <string>

#include "draw.hpp"
#include "run_span.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {

double effective_playhead(const TraceModel& model, const Playhead& p) {
  return p.active ? p.time_ns : run_span(model).end_ns;
}

void draw_replay_bar(const TimeSpan& span, Playhead& p, float dt_s) {
  // The view's span: on a trace's own views the run as the summary counts it ("of 858 us" is its
  // makespan), in Compare the time from the launch that its rulers count.
  const double begin = span.begin_ns, end = span.end_ns;
  if (p.playing) {
    // At speed 1 the whole run plays in 10 s, whatever its length: runs last from microseconds to
    // seconds, and a class wants to watch any of them.
    p.time_ns += (end - begin) / 10.0 * p.speed * dt_s;
    if (p.time_ns >= end) {
      p.time_ns = end;
      p.playing = false;
    }
  }
  if (ImGui::Button(p.playing ? "Pause" : "Play", ImVec2(64, 0))) {
    if (!p.active || p.time_ns >= end) p.time_ns = begin;
    p.active = true;
    p.playing = !p.playing;
  }
  ImGui::SameLine();
  if (ImGui::Button("|<")) {
    p.active = true;
    p.time_ns = begin;
  }
  ImGui::SameLine();
  if (ImGui::Button("Off")) {
    p.active = false;
    p.playing = false;
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderFloat("speed", &p.speed, 0.05f, 10.0f, "%.2fx", ImGuiSliderFlags_Logarithmic);
  ImGui::SameLine();
  float frac =
      static_cast<float>(end > begin && p.active ? (p.time_ns - begin) / (end - begin) : 1.0);
  const std::string label =
      p.active ? format_time(p.time_ns - begin) + " of " + format_time(end - begin)
               : "whole run (" + format_time(end - begin) + "): press Play or drag to replay";
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  if (ImGui::SliderFloat("##scrub", &frac, 0.0f, 1.0f, label.c_str())) {
    p.active = true;
    p.time_ns = begin + (end - begin) * frac;
  }
}

}  // namespace gpulb::viewer
