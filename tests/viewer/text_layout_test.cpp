// No label drawn over another, and no number split across lines: every view of the viewer (the
// panel table: lesson, timeline, histograms, occupancy, selection, compare, findings, summary),
// with its menu, side panel and replay bar, at 1280x720, 1600x900 and 1920x1080, for every
// shipped trace (B in Compare: the next trace; a selection over the run's middle third) and for
// every lesson. Dear ImGui runs headless (no window, no GL) with the viewer's style and font;
// text_capture.hpp records every text drawn and where. A text counts where it shows: inside its
// clip rectangle and in a window that was drawn.
#include <gtest/gtest.h>

#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "panels.hpp"
#include "platform.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"
#include "text_capture.hpp"
#include "text_wrap.hpp"

namespace gpulb::viewer {
namespace {

using testing::DrawnText;
using testing::TextLine;

const ImVec2 kSizes[] = {{1280, 720}, {1600, 900}, {1920, 1080}};
constexpr float kTolerancePx = 1.0f;  // boxes that share less than this in x or y only touch

// A line as it shows: its box cut to its clip rectangle.
struct Shown {
  std::string text;
  ImVec2 min, max;
};

std::vector<Shown> shown_lines(const std::vector<DrawnText>& texts) {
  std::set<const ImDrawList*> drawn;  // the draw lists of windows that were drawn this frame
  if (const ImDrawData* d = ImGui::GetDrawData()) {
    for (int i = 0; i < d->CmdListsCount; ++i) drawn.insert(d->CmdLists[i]);
  }
  std::vector<Shown> out;
  for (const DrawnText& t : texts) {
    if (!drawn.count(t.list)) continue;
    for (const TextLine& l : t.lines) {
      if (l.text.empty()) continue;
      const ImVec2 a(std::max(l.min.x, t.clip.x), std::max(l.min.y, t.clip.y));
      const ImVec2 b(std::min(l.max.x, t.clip.z), std::min(l.max.y, t.clip.w));
      if (b.x - a.x < kTolerancePx || b.y - a.y < kTolerancePx) continue;  // clipped away
      out.push_back({l.text, a, b});
    }
  }
  return out;
}

std::string box(const Shown& s) {
  std::ostringstream o;
  o << "\"" << s.text << "\" (" << s.min.x << "," << s.min.y << ")-(" << s.max.x << "," << s.max.y
    << ")";
  return o.str();
}

// Pairs of shown lines that overlap by kTolerancePx or more both ways.
std::vector<std::string> overlaps(std::vector<Shown> lines) {
  std::sort(lines.begin(), lines.end(),
            [](const Shown& a, const Shown& b) { return a.min.x < b.min.x; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (std::size_t j = i + 1; j < lines.size() && lines[j].min.x < lines[i].max.x - kTolerancePx;
         ++j) {
      const float w = std::min(lines[i].max.x, lines[j].max.x) - lines[j].min.x;
      const float h =
          std::min(lines[i].max.y, lines[j].max.y) - std::max(lines[i].min.y, lines[j].min.y);
      if (w >= kTolerancePx && h >= kTolerancePx)
        out.push_back(box(lines[i]) + " and " + box(lines[j]));
    }
  }
  return out;
}

// Texts whose lines break inside a number or between a number and its unit (text_wrap.hpp).
std::vector<std::string> split_numbers(const std::vector<DrawnText>& texts) {
  std::vector<std::string> out;
  for (const DrawnText& t : texts) {
    for (std::size_t i = 1; i < t.lines.size(); ++i) {
      const TextLine& a = t.lines[i - 1];
      const TextLine& b = t.lines[i];
      if (splits_a_number(a.text, b.text, a.broke_at_blank))
        out.push_back("\"" + a.text + "\" | \"" + b.text + "\"");
    }
  }
  return out;
}

// One ImGui context for the whole run: the atlas of the viewer's font is built once.
class TextLayout : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DeltaTime = 1.0f / 60;
    io.ConfigFlags |= ImGuiConfigFlags_NoMouse;  // no hover, no tooltip: what a screenshot shows
    // as the OpenGL 3 backend: draw lists over 64k vertices
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    apply_look(1.0f);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  static void TearDownTestSuite() { ImGui::DestroyContext(); }

  static void frame(App& app) {
    ImGui::NewFrame();
    app.frame(0.0f);
    ImGui::Render();
  }

  // Every view at every size: the faults found, one line each, after `what`.
  static std::vector<std::string> faults_in_every_view(App& app, const std::string& what) {
    std::vector<std::string> faults;
    for (const ImVec2 size : kSizes) {
      ImGui::GetIO().DisplaySize = size;
      for (const Panel& p : panels()) {
        app.set_view(p.cli_name);
        frame(app);  // ImGui sizes windows from the frame before; the screenshots keep the 4th
        frame(app);
        testing::capture_texts(true);
        frame(app);
        testing::capture_texts(false);
        const std::string where = what + ", " + p.cli_name + " at " + std::to_string(int(size.x)) +
                                  "x" + std::to_string(int(size.y)) + ": ";
        for (const std::string& o : overlaps(shown_lines(testing::captured_texts())))
          faults.push_back(where + "overlap " + o);
        for (const std::string& s : split_numbers(testing::captured_texts()))
          faults.push_back(where + "number split " + s);
      }
    }
    return faults;
  }

  static void expect_none(const std::vector<std::string>& faults) {
    std::string shown;
    for (std::size_t i = 0; i < faults.size() && i < 40; ++i) shown += "\n  " + faults[i];
    EXPECT_TRUE(faults.empty()) << faults.size() << " faults:" << shown;
  }
};

// The check itself: ImGui's own wrapping breaks "1.0%" after its '.', and two texts drawn at one
// place overlap; both are found, and a text clipped away is not.
TEST_F(TextLayout, TheCheckFindsASplitNumberAndAnOverlap) {
  ImGui::GetIO().DisplaySize = ImVec2(800, 600);
  testing::capture_texts(true);
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(800, 600));
  ImGui::Begin("check");
  const float one_point = ImGui::CalcTextSize("the median SM 1.").x;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + one_point + 2);
  ImGui::TextWrapped("the median SM 1.0%% of the run");
  ImGui::PopTextWrapPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddText(ImVec2(300, 300), IM_COL32_WHITE, "500 us");
  dl->AddText(ImVec2(310, 302), IM_COL32_WHITE, "selection 473 us");
  dl->PushClipRect(ImVec2(0, 0), ImVec2(10, 10), true);
  dl->AddText(ImVec2(300, 300), IM_COL32_WHITE, "clipped away");
  dl->PopClipRect();
  ImGui::End();
  ImGui::Render();
  testing::capture_texts(false);
  const std::vector<std::string> splits = split_numbers(testing::captured_texts());
  ASSERT_EQ(splits.size(), 1u);
  EXPECT_EQ(splits[0], "\"the median SM 1.\" | \"0% of the run\"");
  const std::vector<std::string> over = overlaps(shown_lines(testing::captured_texts()));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_NE(over[0].find("selection 473 us"), std::string::npos);
}

class TextLayoutOfATrace : public TextLayout,
                           public ::testing::WithParamInterface<std::filesystem::path> {};

TEST_P(TextLayoutOfATrace, NoLabelOverAnotherAndNoNumberSplit) {
  const std::vector<std::filesystem::path> all = testing::all_shipped();
  const auto at = std::find(all.begin(), all.end(), GetParam()) - all.begin();
  App app(builtin::registry());
  ASSERT_TRUE(app.open(GetParam()));
  ASSERT_TRUE(app.open(all[static_cast<std::size_t>(at + 1) % all.size()]));  // B, for Compare
  const TraceModel& m = *app.current()->model;
  const TimeSpan run = run_span(m);
  const double third = (run.end_ns - run.begin_ns) / 3;
  app.view_state().selection = Selection{run.begin_ns + third, run.end_ns - third};
  expect_none(faults_in_every_view(app, GetParam().filename().string()));
}

INSTANTIATE_TEST_SUITE_P(ShippedTraces, TextLayoutOfATrace,
                         ::testing::ValuesIn(testing::all_shipped()), [](const auto& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// At 1600x900 a 4-GPU run's timeline shows every GPU's rows: GPU 3's header, and as many SM
// labels under it as under GPU 0 (before, the counter strip took the room and GPU 3 was cut off).
TEST_F(TextLayout, EveryGpuOfA4GpuRunShowsInTheTimelineAt1600x900) {
  for (const char* file : {testing::kMd4Gpu, testing::kUts4Gpu}) {
    App app(builtin::registry());
    ASSERT_TRUE(app.open(std::filesystem::path(GPULB_SHIPPED_TRACES) / file));
    app.set_view("timeline");
    ImGui::GetIO().DisplaySize = ImVec2(1600, 900);
    frame(app);
    frame(app);
    testing::capture_texts(true);
    frame(app);
    testing::capture_texts(false);
    std::vector<Shown> lines = shown_lines(testing::captured_texts());
    std::sort(lines.begin(), lines.end(),
              [](const Shown& a, const Shown& b) { return a.min.y < b.min.y; });
    std::vector<int> sm_labels;  // per GPU header seen, the SM labels under it
    for (const Shown& l : lines) {
      if (l.text.rfind("v GPU ", 0) == 0) sm_labels.push_back(0);
      if (l.text.rfind("> SM ", 0) == 0 && !sm_labels.empty()) ++sm_labels.back();
    }
    ASSERT_EQ(sm_labels.size(), 4u) << file << ": every GPU's header shows";
    EXPECT_GT(sm_labels[0], 0) << file;
    EXPECT_EQ(sm_labels[3], sm_labels[0]) << file << ": GPU 3's rows show as GPU 0's do";
  }
}

TEST_F(TextLayout, EveryLessonHasNoLabelOverAnotherAndNoNumberSplit) {
  for (const builtin::Lesson& lesson : builtin::lessons()) {
    App app(builtin::registry());
    ASSERT_TRUE(app.open_lesson(lesson)) << lesson.name;
    expect_none(faults_in_every_view(app, "lesson " + std::string(lesson.name)));
  }
}

// The texts of a lesson's view at 1600x900, the size its picture is taken at.
std::vector<std::string> lesson_texts(const char* name) {
  App app(builtin::registry());
  EXPECT_TRUE(app.open_lesson(*builtin::find_lesson(name)));
  app.set_view("lesson");
  ImGui::GetIO().DisplaySize = ImVec2(1600, 900);
  for (int i = 0; i < 2; ++i) {
    ImGui::NewFrame();
    app.frame(0.0f);
    ImGui::Render();
  }
  testing::capture_texts(true);
  ImGui::NewFrame();
  app.frame(0.0f);
  ImGui::Render();
  testing::capture_texts(false);
  std::vector<std::string> out;
  for (const Shown& l : shown_lines(testing::captured_texts())) out.push_back(l.text);
  return out;
}

// Grossman's verdict reads the busiest SM over the idlest: the histograms under it state that ratio.
TEST_F(TextLayout, GrossmansHistogramsStateTheRatioItsVerdictReads) {
  int footers = 0;
  for (const std::string& t : lesson_texts("grossman-tasks-per-sm")) {
    if (t.rfind("min ", 0) != 0)
      continue;  // a chart's footer: "min 355   mean 494   max 724   ..."
    ++footers;
    EXPECT_NE(t.find("max/min"), std::string::npos) << t;
    EXPECT_EQ(t.find("max/mean"), std::string::npos) << t;
  }
  EXPECT_EQ(footers, 2) << "A's histogram and B's";
}

// Chen found Solution 1 (A) unbalanced; where A measured balanced, "A holds" read as the paper being
// right about A. The view states what was measured instead.
TEST_F(TextLayout, ABalanceBothRunsKeepIsNotCalledAHoldForEither) {
  bool within = false;
  for (const std::string& t : lesson_texts("chen-multi-gpu")) {
    EXPECT_EQ(t.find("A holds"), std::string::npos) << t;
    EXPECT_EQ(t.find("B holds"), std::string::npos) << t;
    within = within || t.find("within") != std::string::npos;
  }
  EXPECT_TRUE(within) << "the balance measured, as how close";
}

}  // namespace
}  // namespace gpulb::viewer
