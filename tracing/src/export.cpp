#include "gpulb/tracing/export.hpp"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "export_args.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace gpulb::trace {
namespace {

// ns -> "123.456" microseconds, exact (the format wants microseconds; we keep every digit).
std::string micros(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buf;
}

// Names come from the file (a track's name is raw bytes): invalid UTF-8 becomes U+FFFD instead of
// a json type_error thrown half way through an export (found by fuzz/export_fuzzer.cpp).
std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string process_name(const Trace& t, std::uint32_t device) {
  if (device >= t.devices.size()) return "device " + std::to_string(device);
  const Device& d = t.devices[device];
  if (d.kind == DeviceKind::Gpu) return "GPU " + std::to_string(d.index) + ": " + d.name;
  return d.name;
}

// One counter per queue and per deque (aux names which); the host pool is one counter.
std::string counter_name(LevelSource source, std::uint16_t aux) {
  switch (source) {
    case LevelSource::Queue: return "queue " + std::to_string(aux);
    case LevelSource::Deque: return "deque " + std::to_string(aux);
    case LevelSource::Pool: return "host pool";
    case LevelSource::None: break;
  }
  return "level";
}

// Track i of device d is thread i+1 of process d+1 (0 is reserved in some viewers).
int pid_of(const Track& tr) { return static_cast<int>(tr.device) + 1; }
int tid_of(std::size_t track_index) { return static_cast<int>(track_index) + 1; }

}  // namespace

void write_chrome_json(std::ostream& out, const Trace& trace, TimeRange range) {
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"scenario\":" << quoted(trace.meta.scenario)
      << ",\"policy\":" << quoted(trace.meta.policy) << ",\"backend\":" << quoted(trace.meta.backend)
      << ",\"gpulb_version\":" << quoted(trace.meta.gpulb_version) << "},\n\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::uint32_t d = 0; d < trace.devices.size(); ++d) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << d + 1 << ",\"args\":{\"name\":"
        << quoted(process_name(trace, d)) << "}}";
  }
  for (std::size_t i = 0; i < trace.tracks.size(); ++i) {
    const Track& tr = trace.tracks[i];
    const int pid = pid_of(tr), tid = tid_of(i);
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"args\":{\"name\":" << quoted(tr.name) << "}}";
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"args\":{\"sort_index\":" << tid << "}}";
    for (const TaskSpan& s : task_spans(tr)) {
      if (!range.overlaps(s.begin_ns, s.end_ns)) continue;
      sep();
      out << "{\"ph\":\"X\",\"cat\":\"task\",\"name\":\"task kind " << s.kind << "\",\"pid\":" << pid
          << ",\"tid\":" << tid << ",\"ts\":" << micros(s.begin_ns) << ",\"dur\":" << micros(s.end_ns - s.begin_ns)
          << ",\"args\":{\"task_id\":" << s.id << ",\"kind\":" << s.kind << "}}";
    }
    for (const Event& e : tr.events) {
      if (!range.contains(e.time_ns)) continue;
      const EventTraits k = event_traits(e.kind);
      if (k.level != LevelSource::None) {
        sep();
        out << "{\"ph\":\"C\",\"name\":" << quoted(counter_name(k.level, e.aux)) << ",\"pid\":" << pid
            << ",\"ts\":" << micros(e.time_ns) << ",\"args\":{\"level\":" << e.arg << "}}";
      } else if (k.marker) {
        sep();
        out << "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"" << k.name << "\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"ts\":" << micros(e.time_ns) << ",\"args\":{";
        const char* comma = "";
        for (const detail::NamedArg& a : detail::named_args(e, tr.device)) {
          out << comma << '"' << a.name << "\":" << a.value;
          comma = ",";
        }
        out << "}}";
      }
    }
  }
  out << "\n]}\n";
}

void write_tasks_csv(std::ostream& out, const Trace& trace, TimeRange range) {
  out << "device,worker,sm,task_id,kind,start_ns,end_ns,duration_ns\n";
  for (const Track& tr : trace.tracks) {
    const long long sm = tr.sm == Track::kNoSm ? -1 : static_cast<long long>(tr.sm);
    for (const TaskSpan& s : task_spans(tr)) {
      if (!range.overlaps(s.begin_ns, s.end_ns)) continue;
      out << tr.device << ',' << tr.worker << ',' << sm << ',' << s.id << ',' << s.kind << ',' << s.begin_ns << ','
          << s.end_ns << ',' << (s.end_ns - s.begin_ns) << '\n';
    }
  }
}

void write_workers_csv(std::ostream& out, const Trace& trace) {
  const TraceStatistics st = compute_statistics(trace);
  out << "device,worker,sm,name,tasks,busy_ns,failed_dequeues,steals,dropped_events\n";
  for (const WorkerStats& w : st.per_worker) {
    const Track& tr = trace.tracks[w.track];
    const long long sm = tr.sm == Track::kNoSm ? -1 : static_cast<long long>(tr.sm);
    out << tr.device << ',' << tr.worker << ',' << sm << ',' << quoted(tr.name) << ',' << w.tasks << ','
        << w.busy_ns << ',' << w.failed_dequeues << ',' << w.steals << ',' << tr.dropped << '\n';
  }
}

std::vector<std::filesystem::path> export_paths(ExportFormat format, const std::filesystem::path& path) {
  if (format != ExportFormat::Csv) return {path};
  std::filesystem::path workers = path;
  workers.replace_extension(".workers.csv");
  return {path, workers};
}

std::vector<std::filesystem::path> export_trace(const Trace& trace, ExportFormat format,
                                                const std::filesystem::path& path, TimeRange range) {
  const std::vector<std::filesystem::path> paths = export_paths(format, path);
  // Every output is checked and written to its temporary file before any is renamed into place,
  // so a refused or failed second CSV leaves neither file behind, complete or half.
  std::vector<std::unique_ptr<AtomicWrite>> files;
  for (const auto& p : paths) files.push_back(std::make_unique<AtomicWrite>(p));
  if (format == ExportFormat::Chrome) {
    write_chrome_json(files[0]->out(), trace, range);
  } else if (format == ExportFormat::Perfetto) {
    write_perfetto(files[0]->out(), trace, range);
  } else {
    write_tasks_csv(files[0]->out(), trace, range);
    write_workers_csv(files[1]->out(), trace);
  }
  for (auto& f : files) f->finish();
  for (auto& f : files) f->commit();
  return paths;
}

}  // namespace gpulb::trace
