// A lesson's verdict, measured: each quantity its claim is about (a runtime, task slots, tasks per
// SM), read from the lesson's two traces, set against what the claim says of it, and summed up as
// "holds", "holds partly" or "reversed". `gpulb lesson show NAME --json` prints it and the viewer
// draws it as the lesson's key figure: both read this one function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpulb/builtin/lessons.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::builtin {

// One quantity of the claim, measured on A and on B: a pair of bars in the key figure.
struct MeasuredQuantity {
  Quantity quantity;
  std::string name;             // "time (makespan)"
  std::string unit;             // "ns", "task slots", "x"
  std::optional<double> a, b;   // nullopt: the trace does not hold it (e.g. an older recording)
  std::optional<double> bound;  // the claim's limit, where it sets one (Expectation::AtMost)
  std::optional<bool> a_within, b_within;  // each side against the bound, judged at its precision
  std::string paper;                       // the paper's figure for it, as the paper states it
  std::string expectation;    // what the claim needs of the two values, in words: "B below A"
  std::optional<bool> holds;  // nullopt: not measured on both sides
  std::string measured;  // the measured figures: "B 2.17x faster: 25.1 ms (A) against 11.6 ms (B)"
  std::string in_short;  // the same in a few words: "B 2.17x faster"
};

struct LessonVerdict {
  std::string
      measured_on;  // "the two traces", or "lookahead 7 of the key figure's recording (NVIDIA H100 ...)"
  // "holds", "holds partly", "reversed" (a comparison went the other way), "does not hold" (a bound
  // was missed), or "not measured"
  std::string verdict;
  std::string headline;  // one line: the measured figures in short, then the paper's
  std::vector<MeasuredQuantity> quantities;
};

// One side's run as the verdict reads it: its metadata and the statistics of its events.
struct LessonSide {
  const trace::RunMetadata& meta;
  const trace::TraceStatistics& stats;
};

// The verdict of `lesson`'s claim on two runs (A and B as the lesson names them).
LessonVerdict assess_lesson(const Lesson& lesson, const LessonSide& a, const LessonSide& b);
LessonVerdict assess_lesson(const Lesson& lesson, const trace::Trace& a, const trace::Trace& b);

struct SeriesRecording;

// The lesson's verdict as the CLI and the viewer give it: at the series value the claim names
// (LessonSeries::verdict_at) on `recording` where both are given, else on the two traces.
LessonVerdict lesson_verdict(const Lesson& lesson, const LessonSide& a, const LessonSide& b,
                             const SeriesRecording* recording);

// A duration for people: "469 us", "1.52 ms", "2.30 s".
std::string format_duration_ns(double ns);

// One measured value as the verdict writes it: "25.1 ms", "15,546 slots", "1.30".
std::string format_quantity(Quantity quantity, double value);

}  // namespace gpulb::builtin
