// What writing a trace and summarising it allocate: neither holds a copy the size of the events
// (the encoded columns, zstd's whole output, every task span of a track) beside them, which made a
// traced run's peak 3.5 to 4.4 times its trace budget. allocation_probe.hpp watches every
// allocation of this executable.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "allocation_probe.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

using testing::AllocationProbe;

// Random events in time order: a payload of about 15 MiB that compresses poorly, over several of
// the writer's 1 MiB chunks in every track.
Trace large_random_trace() {
  Trace t = testing::make_random_trace(5, 400'000);
  for (Track& tr : t.tracks) {
    std::stable_sort(tr.events.begin(), tr.events.end(),
                     [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  }
  return t;
}

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TraceMemory, WritingATraceAllocatesNothingNearItsSize) {
  const Trace t = large_random_trace();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("gpulb-trace-memory-" + std::to_string(::getpid()) + ".gpulb");
  std::size_t largest = 0;
  {
    AllocationProbe probe;
    write_trace(path, t);
    largest = probe.largest();
  }
  const std::vector<std::uint8_t> bytes = file_bytes(path);
  std::filesystem::remove(path);
  ASSERT_GT(bytes.size(), std::size_t{8} << 20)
      << "the trace must span several chunks to mean anything";
  EXPECT_LT(largest, std::size_t{4} << 20) << "a file of " << bytes.size() << " bytes";
  EXPECT_TRUE(decode_trace(bytes) == t) << "written in chunks, it must read back whole";
  EXPECT_EQ(encode_trace(t), bytes) << "write_trace and encode_trace write the same bytes";
}

TEST(TraceMemory, StatisticsKeepNoTaskSpansOfATrack) {
  const Trace t = testing::make_trace(1, 1'000'000, 100);  // 1 M tasks on one track: 24 MB of spans
  std::size_t largest = 0;
  std::uint64_t tasks = 0;
  {
    AllocationProbe probe;
    tasks = compute_statistics(t).tasks;
    largest = probe.largest();
  }
  EXPECT_EQ(tasks, 1'000'000u);
  EXPECT_LT(largest, std::size_t{1} << 20);
}

}  // namespace
}  // namespace gpulb::trace
