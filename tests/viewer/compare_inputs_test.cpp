// Compare's headline puts a ratio on two runs' times only where they ran one input.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compare_inputs.hpp"
#include "findings.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

const trace::RunMetadata& meta(const char* file) { return testing::recorded(file).header().meta; }

// UTS against N-Queens (the grossman lesson's two traces): "B takes 0.25x the time of A" said
// nothing; the headline names the difference instead of a ratio.
TEST(CompareInputs, TwoScenariosAreDifferentInputsAndGetNoRatio) {
  const TraceModel& a = testing::recorded(testing::kUts);
  const TraceModel& b = testing::recorded("nqueens-10-work-stealing-h100.gpulb");
  const InputMatch input = compare_inputs(a.header().meta, b.header().meta);
  EXPECT_FALSE(input.same);
  EXPECT_EQ(input.difference, "uts against nqueens");
  const std::string headline = compare_headline(a, b, input);
  EXPECT_EQ(headline.find("x the time"), std::string::npos) << headline;
  EXPECT_NE(headline.find("on different inputs (uts against nqueens)"), std::string::npos)
      << headline;
}

TEST(CompareInputs, OneScenarioWithOtherParametersIsAnotherInput) {
  // uts d=7 on one GPU against uts d=9 on 4 ranks.
  const InputMatch input = compare_inputs(meta(testing::kUts), meta(testing::kUts4Ranks));
  EXPECT_FALSE(input.same);
  EXPECT_NE(input.difference.find(" against "), std::string::npos) << input.difference;
}

TEST(CompareInputs, PolicyOptionsAreNotTheInput) {
  // chen-fig7: P4 under the hardware scheduler and under the task queue (queue_capacity is B's only).
  const TraceModel& a = testing::recorded("patterns-P4-hardware-h100.gpulb");
  const TraceModel& b = testing::recorded(testing::kP4Queue);
  const InputMatch input = compare_inputs(a.header().meta, b.header().meta);
  EXPECT_TRUE(input.same) << input.difference;
  EXPECT_EQ(compare_headline(a, b, input).rfind("B took ", 0), 0u) << compare_headline(a, b, input);
  // P3 under the paper's and the modern task queue: both name `variant`, a policy option. Told
  // which parameters are the scenario's, it is one input; without, the differing value is taken for input.
  const std::set<std::string> patterns = {"pattern", "blocks", "work", "seed"};
  const auto is_input = [&](const std::string&, const std::string& p) {
    return patterns.contains(p);
  };
  EXPECT_TRUE(
      compare_inputs(meta(testing::kP3Paper2Gpu), meta(testing::kP3Modern2Gpu), is_input).same);
  EXPECT_EQ(compare_inputs(meta(testing::kP3Paper2Gpu), meta(testing::kP3Modern2Gpu)).difference,
            "variant=paper against variant=modern");
}

}  // namespace
}  // namespace gpulb::viewer
