// The application: open traces, the main window's layout (menu, side panel, view tabs, replay
// bar), and the requests only the main loop can serve (PNG capture after rendering).
#pragma once

#include <imgui.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "document.hpp"
#include "export.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/registry.hpp"
#include "scenario_panel.hpp"
#include "time_format.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

// Where the shipped example traces are (installed, else the source tree); may be empty.
std::vector<std::filesystem::path> example_traces();

struct PngRequest {
  std::filesystem::path path;
  bool view_only = false;  // crop to the current view's rectangle
};

class App {
 public:
  explicit App(const Registry& registry);

  // Opens a trace; a failure is kept in errors() and shown in a popup, never thrown.
  bool open(const std::filesystem::path& path);
  void add(std::unique_ptr<Document> doc);
  // Opens a lesson's two shipped traces as A and B, shows Compare and the lesson's text; a trace
  // that cannot be found or read is kept in errors() as open() does.
  // The lesson's shipped traces, or `own_traces` (two files: its recipe's runs made here) as A and B.
  bool open_lesson(const builtin::Lesson& lesson, const std::vector<std::string>& own_traces = {});
  // Shows the panel `--view NAME` names (panels.hpp); false, and no change, for an unknown name.
  bool set_view(std::string_view cli_name);
  ViewState& view_state() { return vs_; }
  const std::vector<std::string>& errors() const { return errors_; }
  std::size_t document_count() const { return docs_.size(); }
  const Document* current() const;
  bool has_compare() const { return compare_ >= 0 && compare_ != current_; }  // a trace B beside A
  const Document* compare() const;                                            // trace B, or null
  const builtin::Lesson* lesson() const { return lesson_; }  // the lesson open, or null
  std::string_view view_name() const;                        // the view shown: its --view name

  // Draws one frame of the whole UI into the viewport; dt_s advances the replay.
  void frame(float dt_s);

  std::optional<PngRequest> take_png_request();
  // The last view's rectangle in window units (x, y, w, h): what "PNG of the view" crops to.
  ImVec4 view_rect() const { return view_rect_; }
  // Messages for the user (export done, export failed); the main loop also reports PNG results.
  void notify(std::string message) { status_ = std::move(message); }
  bool quit_requested() const { return quit_; }

 private:
  void menu_bar();
  void side_panel(float width, float height);
  void views(float width, float height);
  void popups();
  void fail(std::string message);
  void reset_timeline();
  void show_panel(std::size_t index) {
    view_ = index;
    select_tab_ = true;
  }
  // A lesson's two runs as A and B (shipped traces, or the CPU recipes' runs), Compare shown.
  // shipped: the lesson's own traces (its verdict then measured where its claim is, lesson_verdict).
  void adopt_lesson_pair(const builtin::Lesson& lesson, std::unique_ptr<Document> a,
                         std::unique_ptr<Document> b, bool shipped);
  bool lesson_shipped_ = false;
  // The lesson's "Run both on this CPU" (in its panel and its view): its key parameter's field,
  // the button and the progress; adopt_finished_lesson_runs (once a frame) opens the result.
  void lesson_run_controls();
  void lesson_key_field();
  void adopt_finished_lesson_runs();
  std::string lesson_key_value_;  // the key parameter's value the next CPU run takes

  const Registry& registry_;
  ScenarioPanel scenario_;
  std::vector<std::unique_ptr<Document>> docs_;
  int current_ = -1, compare_ = -1;
  const builtin::Lesson* lesson_ = nullptr;  // the lesson open, with its traces' indices in docs_
  int lesson_a_ = -1, lesson_b_ = -1;
  std::size_t view_ = 0;  // index into panels()
  bool select_tab_ = true;
  ViewState vs_;
  std::vector<std::string> errors_;
  std::string popup_error_;
  std::string status_;
  std::optional<PngRequest> png_;
  ImVec4 view_rect_{0, 0, 0, 0};
  // Dialog state: which popup to open this frame, and its path field.
  std::string open_popup_;
  char path_buf_[512] = {};
  bool range_only_ = false;
  bool quit_ = false;
  float dt_s_ = 0.0f;
  // The lesson's CPU recipes, run on a background thread (declared last: joined first).
  std::mutex lesson_mutex_;  // guards lesson_runs_ and lesson_error_
  std::optional<std::pair<trace::Trace, trace::Trace>> lesson_runs_;
  std::string lesson_error_;
  const builtin::Lesson* lesson_running_for_ = nullptr;
  std::atomic<bool> lesson_running_{false};
  std::jthread lesson_thread_;
};

}  // namespace gpulb::viewer
