// The viewer against hostile inputs and faults, run as a user would: `gpulb-viewer`
// on crafted traces and bad arguments, checking exit codes, messages and the bytes on disk.
//
// [SECTION] Running the viewer
// [SECTION] Traces built to hurt: huge strings, huge counts
// [SECTION] Screenshots of hostile traces
// [SECTION] Writing the PNG: faults leave no file
// [SECTION] Arguments: every error is exit 2 with a message
//
// The screenshot tests need an X display: ctest runs this binary under `xvfb-run -a`.
#include <gtest/gtest.h>

#include <stb_image.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpulb/tracing/trace_file.hpp"
#include "synthetic.hpp"

namespace gpulb::viewer {
namespace {

namespace fs = std::filesystem;

// -------------------------------------------------------------------------------------------------
// [SECTION] Running the viewer
// -------------------------------------------------------------------------------------------------

constexpr int kExitWriteFailed = 1;
constexpr int kExitBadInput = 2;

struct Result {
  int rc = -1;
  std::string output;  // stdout and stderr
};

// Runs `prefix; exec gpulb-viewer args` in /bin/sh. A viewer that regresses into eating memory
// or hanging is stopped by an address-space limit and a timeout instead of taking the machine.
Result run_viewer(const std::string& args, const std::string& prefix = "") {
  const std::string cmd = "ulimit -v 6000000; " + prefix + (prefix.empty() ? "" : "; ") +
                          "exec timeout 120 " + std::string(GPULB_VIEWER_EXE) + " " + args +
                          " 2>&1";
  Result r;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return r;
  std::array<char, 512> buf;
  while (std::fgets(buf.data(), buf.size(), f)) r.output += buf.data();
  const int status = ::pclose(f);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

bool has_display() { return std::getenv("DISPLAY") != nullptr; }

// Pixels of the PNG at `path` that differ from its top-left pixel; -1 where it is unreadable.
long drawn_pixels(const fs::path& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 3);
  if (data == nullptr) return -1;
  long n = 0;
  for (long i = 0; i < static_cast<long>(w) * h; ++i) {
    n += data[i * 3] != data[0] || data[i * 3 + 1] != data[1] || data[i * 3 + 2] != data[2];
  }
  stbi_image_free(data);
  return n;
}

// Files in `dir` whose name starts with `stem`: a PNG, or a temporary file left beside it.
std::vector<std::string> files_named(const fs::path& dir, const std::string& stem) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(stem, 0) == 0)
      out.push_back(e.path().filename().string());
  }
  return out;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Traces built to hurt: huge strings, huge counts
// -------------------------------------------------------------------------------------------------

// 30,000 bytes, multi-byte characters included, so that a cut can fall inside one.
std::string huge(const std::string& unit) {
  std::string s;
  while (s.size() < 30'000) s += unit;
  return s;
}

// A small real-looking trace whose every string is huge.
trace::Trace long_string_trace() {
  SyntheticSpec spec;
  spec.sms = 2;
  spec.workers_per_sm = 2;
  spec.events = 2000;
  trace::Trace t = make_synthetic_trace(spec);
  t.meta.scenario = huge("scenario-\xC3\xA9");
  t.meta.policy = huge("policy ");
  t.meta.backend = huge("b");
  t.meta.parameters = {{"p", huge("v\xE2\x82\xAC")}, {huge("k"), "1"}};
  t.meta.verification = huge("line\n");  // 6,000 lines
  t.meta.result_json = "{\"x\":\"" + huge("j") + "\"}";
  t.meta.clock_source = huge("c");
  t.meta.created_utc = huge("2026");
  t.meta.gpulb_version = huge("9");
  for (trace::Device& d : t.devices) d.name = huge("GPU\xF0\x9F\x98\x80");
  for (trace::Track& tr : t.tracks) tr.name = huge("block ");
  return t;
}

// 100,000 devices (a few bytes each in the file) and a handful of events on three of them.
trace::Trace many_device_trace() {
  using trace::EventKind;
  trace::Trace t;
  t.meta.scenario = "many-devices";
  t.meta.policy = "task-queue";
  t.meta.backend = "cuda";
  for (std::uint32_t d = 0; d < 100'000; ++d)
    t.devices.push_back({trace::DeviceKind::Gpu, d, "G", 1, 1});
  for (const std::uint32_t d : {0u, 50'000u, 99'999u}) {
    trace::Track tr;
    tr.device = d;
    tr.sm = 0;
    tr.name = "block 0";
    tr.events = {trace::make_event(100, EventKind::WorkerStart, 0, 0),
                 trace::make_event(110, EventKind::QueueLevel, 3, 0),
                 trace::make_event(120, EventKind::TaskBegin, 1, 0),
                 trace::make_event(900, EventKind::TaskEnd, 1, 0),
                 trace::make_event(950, EventKind::WorkerEnd)};
    t.tracks.push_back(std::move(tr));
  }
  return t;
}

class HostileViewer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpulb-viewer-hostile-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    trace::write_trace(dir_ / "long.gpulb", long_string_trace());
    trace::write_trace(dir_ / "devices.gpulb", many_device_trace());
    SyntheticSpec small;
    small.sms = 1;
    small.workers_per_sm = 2;
    small.events = 500;
    trace::write_trace(dir_ / "small.gpulb", make_synthetic_trace(small));
  }
  static void TearDownTestSuite() {
    if (std::getenv("GPULB_KEEP_SCREENSHOTS")) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void need_display() {
    if (!has_display()) GTEST_SKIP() << "no X display: run under `xvfb-run -a`";
  }
  static std::string file(const char* name) { return (dir_ / name).string(); }
  static inline fs::path dir_;
};

// -------------------------------------------------------------------------------------------------
// [SECTION] Screenshots of hostile traces
// -------------------------------------------------------------------------------------------------

// Every view, with the side panel (its compact summary) and without; compare with the trace as B.
TEST_F(HostileViewer, EveryViewOfA30000CharacterStringTraceRenders) {
  need_display();
  for (const char* view : {"timeline", "histograms", "occupancy", "compare", "summary"}) {
    for (const bool view_only : {false, true}) {
      const fs::path out =
          dir_ / (std::string("long-") + view + (view_only ? "-view" : "") + ".png");
      const Result r = run_viewer(file("long.gpulb") + " " + file("long.gpulb") + " --view " +
                                  view + (view_only ? " --view-only" : "") +
                                  " --size 1280x760 --screenshot " + out.string());
      EXPECT_EQ(r.rc, 0) << view << ": " << r.output;
      EXPECT_GT(drawn_pixels(out), 1000) << view << ": no picture at " << out;
    }
  }
}

TEST_F(HostileViewer, OccupancyOfA100000DeviceTraceRendersInBoundedMemory) {
  need_display();
  EXPECT_LT(fs::file_size(file("devices.gpulb")), 200'000u)
      << "the file is small: the counts are the attack";
  for (const char* view : {"occupancy", "timeline", "histograms", "summary"}) {
    const fs::path out = dir_ / (std::string("devices-") + view + ".png");
    const Result r = run_viewer(file("devices.gpulb") + " --view " + view +
                                " --size 1280x760 --screenshot " + out.string());
    EXPECT_EQ(r.rc, 0) << view << ": " << r.output;
    EXPECT_GT(drawn_pixels(out), 1000) << view;
  }
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Writing the PNG: faults leave no file
// -------------------------------------------------------------------------------------------------

// A full disk, simulated with a file size limit (root ignores permissions, not RLIMIT_FSIZE):
// writes past 2 KiB fail with EFBIG, as they would with ENOSPC.
TEST_F(HostileViewer, AScreenshotThatCannotBeWrittenFailsAndLeavesNoFile) {
  need_display();
  const fs::path out = dir_ / "full-disk.png";
  const Result r = run_viewer(file("small.gpulb") + " --size 640x480 --screenshot " + out.string(),
                              "trap '' XFSZ; ulimit -f 4");
  EXPECT_EQ(r.rc, kExitWriteFailed) << r.output;
  EXPECT_NE(r.output.find(out.string()), std::string::npos) << "names the file: " << r.output;
  EXPECT_NE(r.output.find("too large"), std::string::npos)
      << "names the cause (EFBIG): " << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  EXPECT_TRUE(files_named(dir_, "full-disk").empty()) << "no PNG and no temporary file left";
}

TEST_F(HostileViewer, AScreenshotIntoAMissingDirectoryIsRefused) {
  const fs::path out = dir_ / "no-such-dir" / "x.png";
  const Result r = run_viewer(file("small.gpulb") + " --screenshot " + out.string());
  EXPECT_EQ(r.rc, kExitBadInput) << r.output;
  EXPECT_NE(r.output.find(out.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
}

// The viewer never writes a picture over a trace it shows: named as it is, through a symbolic
// link, or as one of a lesson's two traces. Before the check, the trace became a PNG with exit 0.
TEST_F(HostileViewer, AScreenshotOverItsOwnInputIsRefusedAndTheTraceKept) {
  const fs::path in = file("small.gpulb");
  const auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes(in);
  const fs::path link = dir_ / "link-to-input.gpulb";
  fs::create_symlink(in, link);
  for (const std::string& args :
       {in.string() + " --screenshot " + in.string(),
        in.string() + " --screenshot " + link.string(),
        in.string() + " " + file("long.gpulb") + " --view compare --screenshot " + link.string(),
        "--lesson mohan-static-vs-stealing " + file("long.gpulb") + " " + in.string() +
            " --screenshot " + in.string()}) {
    const Result r = run_viewer(args);
    EXPECT_EQ(r.rc, kExitBadInput) << args << ": " << r.output;
    EXPECT_NE(r.output.find("refusing to write over it"), std::string::npos)
        << args << ": " << r.output;
    EXPECT_EQ(bytes(in), before) << args << ": the trace is unchanged";
  }
  EXPECT_TRUE(fs::is_symlink(link));
}

// Device nodes are refused, never written or replaced (the tests may run as root).
TEST_F(HostileViewer, AScreenshotOntoADeviceIsRefused) {
  for (const char* device : {"/dev/null", "/dev/full"}) {
    const Result r = run_viewer(file("small.gpulb") + " --screenshot " + device);
    EXPECT_EQ(r.rc, kExitBadInput) << device << ": " << r.output;
    EXPECT_NE(r.output.find(device), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
    struct stat st {};
    ASSERT_EQ(::stat(device, &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << device << " is still a device";
  }
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Arguments: every error is exit 2 with a message
// -------------------------------------------------------------------------------------------------

struct BadArgs {
  const char* args;
  const char* says;  // a piece of the message naming the problem
};

TEST_F(HostileViewer, EveryArgumentErrorExits2NamingTheProblem) {
  const std::string f = file("small.gpulb");
  const std::string png = (dir_ / "never.png").string();
  const BadArgs cases[] = {
      {"--view nope", "nope"},
      {"--no-such-option", "--no-such-option"},
      {"--size 10x10", "--size"},
      {"--size", "--size"},
      {"--bench-events lots", "lots"},
      {"--range 1:2:3", "--range"},
      {"--range 2ms:1ms", "--range"},
      {"--range 1ms", "--range"},
      {"--range :1ms", "--range"},
      {"--range 1ms:", "--range"},
      {"--range 0x10:0x20", "--range"},
      {"--range \" 1:2\"", "--range"},
      {"--range 1e400:1e401", "--range"},
      {"--range 1e300s:2e300s", "--range"},
      {"--range ''", "--range"},
      {"--playhead soon", "--playhead"},
      {"--playhead -1ms", "--playhead"},
      {"a.gpulb b.gpulb c.gpulb", "files"},
  };
  for (const BadArgs& c : cases) {
    fs::remove(png);
    const Result r = run_viewer(f + " " + c.args + " --screenshot " + png);
    EXPECT_EQ(r.rc, kExitBadInput) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << ": " << r.output;
    EXPECT_FALSE(fs::exists(png)) << c.args;
  }
}

TEST_F(HostileViewer, HelpStillExitsZero) {
  const Result r = run_viewer("--help");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("--range"), std::string::npos);
}

}  // namespace
}  // namespace gpulb::viewer
