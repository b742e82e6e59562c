// Screenshots of every view of known traces, made by `gpulb-viewer --screenshot` as a user would,
// then checked for what they must show: one row per lane, zones where tasks ran, a legend, bars,
// queue levels, the playhead; and a bad or missing file failing with the reader's message.
//
// Needs an X display: ctest runs this binary under `xvfb-run -a` (Mesa's llvmpipe renders).
#include <gtest/gtest.h>

#include <stb_image.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "findings.hpp"
#include "run_span.hpp"
#include "synthetic.hpp"
#include "task_details.hpp"

namespace gpulb::viewer {
namespace {

namespace fs = std::filesystem;

struct Rgb {
  int r, g, b;
};
// Colours the viewer draws with (viewer/src/draw.hpp): the test looks for them in the pictures.
// (viewer/model/palette.hpp's meanings).
constexpr std::array<Rgb, 4> kKindColours = {
    {{52, 116, 196}, {196, 110, 48}, {46, 150, 104}, {164, 82, 176}}};
constexpr Rgb kHost{165, 200, 255};
constexpr Rgb kBar{95, 150, 225};
constexpr Rgb kQueued{140, 60, 245};
constexpr Rgb kBusy{178, 180, 188};
constexpr Rgb kPlayhead{255, 140, 0};
constexpr Rgb kMean{255, 255, 255};
constexpr Rgb kVerified{115, 217, 140};

struct Picture {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  Rgb at(int x, int y) const {
    const unsigned char* p = &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
    return {p[0], p[1], p[2]};
  }
};

int distance(Rgb a, Rgb b) {
  return std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b);
}
bool saturated(Rgb c) { return std::max({c.r, c.g, c.b}) - std::min({c.r, c.g, c.b}) > 60; }

// Pixels of colour c (within a small tolerance) in rows [y0, y1).
int count_colour(const Picture& p, Rgb c, int y0 = 0, int y1 = -1, int tolerance = 12) {
  int n = 0;
  if (y1 < 0) y1 = p.height;
  for (int y = y0; y < y1; ++y) {
    for (int x = 0; x < p.width; ++x) n += distance(p.at(x, y), c) <= tolerance;
  }
  return n;
}

// Pixels of colour c in the rectangle [x0, x1) x [y0, y1).
int count_in(const Picture& p, Rgb c, int x0, int x1, int y0, int y1, int tolerance);

// A task zone's pixel: a kind colour as drawn alone, merged into a run (darker) or as an outline.
bool is_zone(Rgb c) {
  for (const Rgb k : kKindColours) {
    for (const double f : {1.0, 0.72, 0.6}) {
      const Rgb scaled{static_cast<int>(k.r * f), static_cast<int>(k.g * f),
                       static_cast<int>(k.b * f)};
      if (distance(c, scaled) <= 12) return true;
    }
  }
  return false;
}

// Lane rows that show tasks: runs of pixel rows with many zone pixels, between rows y0 and y1.
// Lanes are separated by a few background rows, so each lane with any task is one run.
int zone_rows(const Picture& p, int y0, int y1) {
  int runs = 0;
  bool in_run = false;
  for (int y = y0; y < y1; ++y) {
    int n = 0;
    for (int x = 0; x < p.width; ++x) n += is_zone(p.at(x, y));
    const bool lane = n >= 30;  // more than a legend swatch
    if (lane && !in_run) ++runs;
    in_run = lane;
  }
  return runs;
}

class ViewerScreenshots : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpulb-viewer-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // A synthetic GPU trace: 3 SMs x 2 blocks, always busy (no idle spells), 4 task kinds.
    SyntheticSpec spec;
    spec.sms = 3;
    spec.workers_per_sm = 2;
    spec.events = 6000;
    spec.idle = false;
    trace::write_trace(dir_ / "gpu.gpulb", make_synthetic_trace(spec));
    // 8 SMs x 16 blocks: more than 64 workers, so the SM groups open folded (a heat map each).
    spec.sms = 8;
    spec.workers_per_sm = 16;
    spec.events = 40000;
    spec.idle = true;
    trace::write_trace(dir_ / "gpu-many.gpulb", make_synthetic_trace(spec));
    // A real run on the CPU backend: 2 workers and the host producer.
    RunConfig cfg;
    cfg.scenario = "patterns";
    cfg.policy = "task-queue";
    cfg.backend = Backend::Cpu;
    cfg.workers = 2;
    cfg.params = {{"blocks", "512"}, {"work", "200"}};
    trace::write_trace(dir_ / "cpu.gpulb", gpulb::run(builtin::registry(), cfg).trace);
    cfg.policy = "hardware";
    trace::write_trace(dir_ / "cpu-hw.gpulb", gpulb::run(builtin::registry(), cfg).trace);
  }
  static void TearDownTestSuite() {
    if (std::getenv("GPULB_KEEP_SCREENSHOTS")) return;  // to look at the pictures after a failure
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (std::getenv("DISPLAY") == nullptr) {
      GTEST_SKIP()
          << "no X display: run under `xvfb-run -a` (ctest does so where xvfb-run is installed)";
    }
  }

  // Runs the viewer; returns its exit status and puts stdout+stderr in `output`.
  static int viewer(const std::string& args, std::string& output) {
    const std::string cmd = std::string(GPULB_VIEWER_EXE) + " " + args + " 2>&1";
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return -1;
    std::array<char, 512> buf;
    output.clear();
    while (std::fgets(buf.data(), buf.size(), f)) output += buf.data();
    const int status = ::pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static Picture shoot(const std::string& files, const std::string& options,
                       const std::string& name) {
    const fs::path out = dir_ / (name + ".png");
    std::string log;
    const int rc =
        viewer(files + " " + options + " --size 1280x760 --screenshot " + out.string(), log);
    EXPECT_EQ(rc, 0) << log;
    return load_picture(out, log);
  }

  // The PNG at `out`, or an empty picture and a failure naming it (with the viewer's `log`).
  static Picture load_picture(const fs::path& out, const std::string& log) {
    Picture p;
    int channels = 0;
    unsigned char* data = stbi_load(out.c_str(), &p.width, &p.height, &channels, 3);
    if (data == nullptr) {
      ADD_FAILURE() << "no readable PNG at " << out << ": " << log;
      return p;
    }
    p.rgb.assign(data, data + static_cast<std::size_t>(p.width) * p.height * 3);
    stbi_image_free(data);
    return p;
  }

  static std::string file(const char* name) { return (dir_ / name).string(); }
  static inline fs::path dir_;
};

TEST_F(ViewerScreenshots, TimelineShowsOneRowPerGpuBlockUnderItsSm) {
  const Picture p = shoot(file("gpu.gpulb"), "--view timeline --view-only", "timeline-gpu");
  ASSERT_GT(p.width, 600);
  EXPECT_EQ(zone_rows(p, 45, p.height), 6) << "3 SMs x 2 blocks";
  // Zones are drawn in the kind colours (merged runs darker): far more than background.
  int zone_pixels = 0;
  for (const Rgb c : kKindColours) zone_pixels += count_colour(p, c, 60, p.height, 40);
  EXPECT_GT(zone_pixels, 20000);
}

TEST_F(ViewerScreenshots, TimelineLegendNamesEveryKind) {
  const Picture p =
      shoot(file("gpu.gpulb"), "--view timeline --view-only --range 0:20us", "legend");
  // The legend sits in the toolbar row: each of the 4 kinds has its swatch there.
  for (const Rgb c : kKindColours)
    EXPECT_GT(count_colour(p, c, 0, 40, 6), 40) << c.r << "," << c.g << "," << c.b;
}

TEST_F(ViewerScreenshots, TimelineOfACpuRunShowsItsTwoWorkersAndThePlayhead) {
  const Picture p =
      shoot(file("cpu.gpulb"), "--view timeline --view-only --playhead 1ms", "timeline-cpu");
  EXPECT_EQ(zone_rows(p, 45, p.height), 2);
  EXPECT_GT(count_colour(p, kPlayhead, 70, p.height - 40), 100) << "the playhead line";
  EXPECT_GT(count_colour(p, kHost, 60, p.height), 20) << "the host producer's enqueue marks";
}

TEST_F(ViewerScreenshots, HistogramsDrawBarsAndTheirMeans) {
  const Picture p = shoot(file("gpu.gpulb"), "--view histograms --view-only", "histograms");
  EXPECT_GT(count_colour(p, kBar), 5000) << "task-count bars";
  EXPECT_GT(count_colour(p, kBusy), 5000) << "busy-time bars and the duration histogram";
  EXPECT_GT(count_colour(p, kMean, 0, -1, 20), 300) << "mean lines";
}

TEST_F(ViewerScreenshots, OccupancyPlotsQueueLevelsAndBusyWorkers) {
  const Picture p =
      shoot(file("cpu.gpulb"), "--view occupancy --view-only --playhead 1ms", "occupancy");
  EXPECT_GT(count_colour(p, kQueued), 2000) << "queue levels";
  EXPECT_GT(count_colour(p, kBusy), 2000) << "busy workers";
  EXPECT_GT(count_colour(p, kPlayhead, 0, -1, 20), 50) << "the playhead";
}

TEST_F(ViewerScreenshots, SummaryShowsTheVerification) {
  const Picture p = shoot(file("cpu.gpulb"), "--view summary", "summary");
  EXPECT_GT(count_colour(p, kVerified, 0, -1, 30), 100) << "'verified: yes' in green";
}

TEST_F(ViewerScreenshots, CompareStacksBothRuns) {
  const Picture p = shoot(file("cpu.gpulb") + " " + file("cpu-hw.gpulb"),
                          "--view compare --view-only", "compare");
  // Two timelines below the summaries, each with its 2 worker rows.
  EXPECT_EQ(zone_rows(p, p.height / 3, p.height), 4);
}

TEST_F(ViewerScreenshots, TimelineDrawsCounterTracksUnderTheLanes) {
  const Picture p = shoot(file("cpu.gpulb"), "--view timeline --view-only", "timeline-counters");
  const int strip = p.height * 2 / 3;  // the strip takes at most a third
  EXPECT_GT(count_colour(p, kQueued, strip, p.height), 500) << "the queue's level";
  EXPECT_GT(count_colour(p, kBusy, strip, p.height), 500) << "busy workers";
  // In the time area: the label column's light text has grey edges of the busy colour's shade.
  EXPECT_LT(count_in(p, kBusy, 300, p.width, 60, strip, 12), 50)
      << "above the strip: lanes, not counters";
}

// A grey pixel of the heat map (heat_scale.hpp): unsaturated, lighter than any background.
int heat_pixels(const Picture& p, int y0, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = 0; x < p.width; ++x) {
      const Rgb c = p.at(x, y);
      n += !saturated(c) && c.r > 90 && std::abs(c.r - c.g) < 30 && std::abs(c.g - c.b) < 30;
    }
  }
  return n;
}

TEST_F(ViewerScreenshots, FoldedSmsDrawAHeatMapAndUnfoldOpensThem) {
  const Picture folded =
      shoot(file("gpu-many.gpulb"), "--view timeline --view-only", "timeline-folded");
  EXPECT_EQ(zone_rows(folded, 60, folded.height), 0) << "folded: no task zones, a heat map";
  EXPECT_GT(heat_pixels(folded, 60, folded.height * 2 / 3), 20000)
      << "busy SMs drawn grey to white";
  const Picture open =
      shoot(file("gpu-many.gpulb"), "--view timeline --view-only --unfold", "timeline-unfold");
  EXPECT_GT(zone_rows(open, 60, open.height), 20) << "--unfold: a lane per block";
}

// Pixels of colour c within the rectangle [x0, x1) x [y0, y1).
int count_in(const Picture& p, Rgb c, int x0, int x1, int y0, int y1, int tolerance) {
  int n = 0;
  for (int y = std::max(y0, 0); y < std::min(y1, p.height); ++y) {
    for (int x = std::max(x0, 0); x < std::min(x1, p.width); ++x)
      n += distance(p.at(x, y), c) <= tolerance;
  }
  return n;
}

TEST_F(ViewerScreenshots, CompareKeepsTheReplayBarAndBothVerifiedLines) {
  // The whole window: the replay bar is below the view (B's lanes covered it).
  const Picture p =
      shoot(file("cpu.gpulb") + " " + file("cpu-hw.gpulb"), "--view compare", "compare-window");
  const Rgb grab{61, 133, 224};  // Dear ImGui's dark slider grab: the replay bar's scrubber
  const int side = 420;          // right of the side panel
  EXPECT_GT(count_in(p, grab, side, p.width, p.height - 40, p.height, 6), 40)
      << "the replay bar at the bottom";
  const int mid = side + (p.width - side) / 2;
  EXPECT_GT(count_in(p, kVerified, side, mid, 0, p.height / 2, 30), 100)
      << "A's summary shows its verified line";
  EXPECT_GT(count_in(p, kVerified, mid, p.width, 0, p.height / 2, 30), 100)
      << "B's summary shows its verified line";
}

// Bands of pixel rows drawn in the header colour across most of the width: the ruler with GPU 0's
// header right under it, then each further device's header row.
int header_bands(const Picture& p) {
  const Rgb header{48, 52, 62};
  int bands = 0;
  bool in_band = false;
  for (int y = 0; y < p.height; ++y) {
    int n = 0;
    for (int x = 0; x < p.width; ++x) n += distance(p.at(x, y), header) <= 4;
    const bool band = n > p.width * 3 / 5;
    if (band && !in_band) ++bands;
    in_band = band;
  }
  return bands;
}

TEST_F(ViewerScreenshots, BothGpusOfA2xH200TraceShowOnTheFirstScreen) {
  // GPU 1's rows started some 1,700 px down.
  const std::string trace =
      std::string(GPULB_SHIPPED_TRACES) + "/patterns-P3-task-queue-paper-2xh200.gpulb";
  const Picture p = shoot(trace, "--view timeline --view-only", "timeline-2gpu");
  EXPECT_EQ(header_bands(p), 2) << "the ruler and GPU 0's header, then GPU 1's";
}

// First pixel row of each band drawn in a rank row's colour (colours::kRankHeader) across most of the width.
// A band interrupted for a few lines (a note drawn over the row's right end) is still one band.
std::vector<int> rank_bands(const Picture& p) {
  const Rgb rank_row{36, 58, 84};
  std::vector<int> bands;
  int last_band_line = -100;
  for (int y = 0; y < p.height; ++y) {
    int n = 0;
    for (int x = 0; x < p.width; ++x) n += distance(p.at(x, y), rank_row) <= 4;
    if (n <= p.width * 3 / 5) continue;
    if (y - last_band_line > 30) bands.push_back(y);
    last_band_line = y;
  }
  return bands;
}

// "gpulb-viewer t.gpulb shows 4 ranks on one time axis with the steals between them".
// The shipped trace of a real 4-rank run: a rank row (its own colour, across the view) above each
// rank's devices, and arrows (their own colour) from the lending rank's host lane to the thief's.
TEST_F(ViewerScreenshots, FourRanksShowOnOneAxisWithArrowsBetweenThem) {
  const std::string trace =
      std::string(GPULB_SHIPPED_TRACES) + "/uts-d9-work-stealing-4ranks-cpu.gpulb";
  const Picture p = shoot(trace, "--view timeline --view-only", "timeline-4ranks");
  const Rgb arrow{0, 230, 255};  // palette::kRankTransfer
  const std::vector<int> bands = rank_bands(p);
  ASSERT_EQ(bands.size(), 4u) << "a row per rank";
  // Arrows in the time area (right of the label column, where a rank row's edge has the colour too),
  // from the first rank's row to below the last's.
  const int arrows = count_in(p, arrow, 300, p.width, bands.front(), p.height * 3 / 4, 40);
  EXPECT_GT(arrows, 150) << "arrows between the ranks' host lanes";
  // One arrow crosses rank 1's and rank 2's rows at least: the ranks are joined, not only drawn.
  EXPECT_GT(count_in(p, arrow, 300, p.width, bands[1], bands[2], 40), 10);
  // A trace of one process has no rank row.
  const Picture one = shoot(file("cpu.gpulb"), "--view timeline --view-only", "timeline-one-rank");
  EXPECT_TRUE(rank_bands(one).empty());
}

// The shipped trace of work stealing on 2 GPU ranks (an H200 each): a rank row above each rank's
// GPU, and the chunks that moved between them as arrows across both rows.
TEST_F(ViewerScreenshots, GpuRanksOfWorkStealingShowTheirChunksAsArrows) {
  const std::string trace =
      std::string(GPULB_SHIPPED_TRACES) + "/uts-geometric-d7-work-stealing-2ranks-2xh200.gpulb";
  const Picture p = shoot(trace, "--view timeline --view-only", "timeline-gpu-ranks");
  const Rgb arrow{0, 230, 255};  // palette::kRankTransfer
  const std::vector<int> bands = rank_bands(p);
  ASSERT_EQ(bands.size(), 2u) << "a row per rank";
  // The arrows run from one rank's balancer lane to the other's, across rank 1's row.
  EXPECT_GT(count_in(p, arrow, 300, p.width, bands[0], bands[1], 40), 100)
      << "arrows leaving rank 0's lanes";
  EXPECT_GT(count_in(p, arrow, 300, p.width, bands[1] - 4, bands[1] + 4, 40), 0)
      << "an arrow crosses rank 1's row";
}

// The shipped trace of the task queue on 4 GPU ranks (one H200 split by MPS into quarters): a rank
// row above each rank's GPU, and the chunks that moved between the ranks' host pools as arrows that
// cross the rows of the ranks between lender and thief.
TEST_F(ViewerScreenshots, FourGpuRanksOfTheTaskQueueShowTheirChunksAsArrows) {
  const std::string trace =
      std::string(GPULB_SHIPPED_TRACES) + "/patterns-P2-task-queue-4ranks-h200-mps.gpulb";
  const Picture p = shoot(trace, "--view timeline --view-only", "timeline-4-gpu-ranks");
  const Rgb arrow{0, 230, 255};  // palette::kRankTransfer
  const std::vector<int> bands = rank_bands(p);
  ASSERT_EQ(bands.size(), 4u) << "a row per rank";
  EXPECT_GT(count_in(p, arrow, 300, p.width, bands[0], p.height, 40), 100)
      << "arrows between the ranks' balancer lanes";
  for (int rank = 1; rank < 4; ++rank) {
    EXPECT_GT(count_in(p, arrow, 300, p.width, bands[rank] - 4, bands[rank] + 4, 40), 0)
        << "an arrow crosses rank " << rank << "'s row";
  }
}

// The views --help lists (the panel table's --view names, between the braces of CLI11's check).
std::vector<std::string> views_in_help(const std::string& help) {
  const std::size_t at = help.find("--view TEXT:{");
  if (at == std::string::npos) return {};
  const std::size_t open = help.find('{', at), close = help.find('}', open);
  std::vector<std::string> names;
  std::string name;
  for (const char c : help.substr(open + 1, close - open - 1) + ",") {
    if (c != ',') {
      name += c;
    } else if (!name.empty()) {
      names.push_back(name);
      name.clear();
    }
  }
  return names;
}

// Pixels that differ from the picture's most common colour (its background).
int drawn_pixels(const Picture& p) {
  std::map<int, int> counts;
  for (int y = 0; y < p.height; ++y) {
    for (int x = 0; x < p.width; ++x) {
      const Rgb c = p.at(x, y);
      ++counts[(c.r << 16) | (c.g << 8) | c.b];
    }
  }
  int most = 0;
  for (const auto& [colour, n] : counts) most = std::max(most, n);
  return p.width * p.height - most;
}

TEST_F(ViewerScreenshots, FindShowsTheTaskFramedInItsLane) {
  const Picture before = shoot(file("gpu-many.gpulb"), "--view timeline --view-only", "find-none");
  const Picture p = shoot(file("gpu-many.gpulb"), "--view timeline --view-only --find 100", "find");
  const Rgb white{255, 255, 255};
  EXPECT_GT(count_colour(p, white, 60, p.height, 4),
            count_colour(before, white, 60, before.height, 4) + 40)
      << "the picked task's white frame";
  EXPECT_GT(zone_rows(p, 60, p.height), 0) << "zoomed in to it: its group's lanes open";
  std::string log;
  EXPECT_EQ(
      viewer(file("cpu.gpulb") + " --find k --screenshot " + (dir_ / "never-find.png").string(),
             log),
      2)
      << log;
  EXPECT_NE(log.find("--find"), std::string::npos) << log;
}

// Compare's search covers trace B too. A task id that only B has is found,
// and framed in B's panel (the lower one), zoomed to.
TEST_F(ViewerScreenshots, FindInCompareFramesATaskOfTraceBInItsPanel) {
  const std::string a = std::string(GPULB_SHIPPED_TRACES) + "/connect4-4-static-list-h200.gpulb";
  const std::string b = std::string(GPULB_SHIPPED_TRACES) + "/patterns-P4-task-queue-h200.gpulb";
  const TraceModel ma(std::make_shared<const trace::Trace>(trace::read_trace(a)));
  const TraceModel mb(std::make_shared<const trace::Trace>(trace::read_trace(b)));
  std::uint32_t id = 0;
  bool found = false;
  for (std::size_t l = 0; l < mb.lanes().size() && !found; ++l) {
    for (std::size_t z = 0; z < mb.lanes()[l].zones.size() && !found; ++z) {
      id = mb.lanes()[l].zones.id(z);
      found = find_tasks(ma, id, std::nullopt, 1).empty();
    }
  }
  ASSERT_TRUE(found) << "a task id of B that A has not";
  const Picture before = shoot(a + " " + b, "--view compare --view-only", "compare-find-none");
  const Picture p = shoot(a + " " + b, "--view compare --view-only --find " + std::to_string(id),
                          "compare-find-b");
  ASSERT_EQ(p.height, before.height);
  const Rgb white{255, 255, 255};
  const int lower = p.height * 3 / 5;  // B's panel: the lower of the two timelines
  EXPECT_GT(count_colour(p, white, lower, p.height - 10, 4),
            count_colour(before, white, lower, before.height - 10, 4) + 40)
      << "the found task's white frame in B's panel";
}

TEST_F(ViewerScreenshots, SelectionTabTabulatesTheSelectedRange) {
  const Picture p =
      shoot(file("gpu-many.gpulb"), "--view selection --view-only --select 0:20us", "selection");
  // A table: a row per SM (8) under the run and the GPU, with busy-share bars.
  EXPECT_GT(drawn_pixels(p), p.width * p.height / 40);
  EXPECT_GT(count_colour(p, Rgb{60, 104, 83}, 0, -1, 30), 100) << "busy-share bars";
  std::string log;
  EXPECT_EQ(viewer(file("cpu.gpulb") + " --select 5us:1us --screenshot " +
                       (dir_ / "never-select.png").string(),
                   log),
            2)
      << log;
  EXPECT_NE(log.find("--select"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "never-select.png"));
}

TEST_F(ViewerScreenshots, HelpListsEveryViewAndEachRendersByItsName) {
  std::string help;
  ASSERT_EQ(viewer("--help", help), 0);
  const std::vector<std::string> views = views_in_help(help);
  for (const char* known : {"timeline", "histograms", "occupancy", "compare", "summary"}) {
    EXPECT_NE(std::find(views.begin(), views.end(), known), views.end())
        << known << " missing from --help:\n"
        << help;
  }
  for (const std::string& v : views) {
    EXPECT_NE(help.find("\n  " + v + " "), std::string::npos)
        << v << " has no line in the Views block:\n"
        << help;
    const Picture p = shoot(file("cpu.gpulb") + " " + file("cpu-hw.gpulb"),
                            "--view " + v + " --view-only", "panel-" + v);
    ASSERT_GT(p.width, 600) << v;
    EXPECT_GT(drawn_pixels(p), p.width * p.height / 50) << v << ": the view drew next to nothing";
  }
}

TEST_F(ViewerScreenshots, AnUnknownViewIsRefusedWithTheViewsItKnows) {
  std::string log;
  EXPECT_NE(
      viewer(file("cpu.gpulb") + " --view nope --screenshot " + (dir_ / "never.png").string(), log),
      0);
  EXPECT_NE(log.find("timeline"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
}

TEST_F(ViewerScreenshots, ABadFileFailsWithTheReadersMessage) {
  const fs::path bad = dir_ / "bad.gpulb";
  { std::ofstream(bad) << "this is not a trace"; }
  std::string log;
  EXPECT_NE(viewer(bad.string() + " --screenshot " + (dir_ / "never.png").string(), log), 0);
  EXPECT_NE(log.find("not a gpulb trace"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
}

TEST_F(ViewerScreenshots, AMissingFileFailsWithTheReadersMessage) {
  std::string log;
  EXPECT_NE(
      viewer((dir_ / "missing.gpulb").string() + " --screenshot " + (dir_ / "never.png").string(),
             log),
      0);
  EXPECT_NE(log.find("cannot open"), std::string::npos) << log;
}

// Item 7: "a new user can open `gpulb-viewer --lesson chen-fig7` and see, without reading
// code, why one policy wins on an H100": Compare of the two shipped traces, and beside it the
// lesson's title, its claim and the traces' own figures.
// A look-here step pressed from the command line, as its button does: Compare, and the picture of
// it; a step the lesson does not have exits 2 naming how many it has.
TEST_F(ViewerScreenshots, ALessonStepOpensCompareOnItsMoment) {
  const fs::path out = dir_ / "lesson-step.png";
  std::string log;
  ASSERT_EQ(viewer("--lesson chen-fig7 --lesson-step 2 --screenshot " + out.string(), log), 0)
      << log;
  const Picture p = load_picture(out, log);
  EXPECT_EQ(p.width, 1600);
  EXPECT_NE(
      viewer("--lesson chen-fig7 --lesson-step 9 --screenshot " + (dir_ / "never.png").string(),
             log),
      0);
  EXPECT_NE(log.find("step(s)"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
}

TEST_F(ViewerScreenshots, LessonChenFig7OpensCompareWithTheLessonBesideIt) {
  const fs::path out = dir_ / "lesson-chen-fig7.png";
  std::string log;
  ASSERT_EQ(
      viewer("--lesson chen-fig7 --view compare --size 1280x760 --screenshot " + out.string(), log),
      0)
      << log;
  const Picture p = load_picture(out, log);
  ASSERT_GT(p.width, 0);
  const int side = 300;  // the side panel is 300 px at this width
  const Rgb title{242, 217, 115};
  EXPECT_GT(count_in(p, title, 0, side, 0, p.height / 4, 30), 150)
      << "the lesson's title, at the top of the side panel";
  // The traces' own headline (B took 1.xx the time of A) is dim there: the lesson's verdict is its
  // recording's, and the traces' figures must not read as the verdict's.
  EXPECT_LT(count_in(p, kVerified, 0, side, 0, p.height, 30), 20)
      << "no green verdict-like headline for the traces";
  const int mid = side + (p.width - side) / 2;
  EXPECT_GT(count_in(p, kVerified, side + 20, mid, 0, p.height / 2, 30), 100)
      << "A's summary in Compare";
  EXPECT_GT(count_in(p, kVerified, mid, p.width, 0, p.height / 2, 30), 100)
      << "B's summary in Compare";
}

// A lesson opens on its verdict: on an H100 Chen's Figure 7 claim is reversed, drawn as a red box at
// the top of the view; then the verdict's bars in A's blue and B's sand, and the key figure (every
// pattern, both schedulers) filling the right of the view in the same two colours.
TEST_F(ViewerScreenshots, LessonChenFig7OpensOnItsVerdictAndKeyFigure) {
  const fs::path out = dir_ / "lesson-chen-fig7-verdict.png";
  std::string log;
  ASSERT_EQ(viewer("--lesson chen-fig7 --size 1600x900 --screenshot " + out.string(), log), 0)
      << log;
  const Picture p = load_picture(out, log);
  ASSERT_GT(p.width, 0);
  const int side = 370;  // past the side panel
  const Rgb reversed{204, 77, 77}, holds{77, 179, 102}, bar_a{90, 150, 250}, bar_b{240, 185, 100};
  EXPECT_GT(count_in(p, reversed, side, p.width, 0, p.height / 5, 20), 800)
      << "the REVERSED box near the top";
  EXPECT_LT(count_in(p, holds, side, p.width, 0, p.height / 5, 20), 50) << "no HOLDS box";
  const int figure = side + (p.width - side) * 45 / 100;  // the key figure's half
  EXPECT_GT(count_in(p, bar_a, side, figure, 0, p.height, 20), 1500) << "A's bar of the verdict";
  EXPECT_GT(count_in(p, bar_b, side, figure, 0, p.height, 20), 1500) << "B's bar of the verdict";
  EXPECT_GT(count_in(p, bar_a, figure, p.width, 0, p.height, 20), 20000)
      << "A's five bars of the key figure";
  EXPECT_GT(count_in(p, bar_b, figure, p.width, 0, p.height, 20), 20000)
      << "B's five bars of the key figure";
}

TEST_F(ViewerScreenshots, LessonListAndABadLessonExitTwoWithTheLessons) {
  std::string log;
  EXPECT_EQ(viewer("--lesson list", log), 2);
  for (const char* n : {"chen-fig7", "chen-multi-gpu", "grossman-tasks-per-sm",
                        "mohan-static-vs-stealing", "gcharm-combining"}) {
    EXPECT_NE(log.find(n), std::string::npos) << n << ":\n" << log;
  }
  EXPECT_EQ(viewer("--lesson chen-fig99 --screenshot " + (dir_ / "never.png").string(), log), 2);
  EXPECT_NE(log.find("'chen-fig99': no such lesson"), std::string::npos) << log;
  EXPECT_NE(log.find("chen-fig7"), std::string::npos) << log;
  EXPECT_EQ(viewer("--lesson chen-fig7 " + file("cpu.gpulb") + " --screenshot " +
                       (dir_ / "never.png").string(),
                   log),
            2);
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
  ASSERT_EQ(viewer("--help", log), 0);
  EXPECT_NE(log.find("--lesson"), std::string::npos);
  EXPECT_NE(log.find("mohan-static-vs-stealing"), std::string::npos) << "--help lists the lessons";
}

// The Findings tab of a task-queue run lists its warnings (orange); that of a balanced run, a
// recording of P0 on an H100's block scheduler, none.
TEST_F(ViewerScreenshots, FindingsListWhatTheTraceShows) {
  const Picture p = shoot(std::string(GPULB_SHIPPED_TRACES) + "/patterns-P4-task-queue-h200.gpulb",
                          "--view findings --view-only", "findings");
  const Rgb warning{255, 158, 89};
  EXPECT_GT(count_colour(p, warning, 0, -1, 20), 500)
      << "the warnings' kind names and their ranges under the run strip";
  EXPECT_GT(count_colour(p, kBusy, 0, -1, 12), 300) << "the busy workers over the run";
  const Picture none =
      shoot(std::string(GPULB_RECORDED_TRACES) + "/patterns-P0-hardware-h100.gpulb",
            "--view findings --view-only", "findings-none");
  EXPECT_LT(count_colour(none, warning, 0, -1, 20), 10) << "a balanced run has no warning";
}

// A finding's click (here --finding 1, the same code) zooms the timeline to it and selects its
// range: the picture is the one --range and --select draw for those times.
TEST_F(ViewerScreenshots, AFindingZoomsTheTimelineThere) {
  const std::string trace = std::string(GPULB_SHIPPED_TRACES) + "/patterns-P4-hardware-h200.gpulb";
  const TraceModel m(std::make_shared<const trace::Trace>(trace::read_trace(trace)));
  const auto fs = compute_findings(m);
  ASSERT_FALSE(fs.empty());
  ASSERT_EQ(fs[0].kind, FindingKind::Tail);
  const double origin = run_span(m).begin_ns;
  const TimeSpan r = finding_view_range(m, fs[0]);
  char range[128], select[128];
  std::snprintf(range, sizeof range, "%.3f:%.3f", r.begin_ns - origin, r.end_ns - origin);
  std::snprintf(select, sizeof select, "%.3f:%.3f", fs[0].begin_ns - origin, fs[0].end_ns - origin);
  const Picture clicked = shoot(trace, "--finding 1 --view-only", "finding-1");
  const Picture asked = shoot(
      trace, std::string("--view timeline --view-only --range ") + range + " --select " + select,
      "finding-range");
  ASSERT_EQ(clicked.width, asked.width);
  ASSERT_EQ(clicked.height, asked.height);
  int differ = 0;
  for (int y = 0; y < clicked.height; ++y) {
    for (int x = 0; x < clicked.width; ++x)
      differ += distance(clicked.at(x, y), asked.at(x, y)) > 0;
  }
  EXPECT_LT(differ, clicked.width * clicked.height / 200) << "the finding's view is the range's";
  const Picture whole = shoot(trace, "--view timeline --view-only", "finding-whole");
  int moved = 0;
  for (int y = 0; y < clicked.height; ++y) {
    for (int x = 0; x < clicked.width; ++x) moved += distance(clicked.at(x, y), whole.at(x, y)) > 0;
  }
  EXPECT_GT(moved, clicked.width * clicked.height / 20) << "and not the whole run's";
  std::string log;
  EXPECT_EQ(viewer(trace + " --finding 9 --screenshot " + (dir_ / "never.png").string(), log), 2);
  EXPECT_NE(log.find("has 2 finding(s)"), std::string::npos) << log;
}

}  // namespace
}  // namespace gpulb::viewer
