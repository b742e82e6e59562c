// The gpulb command line, run as a user runs it: Outputs and memory: every writer checks its output first, writes whole or not at all, and a run that cannot fit is refused before it allocates.
#include "cli_fixture.hpp"

namespace {

using gpulb::testing::Cli;
using gpulb::testing::file_text;
using gpulb::testing::gpulb;
using gpulb::testing::Outcome;
using gpulb::testing::shell_gpulb;
using gpulb::testing::small_trace;

TEST_F(Cli, OutputIntoAMissingDirectoryIsRefusedBeforeRunning) {
  const Outcome o = gpulb("run patterns --backend cpu -o " + path("no/such/dir/t.gpulb"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("does not exist"), std::string::npos) << o.out;
}

TEST_F(Cli, UnknownBackendAndFormatAreRefusedByTheParser) {
  EXPECT_NE(gpulb("run patterns --backend tpu").exit_code, 0);
  EXPECT_NE(gpulb("export x.gpulb --format xml -o y").exit_code, 0);
}

// An unwritable output is refused (exit 2) before any work: the run asked for here would fail as
// soon as it started (exit 1: the root's children are more than spawn_capacity).
TEST_F(Cli, AnUnwritableOutputIsRefusedBeforeTheRun) {
  const std::string failing_run =
      "run nqueens --backend cpu --policy static-list --param n=8 --param spawn_capacity=1 ";
  const Outcome runs = gpulb(failing_run + "-o " + path("ok.gpulb"));
  ASSERT_EQ(runs.exit_code, 1) << runs.out;
  ASSERT_NE(runs.out.find("more than spawn_capacity=1"), std::string::npos) << runs.out;
  std::filesystem::create_directory(path("adir"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {path("adir"), path("adir") + ": is a directory"},
      {"/dev/null", "/dev/null: is a character device"},
      {path("missing/t.gpulb"), "does not exist"},
      {"/proc/t.gpulb", "/proc/t.gpulb: cannot write in /proc"}};
  for (const auto& [out, message] : cases) {
    const Outcome o = gpulb(failing_run + "-o " + out);
    EXPECT_EQ(o.exit_code, 2) << out << ": " << o.out;
    EXPECT_NE(o.out.find(message), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("spawn_capacity"), std::string::npos)
        << out << ": the run started: " << o.out;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

// -o '' named no file: run wrote nothing with exit 0, export failed with a filesystem error.
TEST_F(Cli, AnEmptyOutputNameIsABadArgument) {
  for (const char* cmd :
       {"run patterns --backend cpu --param blocks=8 -o ''", "export x.gpulb -f csv -o ''",
        "bench dispatch --backend cpu --tasks 1000 --repeats 1 -o ''"}) {
    const Outcome o = shell_gpulb("", cmd);
    EXPECT_EQ(o.exit_code, 2) << cmd << ": " << o.out;
    EXPECT_NE(o.out.find("-o '': expected a file name"), std::string::npos) << cmd << ": " << o.out;
  }
}

// README: an output that cannot be written is a bad argument (exit 2), refused before any work and
// named in the message, whichever program or subcommand was to write it.
TEST_F(Cli, AnUnwritableOutputExitsTwoFromEveryWriter) {
  gpulb::trace::write_trace(path("in.gpulb"), small_trace("{}"));
  const std::string cli = GPULB_CLI;
  const std::string in = path("in.gpulb");
  // OUT stands for the output.
  std::vector<std::string> writers = {
      cli + " run patterns --backend cpu --param blocks=8 -o OUT",
      cli + " export " + in + " -f chrome -o OUT",
      cli + " export " + in + " -f csv -o OUT",
      cli + " bench dispatch --backend cpu --tasks 1000 --repeats 1 -o OUT",
      cli + " lesson record chen-fig7 --backend cpu --repeats 1 -o OUT",
  };
#ifdef GPULB_VIEWER_EXE
  const std::string viewer = GPULB_VIEWER_EXE;
  writers.push_back(viewer + " " + in + " --size 640x480 --screenshot OUT");
  writers.push_back(viewer + " --make-synthetic OUT --bench-events 1000");
#endif
  const std::filesystem::path read_only = dir_ / "read-only";
  std::filesystem::create_directories(read_only);
  std::filesystem::permissions(
      read_only, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  // /proc takes no new file even from root, for whom permission bits do not bite.
  std::vector<std::string> outputs = {path("no-such-dir/out.x"), "/proc/gpulb-out.x"};
  if (::geteuid() != 0) outputs.push_back((read_only / "out.x").string());
  for (std::string writer : writers) {
    const std::size_t at = writer.find("OUT");
    for (const std::string& output : outputs) {
      const std::string cmd = std::string(writer).replace(at, 3, output);
      const Outcome o = gpulb::testing::shell(cmd);
      EXPECT_EQ(o.exit_code, 2) << cmd << ":\n" << o.out;
      EXPECT_NE(o.out.find(output), std::string::npos) << cmd << ": the message names the output:\n"
                                                       << o.out;
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(read_only));
  std::filesystem::permissions(read_only, std::filesystem::perms::owner_all);
}

// An empty size is refused (not read as the default budget), and so is --gpus on the cpu backend
// (which would ignore it).
TEST_F(Cli, AnEmptySizeAndGpusOnTheCpuBackendAreBadArguments) {
  for (const char* cmd :
       {"run patterns --backend cpu --param blocks=8 --trace-memory ''",
        "info x.gpulb --max-memory ''", "export x.gpulb -f csv -o y.csv --max-memory ''"}) {
    const Outcome o = gpulb(cmd);
    EXPECT_EQ(o.exit_code, 2) << cmd << ": " << o.out;
    EXPECT_NE(o.out.find("'': expected a size such as 512M or 2G"), std::string::npos)
        << cmd << ": " << o.out;
  }
  const Outcome gpus = gpulb("run patterns --backend cpu --param blocks=8 --gpus 2");
  EXPECT_EQ(gpus.exit_code, 2) << gpus.out;
  EXPECT_NE(gpus.out.find("--gpus 2 applies to the cuda backend"), std::string::npos) << gpus.out;
}

// The largest resident size of this test's child processes so far, in KiB (each test runs in its
// own process under ctest).
long children_peak_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss;
}

// A run too large for this process's memory allocated for seconds and ended in std::bad_alloc
// (1.3 GB resident, exit 1, under ulimit -v 2000000), or took 3.4 GB where nothing limited it,
// with no word before it started. The estimate (scenario data + trace budget) refuses it before
// any allocation, naming the numbers and what to lower.
TEST_F(Cli, ARunThatCannotFitInMemoryIsRefusedBeforeItAllocatesNamingTheNumbers) {
  const std::string limit = "ulimit -v 1572864; ";  // 1.5 GiB
  const Outcome big = gpulb::testing::shell(
      limit + GPULB_CLI
      " run patterns --param blocks=16777216 --backend cpu --workers 2 --no-trace");
  EXPECT_EQ(big.exit_code, 2) << big.out;
  for (const char* words : {"this run needs about 3.25 GiB of memory (3 GiB for 16777216 initial "
                            "tasks + 256 MiB of scenario data)",
                            "more than the 1.5 GiB of this process's address-space limit (ulimit "
                            "-v); lower --param blocks"}) {
    EXPECT_NE(big.out.find(words), std::string::npos) << words << "\n" << big.out;
  }
  EXPECT_LT(children_peak_kib(), 100 * 1024) << "the refused run allocated its data";

  const Outcome budget = gpulb("run patterns --param blocks=64 --backend cpu --trace-memory 1T");
  EXPECT_EQ(budget.exit_code, 2) << budget.out;
  EXPECT_NE(budget.out.find("1 TiB of trace budget), more than the "), std::string::npos)
      << budget.out;
  EXPECT_NE(budget.out.find("; lower --trace-memory (or run with --no-trace)"), std::string::npos)
      << budget.out;
  EXPECT_EQ(budget.out.find("--param blocks"), std::string::npos)
      << "64 blocks are not what to lower:\n"
      << budget.out;

  // Under the same limit a run that fits runs, traced with its default budget (a quarter of the limit).
  const Outcome fits = gpulb::testing::shell(
      limit + GPULB_CLI " run patterns --param blocks=4096 --backend cpu --workers 2");
  EXPECT_EQ(fits.exit_code, 0) << fits.out;
}

// Every scenario that allocates by a parameter states it (Scenario::data_size). Without that the
// estimate held only the trace budget and these ran under the same limits until std::bad_alloc:
// md2d after 21 s (430 MiB resident), nbody after 23 s (906 MiB), connect4 after 17 s (its host
// minimax first), and md still placing atoms after 90 s.
TEST_F(Cli, EveryScenarioSizedPastTheLimitIsRefusedBeforeItAllocatesNamingItsParameter) {
  struct Case {
    const char* limit_kib;
    const char* run;
    const char* needs;
    const char* lower;
  };
  const Case cases[] = {
      {"1048576", "md --param atoms=4194304",
       "this run needs about 1.63 GiB of memory (1.63 GiB of scenario data)",
       "lower --param atoms"},
      {"1048576", "md2d --param particles=4194304",
       "this run needs about 1.45 GiB of memory (1.45 GiB of scenario data)",
       "lower --param particles"},
      {"1048576", "nbody --param particles=4194304",
       "GiB of scenario data), more than the 1 GiB of", "lower --param particles"},
      {"131072", "connect4 --param lookahead=8",
       "this run needs about 154 MiB of memory (154 MiB of scenario data)",
       "lower --param lookahead"},
  };
  for (const Case& c : cases) {
    const Outcome o =
        gpulb::testing::shell(std::string("ulimit -v ") + c.limit_kib + "; " + GPULB_CLI " run " +
                              c.run + " --backend cpu --workers 2 --no-trace");
    EXPECT_EQ(o.exit_code, 2) << c.run << "\n" << o.out;
    EXPECT_NE(o.out.find(c.needs), std::string::npos) << c.run << "\n" << o.out;
    EXPECT_NE(o.out.find(std::string("this process's address-space limit (ulimit -v); ") + c.lower),
              std::string::npos)
        << c.run << "\n"
        << o.out;
  }
  EXPECT_LT(children_peak_kib(), 100 * 1024) << "a refused run allocated its data";
}

// A valid output name of 250-255 bytes: the temporary beside it must stay within a name's 255
// bytes too (it took the name plus ".tmp-PID" and failed).
TEST_F(Cli, AnOutputNameOfTheLongestLengthIsWritten) {
  for (std::size_t length : {250u, 255u}) {
    const std::string name = std::string(length - 6, 'n') + ".gpulb";
    const Outcome o =
        gpulb("run patterns --backend cpu --param blocks=8 --workers 2 -o " + path(name));
    EXPECT_EQ(o.exit_code, 0) << length << ": " << o.out;
    EXPECT_TRUE(std::filesystem::exists(path(name))) << length;
    const Outcome e = gpulb("export " + path(name) + " -f chrome -o " +
                            path(std::string(length - 5, 'e') + ".json"));
    EXPECT_EQ(e.exit_code, 0) << length << ": " << e.out;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

// README: a write that fails is exit 1, and leaves no file behind. A file size limit of 1 KiB
// (SIGXFSZ ignored, so write() returns EFBIG) fails the trace's write after a good run.
TEST_F(Cli, ATraceWriteThatFailsExitsOneAndLeavesNothing) {
  const Outcome o =
      shell_gpulb("trap '' XFSZ; ulimit -f 1; ",
                  "run patterns --backend cpu --param blocks=64 --param work=10 --workers 2 -o " +
                      path("big.gpulb"));
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find(path("big.gpulb") + ": write failed"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(path("big.gpulb")));
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

// With trace_capacity=67108864 a run took 3.15 GB for 64 tasks, and 2000 workers ended in a bare
// std::bad_alloc. Segments cost memory only as they fill, requests are held to a trace memory
// budget (cut with a note, or refused naming the numbers), and workers to a bound.
TEST_F(Cli, TraceMemoryStaysWithinItsBudget) {
  const std::string run = "run patterns --backend cpu --param blocks=64 --param work=10 ";
  const Outcome cut =
      gpulb(run + "--workers 2 --param trace_capacity=67108864 --trace-memory 64M --json");
  ASSERT_EQ(cut.exit_code, 0) << cut.out;
  const auto j = nlohmann::json::parse(cut.out);
  ASSERT_EQ(j.at("notes").size(), 1u) << cut.out;
  EXPECT_NE(j.at("notes")[0].get<std::string>().find(
                "trace_capacity=67108864 for each of 3 trace segments"),
            std::string::npos)
      << cut.out;
  EXPECT_NE(j.at("notes")[0].get<std::string>().find("over the trace memory budget of 64 MiB"),
            std::string::npos)
      << cut.out;
  EXPECT_EQ(j.at("dropped_events"), 0);

  const Outcome tiny = gpulb(run + "--workers 8 --trace-memory 16K");
  EXPECT_EQ(tiny.exit_code, 2) << tiny.out;
  EXPECT_NE(tiny.out.find("the trace needs at least 256 events for each of 9 trace segments"),
            std::string::npos)
      << tiny.out;
  EXPECT_NE(tiny.out.find("over the trace memory budget of 16 KiB"), std::string::npos) << tiny.out;

  const std::string too_many =
      std::to_string(std::max(65u, 16 * std::thread::hardware_concurrency() + 1));
  const Outcome many = gpulb(run + "--workers " + too_many);
  EXPECT_EQ(many.exit_code, 2) << many.out;
  EXPECT_NE(many.out.find("--workers " + too_many + ": the cpu backend runs a thread per worker"),
            std::string::npos)
      << many.out;
  EXPECT_NE(many.out.find("the run's 64 tasks"), std::string::npos) << many.out;
  EXPECT_EQ(many.out.find("bad_alloc"), std::string::npos) << many.out;

  const Outcome bad = gpulb(run + "--trace-memory lots");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--trace-memory 'lots'"), std::string::npos) << bad.out;
}

// A budget too small for the trace drops events; the note on them names the budget that cut the
// segments, since raising trace_capacity would change nothing.
TEST_F(Cli, DroppedEventsUnderATinyBudgetNameTheBudget) {
  const Outcome o = gpulb(
      "run patterns --backend cpu --param blocks=4000 --param work=1 --workers 2 --trace-memory "
      "16K --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_GT(j.at("dropped_events").get<std::uint64_t>(), 0u) << o.out;
  const auto& notes = j.at("notes");
  const auto dropped = std::find_if(notes.begin(), notes.end(), [](const nlohmann::json& n) {
    return n.get<std::string>().find("were dropped") != std::string::npos;
  });
  ASSERT_NE(dropped, notes.end()) << o.out;
  const std::string note = dropped->get<std::string>();
  EXPECT_NE(note.find("the trace memory budget of 16 KiB"), std::string::npos) << note;
  EXPECT_NE(note.find("raise --trace-memory"), std::string::npos) << note;
  EXPECT_EQ(note.find("trace_capacity"), std::string::npos) << note;
}

}  // namespace
