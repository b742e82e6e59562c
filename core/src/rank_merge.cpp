#include "gpulb/rank_merge.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <nlohmann/json.hpp>

#include "gpulb/tracing/trace_file.hpp"

namespace gpulb {
namespace {

// What one rank sends: its summary as a JSON object (small, and readable when a test fails),
// then its trace in the .gpulb encoding (zstd columns: a few bytes an event instead of 16).
// [u64 summary length][summary JSON][trace bytes]
std::vector<std::byte> pack(const Distribution& d, const ExecOutput& out) {
  std::map<std::string, std::uint64_t> metrics = out.metrics;
  for (const auto& [k, v] : d.metrics()) metrics[k] += v;
  metrics["clock_error_ns_max"] = d.clock_error_ns();  // merged as a maximum (the _max suffix)
  nlohmann::json s = {{"origin_ns", out.origin_ns},
                      {"clock_offset_ns", d.clock_offset_ns()},
                      {"first_start_ns", out.first_start_ns},
                      {"makespan_ns", out.makespan_ns},
                      {"tasks_run", out.tasks_run},
                      {"tasks_spawned", out.tasks_spawned},
                      {"workers", out.workers},
                      {"notes", out.notes},
                      {"trace_cut_to_budget", out.trace_cut_to_budget},
                      {"metrics", metrics}};
  const std::string text = s.dump();
  // level 1: speed over size
  const std::vector<std::uint8_t> trace = trace::encode_trace(out.trace, 1);
  std::vector<std::byte> bytes(8 + text.size() + trace.size());
  const std::uint64_t n = text.size();
  std::memcpy(bytes.data(), &n, 8);
  std::memcpy(bytes.data() + 8, text.data(), text.size());
  std::memcpy(bytes.data() + 8 + text.size(), trace.data(), trace.size());
  return bytes;
}

struct RankPart {
  nlohmann::json summary;
  trace::Trace trace;
};

RankPart unpack(const std::vector<std::byte>& bytes, std::uint32_t rank) {
  const std::string origin = "rank " + std::to_string(rank);
  std::uint64_t n = 0;
  if (bytes.size() < 8)
    throw RunError(origin + " sent " + std::to_string(bytes.size()) + " bytes, not a run's output");
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8) throw RunError(origin + " sent a summary longer than its message");
  RankPart p;
  try {
    p.summary =
        nlohmann::json::parse(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, n));
  } catch (const nlohmann::json::exception& e) {
    throw RunError(origin + " sent an unreadable summary: " + e.what());
  }
  const auto* t = reinterpret_cast<const std::uint8_t*>(bytes.data()) + 8 + n;
  p.trace = trace::decode_trace(std::span<const std::uint8_t>(t, bytes.size() - 8 - n), origin);
  return p;
}

}  // namespace

ExecOutput merge_rank_outputs(Distribution& d, ExecOutput mine) {
  std::vector<std::vector<std::byte>> all;
  {
    const std::vector<std::byte> packed = pack(d, mine);
    // Rank 0 merges its own trace from what it packed, decoded with the others': its events need
    // not be held twice while the others' arrive.
    if (d.rank() == 0) mine.trace = trace::Trace{};
    all = d.gather(packed);
  }
  if (d.rank() != 0) return mine;

  std::vector<RankPart> parts;
  parts.reserve(all.size());
  for (std::uint32_t r = 0; r < all.size(); ++r) {
    parts.push_back(unpack(all[r], r));
    // the encoded copy is no longer needed: keep one rank's trace in memory twice at most
    all[r] = {};
  }

  // A rank's time t (ns since its origin, on its clock) is origin + t on its clock, and
  // origin + t - offset on rank 0's. The merged trace starts at the earliest rank's origin.
  std::vector<std::int64_t> aligned(parts.size());
  for (std::size_t r = 0; r < parts.size(); ++r) {
    aligned[r] = static_cast<std::int64_t>(parts[r].summary.at("origin_ns").get<std::uint64_t>()) -
                 parts[r].summary.at("clock_offset_ns").get<std::int64_t>();
  }
  const std::int64_t base = *std::min_element(aligned.begin(), aligned.end());

  ExecOutput out;
  out.origin_ns = static_cast<std::uint64_t>(base);
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (std::uint32_t r = 0; r < parts.size(); ++r) {
    const nlohmann::json& s = parts[r].summary;
    const auto shift = static_cast<std::uint64_t>(aligned[r] - base);
    const std::uint64_t start = shift + s.at("first_start_ns").get<std::uint64_t>();
    first = std::min(first, start);
    last = std::max(last, start + s.at("makespan_ns").get<std::uint64_t>());
    out.tasks_run += s.at("tasks_run").get<std::uint64_t>();
    out.tasks_spawned += s.at("tasks_spawned").get<std::uint64_t>();
    out.workers += s.at("workers").get<std::uint32_t>();
    for (const auto& [k, v] : s.at("metrics").items()) {
      // Extremes stay extremes across ranks; everything else is a count and adds up.
      std::uint64_t& m = out.metrics[k];
      const auto x = v.get<std::uint64_t>();
      if (k.ends_with("_max") || k.starts_with("peak_")) {
        m = std::max(m, x);
      } else if (k.ends_with("_min")) {
        m = r == 0 ? x : std::min(m, x);
      } else {
        m += x;
      }
    }
    out.trace_cut_to_budget = out.trace_cut_to_budget || s.value("trace_cut_to_budget", false);
    for (const auto& note : s.at("notes"))
      out.notes.push_back("rank " + std::to_string(r) + ": " + note.get<std::string>());

    trace::Trace& t = parts[r].trace;
    const auto device_base = static_cast<std::uint32_t>(out.trace.devices.size());
    for (trace::Device dev : t.devices) {
      dev.rank = r;
      dev.name = "rank " + std::to_string(r) + ": " + dev.name;
      out.trace.devices.push_back(std::move(dev));
    }
    for (trace::Track& tr : t.tracks) {
      tr.device += device_base;
      for (trace::Event& e : tr.events) e.time_ns += shift;
      out.trace.tracks.push_back(std::move(tr));
    }
  }
  out.first_start_ns = first;
  out.makespan_ns = last > first ? last - first : 0;
  out.trace.meta.ranks = static_cast<std::uint32_t>(parts.size());
  return out;
}

}  // namespace gpulb
