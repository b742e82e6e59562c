#include "gpulb/builtin/lesson_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace gpulb::builtin {
namespace {

// Two runs' times within 5% of each other are a tie: repeated runs of one binary spread that much
// (docs/benchmarks.md), so a claim that one side is faster does not hold on it.
constexpr double kTimeTie = 1.05;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 15546 -> "15,546": counts a reader compares at a glance.
std::string grouped(double v) {
  std::string digits = fixed(std::round(v), 0);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

// The busiest group over the idlest, of tasks (SMs) or busy time (devices). Infinity where a group
// got nothing: the claim of balance then fails plainly.
template <class Value>
std::optional<double> max_over_min(const std::vector<trace::GroupStats>& groups, Value value) {
  if (groups.size() < 2) return std::nullopt;
  double lo = std::numeric_limits<double>::max(), hi = 0.0;
  for (const trace::GroupStats& g : groups) {
    lo = std::min(lo, static_cast<double>(value(g)));
    hi = std::max(hi, static_cast<double>(value(g)));
  }
  return lo > 0.0 ? hi / lo : std::numeric_limits<double>::infinity();
}

std::optional<double> measure(Quantity q, const LessonSide& side) {
  const trace::RunMetadata& meta = side.meta;
  const trace::TraceStatistics& s = side.stats;
  switch (q) {
    case Quantity::Makespan:
      // The traced span, as every view of the viewer shows it; the runtime's own figure without events.
      return static_cast<double>(s.makespan_ns ? s.makespan_ns : meta.makespan_ns);
    case Quantity::PeakTaskSlots: {
      const auto it = meta.metrics.find("peak_task_slots");
      if (it == meta.metrics.end()) return std::nullopt;
      return static_cast<double>(it->second);
    }
    case Quantity::TasksPerSmMaxMin:
      return max_over_min(s.per_sm, [](const trace::GroupStats& g) { return g.tasks; });
    case Quantity::DeviceBusyMaxMin:
      return max_over_min(s.per_device, [](const trace::GroupStats& g) { return g.busy_ns; });
  }
  return std::nullopt;
}

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::Makespan: return "time (makespan)";
    case Quantity::PeakTaskSlots: return "task slots needed (peak)";
    case Quantity::TasksPerSmMaxMin: return "tasks per SM, max/min";
    case Quantity::DeviceBusyMaxMin: return "busy time per GPU, max/min";
  }
  return "";
}

const char* quantity_unit(Quantity q) {
  switch (q) {
    case Quantity::Makespan: return "ns";
    case Quantity::PeakTaskSlots: return "task slots";
    case Quantity::TasksPerSmMaxMin:
    case Quantity::DeviceBusyMaxMin: return "x";
  }
  return "";
}

}  // namespace

std::string format_quantity(Quantity q, double v) {
  if (q == Quantity::Makespan) return format_duration_ns(v);
  if (q == Quantity::PeakTaskSlots) return grouped(v) + " slots";
  return std::isinf(v) ? std::string("infinite (one got none)") : fixed(v, 2);
}

namespace {

// Both sides' busiest over idlest under 1.05: the same balance, stated as how close.
bool balanced(double a, double b) { return a >= 1.0 && b >= 1.0 && std::max(a, b) < 1.05; }

// "B 2.17x faster", "B 219x fewer task slots": the figure a reader repeats.
std::string short_text(const ClaimQuantity& c, double a, double b) {
  if (c.expectation == Expectation::BOverAAtMost) return a > 0.0 ? "B/A " + fixed(b / a, 3) : "";
  if (c.expectation == Expectation::AOverBAtMost) return b > 0.0 ? "A/B " + fixed(a / b, 3) : "";
  if (c.expectation == Expectation::AAtMost) {
    return "max/min A " + format_quantity(c.quantity, a) + " (B, for reference, " +
           format_quantity(c.quantity, b) + ")";
  }
  if (c.expectation == Expectation::AtMost) {
    const std::string pair =
        "max/min A " + format_quantity(c.quantity, a) + ", B " + format_quantity(c.quantity, b);
    // Both balanced: say how closely, for a claim that may have expected one of them not to be.
    if (balanced(a, b))
      return "balance: both within " + fixed(std::max(0.1, (std::max(a, b) - 1.0) * 100.0), 1) +
             "% (" + pair + ")";
    return pair;
  }
  const bool b_first = c.expectation == Expectation::BBelowA;
  const double want_low = b_first ? b : a, want_high = b_first ? a : b;
  if (want_low <= 0.0 || want_high <= 0.0) return "";
  const double ratio = want_high / want_low;
  const bool time = c.quantity == Quantity::Makespan;
  const char* side = b_first ? "B " : "A ";
  const char* what = time ? "" : " task slots";
  if (time && ratio < kTimeTie && ratio > 1.0 / kTimeTie)
    return std::string("a tie: ") + side + fixed(ratio, 2) + "x as fast";
  if (ratio >= 1.0) {
    return side + fixed(ratio >= 10.0 ? std::round(ratio) : ratio, ratio >= 10.0 ? 0 : 2) + "x " +
           (time ? "faster" : "fewer") + what;
  }
  return side + fixed(1.0 / ratio, 2) + "x " + (time ? "slower" : "more") + what;
}

// "B 2.17x faster: 25.1 ms (A) against 11.6 ms (B)", "A 1.30, B 9.80 (claim: at most 1.6)".
std::string measured_text(const ClaimQuantity& c, double a, double b, const std::string& in_short) {
  if (c.expectation == Expectation::AtMost && balanced(a, b))
    return in_short + " (claim: each at most " + fixed(c.bound, 1) + ")";
  if (c.expectation == Expectation::AtMost || c.expectation == Expectation::AAtMost) {
    return "A " + format_quantity(c.quantity, a) + ", B " + format_quantity(c.quantity, b) +
           " (claim: " + (c.expectation == Expectation::AAtMost ? "A" : "each") + " at most " +
           fixed(c.bound, 1) + ")";
  }
  const std::string pair =
      format_quantity(c.quantity, a) + " (A) against " + format_quantity(c.quantity, b) + " (B)";
  if (c.expectation == Expectation::BOverAAtMost || c.expectation == Expectation::AOverBAtMost) {
    return in_short + " (claim: at most " + fixed(c.bound, 3) + "): " + pair;
  }
  return in_short.empty() ? pair : in_short + ": " + pair;
}

std::string expectation_text(const ClaimQuantity& c) {
  switch (c.expectation) {
    case Expectation::BBelowA: return "B below A";
    case Expectation::ABelowB: return "A below B";
    case Expectation::AtMost: return "both at most " + fixed(c.bound, 1);
    case Expectation::AAtMost: return "A at most " + fixed(c.bound, 1) + "; B for reference";
    case Expectation::BOverAAtMost: return "B over A at most " + fixed(c.bound, 3);
    case Expectation::AOverBAtMost: return "A over B at most " + fixed(c.bound, 3);
  }
  return "";
}

// A bound is judged at the precision the paper states it (one decimal: "1.6x"), so that 1.61
// meets "1.6" as the paper's own rounding would.
bool within(const ClaimQuantity& c, double v) { return std::round(v * 10.0) / 10.0 <= c.bound; }

double margin(const ClaimQuantity& c) { return c.quantity == Quantity::Makespan ? kTimeTie : 1.0; }

std::optional<bool> judge(const ClaimQuantity& c, double a, double b) {
  switch (c.expectation) {
    case Expectation::BBelowA: return b * margin(c) < a;
    case Expectation::ABelowB: return a * margin(c) < b;
    case Expectation::AtMost: return within(c, a) && within(c, b);
    case Expectation::AAtMost: return within(c, a);
    case Expectation::BOverAAtMost: return a > 0.0 && b / a <= c.bound;
    case Expectation::AOverBAtMost: return b > 0.0 && a / b <= c.bound;
  }
  return std::nullopt;
}

}  // namespace

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fixed(ns, 0) + " ns";
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 2 : ns < 1e5 ? 1 : 0) + " us";
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

LessonVerdict assess_lesson(const Lesson& lesson, const trace::Trace& a, const trace::Trace& b) {
  const trace::TraceStatistics sa = trace::compute_statistics(a), sb = trace::compute_statistics(b);
  return assess_lesson(lesson, LessonSide{a.meta, sa}, LessonSide{b.meta, sb});
}

LessonVerdict assess_lesson(const Lesson& lesson, const LessonSide& a, const LessonSide& b) {
  LessonVerdict v;
  int held = 0, judged = 0;
  // a bound missed is "does not hold"; a comparison gone the other way, "reversed"
  bool bounds_only = true;
  for (const ClaimQuantity& c : lesson.quantities) {
    MeasuredQuantity m;
    m.quantity = c.quantity;
    m.name = quantity_name(c.quantity);
    m.unit = quantity_unit(c.quantity);
    m.paper = std::string(c.paper);
    m.expectation = expectation_text(c);
    if (c.expectation == Expectation::AtMost || c.expectation == Expectation::AAtMost)
      m.bound = c.bound;
    m.a = measure(c.quantity, a);
    m.b = measure(c.quantity, b);
    if (m.a && m.b) {
      m.holds = judge(c, *m.a, *m.b);
      m.in_short = short_text(c, *m.a, *m.b);
      m.measured = measured_text(c, *m.a, *m.b, m.in_short);
      if (c.expectation == Expectation::AtMost) {  // a bound on each run: each side a judgement
        m.a_within = within(c, *m.a);
        m.b_within = within(c, *m.b);
        judged += 2;
        held += (within(c, *m.a) ? 1 : 0) + (within(c, *m.b) ? 1 : 0);
      } else if (c.expectation == Expectation::AAtMost) {  // a bound on A alone: B is the reference
        m.a_within = within(c, *m.a);
        ++judged;
        held += *m.a_within ? 1 : 0;
      } else {
        ++judged;
        held += *m.holds ? 1 : 0;
        // a ratio's bound missed "does not hold"; a comparison gone the other way, "reversed"
        if (c.expectation != Expectation::BOverAAtMost &&
            c.expectation != Expectation::AOverBAtMost)
          bounds_only = false;
      }
    } else {
      m.measured = m.in_short = m.name + " is not in " +
                                (m.a   ? "B's"
                                 : m.b ? "A's"
                                       : "either") +
                                " trace";
    }
    v.quantities.push_back(std::move(m));
  }
  // Judged on what both traces hold; a quantity missing from one says so in the headline.
  v.verdict = judged == 0      ? "not measured"
              : held == judged ? "holds"
              : held > 0       ? "holds partly"
              : bounds_only    ? "does not hold"
                               : "reversed";
  std::string measured, paper;
  for (const MeasuredQuantity& m : v.quantities) {
    measured += (measured.empty() ? "" : "; ") + m.in_short;
    paper += (paper.empty() ? "" : "; ") + m.paper;
  }
  v.headline = "measured " + measured + " (paper: " + paper + ")";
  return v;
}

}  // namespace gpulb::builtin

namespace gpulb::builtin {
namespace {

// A series run as the verdict reads a trace: its time and metrics, and each GPU's busy time as a
// device group of one worker.
void side_of(const SeriesRun& run, trace::RunMetadata& meta, trace::TraceStatistics& stats) {
  meta.makespan_ns = static_cast<std::uint64_t>(run.makespan_ns);
  meta.metrics = run.metrics;
  for (std::size_t g = 0; g < run.device_busy_ns.size(); ++g) {
    trace::GroupStats group;
    group.device = static_cast<std::uint32_t>(g);
    group.workers = 1;
    group.busy_ns = static_cast<std::uint64_t>(run.device_busy_ns[g]);
    stats.per_device.push_back(group);
  }
}

}  // namespace

LessonVerdict lesson_verdict(const Lesson& lesson, const LessonSide& a, const LessonSide& b,
                             const SeriesRecording* recording) {
  if (recording && lesson.series && !lesson.series->verdict_at.empty()) {
    for (const SeriesPoint& p : recording->points) {
      if (p.value != lesson.series->verdict_at || !p.a.median() || !p.b.median()) continue;
      trace::RunMetadata ma, mb;
      trace::TraceStatistics sa, sb;
      side_of(*p.a.median(), ma, sa);
      side_of(*p.b.median(), mb, sb);
      LessonVerdict v = assess_lesson(lesson, LessonSide{ma, sa}, LessonSide{mb, sb});
      v.measured_on = recording->parameter + " " + p.value + " in the key figure's recording (" +
                      recording->device + ", " + recording->recorded + ")";
      return v;
    }
  }
  LessonVerdict v = assess_lesson(lesson, a, b);
  v.measured_on = "the two traces";
  return v;
}

}  // namespace gpulb::builtin
