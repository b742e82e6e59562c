#include "summary_rows.hpp"

#include "text_wrap.hpp"

#include <algorithm>
#include <cstdio>

#include "device_names.hpp"
#include "display_text.hpp"
#include "time_format.hpp"

namespace gpulb::viewer {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Which bound the summary states, in words: a reader judges the makespan against it.
std::string lower_bound_note(const trace::TraceStatistics& st) {
  if (st.lower_bound != trace::LowerBound::CriticalPath)
    return "(lower bound = total busy / workers: the makespan of a perfect balance)";
  const trace::CriticalPath& cp = st.critical_path;
  return "(lower bound = the critical path: " + std::to_string(cp.chain_tasks()) +
         " tasks from the root to the deepest leaf, " + std::to_string(cp.depth) +
         " levels down, run one after another, each at least " +
         format_time(static_cast<double>(cp.shortest_parent_ns)) +
         "; total busy / workers: " + format_time(st.balance_bound_ns) + ")";
}

// Steals within a device and, where the run spans several, those that took from another device.
std::string steals_text(const trace::Trace& t, const trace::TraceStatistics& st) {
  std::string s = std::to_string(st.steals) + " (" + std::to_string(st.failed_steals) + " failed)";
  if (t.devices.size() < 2 || st.steals == 0) return s;
  const bool gpus = std::all_of(t.devices.begin(), t.devices.end(), [](const trace::Device& d) {
    return d.kind == trace::DeviceKind::Gpu;
  });
  return s + ", " + std::to_string(st.steals_across_devices) +
         (gpus ? " across GPUs" : " across devices");
}

}  // namespace

std::vector<SummaryRow> summary_rows(const TraceModel& model, bool compact) {
  using Tone = SummaryRow::Tone;
  const trace::Trace& t = model.header();
  const trace::TraceStatistics& st = model.stats();
  std::vector<SummaryRow> rows;
  auto row = [&rows](std::string name, const std::string& value, Tone tone = Tone::Normal) {
    rows.push_back({std::move(name), display_text(value), tone});
  };
  // Device rows: a file can claim 100,000 devices; the side panel has room for a few.
  const std::size_t listed = compact ? 8 : 64;
  std::string params;  // each part clipped first: the row would keep only the first long one
  for (const auto& [k, v] : t.meta.parameters)
    params += (params.empty() ? "" : " ") + display_label(k) + "=" + display_label(v);
  row("scenario", display_label(t.meta.scenario) + (params.empty() ? "" : "  " + params));
  row("policy", t.meta.policy + " on " + t.meta.backend);
  for (std::size_t i = 0; i < std::min(t.devices.size(), listed); ++i)
    row("device", device_line(t.devices[i]));
  if (t.devices.size() > listed)
    row("", "(" + std::to_string(t.devices.size() - listed) + " more devices not listed)");
  if (!model.omitted().empty()) row("shown", model.omitted(), Tone::Bad);
  row("makespan", format_time(static_cast<double>(st.makespan_ns)) + "   lower bound " +
                      format_time(st.lower_bound_ns));
  row("", lower_bound_note(st), Tone::Dim);
  row("efficiency", fmt("%.1f%%", 100.0 * st.efficiency));
  row("imbalance", fmt("%.3f max/mean busy", st.load.imbalance) + "  (min " +
                       format_time(static_cast<double>(st.load.min_busy_ns)) + ", max " +
                       format_time(static_cast<double>(st.load.max_busy_ns)) + ")");
  row("tasks", std::to_string(st.tasks) + " on " + std::to_string(st.workers) + " workers");
  row("steals", steals_text(t, st));
  // A distributed run's steals between ranks are chunks of tasks, counted on the ranks' host tracks.
  if (t.meta.ranks > 1 || st.rank_steals > 0) {
    row("between ranks", std::to_string(st.rank_steals) + " chunks moved (" +
                             std::to_string(st.rank_tasks_moved) + " tasks)");
  }
  row("idle polls", std::to_string(st.failed_dequeues) + " failed dequeues");
  row("events",
      std::to_string(st.events) + " recorded, " + std::to_string(st.dropped_events) + " dropped",
      st.dropped_events ? Tone::Bad : Tone::Normal);
  // Three outcomes: verified, failed, or nothing compared the result (meta.checked false). The
  // verification text of an unchecked run already begins "not checked: ".
  const char* outcome = t.meta.verified ? "yes: " : (t.meta.checked ? "NO: " : "");
  row("verified", outcome + t.meta.verification,
      t.meta.verified ? Tone::Good : (t.meta.checked ? Tone::Bad : Tone::Unchecked));
  if (!compact) {
    row("clock", t.meta.clock_source);
    row("recorded", t.meta.created_utc + " by gpulb " + t.meta.gpulb_version);
    for (std::size_t i = 0; i < std::min(st.per_device.size(), listed); ++i) {
      const trace::GroupStats& g = st.per_device[i];
      row(display_label(g.label), std::to_string(g.tasks) + " tasks, busy " +
                                      format_time(static_cast<double>(g.busy_ns)) + " over " +
                                      std::to_string(g.workers) + " workers");
    }
    if (!t.meta.result_json.empty() && t.meta.result_json != "{}")
      row("result", t.meta.result_json);
  }
  return rows;
}

int wrapped_lines(std::string_view text, float width, const TextWidth& text_width) {
  return static_cast<int>(wrap_at_spaces(text, width, text_width).size());
}

float summary_height(const std::vector<SummaryRow>& rows, float value_w, float line_h,
                     float row_pad, const TextWidth& text_width) {
  float h = 0.0f;
  for (const SummaryRow& r : rows)
    h += static_cast<float>(wrapped_lines(r.value, value_w, text_width)) * line_h + row_pad;
  return h;
}

}  // namespace gpulb::viewer
