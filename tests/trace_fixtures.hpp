// Traces built by hand for tests: known events, known answers.
#pragma once

#include <cstdint>
#include <random>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::testing {

// `workers` worker tracks on one CPU device plus a host track; worker w runs `tasks_per_worker`
// tasks of `task_ns` each back to back starting at w * stagger_ns, with a queue level after each.
inline trace::Trace make_trace(std::uint32_t workers, std::uint32_t tasks_per_worker,
                               std::uint64_t task_ns, std::uint64_t stagger_ns = 0) {
  using trace::EventKind;
  trace::Trace t;
  t.meta.scenario = "handmade";
  t.meta.policy = "task-queue";
  t.meta.backend = "cpu";
  t.meta.parameters = {{"blocks", "12"}, {"pattern", "P1"}};
  t.meta.workers = workers;
  t.meta.clock_source = "steady_clock";
  t.meta.gpulb_version = "test";
  t.meta.created_utc = "2026-01-01T00:00:00Z";
  t.meta.verified = true;
  t.meta.verification = "by hand";
  t.meta.result_json = R"({"answer":42})";
  t.devices.push_back({trace::DeviceKind::Cpu, 0, "CPU (test)", 4, workers});
  std::uint32_t id = 0;
  for (std::uint32_t w = 0; w < workers; ++w) {
    trace::Track tr;
    tr.worker = w;
    tr.name = "worker " + std::to_string(w);
    std::uint64_t now = w * stagger_ns;
    tr.events.push_back(trace::make_event(now, EventKind::WorkerStart, w, trace::kUnknownSm));
    for (std::uint32_t k = 0; k < tasks_per_worker; ++k, ++id) {
      tr.events.push_back(trace::make_event(now, EventKind::QueueLevel, 100 - id, 0));
      tr.events.push_back(trace::make_event(now, EventKind::TaskBegin, id, 3));
      now += task_ns;
      tr.events.push_back(trace::make_event(now, EventKind::TaskEnd, id, 3));
    }
    tr.events.push_back(trace::make_event(now, EventKind::WorkerEnd, 7));
    t.tracks.push_back(std::move(tr));
  }
  trace::Track host;
  host.role = trace::TrackRole::Host;
  host.name = "host producer";
  host.events.push_back(trace::make_event(0, EventKind::HostEnqueue, 128, 1));
  t.tracks.push_back(std::move(host));
  return t;
}

// Random events with extreme values in every field, for the bit-exact round trip.
inline trace::Trace make_random_trace(std::uint32_t seed, std::size_t events_per_track) {
  trace::Trace t = make_trace(3, 2, 10);
  std::mt19937_64 rng(seed);
  for (trace::Track& tr : t.tracks) {
    tr.dropped = rng() % 5;
    tr.sm = static_cast<std::uint32_t>(rng());
    std::uint64_t now = rng() >> 8;
    for (std::size_t i = 0; i < events_per_track; ++i) {
      now += rng() % 3 == 0 ? rng() % 1000000 : rng() % 64;
      trace::Event e{};
      e.time_ns = i % 97 == 5 ? now - (rng() % 1000) : now;  // unsorted times must survive too
      e.arg = static_cast<std::uint32_t>(rng());
      e.aux = static_cast<std::uint16_t>(rng());
      e.kind = static_cast<trace::EventKind>(rng() % 256);
      e.flags = static_cast<std::uint8_t>(rng());
      tr.events.push_back(e);
    }
  }
  return t;
}

}  // namespace gpulb::testing
