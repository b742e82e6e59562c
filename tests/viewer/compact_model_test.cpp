// The model's compact store: columns with 32-bit times hold the same events,
// zones, idle spells and markers as the decoded trace; step series' column summaries equal a
// brute-force integral; a long trace with a real event mix fits the memory budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "columns.hpp"
#include "parallel.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "series.hpp"
#include "shipped_traces.hpp"
#include "synthetic.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

trace::Trace read_recorded(const char* file) {
  return trace::read_trace(std::string(GPULB_RECORDED_TRACES) + "/" + file);
}

TEST(CompactStore, ReturnsTheDecodedTracesEventsTrackByTrack) {
  for (const char* file : {testing::kUts, testing::kP3Paper2Gpu, "nbody-20k-hybrid-h100.gpulb",
                           testing::kConnect4Static}) {
    const trace::Trace t = read_recorded(file);
    const TraceModel m(t);  // by value: the model frees its copy's events as it goes
    ASSERT_EQ(m.header().tracks.size(), t.tracks.size()) << file;
    for (std::size_t i = 0; i < t.tracks.size(); ++i) {
      EXPECT_TRUE(m.header().tracks[i].events.empty()) << "the header keeps no events";
      const EventColumns& ev = m.events(i);
      ASSERT_EQ(ev.size(), t.tracks[i].events.size()) << file << " track " << i;
      for (std::size_t j = 0; j < ev.size(); ++j)
        ASSERT_EQ(ev[j], t.tracks[i].events[j]) << file << " track " << i << " event " << j;
    }
    EXPECT_EQ(m.to_trace(), t) << file << ": saving the model writes the trace it was given";
  }
}

TEST(CompactStore, LanesHoldTheTrackTaskSpansIdleSpellsAndMarkers) {
  const trace::Trace t = read_recorded(testing::kUts);
  const TraceModel m(t);
  std::size_t checked = 0;
  for (const Lane& lane : m.lanes()) {
    const trace::Track& tr = t.tracks[lane.track];
    const std::vector<trace::TaskSpan> spans = trace::task_spans(tr);
    ASSERT_EQ(lane.zones.size(), spans.size());
    std::uint64_t busy = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Zone z = lane.zones[i];
      EXPECT_EQ(z.begin_ns, spans[i].begin_ns);
      EXPECT_EQ(z.end_ns, spans[i].end_ns);
      EXPECT_EQ(z.id, spans[i].id);
      EXPECT_EQ(z.kind, spans[i].kind);
      EXPECT_EQ(lane.zones.busy_ns_before(i), busy) << "busy time before task " << i;
      busy += spans[i].end_ns - spans[i].begin_ns;
    }
    EXPECT_EQ(lane.zones.busy_ns(), busy);
    std::vector<trace::Event> markers;
    for (const trace::Event& e : tr.events) {
      if (trace::event_traits(e.kind).marker) markers.push_back(e);
    }
    ASSERT_EQ(lane.markers.size(), markers.size());
    for (std::size_t i = 0; i < markers.size(); ++i) {
      const Marker k = lane.markers[i];
      EXPECT_EQ(k.time_ns, markers[i].time_ns);
      EXPECT_EQ(k.kind, markers[i].kind);
      EXPECT_EQ(k.arg, markers[i].arg);
      EXPECT_EQ(k.aux, markers[i].aux);
    }
    // Idle spells, brute force: from a failed attempt to the next event that ends one.
    std::vector<IdleSpan> idle;
    bool open = false;
    std::uint64_t from = 0;
    for (const trace::Event& e : tr.events) {
      const trace::IdleEdge edge = trace::event_traits(e.kind).idle;
      if (edge == trace::IdleEdge::Starts && !open) {
        open = true;
        from = e.time_ns;
      } else if (edge == trace::IdleEdge::Ends && open) {
        open = false;
        idle.push_back({from, e.time_ns});
      }
    }
    if (open) idle.push_back({from, tr.events.back().time_ns});
    ASSERT_EQ(lane.idle.size(), idle.size());
    for (std::size_t i = 0; i < idle.size(); ++i) {
      EXPECT_EQ(lane.idle.begin_ns(i), idle[i].begin_ns);
      EXPECT_EQ(lane.idle.end_ns(i), idle[i].end_ns);
    }
    ++checked;
  }
  EXPECT_EQ(checked, t.tracks.size());
}

// Building the model on every core: an exception in one item reaches the caller (a hostile
// trace's limit must be an error message, not std::terminate from a worker thread).
TEST(ParallelFor, AnExceptionInOneItemReachesTheCaller) {
  std::vector<std::atomic<int>> ran(1000);
  EXPECT_THROW(parallel_for(ran.size(),
                            [&](std::size_t i) {
                              ran[i].store(1);
                              if (i == 500) throw std::runtime_error("item 500");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran[500].load(), 1);
  // Without a throw every item runs once.
  std::vector<std::atomic<int>> once(1000);
  parallel_for(once.size(), [&](std::size_t i) { once[i].fetch_add(1); });
  for (const auto& c : once) EXPECT_EQ(c.load(), 1);
}

TEST(TimeColumn, KeepsEveryTimeWhenTheySpanMoreThan32Bits) {
  // A CPU run of minutes, and a time before the first (the column must not wrap either way).
  const std::vector<std::uint64_t> times = {
      1'000, 2'000, 4'294'967'295 + 1'000, 4'294'967'295 + 1'001, 600'000'000'000, 500};
  TimeColumn narrow, wide;
  for (std::size_t i = 0; i < 2; ++i) narrow.push_back(times[i]);
  for (const std::uint64_t t : times) wide.push_back(t);
  ASSERT_EQ(wide.size(), times.size());
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_EQ(wide[i], times[i]);
  EXPECT_EQ(narrow[1], 2'000u);
  EXPECT_EQ(narrow.lower_bound(1'500.0), 1u);
  EXPECT_EQ(narrow.upper_bound(2'000.0), 2u);
}

TEST(TimeColumn, FindsTimesPast2To53NsAsTheWholeNumbersTheyAre) {
  // Doubles there are 1024 ns apart: 2^62 + 1000 and 2^62 + 1100 both convert to 2^62 + 1024.
  const std::uint64_t far = std::uint64_t{1} << 62;
  TimeColumn narrow, wide;
  narrow.push_back(far + 1000);
  narrow.push_back(far + 2048);
  EXPECT_EQ(narrow.upper_bound(static_cast<double>(far + 2048)), 2u);
  EXPECT_EQ(narrow.lower_bound(static_cast<double>(far + 2048)), 1u);
  EXPECT_EQ(narrow.lower_bound(static_cast<double>(far + 1024)), 1u)
      << "2^62 + 1000 is before 2^62 + 1024";
  wide.push_back(0);
  wide.push_back(far + 1100);
  EXPECT_EQ(wide.upper_bound(static_cast<double>(far + 1024)), 1u)
      << "2^62 + 1100 is after 2^62 + 1024";
  EXPECT_EQ(wide.upper_bound(0x1p64), 2u);
  EXPECT_EQ(wide.upper_bound(-1.0), 0u);
  EXPECT_EQ(wide.lower_bound(0.5), 1u);
}

TEST(EventColumns, KeepNonZeroFlagsAndLongRuns) {
  std::vector<trace::Event> ev;
  for (std::uint64_t i = 0; i < 100; ++i) {
    trace::Event e =
        trace::make_event(i * 100'000'000, trace::EventKind::Spawn,
                          static_cast<std::uint32_t>(i * 7), static_cast<std::uint16_t>(i));
    e.flags = i == 50 ? 3 : 0;
    ev.push_back(e);
  }
  const EventColumns c(ev);  // 9.9 s: past 32-bit offsets
  ASSERT_EQ(c.size(), ev.size());
  for (std::size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(c[i], ev[i]) << i;
  EXPECT_EQ(c.to_events(), ev);
}

// The integral of a step series over [a, b], point by point.
double brute_integral(const std::vector<StepSeries::Point>& p, double a, double b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double from = std::max(a, static_cast<double>(p[i].time_ns));
    const double to = std::min(b, i + 1 < p.size() ? static_cast<double>(p[i + 1].time_ns) : b);
    if (to > from) sum += static_cast<double>(p[i].value) * (to - from);
  }
  return sum;
}

TEST(StepSeriesSummary, ColumnMeansMinAndMaxEqualABruteForcePass) {
  for (const bool wide_values : {false, true}) {
    std::mt19937_64 rng(wide_values ? 7 : 3);
    std::vector<StepSeries::Point> p;
    std::uint64_t t = 5'000;
    std::int64_t v = 0;
    for (int i = 0; i < 20'000; ++i) {
      t += 1 + rng() % 400;
      v = std::max<std::int64_t>(0, v + static_cast<std::int64_t>(rng() % 9) - 4);
      p.push_back({t, wide_values && i == 10'000 ? (std::int64_t{1} << 40) : v});
    }
    const StepSeries s(p);
    EXPECT_LT(s.size(), p.size()) << "steps to the value already in force are dropped";
    for (std::size_t i = 0; i < p.size(); ++i) {
      ASSERT_EQ(s.value_at(static_cast<double>(p[i].time_ns)), p[i].value) << i;
      if (i + 1 < p.size()) {
        ASSERT_EQ(s.value_at(static_cast<double>(p[i + 1].time_ns) - 0.5), p[i].value) << i;
      }
    }
    // Zoomed out (thousands of points a column), in between, and in (several columns a step).
    for (const double col : {400'000.0, 9'173.5, 37.0}) {
      const double t0 = static_cast<double>(p[300].time_ns) + 11.25;
      const int n = 64;
      for (const bool extremes : {true, false}) {
        const auto cols = s.columns(t0, col, n, extremes);
        for (int c = 0; c < n; ++c) {
          const double a = t0 + c * col, b = a + col;
          const double mean = brute_integral(p, a, b) / col;
          EXPECT_NEAR(cols[static_cast<std::size_t>(c)].mean, mean,
                      1e-6 * std::max(1.0, std::abs(mean)))
              << col << " column " << c;
          if (!extremes) continue;
          std::int64_t lo = s.value_at(a), hi = lo;
          for (const auto& q : p) {
            if (static_cast<double>(q.time_ns) > a && static_cast<double>(q.time_ns) < b) {
              lo = std::min(lo, q.value);
              hi = std::max(hi, q.value);
            }
          }
          EXPECT_EQ(cols[static_cast<std::size_t>(c)].min, lo) << col << " column " << c;
          EXPECT_EQ(cols[static_cast<std::size_t>(c)].max, hi) << col << " column " << c;
        }
      }
      EXPECT_NEAR(s.integral(t0, t0 + n * col), brute_integral(p, t0, t0 + n * col),
                  1e-6 * brute_integral(p, t0, t0 + n * col) + 1e-6);
    }
  }
}

TEST(StepSeriesSummary, CoarseMeansStayWithinTheirBoundOfABruteForcePass) {
  std::mt19937_64 rng(11);
  std::vector<StepSeries::Point> p;
  std::uint64_t t = 1'000;
  std::int64_t v = 0;
  for (int i = 0; i < 50'000; ++i) {
    t += 1 + rng() % 300 + (i % 5000 < 300 ? 20'000 : 0);  // bursts and lulls: uneven buckets
    v = std::clamp<std::int64_t>(v + static_cast<std::int64_t>(rng() % 5) - 2, 0, 32);
    p.push_back({t, v});
  }
  const StepSeries s(p);
  ASSERT_GT(s.bucket_ns(), 0.0);
  const double range = static_cast<double>(s.max_value() - s.min_value());
  const double t0 = static_cast<double>(p[10].time_ns) + 3.5;
  // Wide columns (a whole-run heat map): within the bound; narrow ones: exact.
  for (const double col :
       {StepSeries::kCoarseBuckets * s.bucket_ns(), 100.0 * s.bucket_ns(), 0.5 * s.bucket_ns()}) {
    const int n =
        static_cast<int>(std::min(200.0, (static_cast<double>(p.back().time_ns) - t0) / col));
    const auto coarse = s.coarse_mean_columns(t0, col, n);
    const auto exact = s.columns(t0, col, n, false);
    const double bound =
        col >= StepSeries::kCoarseBuckets * s.bucket_ns() ? range * s.bucket_ns() / (2 * col) : 0.0;
    EXPECT_LE(bound, range / 16 + 1e-9);
    for (int c = 0; c < n; ++c) {
      const double a = t0 + c * col;
      const double brute = brute_integral(p, a, a + col) / col;
      EXPECT_NEAR(exact[static_cast<std::size_t>(c)].mean, brute, 1e-6 * std::max(1.0, brute));
      EXPECT_NEAR(coarse[static_cast<std::size_t>(c)].mean, brute,
                  bound + 1e-6 * std::max(1.0, brute))
          << col << " column " << c;
    }
  }
}

// The counter tracks' columns on a fixed grid: a pan copies what the last frame computed and
// computes the rest; the columns are the ones computed whole.
TEST(StepSeriesSummary, GridColumnsAfterAPanEqualTheColumnsComputedWhole) {
  const TraceModel& m = testing::recorded(testing::kUts);
  ASSERT_FALSE(m.queues().empty());
  int tested = 0;
  for (const QueueSeries& q : m.queues()) {
    const StepSeries& s = q.level;
    if (s.end_ns() <= s.begin_ns()) continue;  // a level set once: no span to split
    ++tested;
    const double origin = static_cast<double>(s.begin_ns()),
                 col = static_cast<double>(s.end_ns() - s.begin_ns()) / 700;
    const GridColumns before = grid_columns(s, origin, col, -20, 600);
    for (const std::int64_t first :
         {std::int64_t{-13}, std::int64_t{9}, std::int64_t{590}, std::int64_t{5000}}) {
      const GridColumns panned = grid_columns(s, origin, col, first, 600, &before);
      const std::vector<StepSeries::Column> whole =
          s.columns(origin + static_cast<double>(first) * col, col, 600);
      ASSERT_EQ(panned.columns.size(), 600u);
      EXPECT_DOUBLE_EQ(panned.t0_ns(), origin + static_cast<double>(first) * col);
      for (std::size_t c = 0; c < 600; ++c) {
        ASSERT_NEAR(panned.columns[c].mean, whole[c].mean, 1e-6 * (1.0 + std::abs(whole[c].mean)))
            << q.label << " column " << c;
        ASSERT_EQ(panned.columns[c].min, whole[c].min) << q.label << " column " << c;
        ASSERT_EQ(panned.columns[c].max, whole[c].max) << q.label << " column " << c;
      }
    }
  }
  EXPECT_GE(tested, 1) << "the deque sum at least";
}

// Loading merges sorted runs (a device's 4,224 deques, a group's lanes) by radix where the runs
// are many: the result is the heap merge's, element for element, ties in run order included.
TEST(MergeSortedRuns, RadixAndHeapGiveTheSameStableOrder) {
  struct Item {
    std::uint64_t time;
    std::uint32_t run, at;
  };
  std::mt19937_64 rng(13);
  for (const std::uint64_t range : {std::uint64_t{50}, std::uint64_t{1} << 22,
                                    std::uint64_t{1} << 45, ~std::uint64_t{0} >> 1}) {
    for (const std::size_t runs : {std::size_t{3}, std::size_t{40}, std::size_t{4224}}) {
      std::vector<Item> v;
      std::vector<std::size_t> bounds{0};
      for (std::uint32_t r = 0; r < runs; ++r) {
        std::vector<std::uint64_t> times(rng() % 24);
        for (auto& t : times) t = 1000 + rng() % range;
        std::sort(times.begin(), times.end());
        for (std::uint32_t i = 0; i < times.size(); ++i) v.push_back({times[i], r, i});
        bounds.push_back(v.size());
      }
      std::vector<Item> heap = v, radix = v, either = v;
      merge_sorted_runs(heap, bounds, [](const Item& a, const Item& b) { return a.time < b.time; });
      radix_sort_by(radix, 0, radix.size(), [](const Item& i) { return i.time; });
      merge_sorted_runs_by_key(either, bounds, [](const Item& i) { return i.time; });
      ASSERT_EQ(heap.size(), v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        ASSERT_EQ(radix[i].time, heap[i].time)
            << "range " << range << ", " << runs << " runs, at " << i;
        ASSERT_EQ(radix[i].run, heap[i].run) << "ties keep their runs' order";
        ASSERT_EQ(radix[i].at, heap[i].at);
        ASSERT_EQ(either[i].run, heap[i].run);
        ASSERT_EQ(either[i].at, heap[i].at);
      }
    }
  }
}

TEST(TiledTrace, RepeatsARealTracesMixAndCompressesLikeARecording) {
  const trace::Trace real = read_recorded(testing::kUts);
  const trace::Trace tiled = make_tiled_trace(real, 2'000'000);
  const std::uint64_t copies = tiled.event_count() / real.event_count();
  EXPECT_EQ(tiled.event_count(), copies * real.event_count());
  EXPECT_GE(copies, 7u);
  std::map<trace::EventKind, std::uint64_t> mix_real, mix_tiled;
  for (const trace::Track& tr : real.tracks) {
    for (const trace::Event& e : tr.events) ++mix_real[e.kind];
  }
  for (const trace::Track& tr : tiled.tracks) {
    ASSERT_TRUE(std::is_sorted(
        tr.events.begin(), tr.events.end(),
        [](const trace::Event& a, const trace::Event& b) { return a.time_ns < b.time_ns; }));
    for (const trace::Event& e : tr.events) ++mix_tiled[e.kind];
  }
  for (const auto& [kind, n] : mix_real)
    EXPECT_EQ(mix_tiled[kind], n * copies) << trace::event_kind_name(kind);
  const trace::TraceStatistics a = trace::compute_statistics(real),
                               b = trace::compute_statistics(tiled);
  EXPECT_EQ(b.tasks, a.tasks * copies) << "every task keeps its pair";
  EXPECT_EQ(b.steals, a.steals * copies);
  const double bytes_per_event = static_cast<double>(trace::encode_trace(tiled).size()) /
                                 static_cast<double>(tiled.event_count());
  EXPECT_GE(bytes_per_event, 2.0);
  EXPECT_LE(bytes_per_event, 5.0);
}

TEST(CompactStore, ATraceWithARealMixTakesUnder32BytesAnEvent) {
  for (const char* file : {testing::kUts, testing::kP3Paper2Gpu}) {
    trace::Trace tiled = make_tiled_trace(read_recorded(file), 2'000'000);
    const double events = static_cast<double>(tiled.event_count());
    const TraceModel m(std::move(tiled));
    EXPECT_LE(static_cast<double>(m.bytes()) / events, 32.0) << file;
  }
}

}  // namespace
}  // namespace gpulb::viewer
