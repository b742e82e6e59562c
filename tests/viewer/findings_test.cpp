// Findings on the shipped H100 and 2xH200 traces: each detector's figure is
// computed again here the plain way (zones, markers, level points) and must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "findings.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

const Finding* find_kind(const std::vector<Finding>& fs, FindingKind k,
                         const std::string& containing = "") {
  for (const Finding& f : fs) {
    if (f.kind == k && f.text.find(containing) != std::string::npos) return &f;
  }
  return nullptr;
}

// Busy time of the union of every task zone within [a, b): no-task time is the rest.
double covered(const TraceModel& m, double a, double b) {
  std::vector<std::pair<double, double>> z;
  for (const Lane& l : m.lanes()) {
    for (const Zone& x : l.zones)
      z.push_back({std::max<double>(x.begin_ns, a), std::min<double>(x.end_ns, b)});
  }
  std::sort(z.begin(), z.end());
  double total = 0.0, end = a;
  for (const auto& [s, e] : z) {
    if (e <= end) continue;
    total += e - std::max(s, end);
    end = e;
  }
  return total;
}

int busy_at(const TraceModel& m, double t) {
  int n = 0;
  for (const Lane& l : m.lanes()) {
    for (const Zone& z : l.zones) n += z.begin_ns <= t && t < z.end_ns ? 1 : 0;
  }
  return n;
}

// md-64k-tq-2xh200: GPU 1 ran none of the 512 tasks. That is the first thing a reader must learn,
// before any figure of the run (the findings led with its queue "holding tasks for 98% of the run").
TEST(Findings, ADeviceThatRanNoTaskIsTheFirstFinding) {
  const TraceModel& m = testing::recorded("md-64k-tq-2xh200.gpulb");
  const auto fs = compute_findings(m);
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs.front().kind, FindingKind::IdleDevice) << fs.front().text;
  EXPECT_NE(fs.front().text.find("GPU 1 ran no task: 0 of the run's 512 tasks"), std::string::npos)
      << fs.front().text;
  for (const char* other :
       {"patterns-P3-task-queue-modern-2xh200.gpulb", "md-64k-solution1-2xh200.gpulb"}) {
    EXPECT_EQ(find_kind(compute_findings(testing::recorded(other)), FindingKind::IdleDevice),
              nullptr)
        << other;
  }
}

// No finding on any shipped trace says a tail "ran on at most 0 of N workers": a stretch with no
// worker busy is a gap with no task, which its own finding names.
TEST(Findings, NoFindingSaysAtMostZeroWorkers) {
  for (const auto& e : std::filesystem::directory_iterator(GPULB_SHIPPED_TRACES)) {
    if (e.path().extension() != ".gpulb") continue;
    for (const Finding& f : compute_findings(testing::shipped(e.path().filename().string()))) {
      EXPECT_EQ(f.text.find("at most 0 of"), std::string::npos)
          << e.path().filename() << ": " << f.text;
    }
  }
}

TEST(Findings, ABalancedRunHasNothingToPointAt) {
  // P0 on the hardware scheduler: equal blocks, one launch, every SM full to the end.
  EXPECT_TRUE(compute_findings(testing::recorded("patterns-P0-hardware-h100.gpulb")).empty());
}

TEST(Findings, TheTailOfP4OnTheHardwareSchedulerRunsOnFewWorkers) {
  const TraceModel& m = testing::recorded("patterns-P4-hardware-h100.gpulb");
  const TimeSpan run = run_span(m);
  const auto fs = compute_findings(m);
  const Finding* f = find_kind(fs, FindingKind::Tail);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Warning);
  EXPECT_DOUBLE_EQ(f->end_ns, run.end_ns);
  EXPECT_NEAR(f->share, 0.1358, 0.0005) << f->text;
  EXPECT_NE(f->text.find("ran on at most 346 of 1,341 workers"), std::string::npos) << f->text;
  // Counted from the zones: at the tail's start under half the peak (693) run, and never more than 346 after it.
  EXPECT_LT(2 * busy_at(m, f->begin_ns), 693);
  EXPECT_GE(2 * busy_at(m, f->begin_ns - 1), 693);
  for (double t = f->begin_ns; t < f->end_ns; t += (f->end_ns - f->begin_ns) / 50)
    EXPECT_LE(busy_at(m, t), 346);
}

TEST(Findings, TheStaticListRunsNoTaskMostOfTheTime) {
  // Connect-Four under the static list: a launch per generation, short tasks; the gaps between dominate.
  const TraceModel& m = testing::recorded(testing::kConnect4Static);
  const TimeSpan run = run_span(m);
  const auto fs_f = compute_findings(m);
  const Finding* f = find_kind(fs_f, FindingKind::NoTaskGap);
  ASSERT_NE(f, nullptr);
  const double none = 1.0 - covered(m, run.begin_ns, run.end_ns) / (run.end_ns - run.begin_ns);
  EXPECT_NEAR(f->share, none, 1e-9);
  EXPECT_NEAR(f->share, 0.947, 0.001);  // the shipped recording: no task for 94.7% of its run
  EXPECT_NE(f->text.find("in 6 gaps"), std::string::npos) << f->text;
  EXPECT_DOUBLE_EQ(covered(m, f->begin_ns, f->end_ns), 0.0) << "the longest gap has no task in it";
  EXPECT_GT(covered(m, f->begin_ns - 200, f->end_ns + 200), 0.0) << "and is the whole gap";
  EXPECT_NEAR(no_task_share(m), none, 1e-9);
}

TEST(Findings, StealVictimsAreCountedFromTheStealMarkers) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const auto fs_f = compute_findings(m);
  const Finding* f = find_kind(fs_f, FindingKind::StealConcentration);
  ASSERT_NE(f, nullptr);
  std::map<std::uint32_t, std::uint64_t> victims;
  std::uint64_t steals = 0;
  for (const Lane& l : m.lanes()) {
    for (const Marker& k : l.markers) {
      if (k.kind == trace::EventKind::Steal) ++victims[k.arg], ++steals;
    }
  }
  EXPECT_EQ(steals, m.stats().steals);
  std::vector<std::uint64_t> n;
  for (const auto& [v, c] : victims) n.push_back(c);
  std::sort(n.rbegin(), n.rend());
  std::uint64_t sum = 0;
  std::size_t k = 0;
  while (sum * 10 < steals * 8) sum += n[k++];
  EXPECT_NE(f->text.find("of the 25,196 steals hit " + std::to_string(k / 1000) + "," +
                         std::to_string(k % 1000) + " of 4,224 workers"),
            std::string::npos)
      << f->text << " (" << k << ")";
  EXPECT_NE(f->text.find("lost " + std::to_string(n[0])), std::string::npos) << f->text;
  EXPECT_NE(f->text.find("spread out"), std::string::npos)
      << "uts's thieves pick victims at random";
}

TEST(Findings, TwoGpusFinishingApartAreMeasuredFromTheirLastTasks) {
  const TraceModel& m = testing::recorded(testing::kP3Modern2Gpu);
  const auto fs_f = compute_findings(m);
  const Finding* f = find_kind(fs_f, FindingKind::DeviceFinish);
  ASSERT_NE(f, nullptr);
  std::map<std::uint32_t, std::uint64_t> last;
  for (const Lane& l : m.lanes()) {
    if (!l.zones.empty()) last[l.device] = std::max(last[l.device], l.zones.back().end_ns);
  }
  ASSERT_EQ(last.size(), 2u);
  const double spread = static_cast<double>(last[0]) - static_cast<double>(last[1]);
  EXPECT_NEAR(spread, 96.6e3, 0.1e3);
  EXPECT_NEAR(f->share, spread / static_cast<double>(m.stats().makespan_ns), 1e-9);
  EXPECT_EQ(f->severity, Severity::Warning) << "over 5% of the run";
  EXPECT_EQ(f->text.rfind("GPU 1 ran its last task 96.6 us", 0), 0u) << f->text;
  // The paper scheme on the same input: within 2%, a note.
  const auto fs_p = compute_findings(testing::recorded(testing::kP3Paper2Gpu));
  const Finding* p = find_kind(fs_p, FindingKind::DeviceFinish);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->severity, Severity::Note);
  EXPECT_LT(p->share, 0.02);
}

TEST(Findings, AQueueEmptyWhileWorkersIdleIsMeasuredOnItsLevels) {
  // P4 under the paper's task queue: each batch of 1,024 is claimed within a microsecond or two,
  // then the queue stays empty while the host copies the next one in (queue_levels.hpp).
  const TraceModel& m = testing::recorded(testing::kP4Queue);
  const TimeSpan run = run_span(m);
  const auto fs_f = compute_findings(m);
  const Finding* f = find_kind(fs_f, FindingKind::QueueStarved, "GPU 0 queue 0 ");
  ASSERT_NE(f, nullptr);
  const QueueSeries* q = nullptr;
  for (const QueueSeries& s : m.queues()) {
    if (s.source == QueueSeries::Source::Queue && s.queue == 0) q = &s;
  }
  ASSERT_NE(q, nullptr);
  const double end = std::min<double>(run.end_ns, q->end_ns);
  double empty = 0.0;
  const auto pts = q->level.points();
  empty += std::max(
      0.0, std::min<double>(pts[0].time_ns, end) - run.begin_ns);  // 0 before the first point
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double a = std::max<double>(pts[i].time_ns, run.begin_ns);
    const double b = std::min<double>(i + 1 < pts.size() ? pts[i + 1].time_ns : end, end);
    if (b > a && pts[i].value == 0) empty += b - a;
  }
  EXPECT_NEAR(f->share, empty / (run.end_ns - run.begin_ns), 1e-9);
  EXPECT_NEAR(f->share, 0.98, 0.01);
  EXPECT_EQ(f->severity, Severity::Warning);
  EXPECT_NE(f->text.find("2.7% of GPU 0's 2,112 workers still running were busy"),
            std::string::npos)
      << f->text;
  EXPECT_NE(f->text.find("they waited for the next batch to reach the queue"), std::string::npos)
      << f->text;
}

TEST(Findings, TheIdlestSmIsTheSummarysLeastBusy) {
  const TraceModel& m = testing::recorded("patterns-P4-hardware-h100.gpulb");
  const auto fs_f = compute_findings(m);
  const Finding* f = find_kind(fs_f, FindingKind::IdleSm);
  ASSERT_NE(f, nullptr);
  // The statistics' per-SM busy time over its lanes x the makespan, lowest first.
  const double makespan = static_cast<double>(m.stats().makespan_ns);
  std::map<std::uint32_t, std::size_t> lanes_of_sm;
  for (const DeviceGroup& d : m.devices()) {
    for (const LaneGroup& g : d.groups) lanes_of_sm[g.sm] = g.lanes.size();
  }
  double lowest = 2.0;
  std::uint32_t which = 0;
  std::vector<double> shares;
  for (const trace::GroupStats& g : m.stats().per_sm) {
    const double share =
        static_cast<double>(g.busy_ns) / (static_cast<double>(lanes_of_sm[g.sm]) * makespan);
    shares.push_back(share);
    if (share < lowest) lowest = share, which = g.sm;
  }
  std::sort(shares.begin(), shares.end());
  const double median = shares[shares.size() / 2];
  EXPECT_EQ(f->text.rfind(
                "SM " + std::to_string(which) + " was busy 25% of the run, the median SM 38%", 0),
            0u)
      << f->text;
  EXPECT_NEAR(f->share, 1.0 - lowest / median, 1e-6);
}

TEST(Findings, LaunchGapsAreTheTimeBetweenAKernelsEndAndTheNextLaunch) {
  // The static list relaunches per generation: 5 launches, each after the previous kernel ended.
  const TraceModel& m = testing::recorded(testing::kConnect4Static);
  const TimeSpan run = run_span(m);
  const auto fs = compute_findings(m);
  const Finding* f = find_kind(fs, FindingKind::LaunchGap);
  ASSERT_NE(f, nullptr);
  std::vector<std::uint64_t> launch, end;
  for (const Lane& l : m.lanes()) {
    for (const Marker& k : l.markers) {
      if (k.kind == trace::EventKind::KernelLaunch) launch.push_back(k.time_ns);
      if (k.kind == trace::EventKind::KernelEnd) end.push_back(k.time_ns);
    }
  }
  std::sort(launch.begin(), launch.end());
  std::sort(end.begin(), end.end());
  ASSERT_EQ(launch.size(), 5u);
  ASSERT_EQ(end.size(), 5u);
  double gaps = 0.0, longest = 0.0;
  for (std::size_t i = 0; i + 1 < launch.size(); ++i) {
    ASSERT_LE(end[i], launch[i + 1]) << "one kernel at a time";
    const double a = std::max<double>(end[i], run.begin_ns),
                 b = std::min<double>(launch[i + 1], run.end_ns);
    gaps += std::max(0.0, b - a);
    longest = std::max(longest, b - a);
  }
  EXPECT_NEAR(f->share, gaps / (run.end_ns - run.begin_ns), 1e-9);
  EXPECT_NEAR(f->end_ns - f->begin_ns, longest, 1e-6);
  EXPECT_NE(f->text.find("between its 5 launches"), std::string::npos) << f->text;
  // One persistent kernel has no launch gaps.
  EXPECT_EQ(find_kind(compute_findings(testing::recorded(testing::kConnect4Stealing)),
                      FindingKind::LaunchGap),
            nullptr);
}

TEST(Findings, WarningsComeFirstAndEveryRangeIsInsideTheRun) {
  for (const char* file : {testing::kUts, testing::kP4Queue, testing::kP3Paper2Gpu,
                           testing::kConnect4Stealing, testing::kConnect4Static}) {
    const TraceModel& m = testing::recorded(file);
    const TimeSpan run = run_span(m);
    const auto fs = compute_findings(m);
    ASSERT_FALSE(fs.empty()) << file;
    bool notes = false;
    std::set<std::string> texts;
    for (const Finding& f : fs) {
      if (f.severity == Severity::Note) notes = true;
      EXPECT_FALSE(notes && f.severity == Severity::Warning) << file << ": a warning after a note";
      EXPECT_LT(f.begin_ns, f.end_ns) << f.text;
      EXPECT_GE(f.begin_ns, run.begin_ns - 0.011 * (run.end_ns - run.begin_ns)) << f.text;
      EXPECT_LE(f.end_ns, run.end_ns + 0.011 * (run.end_ns - run.begin_ns)) << f.text;
      EXPECT_TRUE(texts.insert(f.text).second) << "said twice: " << f.text;
      const TimeSpan v = finding_view_range(m, f);
      EXPECT_LT(v.begin_ns, f.begin_ns);
      EXPECT_GT(v.end_ns, f.end_ns);
    }
  }
}

}  // namespace
}  // namespace gpulb::viewer
