#include "synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "parallel.hpp"

namespace gpulb::viewer {

using trace::EventKind;
using trace::make_event;

namespace {

// splitmix64: small, fast, and the same on every platform.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

constexpr std::uint64_t kTick = 32;  // ns
std::uint64_t ticks(double ns) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ns / kTick)) * kTick;
}

trace::Track worker_track(const SyntheticSpec& spec, std::uint32_t rank, std::uint64_t budget) {
  const std::uint32_t workers = spec.sms * spec.workers_per_sm;
  trace::Track tr;
  tr.role = trace::TrackRole::Worker;
  tr.worker = rank;
  tr.sm = rank % spec.sms;  // blocks are spread round-robin over SMs, as the hardware places them
  tr.name = "block " + std::to_string(rank);
  Rng rng{spec.seed * 1000003 + rank};
  // Some SMs are slower (clock, contention): a visible imbalance for the histograms.
  const double sm_factor = 1.0 + 0.35 * std::sin(static_cast<double>(tr.sm) * 0.7);
  std::uint64_t t = ticks(200.0 + rng.uniform() * 2000.0);
  std::vector<trace::Event>& ev = tr.events;
  ev.reserve(budget + 8);
  ev.push_back(make_event(t, EventKind::WorkerStart, rank, static_cast<std::uint16_t>(tr.sm)));
  std::uint32_t failed = 0;
  std::uint64_t i = 0;
  const std::uint64_t total_tasks = budget / 3 * workers;
  while (ev.size() + 6 < budget) {
    const std::uint32_t id = static_cast<std::uint32_t>(i * workers + rank);
    if (spec.idle && rng.uniform() < 0.03) {  // an idle spell: failed dequeues, then maybe a steal
      ev.push_back(
          make_event(t, EventKind::DequeueFailed, 0, static_cast<std::uint16_t>(rank % 2)));
      failed += 1 + static_cast<std::uint32_t>(rng.uniform() * 20);
      t += ticks(spec.mean_task_ns * (0.5 + 2.0 * rng.uniform()));
      if (rng.uniform() < 0.5) {
        ev.push_back(
            make_event(t, EventKind::Steal, static_cast<std::uint32_t>(rng.next() % workers)));
        t += kTick;
      }
    }
    ev.push_back(make_event(t, EventKind::QueueLevel,
                            static_cast<std::uint32_t>(total_tasks > id ? total_tasks - id : 0) / 2,
                            static_cast<std::uint16_t>(rank % 2)));
    t += kTick;
    const auto kind = static_cast<std::uint16_t>(rng.next() % spec.kinds);
    const double noise = std::exp(0.6 * (rng.uniform() + rng.uniform() + rng.uniform() - 1.5));
    const double duration =
        spec.mean_task_ns * (0.5 + kind) / (0.5 + spec.kinds / 2.0) * noise * sm_factor;
    ev.push_back(make_event(t, EventKind::TaskBegin, id, kind));
    t += ticks(duration);
    if (spec.idle && rng.uniform() < 0.02) ev.push_back(make_event(t - kTick, EventKind::Spawn, 2));
    ev.push_back(make_event(t, EventKind::TaskEnd, id, kind));
    t += kTick;
    ++i;
  }
  ev.push_back(make_event(t, EventKind::Halt));
  ev.push_back(make_event(t + kTick, EventKind::WorkerEnd, failed));
  return tr;
}

}  // namespace

trace::Trace make_synthetic_trace(const SyntheticSpec& spec) {
  trace::Trace t;
  const std::uint32_t workers = spec.sms * spec.workers_per_sm;
  t.meta.scenario = "synthetic";
  t.meta.policy = "work-stealing";
  t.meta.backend = "cuda";
  t.meta.parameters = {{"events", std::to_string(spec.events)},
                       {"seed", std::to_string(spec.seed)}};
  t.meta.workers = workers;
  t.meta.clock_source = "synthetic (32 ns steps)";
  t.meta.gpulb_version = "synthetic";
  t.meta.verified = true;
  t.meta.verification = "generated: nothing to verify";
  t.meta.result_json = "{}";
  t.devices.push_back({trace::DeviceKind::Gpu, 0, "Synthetic GPU", spec.sms, workers});

  const std::uint64_t budget = std::max<std::uint64_t>(12, spec.events / std::max(workers, 1u));
  t.tracks.resize(workers);
  parallel_for(workers, [&](std::size_t w) {
    t.tracks[w] = worker_track(spec, static_cast<std::uint32_t>(w), budget);
  });

  // The host: a batch enqueue into each queue every so often, and the pool draining.
  trace::Track host;
  host.role = trace::TrackRole::Host;
  host.worker = 0;
  host.name = "host producer";
  std::uint64_t end = 0;
  for (const trace::Track& tr : t.tracks) end = std::max(end, tr.events.back().time_ns);
  const int batches = 64;
  for (int b = 0; b < batches; ++b) {
    const std::uint64_t at = ticks(static_cast<double>(end) * b / batches / 2);
    host.events.push_back(
        make_event(at, EventKind::HostEnqueue, 128, static_cast<std::uint16_t>(b % 2)));
    host.events.push_back(make_event(at + kTick, EventKind::PoolLevel,
                                     static_cast<std::uint32_t>((batches - b - 1) * 128)));
  }
  t.tracks.push_back(std::move(host));
  std::uint64_t first = ~0ull, last = 0;
  for (const trace::Track& tr : t.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    first = std::min(first, tr.events.front().time_ns);
    last = std::max(last, tr.events.back().time_ns);
  }
  t.meta.makespan_ns = last - first;
  return t;
}

trace::Trace make_tiled_trace(const trace::Trace& real, std::uint64_t events, std::uint64_t seed) {
  trace::Trace t;
  t.meta = real.meta;
  t.devices = real.devices;
  const std::uint64_t have = real.event_count();
  if (have == 0) return real;
  const std::uint64_t copies = std::max<std::uint64_t>(1, (events + have / 2) / have);
  std::uint64_t first = ~0ull, last = 0, max_id = 0;
  for (const trace::Track& tr : real.tracks) {
    if (tr.events.empty()) continue;
    first = std::min(first, tr.events.front().time_ns);
    last = std::max(last, tr.events.back().time_ns);
    for (const trace::Event& e : tr.events) {
      if (e.kind == EventKind::TaskBegin || e.kind == EventKind::TaskEnd)
        max_id = std::max<std::uint64_t>(max_id, e.arg);
    }
  }
  // Copies 8% longer than the template, so a stretched copy ends before the next begins.
  const std::uint64_t period = (last - first) + (last - first) / 12 + kTick;
  // Each copy renames its task ids by an affine bijection of [0, m) (m prime), as a real run hands
  // ids out in another order: both edges of a task get the same new id.
  auto is_prime = [](std::uint64_t n) {
    if (n < 2) return false;
    for (std::uint64_t d = 2; d * d <= n; ++d) {
      if (n % d == 0) return false;
    }
    return true;
  };
  std::uint64_t m = max_id + 1;
  while (!is_prime(m)) ++m;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rename(copies);
  Rng pick{seed};
  for (auto& [a, b] : rename) {
    a = 1 + pick.next() % (m - 1);
    b = pick.next() % m;
  }
  t.tracks.resize(real.tracks.size());
  parallel_for(real.tracks.size(), [&](std::size_t i) {
    const trace::Track& src = real.tracks[i];
    trace::Track& dst = t.tracks[i];
    dst = src;
    dst.events.clear();
    dst.events.reserve(src.events.size() * copies);
    Rng rng{seed * 7919 + i};
    for (std::uint64_t k = 0; k < copies; ++k) {
      std::uint64_t prev_src = first, prev_dst = first + k * period;
      for (const trace::Event& e : src.events) {
        const std::uint64_t step = e.time_ns - prev_src;
        // +-6% of the step and a tick either way, on the template's 32 ns grid where it is on it.
        std::int64_t jitter =
            static_cast<std::int64_t>((rng.uniform() - 0.5) * 0.12 * static_cast<double>(step)) +
            (static_cast<std::int64_t>(rng.next() % 3) - 1) * static_cast<std::int64_t>(kTick);
        if (step % kTick == 0)
          jitter = jitter / static_cast<std::int64_t>(kTick) * static_cast<std::int64_t>(kTick);
        prev_src = e.time_ns;
        prev_dst += static_cast<std::uint64_t>(
            std::max<std::int64_t>(0, static_cast<std::int64_t>(step) + jitter));
        trace::Event out = e;
        out.time_ns = std::min(prev_dst, first + (k + 1) * period - 1);
        prev_dst = out.time_ns;
        if (e.kind == EventKind::TaskBegin || e.kind == EventKind::TaskEnd) {
          const auto [a, b] = rename[k];
          out.arg = static_cast<std::uint32_t>(k * m + (e.arg * a + b) % m);
        } else if ((e.kind == EventKind::QueueLevel || e.kind == EventKind::DequeLevel) &&
                   e.arg > 0) {
          out.arg = e.arg + static_cast<std::uint32_t>(rng.next() % 3);
        }
        dst.events.push_back(out);
      }
    }
  });
  t.meta.makespan_ns = real.meta.makespan_ns + (copies - 1) * period;
  t.meta.parameters["tiled"] = std::to_string(copies) + " copies";
  return t;
}

}  // namespace gpulb::viewer
