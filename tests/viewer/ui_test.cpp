// The viewer's UI driven as a user drives it, with the mouse: the Lessons menu, and a click on a
// task in either of Compare's panels. Dear ImGui runs headless here (no window, no GL: a frame is
// NewFrame, App::frame, Render), and the test moves the mouse and presses its button between
// frames; where an item is, it finds by hovering (ImGui's own hit test), as a user's eye would.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <string>
#include <vector>

#include "app.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "run_span.hpp"
#include "task_details.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

class Ui : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1600, 1000);
    io.DeltaTime = 1.0f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the atlas, as a renderer would
    app_ = std::make_unique<App>(builtin::registry());
  }
  void TearDown() override {
    app_.reset();
    ImGui::DestroyContext();
  }

  void frame(ImVec2 mouse, bool down = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = mouse;
    io.MouseDown[0] = down;
    ImGui::NewFrame();
    app_->frame(io.DeltaTime);
    ImGui::Render();
  }
  void click(ImVec2 at) {
    frame(at);
    frame(at, true);
    frame(at, false);
    frame(at);
  }
  // Distinct items the mouse hovers going from `from` to `to` in steps of `step` px, in order,
  // with the middle of each.
  std::vector<std::pair<ImGuiID, ImVec2>> items_along(ImVec2 from, ImVec2 to, float step) {
    std::vector<std::pair<ImGuiID, ImVec2>> items;
    std::vector<std::pair<ImVec2, ImVec2>> extent;
    const float len = std::max(std::abs(to.x - from.x), std::abs(to.y - from.y));
    for (float s = 0; s <= len; s += step) {
      const ImVec2 p(from.x + (to.x - from.x) * s / len, from.y + (to.y - from.y) * s / len);
      frame(p);
      const ImGuiID id = GImGui->HoveredId;
      if (id == 0) continue;
      if (items.empty() || items.back().first != id) {
        items.push_back({id, p});
        extent.push_back({p, p});
      }
      extent.back().second = p;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      items[i].second = ImVec2((extent[i].first.x + extent[i].second.x) / 2,
                               (extent[i].first.y + extent[i].second.y) / 2);
    }
    return items;
  }
  static ImGuiWindow* window(const char* name) { return ImGui::FindWindowByName(name); }

  std::unique_ptr<App> app_;
};

// The Lessons menu opens a lesson as a user would choose it: menu bar, Lessons,
// its fourth entry. The lesson's two traces become A and B, Compare shows them, the panel its text.
TEST_F(Ui, TheLessonsMenuOpensTheLessonChosenInIt) {
  frame(ImVec2(-1, -1));
  ImGuiWindow* main = window("gpulb-viewer");
  ASSERT_NE(main, nullptr);
  const ImRect bar = main->MenuBarRect();
  ASSERT_GT(bar.GetHeight(), 0.0f);
  // The menu bar's headers, left to right: File, Export (disabled: nothing open), View, Lessons, Help.
  const auto headers = items_along(ImVec2(bar.Min.x + 2, bar.GetCenter().y),
                                   ImVec2(bar.Min.x + 600, bar.GetCenter().y), 3);
  ASSERT_GE(headers.size(), 4u);
  ImGuiID lessons_menu = 0;
  ImVec2 lessons_at;
  for (const auto& [id, at] : headers) {  // the header whose popup is the Lessons menu
    click(at);
    if (ImGuiWindow* menu = window("##Menu_00"); menu && menu->Active) {
      const ImGuiID popup =
          GImGui->OpenPopupStack.empty() ? 0 : GImGui->OpenPopupStack.back().PopupId;
      if (popup == ImHashStr("Lessons", 0, ImHashStr("##menubar", 0, main->ID))) {
        lessons_menu = id;
        lessons_at = at;
        break;
      }
    }
    click(ImVec2(bar.Max.x - 5, bar.Max.y + 400));  // elsewhere: closes it
  }
  ASSERT_NE(lessons_menu, 0u) << "no menu-bar header opens the Lessons menu";
  EXPECT_EQ(app_->lesson(), nullptr);

  // Its entries top to bottom (a disabled line first, which the mouse cannot hover): one per lesson, in order.
  ImGuiWindow* menu = window("##Menu_00");
  ASSERT_NE(menu, nullptr);
  const float x = menu->Pos.x + menu->Size.x / 2;
  const auto entries =
      items_along(ImVec2(x, menu->Pos.y + 2), ImVec2(x, menu->Pos.y + menu->Size.y - 2), 2);
  const std::span<const builtin::Lesson> all = builtin::lessons();
  ASSERT_EQ(entries.size(), all.size()) << "one entry a lesson";
  ASSERT_GE(all.size(), 4u);
  EXPECT_EQ(all[3].name, "mohan-static-vs-stealing");
  click(entries[3].second);

  ASSERT_TRUE(app_->errors().empty()) << app_->errors().front();
  ASSERT_NE(app_->lesson(), nullptr) << "the click opened no lesson";
  EXPECT_EQ(app_->lesson()->name, "mohan-static-vs-stealing");
  EXPECT_EQ(app_->view_name(), "lesson") << "a lesson opens on its verdict and key figure";
  ASSERT_TRUE(app_->has_compare());
  EXPECT_EQ(app_->current()->title.rfind("A: ", 0), 0u) << app_->current()->title;
  EXPECT_EQ(app_->compare()->title.rfind("B: ", 0), 0u) << app_->compare()->title;
  EXPECT_NE(app_->current()->title.find("connect4-4-static-list-h200"), std::string::npos)
      << app_->current()->title;
  EXPECT_NE(app_->compare()->title.find("connect4-4-work-stealing-h200"), std::string::npos)
      << app_->compare()->title;
  frame(ImVec2(-1, -1));
  EXPECT_EQ(window("##Menu_00") == nullptr || !window("##Menu_00")->Active, true)
      << "the menu closed";
}

// Tasks can be clicked in both Compare panels; the pick says which run it is of
// and its reference is valid in that run's model (the side panel shows its details).
TEST_F(Ui, AClickOnATaskInEitherComparePanelPicksItInItsRun) {
  ASSERT_TRUE(app_->open_lesson(*builtin::find_lesson("mohan-static-vs-stealing")));
  app_->set_view("compare");  // the lesson's evidence, one click from its Lesson view
  ViewState& vs = app_->view_state();
  vs.compare_a.unfold = vs.compare_b.unfold = true;  // a lane per block: tasks to click
  frame(ImVec2(-1, -1));
  frame(ImVec2(-1, -1));
  // The panels' lane areas: child windows named ".../lanes_<id>", A's above B's.
  std::vector<ImGuiWindow*> lanes;
  for (ImGuiWindow* w : GImGui->Windows) {
    if (w->Active && std::string(w->Name).find("/lanes_") != std::string::npos) lanes.push_back(w);
  }
  ASSERT_EQ(lanes.size(), 2u) << "two timelines in Compare";
  std::sort(lanes.begin(), lanes.end(),
            [](ImGuiWindow* a, ImGuiWindow* b) { return a->Pos.y < b->Pos.y; });
  for (int run = 0; run < 2; ++run) {
    const ImGuiWindow* w = lanes[static_cast<std::size_t>(run)];
    const TraceModel& m = *(run == 0 ? app_->current() : app_->compare())->model;
    vs.picked.reset();
    // Clicks across the panel, under its label column, until one lands on a task.
    for (float y = w->Pos.y + 4; y < w->Pos.y + w->Size.y - 4 && !vs.picked; y += 7) {
      for (float x = w->Pos.x + 320; x < w->Pos.x + w->Size.x - 10 && !vs.picked; x += 23)
        click(ImVec2(x, y));
    }
    ASSERT_TRUE(vs.picked) << "no click in panel "
                           << "AB"[run] << " picked a task";
    EXPECT_EQ(vs.picked->run, run) << "the pick names its panel's run";
    ASSERT_LT(vs.picked->task.lane, m.lanes().size());
    ASSERT_LT(vs.picked->task.zone, m.lanes()[vs.picked->task.lane].zones.size());
    EXPECT_EQ(m.lanes()[vs.picked->task.lane].role, trace::TrackRole::Worker);
    EXPECT_EQ(task_details(m, vs.picked->task).id,
              m.lanes()[vs.picked->task.lane].zones.id(vs.picked->task.zone));
    frame(ImVec2(-1, -1));  // the side panel draws its details from that run's model
  }
}

// A lesson's "look here" step, as its button does: Compare opens zoomed to the moment of the run the
// step names (B's host batches, for Chen's Figure 7), the moment selected on A's clock.
TEST_F(Ui, ALessonsLookHereStepOpensCompareOnItsMomentSelected) {
  const builtin::Lesson& l = *builtin::find_lesson("chen-fig7");
  ASSERT_TRUE(app_->open_lesson(l));
  frame(ImVec2(-1, -1));
  ASSERT_EQ(app_->view_name(), "lesson");
  const Document& a = *app_->current();
  const Document& b = *app_->compare();
  ViewState& vs = app_->view_state();
  std::size_t index = 0;
  while (index < l.steps.size() && l.steps[index].side != 1) ++index;
  ASSERT_LT(index, l.steps.size()) << "a step on trace B";
  ASSERT_EQ(
      show_lesson_step(l, LessonTraces{*a.model, *b.model, a.findings, b.findings}, index, vs), "");
  for (int i = 0; i < 4; ++i)
    frame(ImVec2(-1, -1));  // the tab switches, then Compare lays out and zooms
  EXPECT_EQ(app_->view_name(), "compare");
  const std::optional<MomentRange> at =
      find_moment(*b.model, b.findings, *moment_from_name(l.steps[index].moment));
  ASSERT_TRUE(at && vs.selection);
  const double since_b = at->selected.begin_ns - launch_ns(*b.model);
  EXPECT_NEAR(vs.selection->begin_ns - launch_ns(*a.model), since_b, 1.0)
      << "selected, on A's clock";
  EXPECT_NEAR(vs.selection->end_ns - vs.selection->begin_ns,
              at->selected.end_ns - at->selected.begin_ns, 1.0);
  // The shared axis (time since each launch) starts where the moment's view does, at its scale.
  EXPECT_NEAR(vs.compare_axis.t0_ns, at->shown.begin_ns - launch_ns(*b.model), 1.0);
  EXPECT_LT(vs.compare_axis.ns_per_px * 400.0, static_cast<double>(b.model->stats().makespan_ns))
      << "zoomed in, not the whole run";
  EXPECT_FALSE(vs.compare_range) << "applied once";
}

}  // namespace
}  // namespace gpulb::viewer
