// Fuzz target (a): bytes -> decode_trace under a small memory budget.
// Oracle: whatever the reader accepts, it writes back and reads again to the same trace.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "gpulb/tracing/statistics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulb;
  const std::optional<trace::Trace> t = fuzz::decode(data, size, std::uint64_t{8} << 20);
  if (!t) return 0;
  // A trace the reader accepted is one the writer can write and the reader read back, unchanged.
  const std::vector<std::uint8_t> again = trace::encode_trace(*t, 1);
  trace::ReadLimits generous;
  generous.max_memory = std::uint64_t{256} << 20;
  const trace::Trace back = trace::decode_trace(again, "<re-encoded>", generous);
  GPULB_FUZZ_CHECK(back == *t);
  GPULB_FUZZ_CHECK(back.event_count() == t->event_count());
  return 0;
}
