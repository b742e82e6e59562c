// The event-kind table (event_kinds.hpp) against what its readers expect of each kind: the Chrome
// export writes markers as instants and levels as counters, task_spans pairs zone edges, and the
// viewer's idle spells start and end where the table says.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "gpulb/tracing/event_kinds.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace gpulb::trace {
namespace {

// The table is usable where only constant expressions are allowed (device code, static_assert).
static_assert(event_traits(EventKind::TaskBegin).zone == ZoneEdge::Opens);
static_assert(event_traits(EventKind::DequeLevel).level == LevelSource::Deque);

std::vector<EventKind> known_kinds() {
  std::vector<EventKind> out;
  for (int k = 1; k < static_cast<int>(EventKind::Count); ++k)
    out.push_back(static_cast<EventKind>(k));
  return out;
}

std::set<EventKind> kinds_where(bool (*pred)(const EventTraits&)) {
  std::set<EventKind> out;
  for (const EventKind k : known_kinds()) {
    if (pred(event_traits(k))) out.insert(k);
  }
  return out;
}

TEST(EventKinds, EveryKnownKindHasItsOwnName) {
  std::set<std::string> names;
  for (const EventKind k : known_kinds()) {
    const std::string name = event_kind_name(k);
    EXPECT_NE(name, "unknown") << static_cast<int>(k);
    EXPECT_NE(event_traits(k).category, EventCategory::None) << name;
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
  }
  EXPECT_STREQ(event_kind_name(EventKind::TaskBegin), "task_begin");
  EXPECT_STREQ(event_kind_name(EventKind::DequeLevel), "deque_level");
  EXPECT_STREQ(event_kind_name(EventKind::Transfer), "transfer");
  EXPECT_STREQ(event_kind_name(EventKind::RequestSplit), "request_split");
  EXPECT_STREQ(event_kind_name(EventKind::RankSteal), "rank_steal");
  EXPECT_STREQ(event_kind_name(EventKind::RankLend), "rank_lend");
}

TEST(EventKinds, KindsNewerThanThisBuildAreUnknownAndIgnored) {
  for (const int k : {static_cast<int>(EventKind::Count), 200, 255}) {
    const EventTraits t = event_traits(static_cast<EventKind>(k));
    EXPECT_STREQ(t.name, "unknown");
    EXPECT_EQ(t.category, EventCategory::None);
    EXPECT_FALSE(t.marker);
    EXPECT_EQ(t.level, LevelSource::None);
    EXPECT_EQ(t.zone, ZoneEdge::None);
    EXPECT_EQ(t.idle, IdleEdge::None);
  }
}

TEST(EventKinds, OnlyTaskBeginAndEndAreZoneEdges) {
  EXPECT_EQ(kinds_where([](const EventTraits& t) { return t.zone == ZoneEdge::Opens; }),
            std::set<EventKind>{EventKind::TaskBegin});
  EXPECT_EQ(kinds_where([](const EventTraits& t) { return t.zone == ZoneEdge::Closes; }),
            std::set<EventKind>{EventKind::TaskEnd});
}

TEST(EventKinds, IdleStartsAtAFailedAttemptAndEndsAtATaskHaltOrTheEnd) {
  EXPECT_EQ(kinds_where([](const EventTraits& t) { return t.idle == IdleEdge::Starts; }),
            (std::set<EventKind>{EventKind::DequeueFailed, EventKind::StealFailed}));
  EXPECT_EQ(kinds_where([](const EventTraits& t) { return t.idle == IdleEdge::Ends; }),
            (std::set<EventKind>{EventKind::TaskBegin, EventKind::WorkerEnd, EventKind::Halt}));
  // A failed attempt is what the Idle category means.
  EXPECT_EQ(kinds_where([](const EventTraits& t) { return t.category == EventCategory::Idle; }),
            kinds_where([](const EventTraits& t) { return t.idle == IdleEdge::Starts; }));
}

TEST(EventKinds, LevelsAreTheQueueDequeAndPoolKindsAndNoneIsAMarker) {
  const std::map<EventKind, LevelSource> expected = {{EventKind::QueueLevel, LevelSource::Queue},
                                                     {EventKind::DequeLevel, LevelSource::Deque},
                                                     {EventKind::PoolLevel, LevelSource::Pool}};
  for (const EventKind k : known_kinds()) {
    const EventTraits t = event_traits(k);
    const auto it = expected.find(k);
    EXPECT_EQ(t.level, it == expected.end() ? LevelSource::None : it->second) << t.name;
    EXPECT_EQ(t.category == EventCategory::Level, it != expected.end()) << t.name;
    if (t.level != LevelSource::None) {
      EXPECT_FALSE(t.marker) << t.name;
    }
  }
}

TEST(EventKinds, MarkersArePointEventsOfWorkAndHostCategories) {
  const std::set<EventCategory> point = {EventCategory::Idle, EventCategory::Steal,
                                         EventCategory::Spawn, EventCategory::Control,
                                         EventCategory::Host};
  for (const EventKind k : known_kinds()) {
    const EventTraits t = event_traits(k);
    EXPECT_EQ(t.marker, point.count(t.category) == 1) << t.name;
  }
  EXPECT_EQ(
      kinds_where([](const EventTraits& t) { return t.category == EventCategory::Host; }),
      (std::set<EventKind>{EventKind::HostEnqueue, EventKind::KernelLaunch, EventKind::KernelEnd,
                           EventKind::Transfer, EventKind::RequestSplit, EventKind::RankLend}));
}

// One event of every kind on one worker track: the export writes exactly the markers as instants
// (named by the table) and exactly the levels as counters.
TEST(EventKinds, ChromeExportWritesMarkersAsInstantsAndLevelsAsCounters) {
  Trace t;
  t.devices.push_back({DeviceKind::Cpu, 0, "CPU", 1, 1});
  Track tr;
  tr.name = "worker 0";
  std::uint64_t now = 0;
  for (const EventKind k : known_kinds()) tr.events.push_back(make_event(now += 10, k, 5, 2));
  tr.events.push_back(make_event(now += 10, static_cast<EventKind>(200), 5, 2));  // a future kind
  t.tracks.push_back(tr);

  std::ostringstream out;
  write_chrome_json(out, t, {});
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::set<std::string> instants, counters;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "i") instants.insert(e.at("name").get<std::string>());
    if (e.at("ph") == "C") counters.insert(e.at("name").get<std::string>());
  }
  std::set<std::string> markers;
  for (const EventKind k : kinds_where([](const EventTraits& e) { return e.marker; }))
    markers.insert(event_kind_name(k));
  EXPECT_EQ(instants, markers);
  EXPECT_EQ(counters, (std::set<std::string>{"queue 2", "deque 2", "host pool"}));
}

// A spawning task's one event: a SpawnBatch (first child, children) where its children's ids are
// consecutive and their count fits aux, else a count-only Spawn; readers count either once.
TEST(EventKinds, ASpawnIsOneEventNamingItsChildrenWhereItCan) {
  const EventPayload batch = spawn_event(40, 3);
  EXPECT_EQ(batch.kind, EventKind::SpawnBatch);
  EXPECT_EQ(batch.arg, 40u);
  EXPECT_EQ(batch.aux, 3u);
  EXPECT_EQ(spawn_event(40, 0xFFFF).kind, EventKind::SpawnBatch);
  const EventPayload many = spawn_event(40, 0x10000);
  EXPECT_EQ(many.kind, EventKind::Spawn);
  EXPECT_EQ(many.arg, 0x10000u) << "the count is kept whole, not saturated";
  const EventPayload strided = spawn_event(40, 3, false);
  EXPECT_EQ(strided.kind, EventKind::Spawn);
  EXPECT_EQ(strided.arg, 3u);

  EXPECT_EQ(spawn_children(make_event(0, EventKind::SpawnBatch, 40, 3)), 3u);
  EXPECT_EQ(spawn_children(make_event(0, EventKind::Spawn, 7)), 7u);
  EXPECT_EQ(spawn_children(make_event(0, EventKind::TaskBegin, 7, 3)), 0u);
  EXPECT_TRUE(spawn_names_children(make_event(0, EventKind::SpawnBatch, 40, 3)));
  EXPECT_FALSE(spawn_names_children(make_event(0, EventKind::SpawnBatch, 40, 0)));
  EXPECT_FALSE(spawn_names_children(make_event(0, EventKind::Spawn, 7)));
  EXPECT_EQ(event_traits(EventKind::SpawnBatch).category, EventCategory::Spawn);
  EXPECT_EQ(static_cast<int>(EventKind::SpawnBatch), 20) << "a kind's value never changes";
}

TEST(EventKinds, TaskSpansPairTheZoneEdges) {
  Track tr;
  tr.events = {make_event(10, EventKind::TaskBegin, 1, 4), make_event(15, EventKind::Spawn, 2),
               make_event(20, EventKind::TaskEnd, 1, 4),
               make_event(30, EventKind::TaskBegin, 2, 4)};
  const std::vector<TaskSpan> spans = task_spans(tr);
  ASSERT_EQ(spans.size(), 1u) << "a begin without its end is not a task";
  EXPECT_EQ(spans[0].begin_ns, 10u);
  EXPECT_EQ(spans[0].end_ns, 20u);
  EXPECT_EQ(spans[0].kind, 4u);
}

}  // namespace
}  // namespace gpulb::trace
