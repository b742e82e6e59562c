// Multi-GPU traces: the summary listed "NVIDIA H200" twice with no index.
#include <gtest/gtest.h>

#include <set>

#include "device_names.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(DeviceNames, TwoGpusOfOneModelReadApart) {
  const TraceModel& m = testing::recorded(testing::kP3Paper2Gpu);
  ASSERT_EQ(m.header().devices.size(), 2u);
  std::set<std::string> lines;
  for (const trace::Device& d : m.header().devices) lines.insert(device_line(d));
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(device_line(m.header().devices[1]), "GPU 1: NVIDIA H200 (2112 workers, 132 SMs)");
}

TEST(DeviceNames, ACpuKeepsItsName) {
  const trace::Device cpu{trace::DeviceKind::Cpu, 0, "CPU (8 threads)", 8, 8};
  EXPECT_EQ(device_line(cpu), "CPU (8 threads) (8 workers, 8 hw threads)");
}

}  // namespace
}  // namespace gpulb::viewer
