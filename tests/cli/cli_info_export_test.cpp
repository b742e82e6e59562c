// The gpulb command line, run as a user runs it: `gpulb info` and `gpulb export`: what they read, count and write, and the files they refuse.
#include "cli_fixture.hpp"

namespace {

using gpulb::testing::Cli;
using gpulb::testing::file_text;
using gpulb::testing::gpulb;
using gpulb::testing::Outcome;
using gpulb::testing::shell_gpulb;
using gpulb::testing::small_trace;

// CSV tables are named from the tasks file: a name of one of the others would be ambiguous.
// info counts the tasks that tasks spawned, and says how many a SpawnBatch names (those a Perfetto
// export links to their parent) where not all are: a file with count-only Spawn events.
TEST_F(Cli, InfoCountsSpawnedTasksAndTheOnesNamedById) {
  const Outcome run = gpulb(
      "run uts --param tree=custom --param t=1 --param a=3 --param d=6 --param b=4 --param r=19 "
      "--backend cpu --workers 2 -o " +
      path("uts.gpulb") + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const std::uint64_t tasks = nlohmann::json::parse(run.out).at("tasks");
  const Outcome info_json = gpulb("info --json " + path("uts.gpulb"));
  ASSERT_EQ(info_json.exit_code, 0) << info_json.out;
  const auto j = nlohmann::json::parse(info_json.out);
  EXPECT_EQ(j.at("spawned"), tasks - 1) << "every node but the root";
  EXPECT_EQ(j.at("spawned_named"), tasks - 1);
  const Outcome info = gpulb("info " + path("uts.gpulb"));
  EXPECT_NE(info.out.find("spawned     " + std::to_string(tasks - 1) + " tasks by tasks\n"),
            std::string::npos)
      << info.out;

  using namespace gpulb::trace;
  Trace t = small_trace("{}");
  t.tracks[0].events.insert(t.tracks[0].events.begin() + 3, make_event(1000, EventKind::Spawn, 5));
  t.tracks[1].events.insert(t.tracks[1].events.begin() + 3,
                            make_event(1000, EventKind::SpawnBatch, 10, 2));
  write_trace(path("mixed.gpulb"), t);
  const Outcome mixed = gpulb("info " + path("mixed.gpulb"));
  ASSERT_EQ(mixed.exit_code, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("spawned     7 tasks by tasks (2 named by id"), std::string::npos)
      << mixed.out;
}

TEST_F(Cli, ExportCsvRefusesTheNameOfACompanionTable) {
  gpulb::trace::write_trace(path("in.gpulb"), small_trace("{}"));
  const Outcome o = gpulb("export " + path("in.gpulb") + " -f csv -o " + path("run.events.csv"));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("run.events.csv"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("(run.csv)"), std::string::npos) << o.out;
  for (const char* f :
       {"run.events.csv", "run.events.workers.csv", "run.events.events.csv", "run.csv"}) {
    EXPECT_FALSE(std::filesystem::exists(path(f))) << f;
  }
}

TEST_F(Cli, ExportHelpSaysWhatEachFormatHoldsAndWhereItOpens) {
  const Outcome o = gpulb("export --help");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  for (const char* text :
       {"ui.perfetto.dev", "chrome://tracing", "pandas", "busy workers", "steals as flows",
        "run.events.csv", "run.levels.csv", "run.workers.csv", "export window", "Exit codes"}) {
    EXPECT_NE(o.out.find(text), std::string::npos) << text << " missing from:\n" << o.out;
  }
}

// A host event far before the run is left out of every format, and the command says so.
TEST_F(Cli, ExportNotesAHostEventLeftOutOfTheWindow) {
  using namespace gpulb::trace;
  Trace t = small_trace("{}");
  for (Track& tr : t.tracks) {
    for (Event& e : tr.events) e.time_ns += 50'000'000;
  }
  Track host;
  host.role = TrackRole::Host;
  host.name = "host";
  host.events = {make_event(0, EventKind::HostEnqueue, 1, 0)};
  t.tracks.push_back(host);
  write_trace(path("lone.gpulb"), t);
  const Outcome o = gpulb("export " + path("lone.gpulb") + " -f csv -o " + path("lone.csv"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("note: 1 host event far from the run left out"), std::string::npos) << o.out;
  const std::string events = file_text(path("lone.events.csv"));
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 1) << events;
}

TEST_F(Cli, MissingAndDamagedFilesAreRefused) {
  const Outcome missing = gpulb("info " + path("absent.gpulb"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("cannot open"), std::string::npos) << missing.out;

  std::ofstream(path("junk.gpulb")) << "this is not a trace";
  const Outcome junk = gpulb("export " + path("junk.gpulb") + " --format csv -o " + path("j.csv"));
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_NE(junk.out.find("not a gpulb trace"), std::string::npos) << junk.out;
  EXPECT_FALSE(std::filesystem::exists(path("j.csv")));
}

TEST_F(Cli, InfoJsonShowsADeeplyNestedResultAsTextWithANote) {
  gpulb::trace::write_trace(path("deep.gpulb"),
                            small_trace(std::string(5000, '[') + std::string(5000, ']')));
  const Outcome o = gpulb("info --json " + path("deep.gpulb"));
  ASSERT_EQ(o.exit_code, 0) << o.out.substr(0, 2000);
  ASSERT_LT(o.out.size(), 100000u) << "the nesting was printed";
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j.at("result").is_string());
  EXPECT_NE(j.at("result_note").get<std::string>().find("nested deeper than 64 levels"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(j.at("tasks"), 2);

  gpulb::trace::write_trace(path("ok.gpulb"), small_trace(R"({"answer":[1,2,3]})"));
  const Outcome ok = gpulb("info --json " + path("ok.gpulb"));
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("result").at("answer").size(), 3u);
}

TEST_F(Cli, MaxMemoryRefusesATraceOverTheBudget) {
  gpulb::trace::Trace t = small_trace("{}");
  for (std::uint64_t i = 0; i < 100000; ++i)
    t.tracks[0].events.push_back(
        gpulb::trace::make_event(2000 + i * 7 + i % 5, gpulb::trace::EventKind::DequeueFailed));
  t.tracks[0].events.push_back(
      gpulb::trace::make_event(1u << 30, gpulb::trace::EventKind::WorkerEnd));
  gpulb::trace::write_trace(path("big.gpulb"), t);
  for (const std::string& cmd :
       {"info " + path("big.gpulb") + " --max-memory 256K",
        "export " + path("big.gpulb") + " -f csv -o " + path("big.csv") + " --max-memory 256K"}) {
    const Outcome o = gpulb(cmd);
    EXPECT_EQ(o.exit_code, 2) << cmd << "\n" << o.out;
    EXPECT_NE(o.out.find(path("big.gpulb") + ": refusing to read"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("memory budget of 256 KiB"), std::string::npos) << o.out;
  }
  EXPECT_FALSE(std::filesystem::exists(path("big.csv")));
  EXPECT_EQ(gpulb("info " + path("big.gpulb") + " --max-memory 64M").exit_code, 0);
  const Outcome bad = gpulb("info " + path("big.gpulb") + " --max-memory lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--max-memory 'lots': expected a size such as 512M or 2G"),
            std::string::npos)
      << bad.out;
}

TEST_F(Cli, InfoRefusesATrackWhoseTimeGoesBackwards) {
  gpulb::trace::Trace t = small_trace("{}");
  t.tracks[1].events[2].time_ns = 5;  // the task ends before it begins
  gpulb::trace::write_trace(path("back.gpulb"), t);
  const Outcome o = gpulb("info " + path("back.gpulb"));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find(path("back.gpulb") +
                       ": corrupt trace: track 1 (worker 1): event 2's time goes backwards"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("efficiency"), std::string::npos) << o.out;
}

// --range counts from the run's start, with units, as the viewer does: a window in the middle of a
// run keeps some of its tasks and not all (a range of raw clock values would keep none).
TEST_F(Cli, ExportRangeCountsFromTheRunsStartWithUnits) {
  const Outcome run = gpulb(
      "run patterns --param pattern=P0 --param blocks=400 --param work=200 --policy task-queue "
      "--backend cpu --workers 2 -o " +
      path("p0.gpulb"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto rows = [&](const std::string& range) {
    const Outcome o = gpulb("export " + path("p0.gpulb") + " -f csv -o " + path("r.csv") +
                            (range.empty() ? "" : " --range " + range));
    EXPECT_EQ(o.exit_code, 0) << range << ": " << o.out;
    const std::string csv = file_text(path("r.csv"));
    return static_cast<long>(std::count(csv.begin(), csv.end(), '\n')) - 1;  // less the header
  };
  const long all = rows("");
  ASSERT_EQ(all, 400);
  const auto t = gpulb::trace::read_trace(path("p0.gpulb"));
  const double half_us = static_cast<double>(gpulb::trace::compute_statistics(t).makespan_ns) / 2e3;
  const long first_half = rows("0:" + std::to_string(half_us) + "us");
  const long second_half = rows(std::to_string(half_us) + "us:");
  EXPECT_GT(first_half, 0);
  EXPECT_GT(second_half, 0);
  EXPECT_LT(first_half, all);
  EXPECT_GE(first_half + second_half, all) << "a task across the middle is in both halves";
  EXPECT_EQ(rows("1000s:2000s"), 0) << "after the run's end";
  for (const char* bad : {"1ms:abc", "2ms:1ms", "1ms", "-1ms:2ms", "1:2:3"}) {
    const Outcome o =
        gpulb("export " + path("p0.gpulb") + " -f csv -o " + path("bad.csv") + " --range " + bad);
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.out;
    EXPECT_NE(o.out.find("--range '" + std::string(bad) + "'"), std::string::npos) << o.out;
    EXPECT_FALSE(std::filesystem::exists(path("bad.csv")));
  }
}

TEST_F(Cli, ExportRefusesToOverwriteItsInputADeviceOrADirectory) {
  gpulb::trace::write_trace(path("in.gpulb"), small_trace("{}"));
  const std::string before = file_text(path("in.gpulb"));
  const Outcome same = gpulb("export " + path("in.gpulb") + " -f chrome -o " + path("in.gpulb"));
  EXPECT_EQ(same.exit_code, 2) << same.out;
  EXPECT_NE(same.out.find("is the input " + path("in.gpulb") + "; refusing to write over it"),
            std::string::npos)
      << same.out;
  EXPECT_EQ(file_text(path("in.gpulb")), before);

  const Outcome dev = gpulb("export " + path("in.gpulb") + " -f chrome -o /dev/null");
  EXPECT_EQ(dev.exit_code, 2) << dev.out;
  EXPECT_NE(dev.out.find("/dev/null: is a character device; refusing to replace it"),
            std::string::npos)
      << dev.out;
  EXPECT_EQ(std::filesystem::status("/dev/null").type(), std::filesystem::file_type::character);

  std::filesystem::create_directory(path("out.json"));
  const Outcome dir = gpulb("export " + path("in.gpulb") + " -f chrome -o " + path("out.json"));
  EXPECT_EQ(dir.exit_code, 2) << dir.out;
  EXPECT_NE(dir.out.find(path("out.json") + ": is a directory"), std::string::npos) << dir.out;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

// A valid trace whose track name is not UTF-8 (fuzz/corpus/export/repro-export-invalid-utf8-track-name.bin):
// `info --json` must not throw on it (nlohmann's type_error.316).
TEST_F(Cli, InfoJsonOfATrackNameThatIsNotUtf8Works) {
  gpulb::trace::Trace t;
  t.meta.scenario = "patterns";
  t.meta.policy = "hardware";
  t.devices.push_back({});
  gpulb::trace::Track track;
  track.name = "worker \xff\xfe 0";
  track.events.push_back(gpulb::trace::make_event(10, gpulb::trace::EventKind::TaskBegin, 0, 0));
  track.events.push_back(gpulb::trace::make_event(20, gpulb::trace::EventKind::TaskEnd, 0, 0));
  t.tracks.push_back(track);
  const std::string file = (dir_ / "latin1.gpulb").string();
  gpulb::trace::write_trace(file, t);
  const Outcome o = gpulb("info --json " + file);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NO_THROW({
    [[maybe_unused]] const auto parsed = nlohmann::json::parse(o.out.substr(o.out.find('{')));
  }) << o.out;
}

}  // namespace
