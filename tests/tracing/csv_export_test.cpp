// gpulb export --format csv: four tables (tasks, workers, events, levels) named from one path, on
// the export's clock, every argument under its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

using Row = std::map<std::string, std::string>;

// A table as rows of column -> cell (no cell in these tables holds a comma).
std::vector<Row> table(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::istringstream h(line);
  for (std::string c; std::getline(h, c, ',');) header.push_back(c);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    Row r;
    std::istringstream cells(line);
    std::size_t i = 0;
    for (std::string c; i < header.size(); ++i) {
      if (!std::getline(cells, c, ',')) c.clear();
      r[header[i]] = c;
    }
    rows.push_back(r);
  }
  return rows;
}

template <typename Write>
std::vector<Row> rows_of(Write write, const Trace& t) {
  std::ostringstream out;
  write(out, t, TimeRange{});
  return table(out.str());
}

// Two workers' tasks and levels (make_trace), a steal, a spawn (count only) and a spawn batch, a
// failed dequeue, a deque level and the host's enqueue, launch and pool level.
Trace a_bit_of_everything() {
  Trace t = gpulb::testing::make_trace(2, 2, 100);
  Track& w1 = t.tracks[1];
  w1.events.insert(
      w1.events.end() - 1,
      {make_event(200, EventKind::Spawn, 3), make_event(200, EventKind::DequeLevel, 3, 1),
       make_event(201, EventKind::DequeueFailed, 0, 0), make_event(202, EventKind::Steal, 0, 0)});
  Track& w0 = t.tracks[0];
  w0.events.insert(w0.events.end() - 1, make_event(w0.events[w0.events.size() - 2].time_ns,
                                                   EventKind::SpawnBatch, 4000, 2));
  w1.events.back().time_ns = 203;
  w1.events[2].flags = kTimeInterpolated;  // its first task's begin
  Track& host = t.tracks[2];
  host.events.push_back(make_event(1, EventKind::KernelLaunch, 2, 0));
  host.events.push_back(make_event(2, EventKind::PoolLevel, 9, 0));
  return t;
}

TEST(CsvExport, OneRowPerTaskAndPerWorker) {
  const Trace t = gpulb::testing::make_trace(3, 4, 50);
  std::ostringstream tasks, workers;
  write_tasks_csv(tasks, t);
  write_workers_csv(workers, t);
  auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  EXPECT_EQ(lines(tasks.str()), 1 + 12);
  EXPECT_EQ(lines(workers.str()), 1 + 3);
  EXPECT_NE(tasks.str().find("0,0,-1,0,3,0,50,50\n"), std::string::npos) << tasks.str();
}

// Tasks (two edges each), events and levels hold every event but the workers' start and end.
TEST(CsvExport, TasksEventsAndLevelsHoldEveryEvent) {
  const Trace t = a_bit_of_everything();
  std::size_t worker_edges = 0;
  for (const Track& tr : t.tracks) {
    for (const Event& e : tr.events)
      worker_edges += e.kind == EventKind::WorkerStart || e.kind == EventKind::WorkerEnd;
  }
  const std::size_t rows = 2 * rows_of(write_tasks_csv, t).size() +
                           rows_of(write_events_csv, t).size() +
                           rows_of(write_levels_csv, t).size();
  EXPECT_EQ(rows + worker_edges, t.event_count());
}

TEST(CsvExport, EventsNameEveryArgument) {
  const Trace t = a_bit_of_everything();
  std::ostringstream out;
  write_events_csv(out, t);
  const std::string header = out.str().substr(0, out.str().find('\n'));
  std::set<std::string> columns;
  std::istringstream h(header);
  for (std::string c; std::getline(h, c, ',');)
    EXPECT_TRUE(columns.insert(c).second) << "column " << c << " twice";
  std::map<std::string, Row> by_event;
  for (const Row& r : table(out.str())) by_event[r.at("event")] = r;
  // host_enqueue, kernel_launch, spawn, spawn_batch, dequeue_failed, steal
  ASSERT_EQ(by_event.size(), 6u) << out.str();
  const Row& steal = by_event.at("steal");
  EXPECT_EQ(steal.at("victim_worker"), "0");
  EXPECT_EQ(steal.at("victim_device"), "0");
  EXPECT_EQ(steal.at("children"), "");
  EXPECT_EQ(steal.at("worker"), "1");
  EXPECT_EQ(steal.at("role"), "worker");
  EXPECT_EQ(steal.at("time_ns"), "202");
  EXPECT_EQ(by_event.at("spawn").at("children"), "3");
  EXPECT_EQ(by_event.at("spawn").at("first_child"), "") << "a count-only spawn names no child";
  EXPECT_EQ(by_event.at("spawn_batch").at("children"), "2");
  EXPECT_EQ(by_event.at("spawn_batch").at("first_child"), "4000");
  EXPECT_EQ(steal.at("first_child"), "");
  EXPECT_EQ(by_event.at("kernel_launch").at("blocks"), "2");
  EXPECT_EQ(by_event.at("kernel_launch").at("role"), "host");
  EXPECT_EQ(by_event.at("host_enqueue").at("tasks"), "128");
  EXPECT_EQ(by_event.at("host_enqueue").at("queue"), "1");
}

TEST(CsvExport, LevelsSayWhoseLevelTheyAre) {
  const std::vector<Row> rows = rows_of(write_levels_csv, a_bit_of_everything());
  std::map<std::string, std::size_t> sources;
  for (const Row& r : rows) {
    ++sources[r.at("source")];
    if (r.at("source") == "queue") {
      EXPECT_EQ(r.at("queue"), "0");
      EXPECT_EQ(r.at("owner"), "");
    }
    if (r.at("source") == "deque") {
      EXPECT_EQ(r.at("owner"), "1");
      EXPECT_EQ(r.at("tasks"), "3");
      EXPECT_EQ(r.at("queue"), "");
    }
    if (r.at("source") == "pool") {
      EXPECT_EQ(r.at("tasks"), "9");
    }
  }
  EXPECT_EQ(sources, (std::map<std::string, std::size_t>{{"deque", 1}, {"pool", 1}, {"queue", 4}}));
  std::size_t interpolated = 0;
  for (const Row& r : rows) interpolated += r.at("interpolated") == "1";
  EXPECT_EQ(interpolated, 0u) << "only a task's begin was flagged";
}

// Times count from the export window's start in every table.
TEST(CsvExport, TimesCountFromTheWindowsStart) {
  Trace t = a_bit_of_everything();
  for (Track& tr : t.tracks) {
    for (Event& e : tr.events) e.time_ns += 7'000'000;
  }
  EXPECT_EQ(rows_of(write_tasks_csv, t).front().at("start_ns"), "0");
  EXPECT_EQ(rows_of(write_levels_csv, t).front().at("time_ns"), "0");
  const std::vector<Row> events = rows_of(write_events_csv, t);
  EXPECT_EQ(events.back().at("time_ns"), "1") << events.back().at("event");
}

TEST(CsvExport, CompanionTablesAreNamedFromTheTasksFile) {
  const auto paths = export_paths(ExportFormat::Csv, "out/run.csv");
  const std::vector<std::filesystem::path> want = {"out/run.csv", "out/run.workers.csv",
                                                   "out/run.events.csv", "out/run.levels.csv"};
  EXPECT_EQ(paths, want);
  EXPECT_EQ(export_paths(ExportFormat::Perfetto, "run.events.csv"),
            std::vector<std::filesystem::path>{"run.events.csv"});
}

// "run.events.csv" would hold the tasks, and its own events would go to run.events.events.csv.
TEST(CsvExport, ANameOfACompanionTableIsRefused) {
  for (const char* name : {"run.workers.csv", "out/run.events.csv", "run.levels.csv"}) {
    try {
      export_paths(ExportFormat::Csv, name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const OutputPathError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("(run.csv)"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace gpulb::trace
