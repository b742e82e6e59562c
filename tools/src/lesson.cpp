#include "lesson.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tools/format.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "cli_common.hpp"

namespace gpulb::tools {
namespace {

constexpr const char* kLessonListHelp =
    "Lessons (gpulb lesson run NAME, gpulb-viewer --lesson NAME):\n";

int cmd_lesson_list() {
  std::cout << kLessonListHelp << builtin::lessons_help();
  return 0;
}

void print_wrapped(const std::string& label, std::string_view text) {
  constexpr std::size_t kWidth = 100;
  std::string line = label;
  const std::string indent(label.size(), ' ');
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      std::cout << line << "\n";
      line = indent;
    } else if (line.size() > indent.size()) {
      line += ' ';
    }
    line += word;
    at = end + 1;
  }
  std::cout << line << "\n";
}

const builtin::Lesson& lesson_named(const std::string& name) {
  const builtin::Lesson* lesson = builtin::find_lesson(name);
  if (!lesson) {
    throw ConfigError(
        (name.empty() ? std::string("lesson needs a NAME") : "no lesson named '" + name + "'") +
        "\n" + kLessonListHelp + builtin::lessons_help());
  }
  return *lesson;
}

nlohmann::json verdict_json(const builtin::Lesson& lesson, const builtin::LessonVerdict& v,
                            const std::string& a, const std::string& b) {
  nlohmann::json quantities = nlohmann::json::array();
  for (const builtin::MeasuredQuantity& q : v.quantities) {
    quantities.push_back({{"name", q.name},
                          {"unit", q.unit},
                          {"a", q.a ? nlohmann::json(*q.a) : nlohmann::json(nullptr)},
                          {"b", q.b ? nlohmann::json(*q.b) : nlohmann::json(nullptr)},
                          {"paper", q.paper},
                          {"expectation", q.expectation},
                          {"holds", q.holds ? nlohmann::json(*q.holds) : nlohmann::json(nullptr)},
                          {"measured", q.measured}});
  }
  return {{"lesson", lesson.name},       {"title", lesson.title},          {"paper", lesson.paper},
          {"claim", lesson.claim},       {"verdict", v.verdict},           {"headline", v.headline},
          {"quantities", quantities},    {"traces", {{"a", a}, {"b", b}}}, {"today", lesson.today},
          {"measured_on", v.measured_on}};
}

nlohmann::json series_json(const builtin::Lesson& lesson, const builtin::SeriesRecording& rec,
                           const std::string& file) {
  const builtin::SeriesFigureData d = builtin::series_figure(lesson, rec);
  nlohmann::json rows = nlohmann::json::array();
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  for (const builtin::SeriesFigureRow& r : d.rows) {
    rows.push_back({{"value", r.value},
                    {"a", opt(r.a)},
                    {"b", opt(r.b)},
                    {"a_slots", opt(r.a_slots)},
                    {"b_slots", opt(r.b_slots)},
                    {"ideal", opt(r.ideal)}});
  }
  return {{"file", file},
          {"parameter", rec.parameter},
          {"device", rec.device},
          {"recorded", rec.recorded},
          {"command", rec.command},
          {"quantity", d.quantity},
          {"rows", rows},
          {"measured", d.measured},
          {"a_device_busy_ns", d.a_device_busy_ns},
          {"b_device_busy_ns", d.b_device_busy_ns}};
}

// The lesson's verdict, measured on its shipped GPU traces or on two traces given (A, B).
int cmd_lesson_show(const LessonArgs& args) {
  const builtin::Lesson& lesson = lesson_named(args.name);
  if (args.traces.size() == 1)
    throw ConfigError("lesson show takes no trace (the shipped ones) or two (A and B)");
  std::string paths[2];
  for (int side = 0; side < 2; ++side) {
    if (!args.traces.empty()) {
      paths[side] = args.traces[static_cast<std::size_t>(side)];
      continue;
    }
    const std::string_view file = side == 0 ? lesson.a.trace : lesson.b.trace;
    const auto shipped = builtin::find_shipped_trace(file);
    if (!shipped)
      throw ConfigError(std::string(file) +
                        ": the lesson's shipped trace is not installed and no source tree is here");
    paths[side] = shipped->string();
  }
  const trace::Trace a = trace::read_trace(paths[0], read_limits("")),
                     b = trace::read_trace(paths[1], read_limits(""));
  const std::optional<std::filesystem::path> series_file = builtin::find_series_recording(lesson);
  std::optional<builtin::SeriesRecording> series;
  if (series_file) series = builtin::read_series(*series_file);
  // The shipped lesson is judged where its claim is (its recording); two traces given, on them.
  const trace::TraceStatistics sa = trace::compute_statistics(a), sb = trace::compute_statistics(b);
  const builtin::LessonVerdict v = builtin::lesson_verdict(
      lesson, {a.meta, sa}, {b.meta, sb}, args.traces.empty() && series ? &*series : nullptr);
  if (args.json) {
    nlohmann::json j = verdict_json(lesson, v, paths[0], paths[1]);
    if (series) j["series"] = series_json(lesson, *series, series_file->string());
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << lesson.title << "\n";
  print_wrapped("claim       ", lesson.claim);
  print_wrapped("verdict     ", v.verdict + ": " + v.headline);
  print_wrapped("measured on ", v.measured_on);
  for (const builtin::MeasuredQuantity& q : v.quantities) {
    print_wrapped("  " + q.name + ": ",
                  (q.holds ? (*q.holds ? "holds; " : "does not hold; ") : "") + q.measured);
  }
  std::cout << "A           " << paths[0] << "\nB           " << paths[1] << "\n";
  if (series) {
    const builtin::SeriesFigureData d = builtin::series_figure(lesson, *series);
    print_wrapped("series      ", d.measured + " (" + series->device + ", " + series->recorded +
                                      ": " + series_file->string() + ")");
  }
  return 0;
}

// The lesson's series on this machine: every value of its figure, both sides, --repeats times.
int cmd_lesson_record(const LessonArgs& args) {
  const builtin::Lesson& lesson = lesson_named(args.name);
  if (args.output.empty()) throw ConfigError("lesson record needs -o FILE (the recording, JSON)");
  trace::check_writable(args.output);
  const Backend backend = parse_backend(args.backend).value_or(Backend::Cpu);
  const builtin::SeriesRecording rec =
      builtin::record_series(lesson, backend, args.repeats, [&](int done, int total) {
        std::fprintf(stderr, "\r%s: run %d of %d", args.name.c_str(), done, total);
      });
  std::fprintf(stderr, "\r%80s\r", "");
  builtin::write_series(args.output, rec);
  std::cout << builtin::series_figure(lesson, rec).measured << "\nwrote " << args.output << " ("
            << rec.device << ")\n";
  return 0;
}

// Runs each side's recipe (where it has one) on the chosen backend into OUT_DIR, and says where the
// shipped GPU traces are and how to open the lesson in the viewer.
int cmd_lesson_run(const Registry& reg, const LessonArgs& args) {
  const std::string& name = args.name;
  const std::string& out_dir = args.out_dir;
  // CLI11 checked the name
  const Backend backend = parse_backend(args.backend).value_or(Backend::Cpu);
  const ParamMap overrides = parse_params(args.params);
  const builtin::Lesson* lesson = &lesson_named(name);
  std::cout << lesson->title << "\n";
  print_wrapped("paper       ", lesson->paper);
  print_wrapped("claim       ", lesson->claim);
  print_wrapped("look for    ", lesson->look_for);
  print_wrapped("today       ", lesson->today);
  std::vector<std::string> written;
  int status = 0;
  const std::pair<const char*, const builtin::LessonRun*> sides[] = {{"A", &lesson->a},
                                                                     {"B", &lesson->b}};
  for (const auto& [side, lr] : sides) {
    std::cout << "\n" << side << ": " << lr->label << "\n";
    const auto shipped = builtin::find_shipped_trace(lr->trace);
    std::cout << "  GPU trace   "
              << (shipped ? shipped->string()
                          : std::string(lr->trace) + " (not found: not installed, no source tree)")
              << "\n";
    const std::optional<RunConfig> cfg = builtin::lesson_recipe(*lr, backend, overrides);
    if (!cfg) {
      std::cout << "  recipe      none: this policy or variant runs only in the shipped multi-GPU "
                   "trace\n";
      continue;
    }
    std::cout << "  recipe      " << builtin::recipe_command(*lr, backend, overrides) << "\n";
    const std::filesystem::path out =
        std::filesystem::path(out_dir) /
        ("lesson-" + name + "-" + (side[0] == 'A' ? std::string("a") : std::string("b")) +
         ".gpulb");
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);  // a failure is check_writable's to name
    trace::check_writable(out.string());
    RunConfig c = *cfg;
    c.progress = progress_line(name + " " + side);
    const RunResult r = gpulb::run(reg, c);
    if (c.progress) std::fprintf(stderr, "\r%80s\r", "");
    trace::write_trace(out, r.trace);
    written.push_back(out.string());
    std::cout << "  ran         makespan " << format_ns(static_cast<double>(r.stats.makespan_ns))
              << ", efficiency " << static_cast<int>(r.stats.efficiency * 100.0 + 0.5) << "%, "
              << r.workers << " workers, verified " << verdict(r.trace.meta) << "\n  trace       "
              << out.string() << "\n";
    if (!r.checked)
      status = std::max(status, kExitNotChecked);
    else if (!r.verified)
      status = kExitNotVerified;
  }
  std::cout << "\nOpen it: gpulb-viewer --lesson " << name << " (the shipped GPU traces)";
  if (written.size() == 2)
    std::cout << ", or gpulb-viewer --lesson " << name << " " << written[0] << " " << written[1]
              << " (these runs)";
  std::cout << "\n";
  return status;
}

}  // namespace

CLI::App* add_lesson_command(CLI::App& app, LessonArgs& args) {
  CLI::App* lesson =
      app.add_subcommand("lesson",
                         "Each seed paper's headline claim as two runs side by side: list them, or "
                         "run one (its recipe here; the GPU traces ship)");
  lesson
      ->add_option("action", args.action,
                   "list; run NAME (its recipe here); show NAME [A B] (its verdict, measured on "
                   "the shipped traces or on A and B); record NAME -o FILE (its series: the claim "
                   "at each value of its figure, both sides, on --backend)")
      ->required()
      ->check(CLI::IsMember({"list", "run", "show", "record"}));
  lesson->add_option("name", args.name, "the lesson (see gpulb lesson list)");
  lesson
      ->add_option("traces", args.traces,
                   "lesson show: two traces, A and B (default: the lesson's shipped GPU traces)")
      ->expected(0, 2);
  lesson->add_flag(
      "--json", args.json,
      "lesson show: print JSON (claim, paper's figures, measured figures, verdict, traces)");
  lesson
      ->add_option(
          "--out-dir", args.out_dir,
          "lesson run: where the runs' traces go (lesson-NAME-a.gpulb, -b.gpulb; made if missing)")
      ->capture_default_str();
  lesson->add_option("-b,--backend", args.backend, "lesson run: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  lesson->add_option("-o,--output", args.output,
                     "lesson record: the series recording to write (JSON)");
  lesson
      ->add_option("--repeats", args.repeats,
                   "lesson record: runs of each side at each value (the figure reads the median)")
      ->capture_default_str();
  lesson->add_option("--param", args.params,
                     "lesson run: a parameter of the recipe's scenario or policy, name=value, for "
                     "both sides (e.g. lookahead=5)");
  return lesson;
}

int cmd_lesson(const Registry& reg, const LessonArgs& args) {
  if (args.action == "list") return cmd_lesson_list();
  if (args.action == "show") return cmd_lesson_show(args);
  if (args.action == "record") return cmd_lesson_record(args);
  return cmd_lesson_run(reg, args);
}

}  // namespace gpulb::tools
