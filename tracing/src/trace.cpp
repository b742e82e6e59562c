#include "gpulb/tracing/trace.hpp"

#include <cstring>

namespace gpulb::trace {

std::uint64_t Trace::event_count() const {
  std::uint64_t n = 0;
  for (const Track& t : tracks) n += t.events.size();
  return n;
}

std::uint64_t Trace::dropped_count() const {
  std::uint64_t n = 0;
  for (const Track& t : tracks) n += t.dropped;
  return n;
}

bool operator==(const Event& a, const Event& b) { return std::memcmp(&a, &b, sizeof(Event)) == 0; }

bool operator==(const Device& a, const Device& b) {
  return a.kind == b.kind && a.index == b.index && a.name == b.name && a.sm_count == b.sm_count &&
         a.workers == b.workers && a.rank == b.rank;
}

bool operator==(const Track& a, const Track& b) {
  return a.role == b.role && a.device == b.device && a.worker == b.worker && a.sm == b.sm &&
         a.name == b.name && a.dropped == b.dropped && a.events == b.events;
}

bool operator==(const RunMetadata& a, const RunMetadata& b) {
  return a.scenario == b.scenario && a.policy == b.policy && a.backend == b.backend &&
         a.parameters == b.parameters && a.workers == b.workers &&
         a.clock_source == b.clock_source && a.gpulb_version == b.gpulb_version &&
         a.created_utc == b.created_utc && a.verified == b.verified && a.checked == b.checked &&
         a.verification == b.verification && a.result_json == b.result_json &&
         a.makespan_ns == b.makespan_ns && a.ranks == b.ranks && a.metrics == b.metrics;
}

bool operator==(const Trace& a, const Trace& b) {
  return a.meta == b.meta && a.devices == b.devices && a.tracks == b.tracks;
}

}  // namespace gpulb::trace
