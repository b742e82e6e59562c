// The .gpulb trace file.
//
// Layout (all integers little-endian):
//   magic "GPULBTRC" (8 bytes) | format version u32 | flags u32 (0) | payload size u64 |
//   payload: one zstd frame with a content checksum, holding
//     metadata JSON length u32 | metadata JSON | per track: column streams (see trace_file.cpp)
// The frame checksum catches corruption; the payload size catches truncation.
// Events keep their kind byte as written (event.hpp names the kinds and their payloads): a kind
// added at EventKind's end changes no layout, so the format version stays, every file an older
// build wrote still reads, and an older reader skips the kinds it does not know (event_traits).
// Writers write to "<path>.tmp-<pid>" and rename (safe_write.hpp), so no half file ever carries
// the real name. Readers size every claim in the file before trusting it (trace_limits.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulb/tracing/trace.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb::trace {

inline constexpr std::uint32_t kTraceFormatVersion = 1;

// Thrown for every unreadable file, and for a file refused by the ReadLimits; what() names the file
// and what is wrong with it.
class TraceFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// zstd's level for files (write_trace, encode_trace's default): a third the size of level 1's
// output at about twice its time.
inline constexpr int kTraceZstdLevel = 6;

std::vector<std::uint8_t> encode_trace(const Trace& trace, int zstd_level = kTraceZstdLevel);
Trace decode_trace(std::span<const std::uint8_t> bytes, const std::string& origin = "<memory>",
                   const ReadLimits& limits = {});

// Throws WriteError, or OutputPathError for a path that must not be written (safe_write.hpp).
void write_trace(const std::filesystem::path& path, const Trace& trace);
Trace read_trace(const std::filesystem::path& path, const ReadLimits& limits = {});

}  // namespace gpulb::trace
