// The lesson table (builtin/lessons.hpp): every lesson opens, its two traces are
// shipped and load, its CPU recipe runs here, and its "today" figures are the measured ones of the
// docs, not new numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "findings.hpp"
#include "moments.hpp"
#include "run_span.hpp"
#include "steal_arrows.hpp"
#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Lessons, NamesAreUniqueAndEveryLessonHasItsTexts) {
  std::set<std::string_view> names;
  for (const builtin::Lesson& l : builtin::lessons()) {
    EXPECT_TRUE(names.insert(l.name).second) << l.name;
    EXPECT_EQ(builtin::find_lesson(l.name), &l);
    for (std::string_view t :
         {l.title, l.paper, l.claim, l.look_for, l.today, l.a.label, l.b.label})
      EXPECT_FALSE(t.empty()) << l.name;
    EXPECT_NE(l.a.trace, l.b.trace) << l.name;
    EXPECT_NE(builtin::lessons_help().find(std::string(l.name)), std::string::npos);
  }
  // The issue's five: Chen Figure 7, Chen multi-GPU, Grossman, Mohan & Gopalan, G-Charm.
  for (const char* n : {"chen-fig7", "chen-multi-gpu", "grossman-tasks-per-sm",
                        "mohan-static-vs-stealing", "gcharm-combining"}) {
    EXPECT_NE(builtin::find_lesson(n), nullptr) << n;
  }
  EXPECT_EQ(builtin::find_lesson("chen-fig8"), nullptr);
}

TEST(Lessons, EveryLessonsTracesAreShippedAndLoad) {
  for (const builtin::Lesson& l : builtin::lessons()) {
    for (const builtin::LessonRun* r : {&l.a, &l.b}) {
      const auto path = builtin::find_shipped_trace(r->trace);
      ASSERT_TRUE(path.has_value()) << l.name << ": " << r->trace;
      const TraceModel m(std::make_shared<const trace::Trace>(trace::read_trace(*path)));
      EXPECT_GT(m.task_count(), 0u) << *path;
      EXPECT_EQ(m.header().meta.backend, "cuda")
          << *path << ": a lesson's traces are real GPU runs";
      if (!r->scenario.empty()) {
        EXPECT_EQ(m.header().meta.scenario, r->scenario) << *path;
        EXPECT_EQ(m.header().meta.policy, r->policy) << *path;
      }
    }
  }
}

TEST(Lessons, ChenFig7PutsTheHardwareSchedulerAheadOfTheTaskQueue) {
  // What the viewer's lesson panel says on opening chen-fig7: A (hardware) is faster than B.
  const builtin::Lesson& l = *builtin::find_lesson("chen-fig7");
  const TraceModel a(std::make_shared<const trace::Trace>(
      trace::read_trace(*builtin::find_shipped_trace(l.a.trace))));
  const TraceModel b(std::make_shared<const trace::Trace>(
      trace::read_trace(*builtin::find_shipped_trace(l.b.trace))));
  EXPECT_LT(a.stats().makespan_ns, b.stats().makespan_ns);
  const InputMatch input = compare_inputs(
      a.header().meta, b.header().meta, [](const std::string& scenario, const std::string& param) {
        const auto& specs = builtin::registry().get(scenario).params();
        return std::any_of(specs.begin(), specs.end(),
                           [&](const ParamSpec& p) { return p.name == param; });
      });
  EXPECT_TRUE(input.same) << input.difference;
  EXPECT_EQ(compare_headline(a, b, input).rfind("B took ", 0), 0u) << compare_headline(a, b, input);
  const auto facts = compare_facts(a, b);
  ASSERT_GE(facts.size(), 5u);
  EXPECT_EQ(facts[0].name, "makespan");
}

const TraceModel& lesson_trace(const char* lesson, char side) {
  static std::map<std::string, std::unique_ptr<TraceModel>> cache;
  const builtin::Lesson& l = *builtin::find_lesson(lesson);
  const std::string_view file = side == 'a' ? l.a.trace : l.b.trace;
  auto& m = cache[std::string(file)];
  if (!m)
    m = std::make_unique<TraceModel>(std::make_shared<const trace::Trace>(
        trace::read_trace(*builtin::find_shipped_trace(file))));
  return *m;
}

std::uint64_t launches(const TraceModel& m) {
  std::uint64_t n = 0;
  for (const Lane& l : m.lanes()) {
    for (const Marker& k : l.markers) n += k.kind == trace::EventKind::KernelLaunch;
  }
  return n;
}

// What each lesson's text says its two traces show.
TEST(Lessons, TheirTextsDescribeWhatTheirTracesShow) {
  // grossman: one input under both policies; only A steals, and neither keeps tasks per SM within 1.6.
  const TraceModel& ws_nq = lesson_trace("grossman-tasks-per-sm", 'a');
  const TraceModel& sl_nq = lesson_trace("grossman-tasks-per-sm", 'b');
  EXPECT_EQ(ws_nq.header().meta.parameters, sl_nq.header().meta.parameters);
  EXPECT_EQ(ws_nq.stats().tasks, sl_nq.stats().tasks);
  EXPECT_GT(ws_nq.stats().steals, 0u);
  EXPECT_EQ(sl_nq.stats().steals, 0u);
  // mohan: at lookahead 4 work stealing wins, and the static list runs no task most of its run.
  const TraceModel& st = lesson_trace("mohan-static-vs-stealing", 'a');
  const TraceModel& ws = lesson_trace("mohan-static-vs-stealing", 'b');
  EXPECT_GT(st.stats().makespan_ns, ws.stats().makespan_ns);
  EXPECT_GT(no_task_share(st), 0.5);
  EXPECT_GT(launches(st), 1u);
  EXPECT_EQ(launches(ws), 1u);
  // gcharm: adaptive launches fewer, larger combined requests, is the shorter run, and the GPU
  // runs a request under 5% of either run.
  const TraceModel& ad = lesson_trace("gcharm-combining", 'a');
  const TraceModel& sc = lesson_trace("gcharm-combining", 'b');
  EXPECT_LT(launches(ad), launches(sc));
  EXPECT_LT(ad.stats().makespan_ns, sc.stats().makespan_ns);
  EXPECT_GT(no_task_share(ad), 0.95);
  EXPECT_GT(no_task_share(sc), 0.95);
  // chen-multi-gpu: four GPUs in each, every GPU's busy time within half a percent of the others'.
  for (char side : {'a', 'b'}) {
    const auto& devices = lesson_trace("chen-multi-gpu", side).stats().per_device;
    ASSERT_EQ(devices.size(), 4u);
    const auto [lo, hi] =
        std::minmax_element(devices.begin(), devices.end(),
                            [](const auto& x, const auto& y) { return x.busy_ns < y.busy_ns; });
    EXPECT_LT(static_cast<double>(hi->busy_ns) / static_cast<double>(lo->busy_ns), 1.005) << side;
  }
}

TEST(Lessons, RecipesNameWhatTheRegistryRunsOnTheCpu) {
  const Registry& reg = builtin::registry();
  for (const builtin::Lesson& l : builtin::lessons()) {
    for (const builtin::LessonRun* r : {&l.a, &l.b}) {
      const auto cfg = builtin::cpu_recipe(*r);
      if (r->scenario.empty()) {
        EXPECT_FALSE(cfg.has_value());
        EXPECT_EQ(builtin::recipe_command(*r), "");
        continue;
      }
      ASSERT_TRUE(cfg.has_value());
      EXPECT_EQ(cfg->backend, Backend::Cpu);
      ASSERT_NE(reg.find(cfg->scenario), nullptr) << cfg->scenario;
      const PolicyDescriptor* p = reg.find_policy(cfg->policy);
      ASSERT_NE(p, nullptr) << cfg->policy;
      EXPECT_TRUE(reg.policy_runs_on(*p, Backend::Cpu)) << cfg->policy;
      EXPECT_EQ(cfg->params.size(), r->params.size()) << "a parameter given twice in " << l.name;
      EXPECT_EQ(
          builtin::recipe_command(*r).rfind("gpulb run " + cfg->scenario + " --backend cpu", 0),
          0u);
    }
  }
}

// `gpulb lesson run` and the viewer's "Run both on this CPU" run these: each must run and verify here.
TEST(Lessons, EveryCpuRecipeRunsAndVerifies) {
  for (const builtin::Lesson& l : builtin::lessons()) {
    for (const builtin::LessonRun* r : {&l.a, &l.b}) {
      const auto cfg = builtin::cpu_recipe(*r);
      if (!cfg) continue;
      const RunResult res = run(builtin::registry(), *cfg);
      EXPECT_TRUE(res.verified) << l.name << ": " << res.verification;
      EXPECT_GT(res.tasks, 0u);
      EXPECT_EQ(res.trace.meta.backend, "cpu");
    }
  }
  const builtin::Lesson& fig7 = *builtin::find_lesson("chen-fig7");
  EXPECT_EQ(run(builtin::registry(), *builtin::cpu_recipe(fig7.a)).tasks, 8000u);
}

// "What today's hardware shows" quotes measurements: each percentage and time in it is one that
// docs/benchmarks.md or docs/papers.md states.
TEST(Lessons, TodaysFiguresAreTheDocsMeasurements) {
  const std::string docs = read_text(std::string(GPULB_SOURCE_DIR) + "/docs/benchmarks.md") +
                           read_text(std::string(GPULB_SOURCE_DIR) + "/docs/papers.md");
  ASSERT_GT(docs.size(), 1000u);
  const std::regex figure(R"((\d+(\.\d+)?)(%| ms| us| ns| M nodes/s| GB))");
  for (const builtin::Lesson& l : builtin::lessons()) {
    const std::string today(l.today);
    for (auto it = std::sregex_iterator(today.begin(), today.end(), figure);
         it != std::sregex_iterator(); ++it) {
      EXPECT_NE(docs.find((*it)[1].str()), std::string::npos)
          << l.name << ": " << (*it)[0] << " is in neither doc";
    }
  }
}

// docs/papers.md states each lesson's verdict, measured as `gpulb lesson show` measures it (at its
// claim's value in its recording, else on its traces); a re-recording that changes it changes the
// doc too.
TEST(LessonVerdict, EachLessonsVerdictOnItsShippedTracesIsTheOnePapersMdStates) {
  const std::string papers = read_text(std::string(GPULB_SOURCE_DIR) + "/docs/papers.md");
  for (const builtin::Lesson& l : builtin::lessons()) {
    const trace::Trace a = trace::read_trace(*builtin::find_shipped_trace(l.a.trace));
    const trace::Trace b = trace::read_trace(*builtin::find_shipped_trace(l.b.trace));
    const trace::TraceStatistics sa = trace::compute_statistics(a),
                                 sb = trace::compute_statistics(b);
    const auto file = builtin::find_series_recording(l);
    const std::optional<builtin::SeriesRecording> rec =
        file ? std::optional(builtin::read_series(*file)) : std::nullopt;
    const std::string verdict =
        builtin::lesson_verdict(l, {a.meta, sa}, {b.meta, sb}, rec ? &*rec : nullptr).verdict;
    const std::string stated = "`" + std::string(l.name) + "` " + verdict;
    const auto at = papers.find(stated);
    EXPECT_NE(at, std::string::npos) << "docs/papers.md does not say \"" << stated << "\"";
    if (at != std::string::npos && verdict == "holds") {
      EXPECT_NE(papers.substr(at + stated.size(), 7), " partly") << stated;
    }
  }
}

// The verdict's rule on made-up runs: each quantity judged against what the claim needs of it,
// "holds" when all judged ones do, "reversed" when none does, "holds partly" between, and a
// quantity one trace lacks named rather than guessed.
TEST(LessonVerdict, JudgesEachQuantityAndSumsThemUp) {
  builtin::Lesson lesson = *builtin::find_lesson("mohan-static-vs-stealing");
  trace::RunMetadata ma, mb;
  trace::TraceStatistics sa, sb;
  sa.makespan_ns = 2'000'000;
  sb.makespan_ns = 1'000'000;
  ma.metrics["peak_task_slots"] = 15546;
  mb.metrics["peak_task_slots"] = 71;
  auto verdict = [&] { return builtin::assess_lesson(lesson, {ma, sa}, {mb, sb}); };
  builtin::LessonVerdict v = verdict();
  EXPECT_EQ(v.verdict, "holds");
  ASSERT_EQ(v.quantities.size(), 2u);
  EXPECT_EQ(v.quantities[0].in_short, "B 2.00x faster");
  EXPECT_EQ(v.quantities[1].in_short, "B 219x fewer task slots");
  EXPECT_NE(v.headline.find("800,000"), std::string::npos)
      << "the paper's figure beside the measured one: " << v.headline;

  sb.makespan_ns = 1'960'000;  // 2% apart: a tie, which no claim of "faster" survives
  v = verdict();
  EXPECT_EQ(v.quantities[0].holds, false);
  EXPECT_EQ(v.quantities[0].in_short, "a tie: B 1.02x as fast");
  EXPECT_EQ(v.verdict, "holds partly");

  sb.makespan_ns = 3'000'000;  // B slower: the time half reverses, the memory half holds
  v = verdict();
  EXPECT_EQ(v.verdict, "holds partly");
  EXPECT_EQ(v.quantities[0].holds, false);
  EXPECT_EQ(v.quantities[0].in_short, "B 1.50x slower");

  mb.metrics["peak_task_slots"] = 20000;
  EXPECT_EQ(verdict().verdict, "reversed");

  mb.metrics.clear();  // an older recording: the memory half is not measured, and says so
  v = verdict();
  EXPECT_EQ(v.verdict, "reversed") << "judged on the time alone";
  EXPECT_FALSE(v.quantities[1].holds.has_value());
  EXPECT_NE(v.quantities[1].measured.find("not in B's trace"), std::string::npos)
      << v.quantities[1].measured;

  lesson.quantities = {
      {builtin::Quantity::TasksPerSmMaxMin, builtin::Expectation::AtMost, 1.6, "max/min 1.6"}};
  sa.per_sm = {{"SM 0", 0, 0, 1, 10, 0}, {"SM 1", 0, 1, 1, 14, 0}};
  sb.per_sm = {{"SM 0", 0, 0, 1, 10, 0}, {"SM 1", 0, 1, 1, 0, 0}};  // an SM without a task
  v = verdict();
  EXPECT_EQ(v.verdict, "holds partly");
  EXPECT_DOUBLE_EQ(*v.quantities[0].a, 1.4);
  EXPECT_TRUE(std::isinf(*v.quantities[0].b));
  sb.per_sm = {{"SM 0", 0, 0, 1, 100, 0},
               {"SM 1", 0, 1, 1, 161, 0}};  // 1.61: "1.6" at the paper's precision
  EXPECT_EQ(verdict().verdict, "holds");
  sa.per_sm = sb.per_sm = {{"SM 0", 0, 0, 1, 100, 0}, {"SM 1", 0, 1, 1, 170, 0}};
  EXPECT_EQ(verdict().verdict, "does not hold") << "a bound missed is no reversal";
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// Each lesson's series is shipped, reads, and holds every value its figure draws, both sides.
TEST(LessonSeries, EachShippedRecordingHoldsItsLessonsValues) {
  int with_series = 0;
  for (const builtin::Lesson& l : builtin::lessons()) {
    if (!l.series) continue;
    ++with_series;
    const auto file = builtin::find_series_recording(l);
    ASSERT_TRUE(file.has_value()) << l.name << ": " << l.series->recording;
    const builtin::SeriesRecording rec = builtin::read_series(*file);
    EXPECT_EQ(rec.lesson, l.name);
    EXPECT_EQ(rec.parameter, l.series->parameter);
    EXPECT_NE(rec.device.find("H100"), std::string::npos) << rec.device;
    ASSERT_EQ(rec.points.size(), l.series->values.size()) << l.name;
    for (std::size_t i = 0; i < rec.points.size(); ++i) {
      EXPECT_EQ(rec.points[i].value, l.series->values[i]);
      EXPECT_EQ(rec.points[i].a.runs.size(), static_cast<std::size_t>(rec.repeats));
      EXPECT_EQ(rec.points[i].b.runs.size(), static_cast<std::size_t>(rec.repeats));
    }
    const builtin::SeriesFigureData d = builtin::series_figure(l, rec);
    ASSERT_EQ(d.rows.size(), rec.points.size());
    for (const builtin::SeriesFigureRow& r : d.rows)
      EXPECT_TRUE(r.a && r.b) << l.name << " " << r.value;
    EXPECT_FALSE(d.measured.empty());
  }
  EXPECT_GE(with_series, 3);
}

// Figure 7 as the figure reads it: every scheduler at 100% of itself on P0, the work left 50% on
// P1-P3 and 25% on P4, the paper's shares at P4, and today's H100 nearer the work left than 2009's.
TEST(LessonSeries, Figure7IsSharesOfP0BesideTheWorkLeftAndThePapers) {
  const builtin::Lesson& l = *builtin::find_lesson("chen-fig7");
  const builtin::SeriesFigureData d =
      builtin::series_figure(l, builtin::read_series(*builtin::find_series_recording(l)));
  ASSERT_EQ(d.rows.size(), 5u);
  EXPECT_DOUBLE_EQ(*d.rows[0].a, 1.0);
  EXPECT_DOUBLE_EQ(*d.rows[0].b, 1.0);
  EXPECT_NEAR(*d.rows[1].ideal, 0.5, 1e-9);
  EXPECT_NEAR(*d.rows[4].ideal, 0.25, 1e-9);
  EXPECT_NEAR(*d.rows[4].paper_a, 0.516, 1e-9);
  EXPECT_NEAR(*d.rows[4].paper_b, 0.255, 1e-9);
  EXPECT_LT(*d.rows[4].a, *d.rows[4].paper_a)
      << "the H100's block scheduler saves more than 2009's";
  EXPECT_NE(d.measured.find("26.8%"), std::string::npos) << d.measured;
}

TEST(LessonSeries, ARecordingRoundTripsAndItsMedianIsTheMiddleRun) {
  builtin::SeriesRecording rec;
  rec.lesson = "mohan-static-vs-stealing";
  rec.parameter = "lookahead";
  rec.device = "CPU (2 threads)";
  rec.repeats = 3;
  builtin::SeriesPoint p{"4", {}, {}};
  for (double t : {300.0, 100.0, 200.0})
    p.a.runs.push_back({t, {{"peak_task_slots", static_cast<std::uint64_t>(t)}}, {}});
  for (double t : {50.0, 70.0, 60.0}) p.b.runs.push_back({t, {}, {1.0, 2.0}});
  rec.points.push_back(p);
  const builtin::SeriesRecording back =
      builtin::series_from_json(builtin::series_to_json(rec), "memory");
  ASSERT_EQ(back.points.size(), 1u);
  EXPECT_DOUBLE_EQ(back.points[0].a.median()->makespan_ns, 200.0);
  EXPECT_EQ(back.points[0].a.median()->metrics.at("peak_task_slots"), 200u);
  EXPECT_DOUBLE_EQ(back.points[0].b.median()->makespan_ns, 60.0);
  EXPECT_EQ(back.points[0].b.median()->device_busy_ns, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(back.device, rec.device);
}

// A file that is not a recording is refused with its name and what is wrong, never half read.
TEST(LessonSeries, WhatIsNoRecordingIsRefusedByName) {
  const auto refused = [](const std::string& text) {
    try {
      builtin::series_from_json(text, "bad.json");
    } catch (const builtin::SeriesError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("{").find("bad.json"), std::string::npos);
  EXPECT_NE(refused(R"({"format":"gpulb-trace"})").find("not a gpulb-lesson-series file"),
            std::string::npos);
  EXPECT_NE(refused(R"({"format":"gpulb-lesson-series","version":9})").find("version 9"),
            std::string::npos);
  EXPECT_NE(
      refused(
          R"({"format":"gpulb-lesson-series","version":1,"lesson":"x","parameter":"p","points":[{"value":"1","a":[{"makespan_ns":-5}],"b":[]}]})")
          .find("no time"),
      std::string::npos);
  EXPECT_THROW(builtin::read_series("/dev/zero"), builtin::SeriesError);
  EXPECT_THROW(builtin::read_series("/no/such/recording.json"), builtin::SeriesError);
}

// `gpulb lesson record` on this CPU: a made-up lesson of two small patterns, both sides in turn.
TEST(LessonSeries, RecordingRunsEveryValueBothSidesRepeatedly) {
  builtin::Lesson l = *builtin::find_lesson("chen-fig7");
  l.a.params = {"pattern=P4", "blocks=64", "work=10"};
  l.b.params = {"pattern=P4", "blocks=64", "work=10", "variant=paper", "queue_capacity=64"};
  l.series->values = {"P0", "P4"};
  int last_done = 0, last_total = 0;
  const builtin::SeriesRecording rec =
      builtin::record_series(l, Backend::Cpu, 2, [&](int done, int total) {
        EXPECT_EQ(done, last_done + 1);
        last_done = done;
        last_total = total;
      });
  EXPECT_EQ(last_total, 8);
  EXPECT_EQ(last_done, 8);
  ASSERT_EQ(rec.points.size(), 2u);
  EXPECT_EQ(rec.points[1].value, "P4");
  EXPECT_EQ(rec.points[1].a.runs.size(), 2u);
  EXPECT_EQ(rec.points[1].b.runs.size(), 2u);
  EXPECT_GT(rec.points[1].a.runs[0].makespan_ns, 0.0);
  EXPECT_NE(rec.device.find("CPU"), std::string::npos) << rec.device;
  EXPECT_NE(rec.command.find("gpulb lesson record chen-fig7 --backend cpu --repeats 2"),
            std::string::npos);
  // A series over GPUs needs GPUs: the CPU backend is one device.
  EXPECT_THROW(builtin::record_series(*builtin::find_lesson("chen-multi-gpu"), Backend::Cpu, 1),
               ConfigError);
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// A lesson with a claim value is judged there, on its recording: Mohan's claim at lookahead 7,
// where the times tie and the deques need fewer slots, whatever its lookahead-4 traces show.
TEST(LessonSeries, TheVerdictIsMeasuredAtTheClaimsValueOfTheRecording) {
  const builtin::Lesson& l = *builtin::find_lesson("mohan-static-vs-stealing");
  const trace::Trace a = trace::read_trace(*builtin::find_shipped_trace(l.a.trace));
  const trace::Trace b = trace::read_trace(*builtin::find_shipped_trace(l.b.trace));
  const trace::TraceStatistics sa = trace::compute_statistics(a), sb = trace::compute_statistics(b);
  const builtin::SeriesRecording rec = builtin::read_series(*builtin::find_series_recording(l));
  const builtin::LessonVerdict at7 = builtin::lesson_verdict(l, {a.meta, sa}, {b.meta, sb}, &rec);
  EXPECT_NE(at7.measured_on.find("lookahead 7"), std::string::npos) << at7.measured_on;
  ASSERT_EQ(at7.quantities.size(), 2u);
  EXPECT_EQ(at7.quantities[0].holds, false) << at7.quantities[0].measured;  // the times tie at 7
  // fewer slots for the deques
  EXPECT_EQ(at7.quantities[1].holds, true) << at7.quantities[1].measured;
  const builtin::LessonVerdict traces =
      builtin::lesson_verdict(l, {a.meta, sa}, {b.meta, sb}, nullptr);
  EXPECT_EQ(traces.measured_on, "the two traces");
  EXPECT_EQ(traces.quantities[0].holds, true) << "at lookahead 4 work stealing is faster";
  EXPECT_EQ(traces.quantities[1].holds, false) << "and needs more slots";
}

// Each "look here" step names a moment its run has, and lands on it: the range it selects holds
// what the step points at, in the shipped trace of the side it names.
TEST(LessonSteps, EachStepFindsItsMomentInItsShippedTrace) {
  for (const builtin::Lesson& l : builtin::lessons()) {
    EXPECT_FALSE(l.steps.empty()) << l.name << ": what look_for points at, as buttons";
    for (const builtin::LessonStep& step : l.steps) {
      const std::string what = std::string(l.name) + ", \"" + std::string(step.label) + "\"";
      ASSERT_TRUE(step.side == 0 || step.side == 1) << what;
      const std::optional<Moment> moment = moment_from_name(step.moment);
      ASSERT_TRUE(moment.has_value()) << what << ": no moment " << step.moment;
      const builtin::LessonRun& run = step.side == 0 ? l.a : l.b;
      const TraceModel m(std::make_shared<const trace::Trace>(
          trace::read_trace(*builtin::find_shipped_trace(run.trace))));
      const std::vector<Finding> findings = compute_findings(m);
      const std::optional<MomentRange> at = find_moment(m, findings, *moment);
      ASSERT_TRUE(at.has_value()) << what << ": not in " << run.trace;
      const TimeSpan run_range = run_span(m), sel = at->selected, shown = at->shown;
      EXPECT_LT(sel.begin_ns, sel.end_ns) << what;
      EXPECT_LE(shown.begin_ns, sel.begin_ns) << what << ": the selection shows";
      EXPECT_GE(shown.end_ns, sel.end_ns) << what;
      EXPECT_GE(sel.begin_ns, run_range.begin_ns - 1.0) << what << ": inside the run";
      EXPECT_LE(sel.end_ns, run_range.end_ns + 1.0) << what;
      std::size_t launches = 0, batches = 0;
      for (const Lane& lane : m.lanes()) {
        for (const Marker& k : lane.markers) {
          const double t = static_cast<double>(k.time_ns);
          if (lane.role != trace::TrackRole::Host || t < sel.begin_ns || t > sel.end_ns) continue;
          launches += k.kind == trace::EventKind::KernelLaunch;
          batches += k.kind == trace::EventKind::HostEnqueue;
        }
      }
      switch (*moment) {
        case Moment::Run:
          EXPECT_DOUBLE_EQ(sel.end_ns - sel.begin_ns, run_range.end_ns - run_range.begin_ns)
              << what;
          break;
        case Moment::Spread: EXPECT_DOUBLE_EQ(sel.begin_ns, run_range.begin_ns) << what; break;
        case Moment::Tail: EXPECT_DOUBLE_EQ(sel.end_ns, run_range.end_ns) << what; break;
        case Moment::Batches:
          EXPECT_GE(batches, 2u) << what << ": the host's batches arriving";
          break;
        case Moment::Launches:
          EXPECT_GE(launches, 2u) << what << ": two launches and what ran between";
          break;
        case Moment::Steals: {
          const std::size_t steals = m.steals_between(shown.begin_ns, shown.end_ns);
          EXPECT_GT(steals, 0u) << what;
          EXPECT_LE(steals, kMaxStealArrows) << what << ": few enough for the arrows";
          break;
        }
      }
    }
  }
}

// Compare shows each run from its own first launch: a moment of B lands at B's time since its
// launch, and its selection on A's clock is that much after A's launch.
TEST(LessonSteps, AMomentOfBIsShownSinceBsLaunchAndSelectedOnAsClock) {
  const builtin::Lesson& l = *builtin::find_lesson("chen-fig7");
  const TraceModel a(std::make_shared<const trace::Trace>(
      trace::read_trace(*builtin::find_shipped_trace(l.a.trace))));
  const TraceModel b(std::make_shared<const trace::Trace>(
      trace::read_trace(*builtin::find_shipped_trace(l.b.trace))));
  const MomentRange m{{launch_ns(b) + 100.0, launch_ns(b) + 300.0},
                      {launch_ns(b) + 50.0, launch_ns(b) + 400.0}};
  const CompareJump j = compare_jump(a, b, m);
  EXPECT_DOUBLE_EQ(j.range.begin_ns, 50.0);
  EXPECT_DOUBLE_EQ(j.range.end_ns, 400.0);
  EXPECT_DOUBLE_EQ(j.selection.begin_ns, launch_ns(a) + 100.0);
  EXPECT_DOUBLE_EQ(j.selection.end_ns, launch_ns(a) + 300.0);
}

// Chen's Figure 10 found Solution 1's GPUs "extremely unbalanced"; where both sides keep the
// balance the verdict says how closely both did, not that the claim held for each.
TEST(LessonVerdict, ABalanceBothSidesKeepIsStatedAsHowClose) {
  const builtin::Lesson& l = *builtin::find_lesson("chen-multi-gpu");
  const trace::Trace a = trace::read_trace(*builtin::find_shipped_trace(l.a.trace));
  const trace::Trace b = trace::read_trace(*builtin::find_shipped_trace(l.b.trace));
  const trace::TraceStatistics sa = trace::compute_statistics(a), sb = trace::compute_statistics(b);
  const auto rec = builtin::find_series_recording(l);
  ASSERT_TRUE(rec.has_value());
  const builtin::SeriesRecording r = builtin::read_series(*rec);
  const builtin::LessonVerdict v = builtin::lesson_verdict(l, {a.meta, sa}, {b.meta, sb}, &r);
  const auto q = std::find_if(v.quantities.begin(), v.quantities.end(),
                              [](const builtin::MeasuredQuantity& x) {
                                return x.quantity == builtin::Quantity::DeviceBusyMaxMin;
                              });
  ASSERT_NE(q, v.quantities.end());
  ASSERT_TRUE(q->a && q->b);
  EXPECT_NE(q->paper.find("Solution 1"), std::string::npos)
      << q->paper << ": what the paper found of A";
  if (std::max(*q->a, *q->b) < 1.05) {
    EXPECT_NE(q->in_short.find("both within"), std::string::npos) << q->in_short;
    EXPECT_NE(q->measured.find("both within"), std::string::npos) << q->measured;
  }
}

}  // namespace
}  // namespace gpulb::viewer
