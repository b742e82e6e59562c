// Fuzz target (b): bytes -> decode_trace -> Chrome JSON, Perfetto and CSV exports, in memory.
// Oracles: the Chrome export is valid JSON; the Perfetto export is a whole sequence of packets
// (field 1, length-delimited); the CSVs have a row per task, worker, event and level at most.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fuzz_input.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/export_window.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace {

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

// The Trace message's framing: field 1 (TracePacket), wire type 2, a varint length, that many bytes;
// nothing left over.
bool whole_packets(const std::string& s) {
  std::size_t at = 0;
  while (at < s.size()) {
    if (static_cast<unsigned char>(s[at++]) != 0x0A) return false;
    std::uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= s.size() || shift > 63) return false;
      const auto b = static_cast<unsigned char>(s[at++]);
      len |= std::uint64_t{b & 0x7Fu} << shift;
      if (!(b & 0x80)) break;
    }
    if (len > s.size() - at) return false;
    at += len;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulb;
  const std::optional<trace::Trace> t = fuzz::decode(data, size, std::uint64_t{4} << 20);
  if (!t) return 0;

  const trace::TraceStatistics stats = trace::compute_statistics(*t);
  const trace::ExportWindow window = trace::export_window(*t);
  std::uint64_t spans = 0, spans_in_window = 0;
  for (const trace::Track& tr : t->tracks) {
    for (const trace::TaskSpan& s : trace::task_spans(tr)) {
      ++spans;
      spans_in_window += window.range.overlaps(s.begin_ns, s.end_ns) ? 1 : 0;
    }
  }

  std::ostringstream chrome;
  trace::write_chrome_json(chrome, *t);
  GPULB_FUZZ_CHECK(nlohmann::json::accept(chrome.str()));

  std::ostringstream perfetto;
  trace::write_perfetto(perfetto, *t);
  GPULB_FUZZ_CHECK(!perfetto.str().empty() && whole_packets(perfetto.str()));

  std::ostringstream tasks, workers, events, levels;
  trace::write_tasks_csv(tasks, *t);
  trace::write_workers_csv(workers, *t);
  trace::write_events_csv(events, *t);
  trace::write_levels_csv(levels, *t);
  GPULB_FUZZ_CHECK(lines(tasks.str()) == 1 + spans_in_window);
  GPULB_FUZZ_CHECK(lines(workers.str()) == 1 + stats.per_worker.size());
  GPULB_FUZZ_CHECK(lines(events.str()) + lines(levels.str()) <= 2 + t->event_count());

  // A time range: the second half of the run.
  const trace::TimeRange half{stats.begin_ns + stats.makespan_ns / 2, stats.end_ns + 1};
  std::ostringstream chrome_half, tasks_half;
  trace::write_chrome_json(chrome_half, *t, half);
  trace::write_tasks_csv(tasks_half, *t, half);
  GPULB_FUZZ_CHECK(nlohmann::json::accept(chrome_half.str()));
  GPULB_FUZZ_CHECK(lines(tasks_half.str()) <= 1 + spans);

  const std::string histogram = trace::tasks_per_worker_histogram(stats, 8, 30);
  GPULB_FUZZ_CHECK(!histogram.empty());
  return 0;
}
