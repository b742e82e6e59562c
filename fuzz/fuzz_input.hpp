// What every fuzz target does with its input before its own work (fuzz/README.md).
//
// An input that starts with the trace magic "GPULBTRC" is a whole .gpulb file, decoded as it is:
// header checks, truncation, the zstd frame, its checksum and its size claims.
// Any other input is a decompressed payload (metadata length, metadata JSON, tracks): it is
// wrapped here in a correct header and a checksummed zstd frame first, so that mutations reach the
// payload parser instead of dying at the frame checksum.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "gpulb/tracing/trace_file.hpp"

namespace gpulb::fuzz {

inline bool is_whole_file(const std::uint8_t* data, std::size_t size) {
  return size >= 8 && std::memcmp(data, "GPULBTRC", 8) == 0;
}

// A .gpulb file around `payload` (the layout of trace_file.hpp, version 1).
inline std::vector<std::uint8_t> wrap_payload(const std::uint8_t* payload, std::size_t size) {
  std::vector<std::uint8_t> frame(ZSTD_compressBound(size));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const std::size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), payload, size);
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) __builtin_trap();  // compressing cannot fail on a big enough buffer
  std::vector<std::uint8_t> out;
  out.reserve(24 + n);
  auto put = [&out](const void* p, std::size_t k) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + k);
  };
  const std::uint32_t version = 1, flags = 0;
  const std::uint64_t frame_size = n;
  put("GPULBTRC", 8);
  put(&version, 4);
  put(&flags, 4);
  put(&frame_size, 8);
  put(frame.data(), n);
  return out;
}

inline std::vector<std::uint8_t> trace_bytes(const std::uint8_t* data, std::size_t size) {
  if (is_whole_file(data, size)) return {data, data + size};
  return wrap_payload(data, size);
}

// Decodes under a small memory budget; nullopt where the reader refuses the input (its one
// documented way to fail). Any other exception escapes and is a finding.
inline std::optional<trace::Trace> decode(const std::uint8_t* data, std::size_t size,
                                          std::uint64_t budget) {
  trace::ReadLimits limits;
  limits.max_memory = budget;
  try {
    return trace::decode_trace(trace_bytes(data, size), "<fuzz>", limits);
  } catch (const trace::TraceFileError&) {
    return std::nullopt;
  }
}

// Stops the run, as a crash that the fuzzer saves and the replay test reports.
#define GPULB_FUZZ_CHECK(cond)                                                            \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      __builtin_trap();                                                                   \
    }                                                                                     \
  } while (0)

}  // namespace gpulb::fuzz
