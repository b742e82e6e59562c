// The main window: menu bar, side panel (trace choice, summary, scenario runs), view tabs and the
// replay bar, plus the dialogs (open, save, export) and the error popup.
//
// [SECTION] Opening traces
// [SECTION] Frame and layout
// [SECTION] Menus
// [SECTION] Dialogs
#include "app.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "compare_span.hpp"
#include "display_text.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "panels.hpp"
#include "timeline_tools.hpp"
#include "views.hpp"

namespace gpulb::viewer {

// -------------------------------------------------------------------------------------------------
// [SECTION] Opening traces
// -------------------------------------------------------------------------------------------------

std::vector<std::filesystem::path> example_traces() {
  std::vector<std::filesystem::path> out;
  for (const std::filesystem::path& dir :
       builtin::shipped_trace_dirs()) {  // the lessons' folders too
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".gpulb") out.push_back(e.path());
    }
    if (!out.empty())
      break;  // the first folder that holds traces wins (installed before the source tree)
  }
  std::sort(out.begin(), out.end());
  return out;
}

App::App(const Registry& registry) : registry_(registry), scenario_(registry) {}

bool App::open(const std::filesystem::path& path) {
  try {
    add(load_document(path));
    return true;
  } catch (const std::exception& e) {  // TraceFileError names the file and the fault
    fail(e.what());
    return false;
  }
}

void App::add(std::unique_ptr<Document> doc) {
  docs_.push_back(std::move(doc));
  const int added = static_cast<int>(docs_.size()) - 1;
  // The first trace becomes A; the next, B of the comparison; later ones replace A.
  if (current_ < 0) {
    current_ = added;
  } else if (compare_ < 0) {
    compare_ = added;
  } else {
    compare_ = current_;
    current_ = added;
  }
  vs_.fit_pending = vs_.compare_fit_pending = true;
  vs_.selection.reset();
  vs_.playhead = Playhead{};
  reset_timeline();
}

// A trace's own timeline state: folds, search, the picked task and marks (lanes of another trace).
// --unfold holds for every trace.
void App::reset_timeline() {
  const bool unfold = vs_.timeline.unfold;
  vs_.timeline = TimelineState{};
  vs_.timeline.unfold = unfold;
  clear_search(vs_.compare_a);  // its results name lanes of the traces that were A and B
  vs_.picked.reset();
  vs_.marks.clear();
}

bool App::open_lesson(const builtin::Lesson& lesson, const std::vector<std::string>& own_traces) {
  std::vector<std::unique_ptr<Document>> loaded;
  for (const builtin::LessonRun* run : {&lesson.a, &lesson.b}) {
    const std::size_t side = loaded.size();
    const auto path = own_traces.size() == 2
                          ? std::optional<std::filesystem::path>(own_traces[side])
                          : builtin::find_shipped_trace(run->trace);
    if (!path) {
      std::string where;
      for (const auto& d : builtin::shipped_trace_dirs())
        where += (where.empty() ? "" : " or ") + d.string();
      fail("lesson " + std::string(lesson.name) + ": " + std::string(run->trace) + " is not in " +
           where + " (the shipped traces: install gpulb, or run from its source tree)");
      return false;
    }
    try {
      loaded.push_back(load_document(*path));
    } catch (const std::exception& e) {
      fail(e.what());
      return false;
    }
  }
  loaded[0]->title = "A: " + loaded[0]->title;
  loaded[1]->title = "B: " + loaded[1]->title;
  adopt_lesson_pair(lesson, std::move(loaded[0]), std::move(loaded[1]), own_traces.empty());
  return true;
}

void App::adopt_lesson_pair(const builtin::Lesson& lesson, std::unique_ptr<Document> a,
                            std::unique_ptr<Document> b, bool shipped) {
  lesson_shipped_ = shipped;
  docs_.push_back(std::move(a));
  docs_.push_back(std::move(b));
  current_ = lesson_a_ = static_cast<int>(docs_.size()) - 2;
  compare_ = lesson_b_ = static_cast<int>(docs_.size()) - 1;
  if (lesson_ != &lesson) lesson_key_value_ = builtin::recipe_value(lesson.a, lesson.key_parameter);
  lesson_ = &lesson;
  vs_.fit_pending = vs_.compare_fit_pending = true;
  vs_.selection.reset();
  vs_.playhead = Playhead{};
  reset_timeline();
  set_view("lesson");
}

void App::adopt_finished_lesson_runs() {
  std::lock_guard lock(lesson_mutex_);
  if (lesson_runs_ && lesson_running_for_) {
    auto& [ta, tb] = *lesson_runs_;
    auto da =
        make_document(std::move(ta), "A (this CPU): " + std::string(lesson_running_for_->a.label));
    auto db =
        make_document(std::move(tb), "B (this CPU): " + std::string(lesson_running_for_->b.label));
    da->unsaved = db->unsaved = true;
    lesson_runs_.reset();
    adopt_lesson_pair(*lesson_running_for_, std::move(da), std::move(db), false);
  }
  if (!lesson_error_.empty()) {
    fail("lesson run on this CPU: " + lesson_error_);
    lesson_error_.clear();
  }
}

// The lesson's key parameter: a choice among its values, or a field for a number.
void App::lesson_key_field() {
  const Scenario* scenario = registry_.find(std::string(lesson_->a.scenario));
  const ParamSpec* spec = nullptr;
  if (scenario) {
    for (const ParamSpec& p : scenario->params()) {
      if (p.name == lesson_->key_parameter) spec = &p;
    }
  }
  ImGui::TextUnformatted(lesson_->key_parameter.data(),
                         lesson_->key_parameter.data() + lesson_->key_parameter.size());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90.0f);
  if (spec && !spec->choices.empty()) {
    if (ImGui::BeginCombo("##key value", lesson_key_value_.c_str())) {
      for (const std::string& c : spec->choices) {
        if (ImGui::Selectable(c.c_str(), c == lesson_key_value_)) lesson_key_value_ = c;
      }
      ImGui::EndCombo();
    }
  } else {
    int v = std::atoi(lesson_key_value_.c_str());
    if (ImGui::InputInt("##key value", &v)) {
      if (spec && spec->max > spec->min)
        v = std::clamp(v, static_cast<int>(spec->min), static_cast<int>(spec->max));
      lesson_key_value_ = std::to_string(v);
    }
  }
  if (spec && ImGui::IsItemHovered())
    ImGui::SetTooltip("%s (%s)", spec->description.c_str(), spec->range.c_str());
  ImGui::SameLine();
}

void App::lesson_run_controls() {
  ParamMap key;
  if (!lesson_->key_parameter.empty()) key[std::string(lesson_->key_parameter)] = lesson_key_value_;
  const std::optional<RunConfig> a = builtin::lesson_recipe(lesson_->a, Backend::Cpu, key);
  const std::optional<RunConfig> b = builtin::lesson_recipe(lesson_->b, Backend::Cpu, key);
  if (!a || !b) {
    ImGui::TextDisabled("No CPU recipe: this lesson needs a GPU (its traces are the GPU runs).");
    return;
  }
  if (lesson_running_.load()) {
    ImGui::TextDisabled("Running both on this CPU...");
    return;
  }
  if (!lesson_->key_parameter.empty()) lesson_key_field();
  if (ImGui::Button("Run both on this CPU")) {
    lesson_running_ = true;
    lesson_running_for_ = lesson_;
    lesson_thread_ = std::jthread([this, ca = *a, cb = *b] {
      try {
        RunResult ra = run(registry_, ca);
        RunResult rb = run(registry_, cb);
        std::lock_guard lock(lesson_mutex_);
        lesson_runs_.emplace(std::move(ra.trace), std::move(rb.trace));
      } catch (const std::exception& e) {
        std::lock_guard lock(lesson_mutex_);
        lesson_error_ = e.what();
      }
      lesson_running_ = false;
    });
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s\n%s", builtin::recipe_command(lesson_->a, Backend::Cpu, key).c_str(),
                      builtin::recipe_command(lesson_->b, Backend::Cpu, key).c_str());
  }
}

bool App::set_view(std::string_view cli_name) {
  const std::optional<std::size_t> panel = find_panel(cli_name);
  if (panel) show_panel(*panel);
  return panel.has_value();
}

const Document* App::current() const {
  return current_ >= 0 ? docs_[static_cast<std::size_t>(current_)].get() : nullptr;
}
std::string_view App::view_name() const { return panels()[view_].cli_name; }

const Document* App::compare() const {
  return has_compare() ? docs_[static_cast<std::size_t>(compare_)].get() : nullptr;
}

void App::fail(std::string message) {
  errors_.push_back(message);
  popup_error_ = std::move(message);
  open_popup_ = "Error";
}

std::optional<PngRequest> App::take_png_request() {
  std::optional<PngRequest> r;
  r.swap(png_);
  return r;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Frame and layout
// -------------------------------------------------------------------------------------------------

void App::frame(float dt_s) {
  dt_s_ = dt_s;
  adopt_finished_lesson_runs();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("gpulb-viewer", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
  menu_bar();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::clamp(avail.x * 0.24f, 300.0f, 400.0f);
  side_panel(side, avail.y);
  ImGui::SameLine();
  views(ImGui::GetContentRegionAvail().x, avail.y);
  popups();
  ImGui::End();
}

void App::side_panel(float width, float height) {
  ImGui::BeginChild("side", ImVec2(width, height), true);
  if (!docs_.empty()) {
    auto doc_combo = [this](const char* label, int& index, bool allow_none) {
      const std::string preview =
          index >= 0 ? display_label(docs_[static_cast<std::size_t>(index)]->title) : "(none)";
      ImGui::SetNextItemWidth(-60);
      if (ImGui::BeginCombo(label, preview.c_str())) {
        if (allow_none && ImGui::Selectable("(none)", index < 0)) index = -1;
        for (int i = 0; i < static_cast<int>(docs_.size()); ++i) {
          const std::string t =
              display_label(docs_[static_cast<std::size_t>(i)]->title) + "##" + std::to_string(i);
          if (ImGui::Selectable(t.c_str(), i == index)) {
            index = i;
            vs_.fit_pending = true;
            reset_timeline();
          }
        }
        ImGui::EndCombo();
      }
    };
    doc_combo("trace A", current_, false);
    doc_combo("B", compare_, true);
  }
  if (lesson_) {
    const std::string header = "Lesson: " + std::string(lesson_->name) + "###lesson";
    if (ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) {
      const bool ours = current_ == lesson_a_ && compare_ == lesson_b_;
      const Document* da = ours ? docs_[static_cast<std::size_t>(lesson_a_)].get() : nullptr;
      const Document* db = ours ? docs_[static_cast<std::size_t>(lesson_b_)].get() : nullptr;
      const bool on_recording =
          da && db &&
          measured_on_recording(shown_verdict(*lesson_, *da->model, *db->model, lesson_shipped_));
      draw_lesson(*lesson_, da ? da->model.get() : nullptr, db ? db->model.get() : nullptr,
                  da ? &da->findings : nullptr, db ? &db->findings : nullptr, on_recording, vs_);
      lesson_run_controls();
      ImGui::SameLine();
      if (ImGui::SmallButton("Close the lesson")) lesson_ = nullptr;
    }
  }
  if (const Document* d = current()) {
    const Document* picked_doc = vs_.picked && vs_.picked->run == 1 ? compare() : d;
    if (vs_.picked && picked_doc && ImGui::CollapsingHeader("Task", ImGuiTreeNodeFlags_DefaultOpen))
      draw_task_details(*picked_doc->model, vs_);
    if (ImGui::CollapsingHeader("Summary", ImGuiTreeNodeFlags_DefaultOpen))
      draw_summary(*d->model, true);
  }
  if (ImGui::CollapsingHeader("Run a scenario", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (auto finished = scenario_.draw()) {
      auto doc = make_document(std::move(finished->trace), finished->title);
      doc->unsaved = true;
      add(std::move(doc));
    }
  }
  if (!status_.empty()) {
    ImGui::Separator();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "%s", display_text(status_).c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::EndChild();
}

void App::views(float width, float height) {
  ImGui::BeginChild("views", ImVec2(width, height), false);
  const Document* doc = current();
  if (!doc) {
    ImGui::Dummy(ImVec2(0, height * 0.3f));
    ImGui::Indent(40);
    ImGui::TextColored(ImVec4(0.86f, 0.87f, 0.9f, 1), "No trace open.");
    ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1),
                       "Open one with File > Open, drop a .gpulb file on this window,\nor run a "
                       "scenario from the panel on the left.");
    ImGui::Unindent(40);
    ImGui::EndChild();
    return;
  }
  const TraceModel& model = *doc->model;
  const float bar_h = ImGui::GetFrameHeightWithSpacing() + 4;
  const Document* compare_doc = compare_ >= 0 && compare_ != current_
                                    ? docs_[static_cast<std::size_t>(compare_)].get()
                                    : nullptr;
  const TraceModel* compare = compare_doc ? compare_doc->model.get() : nullptr;
  if (ImGui::BeginTabBar("views")) {
    const std::span<const Panel> all = panels();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const ImGuiTabItemFlags flags = select_tab_ && view_ == i ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(all[i].title, nullptr, flags)) continue;
      if (!select_tab_) view_ = i;
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const ImVec2 size(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - bar_h);
      view_rect_ = ImVec4(p.x, p.y, size.x, size.y);
      const bool lesson_pair = lesson_ && current_ == lesson_a_ && compare_ == lesson_b_;
      all[i].draw(PanelContext{
          model, compare, doc->findings, compare_doc ? &compare_doc->findings : nullptr, vs_,
          effective_playhead(model, vs_.playhead), size, lesson_pair ? lesson_ : nullptr,
          [this] { lesson_run_controls(); }, lesson_shipped_});
      ImGui::SetCursorScreenPos(ImVec2(p.x, p.y + size.y + 4));
      const bool comparing = compare && std::string_view(all[i].cli_name) == "compare";
      draw_replay_bar(comparing ? compare_replay_span(model, *compare) : run_span(model),
                      vs_.playhead, dt_s_);
      ImGui::EndTabItem();
    }
    select_tab_ = false;
    ImGui::EndTabBar();
  }
  if (!vs_.switch_view.empty()) {  // a finding's click: show the view that zooms there
    set_view(vs_.switch_view);
    vs_.switch_view.clear();
  }
  ImGui::EndChild();
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Menus
// -------------------------------------------------------------------------------------------------

void App::menu_bar() {
  if (!ImGui::BeginMenuBar()) return;
  auto ask_path = [this](const char* popup, const std::string& suggestion) {
    open_popup_ = popup;
    std::snprintf(path_buf_, sizeof path_buf_, "%s", suggestion.c_str());
  };
  const Document* doc = current();
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...")) ask_path("Open trace", "");
    const auto examples = example_traces();
    if (ImGui::BeginMenu("Examples", !examples.empty())) {
      for (const auto& p : examples) {
        if (ImGui::MenuItem(p.filename().c_str())) open(p);
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Save trace as...", nullptr, false, doc != nullptr))
      ask_path("Save trace", "run.gpulb");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) quit_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Export", doc != nullptr)) {
    if (ImGui::MenuItem("PNG of the window..."))
      ask_path("Export PNG of the window", "gpulb-window.png");
    if (ImGui::MenuItem("PNG of the view...")) ask_path("Export PNG of the view", "gpulb-view.png");
    if (ImGui::MenuItem("Perfetto trace (.pftrace)..."))
      ask_path("Export Perfetto trace", "trace.pftrace");
    if (ImGui::MenuItem("Chrome / Perfetto JSON...")) ask_path("Export Chrome JSON", "trace.json");
    if (ImGui::MenuItem("CSV...")) ask_path("Export CSV", "tasks.csv");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    const std::span<const Panel> all = panels();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (ImGui::MenuItem(all[i].title, nullptr, view_ == i)) show_panel(i);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Colour by kind", nullptr, vs_.colour == ColourMode::ByKind))
      vs_.colour = ColourMode::ByKind;
    if (ImGui::MenuItem("Colour by duration", nullptr, vs_.colour == ColourMode::ByDuration))
      vs_.colour = ColourMode::ByDuration;
    if (ImGui::MenuItem("Fit the whole run")) vs_.fit_pending = true;
    if (ImGui::MenuItem("Clear the selection", nullptr, false, vs_.selection.has_value()))
      vs_.selection.reset();
    if (ImGui::MenuItem("Clear the marks", nullptr, false, !vs_.marks.empty())) vs_.marks.clear();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons")) {
    ImGui::TextDisabled("A paper's claim, two real GPU runs side by side");
    for (const builtin::Lesson& l : builtin::lessons()) {
      const std::string item = std::string(l.title) + "##" + std::string(l.name);
      if (ImGui::MenuItem(item.c_str(), std::string(l.name).c_str(), lesson_ == &l)) open_lesson(l);
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::TextUnformatted(
        "Timeline: wheel zooms at the cursor, drag pans (and scrolls),\n"
        "Ctrl+wheel scrolls, Shift+drag or right-drag selects a range\n"
        "(its figures: the Selection tab), double-click fits, click a\n"
        "group's name to fold or unfold it, click a task for its details.\n"
        "Keys: W/S zoom, A/D pan, M marks the time under the cursor,\n"
        "Ctrl+F finds a task (id, k<kind>), N/Shift+N next/previous,\n"
        "Esc clears the selection, the picked task and the search.\n"
        "Replay: Play, or drag the bar at the bottom; histograms and\n"
        "occupancy then show the state at the playhead.\n"
        "Findings: what the trace shows; click a time to zoom there.\n"
        "Lessons: a paper's claim as two real GPU runs side by side.");
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

// -------------------------------------------------------------------------------------------------
// [SECTION] Dialogs
// -------------------------------------------------------------------------------------------------

void App::popups() {
  if (!open_popup_.empty()) {
    ImGui::OpenPopup(open_popup_.c_str());
    open_popup_.clear();
  }
  const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
  auto path_dialog = [&](const char* title, const char* action, auto&& on_ok, bool with_range) {
    ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    ImGui::SetNextItemWidth(480);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter =
        ImGui::InputText("path", path_buf_, sizeof path_buf_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (with_range) {
      ImGui::BeginDisabled(!vs_.selection);
      ImGui::Checkbox("only the selected time range", &range_only_);
      ImGui::EndDisabled();
    }
    if (std::string(title) == "Open trace") {
      std::vector<std::filesystem::path> found = example_traces();
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(".", ec)) {
        if (e.path().extension() == ".gpulb") found.push_back(e.path());
      }
      if (!found.empty()) ImGui::TextDisabled("Traces here and shipped examples:");
      for (const auto& f : found) {
        if (ImGui::Selectable(f.string().c_str()))
          std::snprintf(path_buf_, sizeof path_buf_, "%s", f.string().c_str());
      }
    }
    if (ImGui::Button(action, ImVec2(120, 0)) || enter) {
      ImGui::CloseCurrentPopup();
      on_ok(std::filesystem::path(path_buf_));
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(120, 0))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  };
  const Document* doc = current();
  path_dialog(
      "Open trace", "Open", [this](const std::filesystem::path& p) { open(p); }, false);
  path_dialog(
      "Save trace", "Save",
      [this, doc](const std::filesystem::path& p) {
        try {
          trace::write_trace(p, doc->model->to_trace());
          notify("saved " + p.string());
        } catch (const std::exception& e) {
          fail(e.what());
        }
      },
      false);
  path_dialog(
      "Export PNG of the window", "Export",
      [this](const std::filesystem::path& p) {
        png_ = PngRequest{p, false};
      },
      false);
  path_dialog(
      "Export PNG of the view", "Export",
      [this](const std::filesystem::path& p) {
        png_ = PngRequest{p, true};
      },
      false);
  auto export_as = [this, doc](trace::ExportFormat format) {
    return [this, doc, format](const std::filesystem::path& p) {
      try {
        const auto files = export_trace_as(doc->model->to_trace(), format, p,
                                           range_only_ ? vs_.selection : std::nullopt);
        std::string msg = "wrote";
        for (const auto& f : files) msg += " " + f.string();
        notify(msg);
      } catch (const std::exception& e) {
        fail(e.what());
      }
    };
  };
  if (doc) {
    path_dialog("Export Perfetto trace", "Export", export_as(trace::ExportFormat::Perfetto), true);
    path_dialog("Export Chrome JSON", "Export", export_as(trace::ExportFormat::Chrome), true);
    path_dialog("Export CSV", "Export", export_as(trace::ExportFormat::Csv), true);
  }

  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal("Error", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::PushTextWrapPos(560);
    ImGui::TextColored(ImVec4(1.0f, 0.5f, 0.5f, 1), "%s", display_text(popup_error_).c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("OK", ImVec2(120, 0))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace gpulb::viewer
