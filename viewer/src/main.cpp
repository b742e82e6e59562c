// gpulb-viewer: timelines, load histograms, queue occupancy, replay, live runs, compare, export.
//
//   gpulb-viewer [FILE [FILE2]] [--lesson NAME [--lesson-step N]] [--view V] [--range START:END] [--select START:END] [--find Q]
//                [--playhead T] [--unfold]
//                [--screenshot OUT.png] [--size WxH] [--bench-frames]
//
// With no file it opens the shipped example traces and the scenario panel. --screenshot renders
// without interaction, writes the PNG and exits (this is how the tests run, under xvfb-run).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "app.hpp"
#include "bench.hpp"
#include "run_span.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "panels.hpp"
#include "platform.hpp"
#include "synthetic.hpp"
#include "task_details.hpp"
#include "timeline_tools.hpp"
#include "views.hpp"

namespace {

using namespace gpulb::viewer;

// As `gpulb` (README): scripts and the tests tell a bad argument from a failed write.
constexpr int kExitError = 1;  // a window could not be made, a PNG or trace could not be written
// bad arguments, an unreadable trace, an output that must not be written
constexpr int kExitBadInput = 2;

struct Args {
  std::vector<std::string> files;
  std::string view = "timeline";
  std::string range;
  std::string playhead;
  std::string select;
  std::string find;
  std::string lesson;
  int finding = 0;
  int lesson_step = 0;
  std::string screenshot;
  std::string size = "1600x900";  // a laptop's screen, and the size every lesson is laid out for
  bool bench = false;
  std::uint64_t bench_events = 10'000'000;
  std::string bench_template = BenchOptions{}.tmpl;
};

bool parse_size(const std::string& s, int& w, int& h) {
  char rest = 0;  // nothing may follow the height
  return std::sscanf(s.c_str(), "%dx%d%c", &w, &h, &rest) == 2 && w >= 320 && h >= 240 &&
         w <= 8192 && h <= 8192;
}

// The values CLI11 cannot check, parsed.
struct Checked {
  int width = 0, height = 0;
  std::optional<TimeSpan> range;
  std::optional<double> playhead;
  std::optional<TimeSpan> select;
};

// An empty string where the arguments are good, else a message naming the option and what it takes.
// `range_given`: --range was on the command line (an empty value is an error, not "no range").
std::string check_args(const Args& a, bool range_given, bool playhead_given, bool select_given,
                       Checked& c) {
  if (!parse_size(a.size, c.width, c.height))
    return "--size " + a.size + ": expected WxH between 320x240 and 8192x8192, e.g. 1600x900";
  if (range_given && !(c.range = parse_time_span(a.range))) {
    return "--range '" + a.range +
           "': expected START:END, two times with START < END, e.g. 1ms:2.5ms";
  }
  if (select_given && !(c.select = parse_time_span(a.select))) {
    return "--select '" + a.select +
           "': expected START:END, two times with START < END, e.g. 1ms:2.5ms";
  }
  if (playhead_given && !(c.playhead = parse_time_ns(a.playhead))) {
    return "--playhead '" + a.playhead + "': expected a time, e.g. 40ms";
  }
  return "";
}

// Renders a few frames (ImGui sizes windows from the previous frame) and keeps the last one.
int screenshot(Platform& platform, App& app, const std::string& out, bool view_only) {
  Image image;
  for (int i = 0; i < 4; ++i) {
    platform.begin_frame();
    app.frame(0.0f);
    platform.render();
    if (i == 3) image = platform.read_back();
    platform.present();
  }
  if (view_only) {
    const float s = platform.pixel_scale();
    const ImVec4 r = app.view_rect();
    image = crop(image, static_cast<int>(r.x * s), static_cast<int>(r.y * s),
                 static_cast<int>(r.z * s), static_cast<int>(r.w * s));
  }
  write_png(out, image);
  std::cout << "wrote " << out << " (" << image.width << "x" << image.height << ")\n";
  return 0;
}

int interactive(Platform& platform, App& app) {
  auto last = std::chrono::steady_clock::now();
  while (!platform.should_close() && !app.quit_requested()) {
    for (const std::string& p : platform.take_dropped_paths()) app.open(p);
    const auto now = std::chrono::steady_clock::now();
    const float dt = std::chrono::duration<float>(now - last).count();
    last = now;
    platform.begin_frame();
    app.frame(dt);
    platform.render();
    if (auto png = app.take_png_request()) {
      try {
        Image image = platform.read_back();
        if (png->view_only) {
          const float s = platform.pixel_scale();
          const ImVec4 r = app.view_rect();
          image = crop(image, static_cast<int>(r.x * s), static_cast<int>(r.y * s),
                       static_cast<int>(r.z * s), static_cast<int>(r.w * s));
        }
        write_png(png->path, image);
        app.notify("wrote " + png->path.string());
      } catch (const std::exception& e) {
        app.notify(e.what());
      }
    }
    platform.present();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "gpulb-viewer: see how a scheduler balanced its load (timelines, histograms, queue "
      "occupancy, replay)"};
  Args a;
  cli.add_option("files", a.files, "trace files (.gpulb); a second one is shown as B in Compare")
      ->expected(0, 2);
  cli.add_option("--view", a.view, "view to show (see Views below)")
      ->check(CLI::IsMember(panel_cli_names()));
  cli.add_option(
      "--lesson", a.lesson,
      "open a lesson: a paper's claim, its verdict and key figure from two traces: the shipped GPU "
      "ones, or two files given (A and B, e.g. from gpulb lesson run) (--lesson list names them)");
  cli.footer(
      panels_help() + "\nLessons (--lesson NAME, also the Lessons menu):\n" +
      gpulb::builtin::lessons_help() +
      "\nTimeline keys: W/S zoom, A/D pan, M mark the time under the cursor, Ctrl+F find a task,\n"
      "N/Shift+N next/previous match, Esc clear the selection, the picked task and the search.\n"
      "Click a task for its details; Shift+drag or right-drag selects a range (the Selection "
      "tab).\n");
  cli.add_option("--range", a.range,
                 "time range to show, from the run's start: START:END, e.g. 1ms:2.5ms");
  cli.add_option(
      "--select", a.select,
      "select a time range from the run's start, START:END (the Selection tab's statistics)");
  cli.add_option(
      "--find", a.find,
      "find a task and show it: its id, k<kind>, or both (\"1234\", \"k2\"); as Ctrl+F does");
  cli.add_option("--finding", a.finding,
                 "show trace A's Nth finding (1 = the first of the Findings tab) as a click on it "
                 "does: the timeline zoomed there, or Compare with a trace B")
      ->check(CLI::Range(1, 1000));
  cli.add_option("--lesson-step", a.lesson_step,
                 "with --lesson: press the lesson's Nth look-here button (1 = the first): Compare "
                 "zoomed to its moment, selected")
      ->check(CLI::Range(1, 100));
  cli.add_option("--playhead", a.playhead,
                 "replay position from the run's start, e.g. 40ms (histograms and occupancy show "
                 "that instant)");
  cli.add_option("--screenshot", a.screenshot,
                 "render without interaction, write this PNG and exit");
  bool view_only = false;
  bool unfold = false;
  cli.add_flag("--unfold", unfold,
               "open the timeline with every SM group unfolded (a lane per block)");
  cli.add_flag("--view-only", view_only,
               "with --screenshot: crop to the view, without the side panel");
  cli.add_option("--size", a.size, "window size WxH")->capture_default_str();
  cli.add_flag("--bench-frames", a.bench,
               "measure load and frame times on a generated 10-million-event trace");
  cli.add_option("--bench-events", a.bench_events,
                 "events in the --bench-frames (or --make-synthetic) trace")
      ->capture_default_str();
  cli.add_option("--bench-template", a.bench_template,
                 "the trace whose event mix --bench-frames repeats: a file, a shipped trace's "
                 "name, or \"synthetic\"")
      ->capture_default_str();
  bool bench_load_only = false;
  std::string bench_only;
  cli.add_option("--bench-case", bench_only,
                 "with --bench-frames: run only the cases whose name holds this text, e.g. folded");
  cli.add_flag("--bench-load-only", bench_load_only,
               "with --bench-frames: measure the load and the memory, not the frames (no window)");
  std::string synthetic_out;
  cli.add_option(
      "--make-synthetic", synthetic_out,
      "write the generated GPU-shaped trace (--bench-events events) to this file and exit");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints what is wrong; its own exit codes (105, 109, ...) become the documented 2.
    return cli.exit(e) == 0 ? 0 : kExitBadInput;
  }
  const gpulb::builtin::Lesson* lesson = nullptr;
  if (cli.count("--lesson") > 0) {
    lesson = gpulb::builtin::find_lesson(a.lesson);
    if (!lesson) {
      // `--lesson list` asks for the list (stdout); a bad name is an error (stderr). Both open nothing: 2.
      std::ostream& out = a.lesson == "list" ? std::cout : std::cerr;
      if (a.lesson != "list")
        out << "gpulb-viewer: --lesson '" << a.lesson << "': no such lesson\n";
      out << "Lessons (gpulb-viewer --lesson NAME):\n" << gpulb::builtin::lessons_help();
      return kExitBadInput;
    }
    if (a.files.size() == 1) {
      std::cerr << "gpulb-viewer: --lesson takes no trace (its shipped ones) or two (A and B, e.g. "
                   "from gpulb lesson run)\n";
      return kExitBadInput;
    }
    if (cli.count("--view") == 0) a.view = "lesson";
  }
  if (cli.count("--screenshot") > 0 &&
      a.screenshot.empty()) {  // else the interactive window opened
    std::cerr << "gpulb-viewer: --screenshot '': expected a PNG file name\n";
    return kExitBadInput;
  }
  Checked c;
  if (const std::string error = check_args(a, cli.count("--range") > 0, cli.count("--playhead") > 0,
                                           cli.count("--select") > 0, c);
      !error.empty()) {
    std::cerr << "gpulb-viewer: " << error << "\n";
    return kExitBadInput;
  }
  const int width = c.width, height = c.height;
  const std::optional<TimeSpan> range = c.range;
  const std::optional<double> playhead = c.playhead;

  try {
    if (a.bench)
      return run_bench(BenchOptions{a.bench_events, width, height, bench_load_only ? 0 : 60,
                                    a.bench_template, bench_only});
    if (!synthetic_out.empty()) {
      gpulb::trace::check_writable(synthetic_out);  // before generating millions of events
      SyntheticSpec spec;
      spec.events = a.bench_events;
      gpulb::trace::write_trace(synthetic_out, make_synthetic_trace(spec));
      std::cout << "wrote " << synthetic_out << "\n";
      return 0;
    }

    // Before loading and rendering: a screenshot onto /dev/null, into a missing or read-only
    // directory or over a trace it shows (also through a link) fails now, and the file stays as it was.
    if (!a.screenshot.empty()) {
      std::vector<std::filesystem::path> inputs(a.files.begin(), a.files.end());
      if (lesson && a.files.empty()) {
        for (std::string_view t : {lesson->a.trace, lesson->b.trace}) {
          if (const auto shipped = gpulb::builtin::find_shipped_trace(t))
            inputs.push_back(*shipped);
        }
      }
      gpulb::trace::refuse_inputs(a.screenshot, inputs, "--screenshot");
      gpulb::trace::check_writable(a.screenshot);
    }
    App app(gpulb::builtin::registry());
    // Files before the window: with --screenshot a bad file must fail fast, with its message.
    if (lesson) {
      app.open_lesson(*lesson, a.files);
    } else if (a.files.empty()) {
      for (const auto& p : example_traces()) app.open(p);
    } else {
      for (const std::string& f : a.files) app.open(f);
    }
    if (!a.screenshot.empty() && !app.errors().empty()) {
      for (const std::string& e : app.errors()) std::cerr << "gpulb-viewer: " << e << "\n";
      return kExitBadInput;
    }
    app.set_view(a.view);  // CLI11 checked the name against the panel table
    if (unfold)
      app.view_state().timeline.unfold = app.view_state().compare_a.unfold =
          app.view_state().compare_b.unfold = true;
    if (const Document* d = app.current()) {
      // "from the run's start", as the rulers count
      const double origin = run_span(*d->model).begin_ns;
      // Compare's rulers and replay bar count from the first launch.
      const double replay_origin =
          a.view == "compare" && app.has_compare() ? launch_ns(*d->model) : origin;
      if (range)
        app.view_state().pending_range =
            Selection{origin + range->begin_ns, origin + range->end_ns};
      if (range) app.view_state().compare_range = Selection{range->begin_ns, range->end_ns};
      if (c.select)
        app.view_state().selection =
            Selection{origin + c.select->begin_ns, origin + c.select->end_ns};
      if (!a.find.empty()) {
        if (!parse_task_query(a.find)) {
          std::cerr << "gpulb-viewer: --find '" << a.find
                    << "': expected a task id, k<kind>, or both, e.g. 1234 or k2\n";
          return kExitBadInput;
        }
        ViewState& vs = app.view_state();
        std::snprintf(vs.timeline.search, sizeof vs.timeline.search, "%s", a.find.c_str());
        search_tasks(*d->model, nullptr, vs, vs.timeline);
        // Compare's search covers A and B; shown last where Compare is, so that its pick stands.
        if (const Document* b = app.compare()) {
          std::snprintf(vs.compare_a.search, sizeof vs.compare_a.search, "%s", a.find.c_str());
          const std::optional<RunTask> timeline_pick = vs.picked;
          search_tasks(*d->model, b->model.get(), vs, vs.compare_a, &vs.compare_b);
          if (a.view != "compare") vs.picked = timeline_pick;
        }
      }
      if (a.finding > 0) {
        if (static_cast<std::size_t>(a.finding) > d->findings.size()) {
          std::cerr << "gpulb-viewer: --finding " << a.finding << ": " << d->title << " has "
                    << d->findings.size() << " finding(s)\n";
          return kExitBadInput;
        }
        ViewState& vs = app.view_state();
        show_finding(*d->model, *d->model, d->findings[static_cast<std::size_t>(a.finding - 1)],
                     app.has_compare(), vs);
        app.set_view(vs.switch_view);
        vs.switch_view.clear();
      }
      if (a.lesson_step > 0) {
        const Document* b = app.compare();
        if (!lesson || !b) {
          std::cerr << "gpulb-viewer: --lesson-step takes a lesson (--lesson NAME)\n";
          return kExitBadInput;
        }
        ViewState& vs = app.view_state();
        const std::string error =
            show_lesson_step(*lesson, LessonTraces{*d->model, *b->model, d->findings, b->findings},
                             static_cast<std::size_t>(a.lesson_step - 1), vs);
        if (!error.empty()) {
          std::cerr << "gpulb-viewer: --lesson-step " << a.lesson_step << ": " << error << "\n";
          return kExitBadInput;
        }
        app.set_view(vs.switch_view);
        vs.switch_view.clear();
      }
      if (playhead)
        app.view_state().playhead = Playhead{replay_origin + *playhead, true, false, 1.0f};
    }

    Platform platform(PlatformOptions{width, height, a.screenshot.empty(), "gpulb-viewer"});
    if (!a.screenshot.empty()) {
      ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NoMouse;  // no hover tooltips in pictures
      return screenshot(platform, app, a.screenshot, view_only);
    }
    return interactive(platform, app);
  } catch (const gpulb::trace::OutputPathError& e) {  // a device, a directory: a bad argument
    std::cerr << "gpulb-viewer: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {  // WriteError (disk full, ...) names the file and the cause
    std::cerr << "gpulb-viewer: " << e.what() << "\n";
    return kExitError;
  }
}
