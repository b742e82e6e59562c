#include "gpulb/tracing/export.hpp"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "export_args.hpp"
#include "export_text.hpp"
#include "gpulb/tracing/export_window.hpp"
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

using detail::quoted;

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
  const ExportWindow w = export_window(trace, range);
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"scenario\":" << quoted(trace.meta.scenario)
      << ",\"policy\":" << quoted(trace.meta.policy)
      << ",\"backend\":" << quoted(trace.meta.backend)
      << ",\"gpulb_version\":" << quoted(trace.meta.gpulb_version) << "},\n\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::uint32_t d = 0; d < trace.devices.size(); ++d) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << d + 1
        << ",\"args\":{\"name\":" << quoted(process_name(trace, d)) << "}}";
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
    for_each_task_span(tr, [&](const TaskSpan& s) {
      if (!w.range.overlaps(s.begin_ns, s.end_ns)) return;
      sep();
      out << "{\"ph\":\"X\",\"cat\":\"task\",\"name\":\"task kind " << s.kind
          << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(w.at(s.begin_ns))
          << ",\"dur\":" << micros(s.end_ns - s.begin_ns) << ",\"args\":{\"task_id\":" << s.id
          << ",\"kind\":" << s.kind << "}}";
    });
    for (const Event& e : tr.events) {
      if (!w.keeps(e.time_ns)) continue;
      const EventTraits k = event_traits(e.kind);
      if (k.level != LevelSource::None) {
        sep();
        out << "{\"ph\":\"C\",\"name\":" << quoted(counter_name(k.level, e.aux))
            << ",\"pid\":" << pid << ",\"ts\":" << micros(w.at(e.time_ns))
            << ",\"args\":{\"level\":" << e.arg << "}}";
      } else if (k.marker) {
        sep();
        out << "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"" << k.name << "\",\"pid\":" << pid
            << ",\"tid\":" << tid << ",\"ts\":" << micros(w.at(e.time_ns)) << ",\"args\":{";
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

namespace {

constexpr const char* kCsvCompanions[] = {".workers.csv", ".events.csv", ".levels.csv"};

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

std::vector<std::filesystem::path> export_paths(ExportFormat format,
                                                const std::filesystem::path& path) {
  if (format != ExportFormat::Csv) return {path};
  const std::string name = path.filename().string();
  for (const std::string companion : kCsvCompanions) {
    if (!ends_with(name, companion)) continue;
    const std::string tasks = name.substr(0, name.size() - companion.size()) + ".csv";
    throw OutputPathError(
        path.string() + ": a CSV export writes its tasks to the file named and the tables *" +
        ".workers.csv, *.events.csv and *.levels.csv beside it, so '" + name +
        "' would hold the tasks under another table's name; name the tasks file instead (" + tasks +
        ")");
  }
  std::vector<std::filesystem::path> out = {path};
  for (const char* companion : kCsvCompanions)
    out.push_back(std::filesystem::path(path).replace_extension(companion));
  return out;
}

std::vector<std::filesystem::path> export_trace(const Trace& trace, ExportFormat format,
                                                const std::filesystem::path& path,
                                                TimeRange range) {
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
    write_events_csv(files[2]->out(), trace, range);
    write_levels_csv(files[3]->out(), trace, range);
  }
  for (auto& f : files) f->finish();
  for (auto& f : files) f->commit();
  return paths;
}

}  // namespace gpulb::trace
