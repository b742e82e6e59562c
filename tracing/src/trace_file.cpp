// The .gpulb file: see trace_file.hpp for the layout.
//
// Each track's events are stored as columns, which zstd compresses far better than 16-byte rows:
//   kinds (u8 each) | flags (u8 each) | aux (u16 each) |
//   time deltas from the previous event (LEB128) | arg deltas from the previous event of the same
//   kind (zigzag LEB128)
// Task ids and queue levels move in small steps per kind, so most deltas fit in one byte.
// The writer streams the columns into zstd a chunk at a time: the payload (6-8 bytes an event) is
// never whole in memory beside the events, only the compressed frame is.
#include "gpulb/tracing/trace_file.hpp"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/trace_limits.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpulb::trace {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'L', 'B', 'T', 'R', 'C'};
constexpr std::size_t kHeaderSize = 8 + 4 + 4 + 8;
// The smallest encoding of one event: kind, flags, aux (4 bytes) and two one-byte varints.
constexpr std::uint64_t kMinEventBytes = 6;
// The smallest encoding of one track: role, device, worker, sm, name length, dropped, count.
constexpr std::uint64_t kMinTrackBytes = 1 + 4 + 4 + 4 + 4 + 8 + 8;
// Run metadata is a few kilobytes; more is a damaged length. Its JSON DOM may take up to this many
// times the text (a value per two characters, vectors grown by doubling).
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{16} << 20;
constexpr std::uint64_t kJsonDomFactor = 16;
// The latest event time a reader accepts: 2^63 - 1 ns, 292 years of a clock.
constexpr std::uint64_t kMaxTimeNs = (std::uint64_t{1} << 63) - 1;

// ---------------------------------------------------------------------------------------------
// Byte streams
// ---------------------------------------------------------------------------------------------

class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v) | 0x80);
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::uint8_t>& bytes() { return out_; }
  void clear() { out_.clear(); }

 private:
  std::vector<std::uint8_t> out_;
};

std::uint64_t varint_size(std::uint64_t v) {
  return v < 0x80 ? 1 : (static_cast<std::uint64_t>(std::bit_width(v)) + 6) / 7;
}

// A zstd frame as blocks of up to kBlock bytes: growing one vector to the frame's size would hold
// it up to twice over while the vector moves (a trace's frame is 2-4 bytes an event).
struct Frame {
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::vector<std::vector<std::uint8_t>> blocks;
  std::uint64_t size() const {
    std::uint64_t n = 0;
    for (const auto& b : blocks) n += b.size();
    return n;
  }
};

// One zstd frame of a payload whose size is known in advance (the reader requires the frame to
// state it), fed a chunk at a time through buffer() and compressed into `frame` as it comes.
class ZstdStream {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;

  ZstdStream(int level, std::uint64_t content_size, Frame& frame)
      : cctx_(ZSTD_createCCtx()), frame_(frame) {
    if (cctx_ == nullptr)
      throw TraceFileError("zstd compression failed: no memory for its context");
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setPledgedSrcSize(cctx_, content_size);
  }
  ~ZstdStream() { ZSTD_freeCCtx(cctx_); }
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;

  ByteWriter& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.bytes().size() >= kChunk) compress(ZSTD_e_continue);
  }
  void finish() { compress(ZSTD_e_end); }

 private:
  // The last block, with room for one call's output.
  std::vector<std::uint8_t>& room() {
    if (frame_.blocks.empty() ||
        frame_.blocks.back().capacity() - frame_.blocks.back().size() < ZSTD_CStreamOutSize()) {
      frame_.blocks.emplace_back().reserve(std::max(Frame::kBlock, ZSTD_CStreamOutSize()));
    }
    return frame_.blocks.back();
  }
  void compress(ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{buffer_.bytes().data(), buffer_.bytes().size(), 0};
    for (;;) {
      std::vector<std::uint8_t>& block = room();
      const std::size_t at = block.size();
      block.resize(block.capacity());
      ZSTD_outBuffer o{block.data() + at, block.size() - at, 0};
      const std::size_t left = ZSTD_compressStream2(cctx_, &o, &in, mode);
      block.resize(at + o.pos);
      if (ZSTD_isError(left))
        throw TraceFileError(std::string("zstd compression failed: ") + ZSTD_getErrorName(left));
      if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0) break;
    }
    buffer_.clear();
  }

  ZSTD_CCtx* cctx_;
  Frame& frame_;
  ByteWriter buffer_;
};

class ByteReader {
 public:
  ByteReader(const std::uint8_t* p, std::size_t n, const std::string& origin)
      : p_(p), end_(p + n), origin_(origin) {}
  std::uint8_t u8() { return take<std::uint8_t>(); }
  std::uint16_t u16() { return take<std::uint16_t>(); }
  std::uint32_t u32() { return take<std::uint32_t>(); }
  std::uint64_t u64() { return take<std::uint64_t>(); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8();
      v |= std::uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail("a malformed variable-length integer");
  }
  std::string str() {
    const std::uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  const std::uint8_t* span(std::size_t n) {
    need(n);
    const std::uint8_t* at = p_;
    p_ += n;
    return at;
  }
  bool at_end() const { return p_ == end_; }
  std::uint64_t remaining() const { return static_cast<std::uint64_t>(end_ - p_); }
  [[noreturn]] void fail(const std::string& what) const {
    throw TraceFileError(origin_ + ": corrupt trace: " + what);
  }

 private:
  template <class T>
  T take() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end_ - p_) < n) fail("the event data ends early");
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  const std::string& origin_;
};

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// ---------------------------------------------------------------------------------------------
// Metadata <-> JSON
// ---------------------------------------------------------------------------------------------

nlohmann::json metadata_to_json(const Trace& t) {
  const RunMetadata& m = t.meta;
  nlohmann::json j = {{"scenario", m.scenario},
                      {"policy", m.policy},
                      {"backend", m.backend},
                      {"parameters", m.parameters},
                      {"workers", m.workers},
                      {"clock_source", m.clock_source},
                      {"gpulb_version", m.gpulb_version},
                      {"created_utc", m.created_utc},
                      {"verified", m.verified},
                      {"checked", m.checked},
                      {"verification", m.verification},
                      {"result_json", m.result_json},
                      {"makespan_ns", m.makespan_ns}};
  j["devices"] = nlohmann::json::array();
  for (const Device& d : t.devices) {
    j["devices"].push_back({{"kind", d.kind == DeviceKind::Gpu ? "gpu" : "cpu"},
                            {"index", d.index},
                            {"name", d.name},
                            {"sm_count", d.sm_count},
                            {"workers", d.workers}});
    // Written only for a distributed run's devices, so that one-process files stay as they were.
    if (d.rank != 0) j["devices"].back()["rank"] = d.rank;
  }
  if (m.ranks != 1) j["ranks"] = m.ranks;
  if (!m.metrics.empty()) j["metrics"] = m.metrics;
  return j;
}

// A metadata field that is not what the reader expects; decode_trace names it in its refusal.
struct BadMetadata {
  std::string what;
};

// An unsigned integer field, refused unless the JSON holds a non-negative integer that fits:
// nlohmann's get<unsigned>() casts whatever number it finds, and casting 1e300 or -1.5 to an
// unsigned type is undefined behaviour (found reviewing the decoder for fuzz/; UBSan reports it on
// fuzz/corpus/decode/repro-decode-float-metadata.bin).
template <class T>
T unsigned_field(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  const bool fits =
      v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::numeric_limits<T>::max()
      : v.is_number_integer()
          ? v.get<std::int64_t>() >= 0 &&
                static_cast<std::uint64_t>(v.get<std::int64_t>()) <= std::numeric_limits<T>::max()
          : false;  // a float, a string, ...
  if (!fits) {
    throw BadMetadata{std::string("\"") + key + "\" is " + clip_for_display(v.dump(), 40) +
                      ", not an integer from 0 to " +
                      std::to_string(std::numeric_limits<T>::max())};
  }
  return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>())
                                : static_cast<T>(v.get<std::int64_t>());
}

void metadata_from_json(const nlohmann::json& j, Trace& t) {
  RunMetadata& m = t.meta;
  m.scenario = j.at("scenario").get<std::string>();
  m.policy = j.at("policy").get<std::string>();
  m.backend = j.at("backend").get<std::string>();
  m.parameters = j.at("parameters").get<std::map<std::string, std::string>>();
  m.workers = unsigned_field<std::uint32_t>(j, "workers");
  m.clock_source = j.at("clock_source").get<std::string>();
  m.gpulb_version = j.at("gpulb_version").get<std::string>();
  m.created_utc = j.at("created_utc").get<std::string>();
  m.verified = j.at("verified").get<bool>();
  // Files written before "checked" existed called every finished run checked.
  m.checked = j.value("checked", true);
  m.verification = j.at("verification").get<std::string>();
  m.result_json = j.at("result_json").get<std::string>();
  m.makespan_ns = unsigned_field<std::uint64_t>(j, "makespan_ns");
  if (j.contains("ranks")) m.ranks = unsigned_field<std::uint32_t>(j, "ranks");
  if (j.contains("metrics")) {
    const nlohmann::json& metrics = j.at("metrics");
    if (!metrics.is_object()) throw BadMetadata{"\"metrics\" is not an object"};
    for (const auto& [name, value] : metrics.items())
      m.metrics[name] = unsigned_field<std::uint64_t>(metrics, name.c_str());
  }
  for (const auto& d : j.at("devices")) {
    Device dev;
    dev.kind = d.at("kind").get<std::string>() == "gpu" ? DeviceKind::Gpu : DeviceKind::Cpu;
    dev.index = unsigned_field<std::uint32_t>(d, "index");
    dev.name = d.at("name").get<std::string>();
    dev.sm_count = unsigned_field<std::uint32_t>(d, "sm_count");
    dev.workers = unsigned_field<std::uint32_t>(d, "workers");
    if (d.contains("rank")) dev.rank = unsigned_field<std::uint32_t>(d, "rank");
    t.devices.push_back(std::move(dev));
  }
}

// ---------------------------------------------------------------------------------------------
// Tracks <-> columns
// ---------------------------------------------------------------------------------------------

// The varint columns' values in the order they are stored: each event's time delta (zigzag, as
// format version 1 stores it), then each event's arg delta from the previous event of its kind.
template <class Fn>
void for_each_varint(const Track& tr, Fn&& fn) {
  std::uint64_t prev_time = 0;
  for (const Event& e : tr.events) {
    fn(zigzag(static_cast<std::int64_t>(e.time_ns - prev_time)));
    prev_time = e.time_ns;
  }
  std::array<std::uint32_t, 256> prev_arg{};
  for (const Event& e : tr.events) {
    std::uint32_t& prev = prev_arg[static_cast<std::uint8_t>(e.kind)];
    fn(zigzag(static_cast<std::int64_t>(e.arg) - static_cast<std::int64_t>(prev)));
    prev = e.arg;
  }
}

// Bytes encode_track writes for `tr`: role, device, worker, sm, name, dropped, count, 4 fixed
// bytes an event and the varints.
std::uint64_t encoded_track_size(const Track& tr) {
  std::uint64_t n =
      1 + 4 + 4 + 4 + 4 + tr.name.size() + 8 + 8 + 4 * std::uint64_t{tr.events.size()};
  for_each_varint(tr, [&n](std::uint64_t v) { n += varint_size(v); });
  return n;
}

// Events between two looks at the stream's buffer: the buffer stays within a chunk and a few
// hundred KiB.
constexpr std::size_t kEventsPerLook = 1 << 15;

void encode_track(const Track& tr, ZstdStream& z) {
  ByteWriter& w = z.buffer();
  w.u8(static_cast<std::uint8_t>(tr.role));
  w.u32(tr.device);
  w.u32(tr.worker);
  w.u32(tr.sm);
  w.str(tr.name);
  w.u64(tr.dropped);
  w.u64(tr.events.size());
  const std::size_t n = tr.events.size();
  auto column = [&](auto&& put) {
    for (std::size_t i = 0; i < n;) {
      const std::size_t end = std::min(n, i + kEventsPerLook);
      for (; i < end; ++i) put(tr.events[i]);
      z.flush_if_full();
    }
  };
  column([&w](const Event& e) { w.u8(static_cast<std::uint8_t>(e.kind)); });
  column([&w](const Event& e) { w.u8(e.flags); });
  column([&w](const Event& e) { w.u16(e.aux); });
  std::size_t written = 0;
  for_each_varint(tr, [&](std::uint64_t v) {
    w.varint(v);
    if (++written % kEventsPerLook == 0) z.flush_if_full();
  });
  z.flush_if_full();
}

Track decode_track(ByteReader& r, std::size_t device_count, std::uint32_t index,
                   MemoryBudget& budget) {
  Track tr;
  const std::uint8_t role = r.u8();
  if (role > static_cast<std::uint8_t>(TrackRole::SmLane))
    r.fail("unknown track role " + std::to_string(role));
  tr.role = static_cast<TrackRole>(role);
  tr.device = r.u32();
  if (tr.device >= device_count)
    r.fail("a track names device " + std::to_string(tr.device) + " that the file does not list");
  tr.worker = r.u32();
  tr.sm = r.u32();
  tr.name = r.str();
  tr.dropped = r.u64();
  const std::uint64_t n = r.u64();
  const std::string label =
      "track " + std::to_string(index) + " (" + clip_for_display(tr.name, 60) + ")";
  if (n > r.remaining() / kMinEventBytes) {
    r.fail(label + " claims " + std::to_string(n) + " events, more than the " +
           std::to_string(r.remaining()) + " bytes left can hold");
  }
  budget.charge(n * sizeof(Event), label + "'s " + std::to_string(n) + " events");
  const std::uint8_t* kinds = r.span(n);
  const std::uint8_t* flags = r.span(n);
  const std::uint8_t* aux = r.span(2 * n);
  tr.events.resize(n);
  std::uint64_t time = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    Event& e = tr.events[i];
    e.kind = static_cast<EventKind>(kinds[i]);
    e.flags = flags[i];
    std::memcpy(&e.aux, aux + 2 * i, 2);
    const std::int64_t delta = unzigzag(r.varint());
    // Every writer emits a track in time order: one thread per track reading a monotonic clock
    // (the GPU's %globaltimer, the host's steady_clock), SM lanes built from blocks that do not
    // overlap, and the CPU backend sorts its tracks. Statistics subtract neighbouring times, so a
    // backwards step would turn into an absurd duration: it can only mean a damaged file.
    // (The column stores signed deltas all the same, as format version 1 always has.)
    if (delta < 0 || time + static_cast<std::uint64_t>(delta) < time) {
      r.fail(label + ": event " + std::to_string(i) +
             "'s time goes backwards (the events must be in time order)");
    }
    // Readers key a time as 2t or 2t+1 (the viewer's busy series): a time from 2^63 ns on (292
    // years) wrapped there and put the series out of order (found reviewing for fuzz/;
    // fuzz_model checks the order).
    if (static_cast<std::uint64_t>(delta) > kMaxTimeNs - time) {
      r.fail(label + ": event " + std::to_string(i) +
             "'s time is past 2^63 ns (a damaged time delta)");
    }
    time += static_cast<std::uint64_t>(delta);
    e.time_ns = time;
  }
  std::array<std::uint32_t, 256> prev_arg{};
  for (Event& e : tr.events) {
    std::uint32_t& prev = prev_arg[static_cast<std::uint8_t>(e.kind)];
    // Modulo 2^32 like the writer's delta, without the signed overflow of adding in int64 (a
    // damaged delta near 2^63 is undefined there; found reviewing the decoder for fuzz/, UBSan on
    // fuzz/corpus/decode/repro-decode-arg-overflow.bin).
    prev += static_cast<std::uint32_t>(static_cast<std::uint64_t>(unzigzag(r.varint())));
    e.arg = prev;
  }
  return tr;
}

// The payload (metadata, tracks) as one zstd frame, its size counted first for the frame header.
Frame compress_trace(const Trace& trace, int zstd_level) {
  const std::string meta = metadata_to_json(trace).dump();
  std::uint64_t payload_size = 4 + meta.size() + 4;
  for (const Track& tr : trace.tracks) payload_size += encoded_track_size(tr);
  Frame frame;
  ZstdStream z(zstd_level, payload_size, frame);
  z.buffer().str(meta);
  z.buffer().u32(static_cast<std::uint32_t>(trace.tracks.size()));
  for (const Track& tr : trace.tracks) encode_track(tr, z);
  z.finish();
  return frame;
}

std::array<std::uint8_t, kHeaderSize> file_header(std::uint64_t frame_size) {
  std::array<std::uint8_t, kHeaderSize> h{};
  const std::uint32_t version = kTraceFormatVersion, flags = 0;
  std::memcpy(h.data(), kMagic, sizeof kMagic);
  std::memcpy(h.data() + 8, &version, 4);
  std::memcpy(h.data() + 12, &flags, 4);
  std::memcpy(h.data() + 16, &frame_size, 8);
  return h;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

std::vector<std::uint8_t> encode_trace(const Trace& trace, int zstd_level) {
  const Frame frame = compress_trace(trace, zstd_level);
  std::vector<std::uint8_t> file;
  file.reserve(kHeaderSize + frame.size());
  const auto header = file_header(frame.size());
  file.insert(file.end(), header.begin(), header.end());
  for (const auto& b : frame.blocks) file.insert(file.end(), b.begin(), b.end());
  return file;
}

Trace decode_trace(std::span<const std::uint8_t> bytes, const std::string& origin,
                   const ReadLimits& limits) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    throw TraceFileError(origin +
                         ": not a gpulb trace (wrong magic; expected a file written by gpulb run)");
  }
  if (bytes.size() < kHeaderSize)
    throw TraceFileError(origin + ": truncated trace: the header is incomplete");
  ByteReader header(bytes.data() + 8, kHeaderSize - 8, origin);
  const std::uint32_t version = header.u32();
  if (version > kTraceFormatVersion) {
    throw TraceFileError(origin + ": trace format version " + std::to_string(version) +
                         " is newer than this gpulb reads (" + std::to_string(kTraceFormatVersion) +
                         "); upgrade gpulb");
  }
  if (version == 0) throw TraceFileError(origin + ": corrupt trace: format version 0");
  header.u32();  // flags
  const std::uint64_t frame_size = header.u64();
  const std::uint64_t present = bytes.size() - kHeaderSize;
  if (frame_size > present) {
    throw TraceFileError(origin + ": truncated trace: " + std::to_string(present) + " of " +
                         std::to_string(frame_size) + " payload bytes present");
  }
  if (frame_size < present)
    throw TraceFileError(origin + ": corrupt trace: unexpected bytes after the payload");

  MemoryBudget budget(limits.budget(), origin);
  budget.charge(bytes.size(), "the file");
  const std::uint8_t* frame = bytes.data() + kHeaderSize;
  const std::size_t frame_bytes = ZSTD_findFrameCompressedSize(frame, frame_size);
  if (ZSTD_isError(frame_bytes)) {
    throw TraceFileError(origin + ": corrupt trace: the compressed payload is damaged (" +
                         ZSTD_getErrorName(frame_bytes) + ")");
  }
  if (frame_bytes != frame_size)
    throw TraceFileError(origin + ": corrupt trace: unexpected bytes after the compressed payload");
  // The frame's content size is a claim: bound it by the ratio and the budget before allocating.
  const unsigned long long raw_size = ZSTD_getFrameContentSize(frame, frame_size);
  if (raw_size == ZSTD_CONTENTSIZE_ERROR || raw_size == ZSTD_CONTENTSIZE_UNKNOWN) {
    throw TraceFileError(origin + ": corrupt trace: the compressed payload's header is damaged");
  }
  if (raw_size > ReadLimits::kRatioFloor && raw_size / limits.max_ratio >= frame_size) {
    throw TraceFileError(origin + ": corrupt trace: the compressed payload of " +
                         std::to_string(frame_size) + " bytes claims to expand to " +
                         std::to_string(raw_size) + " (over " + std::to_string(limits.max_ratio) +
                         ":1): a damaged size field or a decompression bomb");
  }
  budget.charge(raw_size, "the decompressed payload");
  // Not zeroed: every byte is written by the decompression, which must produce exactly raw_size.
  const auto raw = std::make_unique_for_overwrite<std::uint8_t[]>(raw_size);
  const std::size_t got = ZSTD_decompress(raw.get(), raw_size, frame, frame_size);
  if (ZSTD_isError(got) || got != raw_size) {
    throw TraceFileError(origin + ": corrupt trace: the compressed payload fails to decode (" +
                         (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size mismatch") + ")");
  }

  ByteReader r(raw.get(), raw_size, origin);
  Trace trace;
  const std::uint32_t meta_size = r.u32();
  if (meta_size > kMaxMetadataBytes || meta_size > r.remaining()) {
    r.fail("the run metadata claims " + std::to_string(meta_size) + " bytes (at most " +
           std::to_string(std::min<std::uint64_t>(kMaxMetadataBytes, r.remaining())) +
           " possible)");
  }
  budget.charge(std::uint64_t{meta_size} * kJsonDomFactor, "the run metadata");
  const std::uint8_t* meta = r.span(meta_size);
  BoundedJson parsed = parse_json_bounded(
      std::string(reinterpret_cast<const char*>(meta), meta_size), kMaxMetadataBytes);
  if (!parsed.value) r.fail("bad run metadata (" + parsed.refusal + ")");
  try {
    metadata_from_json(*parsed.value, trace);
  } catch (const nlohmann::json::exception& e) {
    r.fail(std::string("bad run metadata (") + e.what() + ")");
  } catch (const BadMetadata& e) {
    r.fail("bad run metadata (" + e.what + ")");
  }
  const std::uint32_t track_count = r.u32();
  if (track_count > r.remaining() / kMinTrackBytes) {
    r.fail("the file claims " + std::to_string(track_count) + " tracks, more than the " +
           std::to_string(r.remaining()) + " bytes left can hold");
  }
  budget.charge(std::uint64_t{track_count} * sizeof(Track), "the track table");
  trace.tracks.reserve(track_count);
  for (std::uint32_t i = 0; i < track_count; ++i) {
    trace.tracks.push_back(decode_track(r, trace.devices.size(), i, budget));
  }
  if (!r.at_end()) r.fail("unexpected bytes after the last track");
  return trace;
}

// The frame's blocks written one after the other: the file is never one buffer in memory.
void write_trace(const std::filesystem::path& path, const Trace& trace) {
  const Frame frame = compress_trace(trace, kTraceZstdLevel);
  const auto header = file_header(frame.size());
  AtomicWrite file(path);
  file.out().write(reinterpret_cast<const char*>(header.data()),
                   static_cast<std::streamsize>(header.size()));
  for (const auto& b : frame.blocks)
    file.out().write(reinterpret_cast<const char*>(b.data()),
                     static_cast<std::streamsize>(b.size()));
  file.commit();
}

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// An open file descriptor, closed on every path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads what `fd` holds, at most `budget` bytes (MemoryBudget names the file past that). A pipe is
// read as it comes, each wait bounded: a pipe with no writer ends the read instead of hanging.
std::vector<std::uint8_t> read_all(int fd, bool pipe, const ReadLimits& limits,
                                   const std::string& name) {
  const std::uint64_t budget = limits.budget();
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> chunk(1 << 16);
  for (;;) {
    if (pipe) {
      pollfd p{fd, POLLIN, 0};
      const int ready =
          ::poll(&p, 1, static_cast<int>(std::min<std::uint32_t>(limits.pipe_wait_ms, 1u << 30)));
      if (ready == 0) {
        throw TraceFileError(name + ": a named pipe that sent nothing for " +
                             std::to_string(limits.pipe_wait_ms) + " ms (no writer?)");
      }
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) throw TraceFileError(name + ": cannot read (" + std::strerror(errno) + ")");
    }
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw TraceFileError(name + ": cannot read (" + std::strerror(errno) + ")");
    if (n == 0) break;
    MemoryBudget(budget, name).charge(bytes.size() + static_cast<std::uint64_t>(n), "the file");
    bytes.insert(bytes.end(), chunk.data(), chunk.data() + n);
    // The magic is the first thing to know: a file that is no trace is refused after 8 bytes,
    // not after reading gigabytes of it.
    if (bytes.size() >= 8 && bytes.size() - static_cast<std::size_t>(n) < 8 &&
        std::memcmp(bytes.data(), kMagic, 8) != 0)
      break;
  }
  return bytes;
}

}  // namespace

Trace read_trace(const std::filesystem::path& path, const ReadLimits& limits) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a named pipe with no writer returns at once instead of waiting forever.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw TraceFileError(name + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    throw TraceFileError(name + ": cannot open (" + std::strerror(errno) + ")");
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !pipe)
    throw TraceFileError(name + ": is " + file_kind(st.st_mode) + ", not a trace file");
  if (!pipe) {
    MemoryBudget(limits.budget(), name).charge(static_cast<std::uint64_t>(st.st_size), "the file");
    // A regular file reads in blocking mode (O_NONBLOCK means nothing to it, but say what we mean).
    ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  }
  return decode_trace(read_all(f.fd, pipe, limits, name), name, limits);
}

}  // namespace gpulb::trace
