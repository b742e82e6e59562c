#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <limits>

#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

using gpulb::testing::make_random_trace;
using gpulb::testing::make_trace;

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("gpulb-test-" + std::to_string(::getpid()) + "-" + name);
}

void put_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Expects read_trace to throw a TraceFileError whose message names the file and contains `what`.
void expect_refused(const std::filesystem::path& p, const std::string& what) {
  try {
    read_trace(p);
    FAIL() << "read_trace accepted a bad file (" << what << ")";
  } catch (const TraceFileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// Readers refuse tracks whose time goes backwards (no writer produces them): put the random events
// in time order and keep every other extreme value.
Trace time_ordered(Trace t) {
  for (Track& tr : t.tracks) {
    std::stable_sort(tr.events.begin(), tr.events.end(),
                     [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  }
  return t;
}

TEST(TraceFile, RoundTripIsBitExact) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const Trace original = time_ordered(make_random_trace(seed, 5000));
    const auto bytes = encode_trace(original);
    const Trace decoded = decode_trace(bytes);
    EXPECT_TRUE(decoded == original) << "seed " << seed;
    EXPECT_EQ(encode_trace(decoded), bytes) << "re-encoding changed the bytes, seed " << seed;
  }
}

// A distributed run's trace (docs/distributed.md): the rank above each device and the number of
// ranks survive the file; a one-process trace reads back as one rank, rank 0.
TEST(TraceFile, RanksOfADistributedRunRoundTripAndOneProcessTracesKeepRankZero) {
  Trace one = time_ordered(make_random_trace(4, 100));
  const auto one_bytes = encode_trace(one);
  Trace spread = one;
  spread.meta.ranks = 3;
  spread.devices.push_back(spread.devices.front());
  spread.devices.back().rank = 2;
  const Trace decoded = decode_trace(encode_trace(spread));
  EXPECT_EQ(decoded.meta.ranks, 3u);
  ASSERT_EQ(decoded.devices.size(), spread.devices.size());
  EXPECT_EQ(decoded.devices.back().rank, 2u);
  EXPECT_EQ(decoded.devices.front().rank, 0u);
  EXPECT_TRUE(decoded == spread);
  const Trace plain = decode_trace(one_bytes);
  EXPECT_EQ(plain.meta.ranks, 1u);
  EXPECT_TRUE(plain == one);
  EXPECT_NE(encode_trace(spread), one_bytes);
}

// The policy's own measurements (peak task slots, generations) travel with the trace, for the
// lessons' verdicts; a trace without them reads back without them.
TEST(TraceFile, ThePolicysMetricsRoundTripAndAreAbsentWhereNoneWereRecorded) {
  Trace t = time_ordered(make_random_trace(5, 100));
  const Trace without = decode_trace(encode_trace(t));
  EXPECT_TRUE(without.meta.metrics.empty());
  t.meta.metrics = {{"peak_task_slots", 15546},
                    {"generations", 6},
                    {"huge", std::numeric_limits<std::uint64_t>::max()}};
  const Trace with = decode_trace(encode_trace(t));
  EXPECT_EQ(with.meta.metrics, t.meta.metrics);
  EXPECT_TRUE(with == t);
  EXPECT_FALSE(with == without);
}

TEST(TraceFile, WriteThenReadGivesTheSameTraceAndLeavesNoTemporaryFile) {
  const auto path = temp_path("roundtrip.gpulb");
  const Trace original = make_trace(4, 50, 1000, 7);
  write_trace(path, original);
  EXPECT_TRUE(read_trace(path) == original);
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().string().find(path.filename().string() + ".tmp-"), std::string::npos)
        << entry.path();
  }
  std::filesystem::remove(path);
}

TEST(TraceFile, WritingIntoAMissingDirectoryFailsWithoutAFile) {
  const auto path = temp_path("no-such-dir") / "t.gpulb";
  EXPECT_THROW(write_trace(path, make_trace(1, 1, 1)), OutputPathError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(TraceFile, TruncatedFilesAreRefusedAtEveryLength) {
  const auto bytes = encode_trace(make_trace(2, 20, 100));
  const auto path = temp_path("truncated.gpulb");
  for (std::size_t len : {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{15},
                          std::size_t{23}, bytes.size() / 2, bytes.size() - 1}) {
    put_bytes(path, std::vector<std::uint8_t>(bytes.begin(),
                                              bytes.begin() + static_cast<std::ptrdiff_t>(len)));
    expect_refused(path, len < 8 ? "not a gpulb trace" : "truncated");
  }
  std::filesystem::remove(path);
}

TEST(TraceFile, CorruptedPayloadIsRefused) {
  auto bytes = encode_trace(make_trace(2, 20, 100));
  const auto path = temp_path("corrupt.gpulb");
  for (std::size_t at : {std::size_t{30}, bytes.size() / 2, bytes.size() - 2}) {
    auto damaged = bytes;
    damaged[at] ^= 0x5A;
    put_bytes(path, damaged);
    expect_refused(path, "corrupt");
  }
  std::filesystem::remove(path);
}

TEST(TraceFile, WrongMagicIsRefused) {
  auto bytes = encode_trace(make_trace(1, 1, 1));
  bytes[0] = 'X';
  const auto path = temp_path("magic.gpulb");
  put_bytes(path, bytes);
  expect_refused(path, "not a gpulb trace");
  put_bytes(path, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'});
  expect_refused(path, "not a gpulb trace");
  std::filesystem::remove(path);
}

TEST(TraceFile, FutureVersionIsRefusedWithAnUpgradeHint) {
  auto bytes = encode_trace(make_trace(1, 1, 1));
  const std::uint32_t future = kTraceFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &future, 4);
  const auto path = temp_path("future.gpulb");
  put_bytes(path, bytes);
  expect_refused(path, "newer than this gpulb reads");
  std::filesystem::remove(path);
}

TEST(TraceFile, ATrackWhoseTimeGoesBackwardsIsRefusedNamingTheTrack) {
  Trace t = make_trace(2, 5, 100);
  t.tracks[1].events[4].time_ns = 3;  // worker 1 starts at 0 and is at 100+ by then
  const auto path = temp_path("backwards.gpulb");
  put_bytes(path, encode_trace(t));
  expect_refused(path, "corrupt trace: track 1 (worker 1): event 4's time goes backwards");
  std::filesystem::remove(path);
}

TEST(TraceFile, EqualTimesAreInOrder) {
  const Trace t = make_trace(2, 5, 0);  // every event at the same instant
  EXPECT_TRUE(decode_trace(encode_trace(t)) == t);
}

TEST(TraceFile, MissingFileAndDirectoryAreRefused) {
  expect_refused(temp_path("does-not-exist.gpulb"), "cannot open");
  EXPECT_THROW(read_trace(std::filesystem::temp_directory_path()), TraceFileError);
}

}  // namespace
}  // namespace gpulb::trace
