// Limits for reading untrusted trace files (convention 16: size before trusting).
//
// A .gpulb file comes from anywhere: every length in it is a claim. The reader checks each claim
// against the bytes present, bounds the compressed payload's expansion, and charges what it will
// allocate against a memory budget before allocating it, so a 44-byte file cannot cost 16 GiB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpulb::trace {

struct ReadLimits {
  // Bytes the reader may hold at once: the file, the decompressed payload and the decoded trace.
  std::uint64_t max_memory = 0;  // 0: default_memory_budget()
  // Largest decompressed/compressed size ratio accepted for payloads above kRatioFloor. Recorded
  // traces compress 2:1 to 5:1 (scenarios/traces/*.gpulb), a perfectly periodic hand-made one
  // about 2300:1; 10000:1 comes from a damaged size field (one flipped byte of the frame header
  // claims 4.2 GB from 55 KB) or a decompression bomb (100 M empty events in 19 KB: 42000:1).
  std::uint64_t max_ratio = 10000;
  // small payloads are harmless
  static constexpr std::uint64_t kRatioFloor = std::uint64_t{1} << 20;
  // How long a named pipe may keep the reader waiting for its next bytes (none at all: no writer).
  std::uint32_t pipe_wait_ms = 10'000;

  std::uint64_t budget() const;
};

// A quarter of the physical memory (sysconf), or 1 GiB where that cannot be asked.
std::uint64_t default_memory_budget();

// "512M", "2G", "64K", "1048576", "1.5G" (binary units, an optional trailing "B" or "iB").
// Returns nullopt for anything else, zero included.
std::optional<std::uint64_t> parse_byte_size(const std::string& text);
// 1536 -> "1.5 KiB", for messages.
std::string format_bytes(std::uint64_t bytes);

// Charges allocations against ReadLimits::budget() and refuses, naming the file, before one is made.
class MemoryBudget {
 public:
  MemoryBudget(std::uint64_t limit, const std::string& origin) : limit_(limit), origin_(origin) {}
  // Throws TraceFileError when `bytes` more would exceed the budget; `what` says what needs them.
  void charge(std::uint64_t bytes, const std::string& what);
  std::uint64_t used() const { return used_; }

 private:
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
  const std::string& origin_;
};

// JSON from an untrusted source, parsed only within a nesting depth and a size.
struct BoundedJson {
  std::optional<nlohmann::json> value;  // set when the text parsed within the limits
  std::string refusal;                  // otherwise why not: "nested deeper than 64 levels", ...
};
inline constexpr int kMaxJsonDepth = 64;
BoundedJson parse_json_bounded(const std::string& text, std::size_t max_bytes,
                               int max_depth = kMaxJsonDepth);

// At most `max_chars` of `s` for display, with "... (N bytes in all)" where it was cut.
std::string clip_for_display(const std::string& s, std::size_t max_chars = 200);

}  // namespace gpulb::trace
