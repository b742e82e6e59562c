// The memory estimate before a run (gpulb/memory_estimate.hpp), against a limit the test sets.
#include <gtest/gtest.h>

#include <string>

#include "gpulb/errors.hpp"
#include "gpulb/memory_estimate.hpp"

namespace gpulb {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

std::string refusal(const MemoryEstimate& e, const MemoryLimit& limit) {
  try {
    check_memory(e, limit);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(MemoryEstimate, ARunOverTheLimitIsRefusedNamingItsPartsAndWhatToLower) {
  const MemoryLimit limit{kGiB, "the test's limit", 0};
  const DataSize million{1'000'000, 16'000'000,
                         "blocks"};  // 192 MB of tasks (3 copies of 64 bytes) + 16 MB
  EXPECT_EQ(estimate_memory(million, 0, 1).per_rank(), 208'000'000u);
  EXPECT_EQ(refusal(estimate_memory(million, 0, 1), limit), "");

  const std::string data =
      refusal(estimate_memory({10'000'000, 160'000'000, "blocks"}, 0, 1), limit);
  EXPECT_NE(data.find("for 10000000 initial tasks + "), std::string::npos) << data;
  EXPECT_NE(data.find("more than the 1 GiB of the test's limit; lower --param blocks"),
            std::string::npos)
      << data;

  // A budget that dwarfs the data: the data is not what to lower.
  const std::string trace = refusal(estimate_memory(million, 2 * kGiB, 1), limit);
  EXPECT_NE(trace.find("2 GiB of trace budget), more than"), std::string::npos) << trace;
  EXPECT_NE(trace.find("; lower --trace-memory (or run with --no-trace)"), std::string::npos)
      << trace;
  EXPECT_EQ(trace.find("--param blocks"), std::string::npos) << trace;
}

TEST(MemoryEstimate, RanksOnOneHostShareItsMemory) {
  const MemoryLimit limit{kGiB, "the test's limit", 0};
  const MemoryEstimate one = estimate_memory({1'000'000, 16'000'000, "blocks"}, 128u << 20, 1);
  EXPECT_EQ(refusal(one, limit), "");
  const MemoryEstimate four = estimate_memory({1'000'000, 16'000'000, "blocks"}, 128u << 20, 4);
  EXPECT_EQ(four.total(), 4 * one.per_rank());
  const std::string why = refusal(four, limit);
  EXPECT_NE(why.find("for each of the 4 ranks on this host"), std::string::npos) << why;
  EXPECT_NE(why.find(", or start fewer ranks on this host"), std::string::npos) << why;
}

TEST(MemoryEstimate, DataOverWhatIsAvailableNowIsANoteNotARefusal) {
  const DataSize million{1'000'000, 16'000'000, "blocks"};
  const std::string note =
      check_memory(estimate_memory(million, 0, 1), {kGiB, "the test's limit", 100'000'000});
  EXPECT_NE(note.find("available when it started (MemAvailable)"), std::string::npos) << note;
  // A trace budget over what is available is no note: the trace fills it only as events come.
  EXPECT_EQ(check_memory(estimate_memory({64, 1024, "blocks"}, 512u << 20, 1),
                         {kGiB, "the test's limit", 100'000'000}),
            "");
}

TEST(MemoryEstimate, APartUnderAHundredthOfTheEstimateIsNotNamed) {
  const MemoryLimit limit{kGiB, "the test's limit", 0};
  // connect4's node table at lookahead 8 beside its one root task (192 bytes).
  const std::string why = refusal(estimate_memory({1, 161'414'424, "lookahead"}, 0, 1),
                                  {100u << 20, "the test's limit", 0});
  EXPECT_NE(why.find("needs about 154 MiB of memory (154 MiB of scenario data), more than"),
            std::string::npos)
      << why;
  // Both parts named where each is a share that matters.
  const std::string both =
      refusal(estimate_memory({10'000'000, 160'000'000, "blocks"}, 0, 1), limit);
  EXPECT_NE(both.find("for 10000000 initial tasks + 153 MiB of scenario data"), std::string::npos)
      << both;
}

}  // namespace
}  // namespace gpulb
