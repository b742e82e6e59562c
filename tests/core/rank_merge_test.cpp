// A distributed run's outputs meeting on rank 0 (core/src/rank_merge.cpp), with ranks simulated in
// one process: each "rank" hands its part to a shared mailbox, rank 0 gathers last. No MPI.
#include <gtest/gtest.h>

#include <memory>

#include "gpulb/rank_merge.hpp"

namespace gpulb {
namespace {

struct Mailbox {
  std::vector<std::vector<std::byte>> parts;
};

class FakeRank final : public Distribution {
 public:
  FakeRank(std::shared_ptr<Mailbox> box, std::uint32_t rank, std::uint32_t ranks,
           std::int64_t offset)
      : box_(std::move(box)), rank_(rank), ranks_(ranks), offset_(offset) {
    box_->parts.resize(ranks);
  }
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t ranks() const override { return ranks_; }
  std::int64_t clock_offset_ns() const override { return offset_; }
  std::uint64_t clock_error_ns() const override { return 10 * (rank_ + 1); }
  void balance(HostInserter&) override {}
  std::map<std::string, std::uint64_t> metrics() const override {
    return {{"rank_steals", rank_ + 1}};
  }
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override {
    box_->parts[rank_].assign(mine.begin(), mine.end());
    return rank_ == 0 ? box_->parts : std::vector<std::vector<std::byte>>{};
  }

 private:
  std::shared_ptr<Mailbox> box_;
  std::uint32_t rank_, ranks_;
  std::int64_t offset_;
};

// One rank's output: one CPU device, one worker track with a task at [first_start, first_start + 100].
ExecOutput rank_output(std::uint64_t origin, std::uint64_t first_start, std::uint64_t tasks,
                       std::uint64_t most) {
  ExecOutput out;
  out.origin_ns = origin;
  out.first_start_ns = first_start;
  out.makespan_ns = 100;
  out.tasks_run = tasks;
  out.workers = 1;
  out.metrics = {{"steals", 2}, {"tasks_per_worker_max", most}, {"tasks_per_worker_min", most}};
  out.trace.devices.push_back({trace::DeviceKind::Cpu, 0, "CPU (1 threads)", 2, 1});
  trace::Track w{trace::TrackRole::Worker, 0, 0, trace::Track::kNoSm, "worker 0", 0, {}};
  w.events = {trace::make_event(first_start, trace::EventKind::TaskBegin, 7, 1),
              trace::make_event(first_start + 100, trace::EventKind::TaskEnd, 7, 1)};
  out.trace.tracks.push_back(w);
  return out;
}

TEST(RankMerge, EveryRanksTraceLandsOnRankZerosTimeAxisUnderItsRank) {
  auto box = std::make_shared<Mailbox>();
  // Rank 1's clock runs 100 ns ahead of rank 0's, rank 2's 50 ns behind: aligned origins are
  // 1000, 1500 - 100 = 1400 and 900 + 50 = 950; the merged trace starts at 950.
  FakeRank r0(box, 0, 3, 0), r1(box, 1, 3, 100), r2(box, 2, 3, -50);
  EXPECT_EQ(merge_rank_outputs(r1, rank_output(1500, 5, 30, 30)).tasks_run, 30u)
      << "a rank other than 0 keeps its own output";
  merge_rank_outputs(r2, rank_output(900, 20, 10, 10));
  const ExecOutput m = merge_rank_outputs(r0, rank_output(1000, 10, 60, 60));

  EXPECT_EQ(m.tasks_run, 100u);
  EXPECT_EQ(m.workers, 3u);
  EXPECT_EQ(m.trace.meta.ranks, 3u);
  EXPECT_EQ(m.metrics.at("steals"), 6u);
  EXPECT_EQ(m.metrics.at("rank_steals"), 6u);  // 1 + 2 + 3
  EXPECT_EQ(m.metrics.at("tasks_per_worker_max"), 60u);
  EXPECT_EQ(m.metrics.at("tasks_per_worker_min"), 10u);
  EXPECT_EQ(m.metrics.at("clock_error_ns_max"), 30u);
  ASSERT_EQ(m.trace.devices.size(), 3u);
  ASSERT_EQ(m.trace.tracks.size(), 3u);
  const std::uint64_t shift[3] = {50, 450, 0};
  const std::uint64_t start[3] = {10, 5, 20};
  for (std::uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(m.trace.devices[r].rank, r);
    EXPECT_EQ(m.trace.devices[r].name, "rank " + std::to_string(r) + ": CPU (1 threads)");
    EXPECT_EQ(m.trace.tracks[r].device, r);
    EXPECT_EQ(m.trace.tracks[r].events[0].time_ns, shift[r] + start[r]) << "rank " << r;
  }
  // First start: rank 2 at 0 + 20; last end: rank 1 at 450 + 5 + 100.
  EXPECT_EQ(m.first_start_ns, 20u);
  EXPECT_EQ(m.makespan_ns, 555u - 20u);
}

TEST(RankMerge, RecordsArriveOneArrayARankInRankOrder) {
  auto box = std::make_shared<Mailbox>();
  FakeRank r0(box, 0, 2, 0), r1(box, 1, 2, 0);
  EXPECT_TRUE(gather_records(r1, std::vector<std::uint64_t>{7, 8, 9}).empty());
  const auto all = gather_records(r0, std::vector<std::uint64_t>{1});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(all[1], (std::vector<std::uint64_t>{7, 8, 9}));
}

TEST(RankMerge, ARanksPartThatIsNotWholeRecordsIsRefusedNamingTheRank) {
  auto box = std::make_shared<Mailbox>();
  FakeRank r0(box, 0, 2, 0), r1(box, 1, 2, 0);
  gather_records(r1, std::vector<std::uint8_t>{1, 2, 3});  // 3 bytes where records are 8
  try {
    gather_records(r0, std::vector<std::uint64_t>{1});
    FAIL() << "3 bytes were taken as records of 8";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent 3 bytes"), std::string::npos) << e.what();
  }
}

TEST(RankMerge, ARanksArraysOneAGpuArriveAsEachGpuLeftThem) {
  auto box = std::make_shared<Mailbox>();
  FakeRank r0(box, 0, 2, 0), r1(box, 1, 2, 0);
  using Arrays = std::vector<std::vector<std::uint32_t>>;
  EXPECT_TRUE(gather_record_arrays(r1, Arrays{{7, 8}, {}, {9}}).empty());
  const Arrays all = gather_record_arrays(r0, Arrays{{1, 2, 3}});
  EXPECT_EQ(all, (Arrays{{1, 2, 3}, {7, 8}, {}, {9}}));
}

TEST(RankMerge, RecordArraysLongerThanTheirMessageAreRefusedNamingTheRank) {
  auto box = std::make_shared<Mailbox>();
  FakeRank r0(box, 0, 2, 0), r1(box, 1, 2, 0);
  // Rank 1 claims one array of 2^40 records and sends 4 bytes of them.
  const std::uint64_t head[2] = {1, std::uint64_t{1} << 40};
  std::vector<std::byte> lie(sizeof head + 4);
  std::memcpy(lie.data(), head, sizeof head);
  r1.gather(lie);
  try {
    gather_record_arrays(r0, std::vector<std::vector<std::uint32_t>>{{1}});
    FAIL() << "an array longer than its message was taken";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent 20 bytes, not its record arrays"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpulb
