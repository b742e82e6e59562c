// Hostile trace files: every claim in a file is sized before anything is allocated.
//
// allocation_probe.hpp watches every allocation of this executable.
#include <gtest/gtest.h>

#include <zstd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "gpulb/tracing/trace_file.hpp"
#include "gpulb/tracing/trace_limits.hpp"
#include "allocation_probe.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

using testing::AllocationProbe;

using Bytes = std::vector<std::uint8_t>;

Bytes with_header(const Bytes& frame) {
  Bytes out = {'G', 'P', 'U', 'L', 'B', 'T', 'R', 'C', 1, 0, 0, 0, 0, 0, 0, 0};
  const std::uint64_t size = frame.size();
  const auto* s = reinterpret_cast<const std::uint8_t*>(&size);
  out.insert(out.end(), s, s + 8);
  out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

Bytes compress(const Bytes& raw) {
  Bytes frame(ZSTD_compressBound(raw.size()));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 3));
  return frame;
}

// The decompressed payload of an encoded trace, to damage and re-wrap.
Bytes payload_of(const Bytes& file) {
  const Bytes frame(file.begin() + 24, file.end());
  Bytes raw(ZSTD_getFrameContentSize(frame.data(), frame.size()));
  raw.resize(ZSTD_decompress(raw.data(), raw.size(), frame.data(), frame.size()));
  return raw;
}

// Offset of the first track's u64 event count in a payload.
std::size_t first_track_count_at(const Bytes& raw) {
  std::uint32_t meta = 0, name = 0;
  std::memcpy(&meta, raw.data(), 4);
  const std::size_t track = 4 + meta + 4;
  std::memcpy(&name, raw.data() + track + 13, 4);
  return track + 13 + 4 + name + 8;
}

// decode_trace's message, or "" where it accepted the bytes.
std::string refusal(const Bytes& bytes, const ReadLimits& limits = {}) {
  try {
    decode_trace(bytes, "hostile.gpulb", limits);
    return "";
  } catch (const TraceFileError& e) {
    return e.what();
  }
}

// read_trace's message for `path`, or "" where it read a trace.
std::string read_refusal(const std::filesystem::path& path, const ReadLimits& limits = {}) {
  try {
    read_trace(path, limits);
    return "";
  } catch (const TraceFileError& e) {
    return e.what();
  }
}

// A device is no trace file: /dev/zero was read whole (2.1 GB, 5-14 s) before the magic check,
// then ended in std::bad_alloc. It is refused at once, naming the file and what it is.
TEST(HostileTrace, DevicesAreRefusedBeforeAnyRead) {
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string why = read_refusal(device);
    EXPECT_NE(why.find(std::string(device) + ": is a character device, not a trace file"),
              std::string::npos)
        << why;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << device;
  }
}

// A large file that is no trace is refused on its first bytes, not read whole first.
TEST(HostileTrace, ALargeFileWithoutTheMagicIsRefusedOnItsFirstBytes) {
  const auto path =
      std::filesystem::temp_directory_path() / ("gpulb-hostile-big-" + std::to_string(::getpid()));
  { std::ofstream(path) << "not a trace"; }
  std::filesystem::resize_file(path,
                               std::uint64_t{64} << 20);  // sparse: 64 MiB of zeros after the text
  AllocationProbe probe;
  const std::string why = read_refusal(path);
  const std::size_t largest = probe.largest();
  std::filesystem::remove(path);
  EXPECT_NE(why.find("wrong magic"), std::string::npos) << why;
  EXPECT_LT(largest, std::size_t{1} << 20) << "read in 64 KiB pieces and stopped at the magic";
}

// A named pipe without a writer blocked info, export and the viewer forever in open(). It is
// opened without waiting, and a pipe that sends nothing is refused after pipe_wait_ms; one that
// sends a trace is read.
TEST(HostileTrace, ANamedPipeIsReadWithATimeLimit) {
  const auto fifo =
      std::filesystem::temp_directory_path() / ("gpulb-hostile-fifo-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ReadLimits quick;
  quick.pipe_wait_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  const std::string why = read_refusal(fifo, quick);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(why.find(fifo.string() + ": a named pipe that sent nothing for 200 ms"),
            std::string::npos)
      << why;

  const Trace t = gpulb::testing::make_trace(2, 50, 100);
  const Bytes bytes = encode_trace(t);
  std::signal(SIGPIPE,
              SIG_IGN);  // a writer that met a reader between two attempts must not end the test
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);  // blocks until the reader opens its end
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  });
  Trace got;
  for (int attempt = 0; attempt < 50 && got.tracks.empty(); ++attempt) {
    try {
      got = read_trace(fifo, quick);
    } catch (const TraceFileError&) {  // opened before the writer: no writer yet, read again
    }
  }
  writer.join();
  std::filesystem::remove(fifo);
  EXPECT_TRUE(got == t);
}

TEST(HostileTrace, AFrameClaimingSixteenGibibytesIsRefusedWithoutAllocatingThem) {
  // A zstd frame header (single segment, 8-byte content size of 16 GiB) and one empty raw block.
  Bytes frame = {0x28, 0xB5, 0x2F, 0xFD, 0xE0};
  const std::uint64_t claim = std::uint64_t{16} << 30;
  const auto* c = reinterpret_cast<const std::uint8_t*>(&claim);
  frame.insert(frame.end(), c, c + 8);
  frame.insert(frame.end(), {0x01, 0x00, 0x00});
  const Bytes file = with_header(frame);
  ASSERT_LT(file.size(), 64u);
  AllocationProbe probe;
  const std::string msg = refusal(file);
  EXPECT_NE(msg.find("hostile.gpulb: corrupt trace"), std::string::npos) << msg;
  EXPECT_NE(msg.find("claims to expand to 17179869184"), std::string::npos) << msg;
  EXPECT_LT(probe.largest(), std::size_t{1} << 20);
}

TEST(HostileTrace, AFlippedContentSizeByteIsRefusedWithoutALargeAllocation) {
  const Bytes good = encode_trace(testing::make_trace(8, 2000, 1000, 13));
  ASSERT_GT(payload_of(good).size(), 65791u) << "the frame must carry a 4-byte content size";
  for (std::size_t at = 24; at < 40; ++at) {  // magic, frame header, content size, first block
    Bytes bad = good;
    bad[at] ^= 0xFF;
    AllocationProbe probe;
    const std::string msg = refusal(bad);
    EXPECT_NE(msg.find("hostile.gpulb: corrupt trace"), std::string::npos)
        << "byte " << at << ": " << msg;
    EXPECT_LT(probe.largest(), 4 * good.size() + (std::size_t{4} << 20)) << "byte " << at;
  }
  Bytes high = good;  // the case: the top byte of the content size
  high[32] ^= 0xFF;
  EXPECT_NE(refusal(high).find("a damaged size field or a decompression bomb"), std::string::npos)
      << refusal(high);
}

TEST(HostileTrace, ADecompressionBombIsRefusedByTheRatio) {
  trace::Trace t = testing::make_trace(1, 1, 1);
  t.tracks[0].events.assign(2'000'000, make_event(5, EventKind::DequeueFailed));
  const Bytes bomb = encode_trace(t);
  ASSERT_LT(bomb.size(), 12'000'000u / 10000) << "12 MB of payload must compress over 10000:1";
  AllocationProbe probe;
  const std::string msg = refusal(bomb);
  EXPECT_NE(msg.find("decompression bomb"), std::string::npos) << msg;
  EXPECT_LT(probe.largest(), std::size_t{1} << 20);
}

TEST(HostileTrace, AValidTraceOverTheMemoryBudgetIsRefusedNamingFileAndBudget) {
  // 240 K events, 3.8 MiB decoded. So regular a trace compresses 2262:1, which the ratio bound
  // accepts: only the budget stops it.
  const trace::Trace t = testing::make_trace(4, 20000, 1000, 17);
  const Bytes file = encode_trace(t);
  ReadLimits limits;
  limits.max_memory = std::uint64_t{1} << 20;
  {
    AllocationProbe probe;
    const std::string msg = refusal(file, limits);
    EXPECT_NE(msg.find("hostile.gpulb: refusing to read"), std::string::npos) << msg;
    EXPECT_NE(msg.find("memory budget of 1 MiB"), std::string::npos) << msg;
    EXPECT_LT(probe.largest(), std::size_t{1} << 20);
  }
  limits.max_memory = std::uint64_t{64} << 20;
  EXPECT_TRUE(decode_trace(file, "ok", limits) == t);
}

TEST(HostileTrace, ABombWithinTheRatioIsRefusedByTheBudget) {
  trace::Trace t = testing::make_trace(1, 1, 1);
  t.tracks[0].events.assign(2'000'000, make_event(5, EventKind::DequeueFailed));
  ReadLimits limits;
  limits.max_ratio = 1'000'000;
  limits.max_memory = std::uint64_t{4} << 20;
  const Bytes bomb = encode_trace(t);
  AllocationProbe probe;
  const std::string msg = refusal(bomb, limits);
  EXPECT_NE(msg.find("the decompressed payload needs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memory budget of 4 MiB"), std::string::npos) << msg;
  EXPECT_LT(probe.largest(), std::size_t{1} << 20);
}

TEST(HostileTrace, AnEventCountBeyondThePayloadIsRefused) {
  Bytes raw = payload_of(encode_trace(testing::make_trace(1, 3, 10)));
  const std::uint64_t huge = std::uint64_t{1} << 62;  // 2 * count wraps to 0 in a naive check
  std::memcpy(raw.data() + first_track_count_at(raw), &huge, 8);
  AllocationProbe probe;
  const std::string msg = refusal(with_header(compress(raw)));
  EXPECT_NE(msg.find("track 0 (worker 0) claims 4611686018427387904 events"), std::string::npos)
      << msg;
  EXPECT_LT(probe.largest(), std::size_t{1} << 20);
}

TEST(HostileTrace, ATrackCountBeyondThePayloadIsRefused) {
  Bytes raw = payload_of(encode_trace(testing::make_trace(1, 3, 10)));
  std::uint32_t meta = 0;
  std::memcpy(&meta, raw.data(), 4);
  const std::uint32_t huge = 0xFFFFFFFFu;
  std::memcpy(raw.data() + 4 + meta, &huge, 4);
  const std::string msg = refusal(with_header(compress(raw)));
  EXPECT_NE(msg.find("claims 4294967295 tracks"), std::string::npos) << msg;
}

TEST(HostileTrace, DeeplyNestedMetadataIsRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Bytes raw(4);
  const std::uint32_t n = static_cast<std::uint32_t>(deep.size());
  std::memcpy(raw.data(), &n, 4);
  raw.insert(raw.end(), deep.begin(), deep.end());
  raw.insert(raw.end(), {0, 0, 0, 0});
  const std::string msg = refusal(with_header(compress(raw)));
  EXPECT_NE(msg.find("bad run metadata (nested deeper than 64 levels)"), std::string::npos) << msg;
}

TEST(ReadLimits, ByteSizesParse) {
  EXPECT_EQ(parse_byte_size("512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_byte_size("2G"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("2GiB"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("64k"), std::uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_size("1.5G"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  for (const char* bad : {"", "G", "0", "-1M", "12X", "1..2G", "1e9", "99999999999T"}) {
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
  }
  EXPECT_GT(default_memory_budget(), std::uint64_t{1} << 20);
}

TEST(ReadLimits, JsonIsParsedOnlyWithinDepthAndSize) {
  EXPECT_EQ(parse_json_bounded(R"({"a":[1,2]})", 100).value->at("a").size(), 2u);
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(parse_json_bounded(ok, 1000).value);
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  EXPECT_EQ(parse_json_bounded(deep, 1000).refusal, "nested deeper than 64 levels");
  EXPECT_NE(parse_json_bounded(R"({"a":1})", 3).refusal.find("larger than 3 bytes"),
            std::string::npos);
  EXPECT_NE(parse_json_bounded("{nope", 100).refusal.find("not valid JSON"), std::string::npos);
}

TEST(ReadLimits, ClippingKeepsWholeUtf8Characters) {
  EXPECT_EQ(clip_for_display("short", 10), "short");
  const std::string clipped = clip_for_display(
      "ab\xC3\xA9"
      "cd",
      3);  // cut inside the e-acute
  EXPECT_EQ(clipped.substr(0, 3), "ab.");
}

}  // namespace
}  // namespace gpulb::trace
