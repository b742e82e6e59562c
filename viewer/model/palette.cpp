#include "palette.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "heat_scale.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

struct Lab {
  double l, a, b;
};

Lab to_lab(Rgb8 c) {
  auto linear = [](std::uint8_t v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  const double r = linear(c.r), g = linear(c.g), b = linear(c.b);
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
  return {116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))};
}

constexpr NamedColour kEvents[] = {
    {palette::kIdle, "idle"},
    {palette::kSteal, "steal"},
    {palette::kStealAcross, "steal from another GPU"},
    {palette::kSpawn, "spawn"},
    {palette::kHost, "host"},
    {palette::kRankTransfer, "tasks moved between ranks"},
    {palette::kPlayhead, "playhead"},
    {palette::kQueued, "tasks queued"},
    {palette::kBusy, "workers busy"},
    {palette::kChosen, "picked or selected"},
};

// Mid-light tones: vivid enough to tell apart, muted enough to stay clear of the event colours.
constexpr std::array<Rgb8, 8> kKinds = {{{52, 116, 196},
                                         {196, 110, 48},
                                         {46, 150, 104},
                                         {164, 82, 176},
                                         {164, 146, 52},
                                         {44, 146, 158},
                                         {196, 72, 116},
                                         {116, 104, 214}}};

Rgb8 from_hsv(double h, double s, double v) {
  const double i = std::floor(h * 6.0), f = h * 6.0 - i;
  const double p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  double r = v, g = t, b = p;
  switch (static_cast<int>(i) % 6) {
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    case 5: r = v, g = p, b = q; break;
    default: break;
  }
  auto u8 = [](double c) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(c, 0.0, 1.0) * 255.0));
  };
  return {u8(r), u8(g), u8(b)};
}

bool clear_of_events(Rgb8 c) {
  return std::all_of(std::begin(kEvents), std::end(kEvents), [c](const NamedColour& e) {
    return colour_distance(c, e.colour) >= kMinMeaningDistance;
  });
}

}  // namespace

double colour_distance(Rgb8 a, Rgb8 b) {
  const Lab p = to_lab(a), q = to_lab(b);
  return std::sqrt((p.l - q.l) * (p.l - q.l) + (p.a - q.a) * (p.a - q.a) +
                   (p.b - q.b) * (p.b - q.b));
}

Rgb8 kind_colour(std::uint16_t kind) {
  if (kind < kKinds.size()) return kKinds[kind];
  // Golden-ratio steps spread the hues; a step that lands near an event colour moves on to the
  // next one, so kinds beyond the palette keep the rule too (the search ends: most hues at this
  // value are clear of every event colour).
  for (unsigned step = kind;; ++step) {
    const Rgb8 c = from_hsv(std::fmod(0.13 + 0.618034 * step, 1.0), 0.65, 0.72);
    if (clear_of_events(c)) return c;
  }
}

Rgb8 duration_colour(double ns, double lo_ns, double hi_ns) {
  const double a = std::log(std::max(lo_ns, 1.0)), b = std::log(std::max(hi_ns, lo_ns + 1.0));
  const double f = std::clamp((std::log(std::max(ns, 1.0)) - a) / std::max(b - a, 1e-9), 0.0, 1.0);
  static constexpr std::array<Rgb8, 4> kStops = {{kKinds[0], kKinds[5], kKinds[4], kKinds[1]}};
  const double at = f * (kStops.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(at), kStops.size() - 2);
  const double t = at - static_cast<double>(i);
  auto mix = [t](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(std::lround(x + (y - x) * t));
  };
  return {mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g),
          mix(kStops[i].b, kStops[i + 1].b)};
}

std::span<const NamedColour> event_colours() { return kEvents; }

Rgb8 text_on(Rgb8 background) {
  return to_lab(background).l > 62.0 ? Rgb8{20, 20, 25} : Rgb8{245, 245, 248};
}

std::vector<LegendEntry> event_legend(const TraceModel& model) {
  std::vector<LegendEntry> out = {{palette::kIdle, "idle (failed dequeues)"}};
  const trace::TraceStatistics& s = model.stats();
  if (s.steals > 0) out.push_back({palette::kSteal, "steal"});
  if (s.steals > 0 && model.devices().size() > 1)
    out.push_back({palette::kStealAcross, "steal from another GPU"});
  const bool spawns = std::any_of(s.per_worker.begin(), s.per_worker.end(),
                                  [](const trace::WorkerStats& w) { return w.spawned > 0; });
  if (spawns) out.push_back({palette::kSpawn, "spawn"});
  const bool host = std::any_of(model.devices().begin(), model.devices().end(),
                                [](const DeviceGroup& d) { return !d.host_lanes.empty(); });
  if (host) out.push_back({palette::kHost, "host event"});
  if (!model.ranks().empty()) out.push_back({palette::kRankTransfer, "tasks moved between ranks"});
  return out;
}

std::vector<LegendEntry> sm_row_legend() {
  return {{heat_colour(0.25, 0), "1/4 busy"},
          {heat_colour(0.5, 0), "1/2 busy"},
          {heat_colour(1, 0), "all busy"}};
}

}  // namespace gpulb::viewer
