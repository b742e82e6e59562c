// What the fuzz targets (fuzz/, docs/reliability.md) found, pinned as unit tests beside the
// reproducers in fuzz/corpus/ that `make test` replays under ASan+UBSan.
#include <gtest/gtest.h>

#include <zstd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes payload_of(const Bytes& file) {
  const Bytes frame(file.begin() + 24, file.end());
  Bytes raw(ZSTD_getFrameContentSize(frame.data(), frame.size()));
  raw.resize(ZSTD_decompress(raw.data(), raw.size(), frame.data(), frame.size()));
  return raw;
}

Bytes wrap(const Bytes& raw) {
  Bytes frame(ZSTD_compressBound(raw.size()));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 1));
  Bytes out(24 + frame.size());
  const std::uint32_t version = 1, flags = 0;
  const std::uint64_t size = frame.size();
  std::memcpy(out.data(), "GPULBTRC", 8);
  std::memcpy(out.data() + 8, &version, 4);
  std::memcpy(out.data() + 12, &flags, 4);
  std::memcpy(out.data() + 16, &size, 8);
  std::memcpy(out.data() + 24, frame.data(), frame.size());
  return out;
}

std::string refusal(const Bytes& bytes) {
  try {
    decode_trace(bytes, "found.gpulb");
    return "";
  } catch (const TraceFileError& e) {
    return e.what();
  }
}

// The payload of `t` with one metadata field replaced by raw JSON text.
Bytes with_metadata_field(const Trace& t, const std::string& key, const std::string& json_value) {
  const Bytes raw = payload_of(encode_trace(t));
  std::uint32_t n = 0;
  std::memcpy(&n, raw.data(), 4);
  nlohmann::json meta = nlohmann::json::parse(raw.begin() + 4, raw.begin() + 4 + n);
  meta[key] = nullptr;
  std::string text = meta.dump();
  const std::string placeholder = "\"" + key + "\":null";
  text.replace(text.find(placeholder), placeholder.size(), "\"" + key + "\":" + json_value);
  Bytes out(4);
  const auto len = static_cast<std::uint32_t>(text.size());
  std::memcpy(out.data(), &len, 4);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), raw.begin() + 4 + n, raw.end());
  return wrap(out);
}

TEST(FuzzFindings, ATrackNameThatIsNotUtf8IsExportedWithAReplacementCharacter) {
  Trace t = testing::make_trace(2, 2, 10);
  t.tracks[0].name = "block \x95\xff";
  const Trace back = decode_trace(encode_trace(t));
  std::ostringstream chrome, workers;
  write_chrome_json(chrome, back);
  write_workers_csv(workers, back);
  EXPECT_TRUE(nlohmann::json::accept(chrome.str()));
  EXPECT_NE(chrome.str().find("block \xEF\xBF\xBD"), std::string::npos);
  EXPECT_NE(workers.str().find("\"block \xEF\xBF\xBD"), std::string::npos) << workers.str();
}

TEST(FuzzFindings, AMetadataIntegerThatIsAFloatOrNegativeOrTooLargeIsRefusedNamingIt) {
  const Trace t = testing::make_trace(1, 1, 10);
  EXPECT_NE(refusal(with_metadata_field(t, "makespan_ns", "-1.5e30"))
                .find("bad run metadata (\"makespan_ns\" is -1.5e+30"),
            std::string::npos)
      << refusal(with_metadata_field(t, "makespan_ns", "-1.5e30"));
  EXPECT_NE(refusal(with_metadata_field(t, "workers", "1e300"))
                .find("\"workers\" is 1e+300, not an integer from 0 to 4294967295"),
            std::string::npos);
  EXPECT_NE(
      refusal(with_metadata_field(t, "workers", "4294967296")).find("\"workers\" is 4294967296"),
      std::string::npos);
  EXPECT_NE(refusal(with_metadata_field(t, "makespan_ns", "-1")).find("\"makespan_ns\" is -1"),
            std::string::npos);
  EXPECT_EQ(refusal(with_metadata_field(t, "makespan_ns", "18446744073709551615")), "");
}

TEST(FuzzFindings, AnEventTimeFromTwoToTheSixtyThirdNanosecondsOnIsRefused) {
  Trace t = testing::make_trace(1, 1, 10);
  std::vector<Event>& ev = t.tracks[0].events;
  ev.back().time_ns = (std::uint64_t{1} << 63) + 5;  // two forward steps, each under 2^63
  ev[ev.size() - 2].time_ns = std::uint64_t{1} << 62;
  const std::string msg = refusal(encode_trace(t));
  EXPECT_NE(msg.find("track 0 (worker 0): event 4's time is past 2^63 ns"), std::string::npos)
      << msg;
  ev.back().time_ns = (std::uint64_t{1} << 63) - 1;  // the last time a reader accepts
  EXPECT_EQ(refusal(encode_trace(t)), "");
}

}  // namespace
}  // namespace gpulb::trace
