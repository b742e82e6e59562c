#include "gpulb/cpu/trace_stream.hpp"

#include <algorithm>
#include <array>

namespace gpulb::cpu {

std::uint64_t measure_clock_read_ticks() {
  // Back-to-back reads: each difference is one read's cost in ticks. The median, not the least:
  // where a hypervisor traps rdtsc the cost is what a worker pays every time.
  std::array<std::uint64_t, 33> t{};
  for (std::uint64_t& x : t) x = event_ticks();
  std::array<std::uint64_t, 32> d{};
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = t[i + 1] > t[i] ? t[i + 1] - t[i] : 0;
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return std::max<std::uint64_t>(d[d.size() / 2], 1);
}

namespace detail {

namespace {

// The events parse_units makes of the units: the vector is sized once, since growing it past the
// units' count (an untimed task is two events) would hold the old and the new array at once.
std::size_t events_in(const std::uint64_t* units, std::uint32_t count) {
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < count;) {
    switch (static_cast<std::uint8_t>(units[i] >> 56)) {
      case 0:
        if (i + 1 >= count) return n;
        ++n;
        i += 2;
        continue;
      case kUntimedEvent: ++n; break;
      case kUntimedTask: n += 2; break;
      default: return n;
    }
    ++i;
  }
  return n;
}

}  // namespace

void parse_units(const std::uint64_t* units, std::uint32_t count, std::vector<trace::Event>& out) {
  using trace::EventKind;
  out.clear();
  out.reserve(events_in(units, count));
  const auto untimed = [](EventKind k, std::uint32_t arg, std::uint16_t aux) {
    trace::Event e = trace::make_event(0, k, arg, aux);
    e.flags = trace::kTimeInterpolated;
    return e;
  };
  for (std::uint32_t i = 0; i < count;) {
    const std::uint64_t u = units[i];
    const auto arg = static_cast<std::uint32_t>(u);
    const auto aux = static_cast<std::uint16_t>(u >> 32);
    const auto kind = static_cast<EventKind>(static_cast<std::uint8_t>(u >> 48));
    switch (static_cast<std::uint8_t>(u >> 56)) {
      case 0: {
        if (i + 1 >= count) return;
        const std::uint64_t p = units[i + 1];
        out.push_back(
            trace::make_event(u, static_cast<EventKind>(static_cast<std::uint8_t>(p >> 48)),
                              static_cast<std::uint32_t>(p), static_cast<std::uint16_t>(p >> 32)));
        i += 2;
        continue;
      }
      case kUntimedEvent: out.push_back(untimed(kind, arg, aux)); break;
      case kUntimedTask:
        out.push_back(untimed(EventKind::TaskBegin, arg, aux));
        out.push_back(untimed(EventKind::TaskEnd, arg, aux));
        break;
      default: return;  // no writer makes this: stop rather than guess
    }
    ++i;
  }
}

void place_untimed(std::vector<trace::Event>& ev) {
  const auto timed = [](const trace::Event& e) {
    return (e.flags & trace::kTimeInterpolated) == 0;
  };
  std::size_t i = 0;
  // Before the first timed event (no writer starts untimed): the first timed time.
  const auto first = std::find_if(ev.begin(), ev.end(), timed);
  const std::uint64_t t0 = first == ev.end() ? 0 : first->time_ns;
  for (; i < ev.size() && !timed(ev[i]); ++i) ev[i].time_ns = t0;
  while (i < ev.size()) {
    const std::uint64_t ta = ev[i].time_ns;  // ev[i] is timed
    std::size_t j = i + 1;
    std::uint64_t ends = 0;
    for (; j < ev.size() && !timed(ev[j]); ++j) ends += ev[j].kind == trace::EventKind::TaskEnd;
    const bool closed = j < ev.size();
    const std::uint64_t tb = closed ? std::max(ev[j].time_ns, ta) : ta;
    std::uint64_t seen = 0;
    for (std::size_t k = i + 1; k < j; ++k) {
      seen += ev[k].kind == trace::EventKind::TaskEnd;
      ev[k].time_ns = ends == 0 ? ta
                                : ta + static_cast<std::uint64_t>(static_cast<double>(tb - ta) *
                                                                  static_cast<double>(seen) /
                                                                  static_cast<double>(ends));
    }
    i = j;
  }
  // Clock marks (BatchClock::pause) have placed what they had to: they are no events.
  std::erase_if(ev, [](const trace::Event& e) { return e.kind == trace::EventKind::None; });
}

}  // namespace detail

std::vector<trace::Event> expand_stream_ns(const std::uint64_t* units, std::uint32_t count) {
  return expand_stream(units, count, [](std::uint64_t t) { return t; });
}

}  // namespace gpulb::cpu
