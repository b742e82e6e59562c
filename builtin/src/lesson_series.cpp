#include "gpulb/builtin/lesson_series.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpulb/builtin/lesson_verdict.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "patterns/patterns.hpp"

namespace gpulb::builtin {

const SeriesRun* SeriesCell::median() const {
  if (runs.empty()) return nullptr;
  std::vector<const SeriesRun*> sorted;
  for (const SeriesRun& r : runs) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const SeriesRun* x, const SeriesRun* y) { return x->makespan_ns < y->makespan_ns; });
  return sorted[(sorted.size() - 1) / 2];
}

// -------------------------------------------------------------------------------------------------
// The file
// -------------------------------------------------------------------------------------------------

namespace {

constexpr const char* kFormat = "gpulb-lesson-series";
constexpr int kVersion = 1;
constexpr std::uintmax_t kMaxFileBytes = 4u << 20;  // a recording is a few KB; more is not one

nlohmann::json cell_json(const SeriesCell& cell) {
  nlohmann::json runs = nlohmann::json::array();
  for (const SeriesRun& r : cell.runs) {
    nlohmann::json j = {{"makespan_ns", r.makespan_ns}, {"metrics", r.metrics}};
    if (!r.device_busy_ns.empty()) j["device_busy_ns"] = r.device_busy_ns;
    runs.push_back(std::move(j));
  }
  return runs;
}

SeriesCell cell_from(const nlohmann::json& runs) {
  SeriesCell cell;
  for (const nlohmann::json& j : runs) {
    SeriesRun r;
    r.makespan_ns = j.at("makespan_ns").get<double>();
    if (!std::isfinite(r.makespan_ns) || r.makespan_ns < 0.0)
      throw std::invalid_argument("a makespan_ns that is no time");
    if (j.contains("metrics"))
      r.metrics = j.at("metrics").get<std::map<std::string, std::uint64_t>>();
    if (j.contains("device_busy_ns"))
      r.device_busy_ns = j.at("device_busy_ns").get<std::vector<double>>();
    cell.runs.push_back(std::move(r));
  }
  return cell;
}

}  // namespace

std::string series_to_json(const SeriesRecording& rec) {
  nlohmann::json points = nlohmann::json::array();
  for (const SeriesPoint& p : rec.points)
    points.push_back({{"value", p.value}, {"a", cell_json(p.a)}, {"b", cell_json(p.b)}});
  const nlohmann::json j = {
      {"format", kFormat},          {"version", kVersion},      {"lesson", rec.lesson},
      {"parameter", rec.parameter}, {"recorded", rec.recorded}, {"device", rec.device},
      {"gpulb", rec.gpulb},         {"command", rec.command},   {"repeats", rec.repeats},
      {"traced", rec.traced},       {"points", points}};
  return j.dump(1) + "\n";
}

SeriesRecording series_from_json(const std::string& text, const std::string& source) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", "") != kFormat)
      throw std::invalid_argument(std::string("not a ") + kFormat + " file");
    if (j.at("version").get<int>() != kVersion) {
      throw std::invalid_argument("version " + j.at("version").dump() + ", this gpulb reads " +
                                  std::to_string(kVersion));
    }
    SeriesRecording rec;
    rec.lesson = j.at("lesson").get<std::string>();
    rec.parameter = j.at("parameter").get<std::string>();
    rec.recorded = j.value("recorded", "");
    rec.device = j.value("device", "");
    rec.gpulb = j.value("gpulb", "");
    rec.command = j.value("command", "");
    rec.repeats = j.value("repeats", 1);
    rec.traced = j.value("traced", false);
    for (const nlohmann::json& p : j.at("points")) {
      rec.points.push_back(
          {p.at("value").get<std::string>(), cell_from(p.at("a")), cell_from(p.at("b"))});
    }
    return rec;
  } catch (const SeriesError&) {
    throw;
  } catch (const std::exception& e) {
    throw SeriesError(source + ": not a lesson series recording: " + e.what());
  }
}

SeriesRecording read_series(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw SeriesError(file.string() + ": no such recording (not a regular file)");
  if (std::filesystem::file_size(file, ec) > kMaxFileBytes)
    throw SeriesError(file.string() + ": over 4 MiB, not a lesson series recording");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw SeriesError(file.string() + ": could not be read");
  return series_from_json(text.str(), file.string());
}

void write_series(const std::filesystem::path& file, const SeriesRecording& recording) {
  trace::AtomicWrite w(file);
  w.out() << series_to_json(recording);
  w.commit();
}

std::optional<std::filesystem::path> find_series_recording(const Lesson& lesson) {
  if (!lesson.series) return std::nullopt;
  for (const auto& dir : shipped_lesson_dirs()) {
    std::error_code ec;
    const std::filesystem::path p = dir / std::string(lesson.series->recording);
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

// -------------------------------------------------------------------------------------------------
// Recording
// -------------------------------------------------------------------------------------------------

namespace {

std::string today() {
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

// A side's run at one value: the recipe, the recording's sizes on a GPU, then the value.
RunConfig point_config(const LessonSeries& series, const LessonRun& side, Backend backend,
                       const std::string& value) {
  ParamMap overrides = backend == Backend::Cpu ? ParamMap{} : param_list(series.record_params);
  std::uint32_t gpus = 0;
  if (series.parameter == "gpus") {
    if (backend == Backend::Cpu)
      throw ConfigError("a series over GPUs needs --backend cuda: the CPU backend is one device");
    gpus = static_cast<std::uint32_t>(std::stoul(value));
  } else {
    overrides[std::string(series.parameter)] = value;
  }
  std::optional<RunConfig> cfg = lesson_recipe(side, backend, overrides);
  if (!cfg) throw ConfigError("side '" + std::string(side.label) + "' has no recipe to record");
  cfg->gpus = gpus;
  cfg->trace = series.traced;
  return *cfg;
}

// "NVIDIA H100 80GB HBM3", "4 x NVIDIA H200", "CPU (2 threads)": what ran the run.
std::string devices_text(const std::vector<trace::Device>& devices) {
  if (devices.empty()) return "";
  const bool same = std::all_of(devices.begin(), devices.end(), [&](const trace::Device& d) {
    return d.name == devices.front().name;
  });
  if (!same) {
    std::string all;
    for (const trace::Device& d : devices) all += (all.empty() ? "" : " and ") + d.name;
    return all;
  }
  return devices.size() == 1 ? devices.front().name
                             : std::to_string(devices.size()) + " x " + devices.front().name;
}

// One run; `device` takes the devices it ran on where they are more than any run's before.
SeriesRun measure_run(const RunConfig& cfg, std::string& device, std::size_t& most_devices) {
  const RunResult r = gpulb::run(registry(), cfg);
  if (r.checked && !r.verified)
    throw RunError(cfg.scenario + " under " + cfg.policy + " did not verify: " + r.verification);
  if (r.trace.devices.size() > most_devices) {
    most_devices = r.trace.devices.size();
    device = devices_text(r.trace.devices);
  }
  SeriesRun run;
  run.makespan_ns = static_cast<double>(r.makespan_ns);
  run.metrics = r.metrics;
  if (cfg.trace) {
    for (const trace::GroupStats& g : r.stats.per_device) {
      run.device_busy_ns.push_back(g.workers ? static_cast<double>(g.busy_ns) / g.workers : 0.0);
    }
  }
  return run;
}

}  // namespace

SeriesRecording record_series(const Lesson& lesson, Backend backend, int repeats,
                              const std::function<void(int, int)>& progress) {
  if (!lesson.series)
    throw ConfigError("lesson '" + std::string(lesson.name) + "' has no series to record");
  if (repeats < 1) throw ConfigError("--repeats must be at least 1");
  const LessonSeries& series = *lesson.series;
  SeriesRecording rec;
  rec.lesson = std::string(lesson.name);
  rec.parameter = std::string(series.parameter);
  rec.recorded = today();
  rec.gpulb = gpulb_version();
  rec.repeats = repeats;
  rec.traced = series.traced;
  rec.command = "gpulb lesson record " + rec.lesson + " --backend " +
                std::string(to_string(backend)) + " --repeats " + std::to_string(repeats) +
                " -o FILE";
  const int total = static_cast<int>(series.values.size()) * repeats * 2;
  int done = 0;
  std::size_t most_devices = 0;
  for (std::string_view v : series.values) {
    SeriesPoint point;
    point.value = std::string(v);
    const RunConfig a = point_config(series, lesson.a, backend, point.value);
    const RunConfig b = point_config(series, lesson.b, backend, point.value);
    for (int i = 0; i < repeats;
         ++i) {  // A and B in turn, so that a drifting machine hurts both alike
      point.a.runs.push_back(measure_run(a, rec.device, most_devices));
      if (progress) progress(++done, total);
      point.b.runs.push_back(measure_run(b, rec.device, most_devices));
      if (progress) progress(++done, total);
    }
    rec.points.push_back(std::move(point));
  }
  return rec;
}

// -------------------------------------------------------------------------------------------------
// The figure
// -------------------------------------------------------------------------------------------------

namespace {

std::string decimals(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double share) { return decimals(share * 100.0, 1) + "%"; }

// The work a pattern leaves, as a share of P0's: its blocks that are not nullified.
std::optional<double> pattern_work_left(const Lesson& lesson, const std::string& value) {
  if (lesson.a.scenario != "patterns" || value.size() != 2 || value[0] != 'P') return std::nullopt;
  const int pattern = value[1] - '0';
  ParamMap params = param_list(lesson.a.params);
  for (const auto& [k, v] : param_list(lesson.series->record_params)) params[k] = v;
  const auto it = params.find("blocks");
  const std::uint32_t blocks =
      it == params.end() ? 4096u : static_cast<std::uint32_t>(std::stoul(it->second));
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < blocks; ++i)
    kept += scenarios::patterns::is_nullified(pattern, i, blocks) ? 0 : 1;
  return blocks ? std::optional<double>(static_cast<double>(kept) / blocks) : std::nullopt;
}

std::optional<double> median_time(const SeriesCell& c) {
  const SeriesRun* r = c.median();
  return r ? std::optional<double>(r->makespan_ns) : std::nullopt;
}

std::optional<double> median_slots(const SeriesCell& c) {
  const SeriesRun* r = c.median();
  if (!r) return std::nullopt;
  const auto it = r->metrics.find("peak_task_slots");
  return it == r->metrics.end() ? std::nullopt
                                : std::optional<double>(static_cast<double>(it->second));
}

std::optional<double> ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || *den <= 0.0) return std::nullopt;
  return *num / *den;
}

void share_of_first(const Lesson& lesson, const SeriesRecording& rec, SeriesFigureData& d) {
  const SeriesPoint& first = rec.points.front();
  d.quantity = "time, as a share of the same scheduler's time on " + first.value;
  for (const SeriesPoint& p : rec.points) {
    SeriesFigureRow& row = d.rows.emplace_back();
    row.value = p.value;
    row.a = ratio(median_time(p.a), median_time(first.a));
    row.b = ratio(median_time(p.b), median_time(first.b));
    row.ideal = pattern_work_left(lesson, p.value);
  }
  const SeriesFigureRow& last = d.rows.back();
  if (last.a && last.b) {
    d.measured = last.value + ": A took " + percent(*last.a) + " of its " + first.value +
                 " time, B " + percent(*last.b) +
                 (last.ideal ? " (the work left: " + percent(*last.ideal) + ")" : "");
  }
}

void time_and_slots(const SeriesRecording& rec, SeriesFigureData& d) {
  d.quantity = "time and peak task slots at each " + rec.parameter;
  std::string times, slots;
  for (const SeriesPoint& p : rec.points) {
    SeriesFigureRow row;
    row.value = p.value;
    row.a = median_time(p.a);
    row.b = median_time(p.b);
    row.a_slots = median_slots(p.a);
    row.b_slots = median_slots(p.b);
    if (const auto r = ratio(row.b, row.a))
      times += (times.empty() ? "" : ", ") + p.value + ": " + decimals(*r, 2);
    if (const auto r = ratio(row.b_slots, row.a_slots))
      slots += (slots.empty() ? "" : ", ") + p.value + ": " +
               decimals(*r, *r >= 10.0  ? 0
                            : *r >= 1.0 ? 1
                                        : 2);
    d.rows.push_back(std::move(row));
  }
  d.measured = "B's time over A's, at " + rec.parameter + " " + times +
               "; B's task slots over A's, " + slots;
}

// Both sides' time; where both recipes name a pattern, B's ideal is A's time scaled by the share
// of A's work that B's pattern keeps (P4 against P0: a quarter).
void time_only(const Lesson& lesson, const SeriesRecording& rec, SeriesFigureData& d) {
  d.quantity = "time at each " + rec.parameter;
  const std::optional<double> keep_a = pattern_work_left(lesson, recipe_value(lesson.a, "pattern"));
  const std::optional<double> keep_b = pattern_work_left(lesson, recipe_value(lesson.b, "pattern"));
  std::string ratios;
  for (const SeriesPoint& p : rec.points) {
    SeriesFigureRow row;
    row.value = p.value;
    row.a = median_time(p.a);
    row.b = median_time(p.b);
    if (row.a && keep_a && keep_b && *keep_a > 0.0) row.ideal = *row.a * *keep_b / *keep_a;
    if (const auto r = ratio(row.b, row.a))
      ratios += (ratios.empty() ? "" : ", ") + p.value + ": " + decimals(*r, 3);
    d.rows.push_back(std::move(row));
  }
  d.measured = "B's time over A's, at " + rec.parameter + " " + ratios;
  if (keep_a && keep_b && *keep_a > 0.0)
    d.measured += " (the work B keeps: " + decimals(*keep_b / *keep_a, 3) + ")";
}

void gpu_scaling(const SeriesRecording& rec, SeriesFigureData& d) {
  const SeriesPoint& first = rec.points.front();
  d.quantity = "speedup over the same scheduler on " + first.value + " GPU" +
               (first.value == "1" ? "" : "s");
  for (const SeriesPoint& p : rec.points) {
    SeriesFigureRow& row = d.rows.emplace_back();
    row.value = p.value;
    row.a = ratio(median_time(first.a), median_time(p.a));
    row.b = ratio(median_time(first.b), median_time(p.b));
    row.ideal = std::stod(p.value) / std::stod(first.value);
  }
  const SeriesPoint& last = rec.points.back();
  if (const SeriesRun* r = last.a.median()) d.a_device_busy_ns = r->device_busy_ns;
  if (const SeriesRun* r = last.b.median()) d.b_device_busy_ns = r->device_busy_ns;
  const SeriesFigureRow& row = d.rows.back();
  if (row.a && row.b) {
    d.measured = "on " + last.value + " GPUs: A " + decimals(*row.a, 2) + "x, B " +
                 decimals(*row.b, 2) + "x its time on " + first.value +
                 " (linear: " + decimals(*row.ideal, 0) + "x)";
  }
}

void add_paper_marks(const LessonSeries& series, SeriesFigureData& d) {
  const auto given = [](double v) { return v >= 0.0 ? std::optional<double>(v) : std::nullopt; };
  for (const PaperMark& m : series.paper_marks) {
    for (SeriesFigureRow& row : d.rows) {
      if (row.value != m.value) continue;
      (m.slots ? row.paper_a_slots : row.paper_a) = given(m.a);
      (m.slots ? row.paper_b_slots : row.paper_b) = given(m.b);
    }
  }
}

}  // namespace

SeriesFigureData series_figure(const Lesson& lesson, const SeriesRecording& rec) {
  if (!lesson.series) throw ConfigError("lesson '" + std::string(lesson.name) + "' has no series");
  SeriesFigureData d;
  d.figure = lesson.series->figure;
  if (rec.points.empty()) return d;
  try {
    switch (d.figure) {
      case SeriesFigure::ShareOfFirst: share_of_first(lesson, rec, d); break;
      case SeriesFigure::TimeAndSlots: time_and_slots(rec, d); break;
      case SeriesFigure::GpuScaling: gpu_scaling(rec, d); break;
      case SeriesFigure::Time: time_only(lesson, rec, d); break;
    }
  } catch (const std::logic_error& e) {  // a value that is no number where the figure needs one
    throw SeriesError("the recording of '" + rec.lesson +
                      "' does not fit its lesson's figure: " + e.what());
  }
  add_paper_marks(*lesson.series, d);
  if (d.figure == SeriesFigure::ShareOfFirst && !d.rows.empty() && d.rows.back().paper_a &&
      d.rows.back().paper_b) {
    d.measured += "; the paper's GPU of 2009: A " + percent(*d.rows.back().paper_a) + ", B " +
                  percent(*d.rows.back().paper_b);
  }
  return d;
}

}  // namespace gpulb::builtin
