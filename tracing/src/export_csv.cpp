// The CSV tables of an export, for analysis (pandas, R, a spreadsheet): tasks, workers, events
// and levels. Each row says where (device, worker, SM, role of its track) and, except the
// workers' summary, when on the export's clock (export_window.hpp). docs/viewer.md documents
// every column.
#include <algorithm>
#include <string_view>
#include <vector>

#include "export_args.hpp"
#include "export_text.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/export_window.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace gpulb::trace {
namespace {

long long sm_of(const Track& tr) {
  return tr.sm == Track::kNoSm ? -1 : static_cast<long long>(tr.sm);
}

const char* role_name(TrackRole role) {
  switch (role) {
    case TrackRole::Worker: return "worker";
    case TrackRole::Host: return "host";
    case TrackRole::SmLane: return "sm_lane";
  }
  return "unknown";
}

const char* source_name(LevelSource s) {
  switch (s) {
    case LevelSource::Queue: return "queue";
    case LevelSource::Deque: return "deque";
    case LevelSource::Pool: return "pool";
    case LevelSource::None: break;
  }
  return "";
}

// The events table's argument columns: every argument name a marker kind has, in kind order.
std::vector<std::string_view> event_columns() {
  std::vector<std::string_view> names;
  for (int k = 1; k < static_cast<int>(EventKind::Count); ++k) {
    const auto kind = static_cast<EventKind>(k);
    if (!event_traits(kind).marker) continue;
    const EventArgNames a = event_arg_names(kind);
    for (const char* n : {a.arg, a.aux}) {
      if (*n && std::find(names.begin(), names.end(), n) == names.end()) names.emplace_back(n);
    }
  }
  return names;
}

void where(std::ostream& out, const Track& tr) {
  out << tr.device << ',' << tr.worker << ',' << sm_of(tr) << ',' << role_name(tr.role) << ',';
}

}  // namespace

void write_tasks_csv(std::ostream& out, const Trace& trace, TimeRange range) {
  const ExportWindow w = export_window(trace, range);
  out << "device,worker,sm,task_id,kind,start_ns,end_ns,duration_ns\n";
  for (const Track& tr : trace.tracks) {
    for_each_task_span(tr, [&](const TaskSpan& s) {
      if (!w.range.overlaps(s.begin_ns, s.end_ns)) return;
      out << tr.device << ',' << tr.worker << ',' << sm_of(tr) << ',' << s.id << ',' << s.kind
          << ',' << w.at(s.begin_ns) << ',' << w.at(s.end_ns) << ',' << (s.end_ns - s.begin_ns)
          << '\n';
    });
  }
}

void write_workers_csv(std::ostream& out, const Trace& trace) {
  const TraceStatistics st = compute_statistics(trace);
  out << "device,worker,sm,name,tasks,busy_ns,failed_dequeues,steals,dropped_events\n";
  for (const WorkerStats& ws : st.per_worker) {
    const Track& tr = trace.tracks[ws.track];
    out << tr.device << ',' << tr.worker << ',' << sm_of(tr) << ',' << detail::quoted(tr.name)
        << ',' << ws.tasks << ',' << ws.busy_ns << ',' << ws.failed_dequeues << ',' << ws.steals
        << ',' << tr.dropped << '\n';
  }
}

void write_events_csv(std::ostream& out, const Trace& trace, TimeRange range) {
  const ExportWindow w = export_window(trace, range);
  const std::vector<std::string_view> columns = event_columns();
  out << "device,worker,sm,role,time_ns,event";
  for (const std::string_view c : columns) out << ',' << c;
  out << ",interpolated\n";
  for (const Track& tr : trace.tracks) {
    for (const Event& e : tr.events) {
      if (!event_traits(e.kind).marker || !w.keeps(e.time_ns)) continue;
      where(out, tr);
      out << w.at(e.time_ns) << ',' << event_kind_name(e.kind);
      const detail::NamedArgs args = detail::named_args(e, tr.device);
      for (std::size_t c = 0; c < columns.size(); ++c) {
        out << ',';
        for (const detail::NamedArg& a : args) {
          if (a.name == columns[c]) out << a.value;
        }
      }
      out << ',' << ((e.flags & kTimeInterpolated) ? 1 : 0) << '\n';
    }
  }
}

void write_levels_csv(std::ostream& out, const Trace& trace, TimeRange range) {
  const ExportWindow w = export_window(trace, range);
  out << "device,worker,sm,role,time_ns,source,queue,owner,tasks,interpolated\n";
  for (const Track& tr : trace.tracks) {
    for (const Event& e : tr.events) {
      const LevelSource source = event_traits(e.kind).level;
      if (source == LevelSource::None || !w.keeps(e.time_ns)) continue;
      where(out, tr);
      out << w.at(e.time_ns) << ',' << source_name(source) << ',';
      if (source == LevelSource::Queue) out << e.aux;
      out << ',';
      if (source == LevelSource::Deque) out << e.aux;
      out << ',' << e.arg << ',' << ((e.flags & kTimeInterpolated) ? 1 : 0) << '\n';
    }
  }
}

}  // namespace gpulb::trace
