// The viewer's colours, one per meaning: each task kind, each event drawn over the lanes (idle,
// steal, spawn, host, ...), the counters under them and the user's own marks. A task kind never
// shares a colour with an event: every kind is at least kMinMeaningDistance (CIE76 Delta E, about
// "clearly another colour") from every event colour, and the events are as far from each other.
// The kinds are mid-light tones, the events vivid or very light, so both sets fit on a dark
// background. Here, not in the views, so that the rule is a test; draw.hpp converts to ImGui.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpulb::viewer {

class TraceModel;

struct Rgb8 {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(Rgb8, Rgb8) = default;
};

namespace palette {
inline constexpr Rgb8 kIdle{
    235, 45, 45};  // an idle spell and the failed dequeues in it; idle share of an SM row
inline constexpr Rgb8 kSteal{255, 225, 0};         // a steal: lane marks, arrows, SM rows' marks
inline constexpr Rgb8 kStealAcross{255, 60, 230};  // a steal from another GPU's worker
inline constexpr Rgb8 kSpawn{60, 255, 110};        // tasks created by a running task
inline constexpr Rgb8 kHost{165, 200, 255};  // the host: its lanes, launches, enqueues, its pool
inline constexpr Rgb8 kRankTransfer{0, 230, 255};  // a chunk of tasks moved between ranks
inline constexpr Rgb8 kPlayhead{255, 140, 0};      // the replay's instant
inline constexpr Rgb8 kQueued{140, 60, 245};       // tasks waiting in a queue or in the deques
inline constexpr Rgb8 kBusy{178, 180,
                            188};  // workers busy: counter tracks, busy-time bars, an SM row's top
inline constexpr Rgb8 kChosen{255, 255,
                              255};  // what the user chose: the picked task, the selection
// The two runs a lesson sets side by side, in its bars and its key figure (no lane is drawn there).
inline constexpr Rgb8 kRunA{90, 150, 250};
inline constexpr Rgb8 kRunB{240, 185, 100};
// The paper's own figure beside today's bars in a lesson's key figure.
inline constexpr Rgb8 kPaperFigure{240, 110, 220};
}  // namespace palette

inline constexpr double kMinMeaningDistance = 25.0;

// CIE76 Delta E between two sRGB colours (Euclidean distance in CIELAB, D65).
double colour_distance(Rgb8 a, Rgb8 b);

// A kind's colour: a fixed palette of eight, then golden-ratio hues, each kept at least
// kMinMeaningDistance from every event colour.
Rgb8 kind_colour(std::uint16_t kind);

// Colour by duration: a task's duration on a log scale between lo and hi, from blue (short)
// through teal and olive to orange (long): the kinds' tones, so the scale, too, stays clear of
// every event colour.
Rgb8 duration_colour(double ns, double lo_ns, double hi_ns);

struct NamedColour {
  Rgb8 colour;
  const char* meaning;
};
// Every event colour above with what it means (the kinds' colours are kind_colour's).
std::span<const NamedColour> event_colours();

// Colours on zones of kind colours: text that reads on each of them.
Rgb8 text_on(Rgb8 background);

// A legend swatch: a colour and what it means.
struct LegendEntry {
  Rgb8 colour;
  std::string label;
};

// The events the timeline's legend names for this trace, each once: idle always, the others
// where the trace has them (steals, steals across GPUs, spawns, host lanes, ranks).
std::vector<LegendEntry> event_legend(const TraceModel& model);
// The folded SM rows' scale (heat_scale.hpp), each swatch with its share: their idle colour is
// the idle entry of event_legend, their steal marks its steal entry.
std::vector<LegendEntry> sm_row_legend();

}  // namespace gpulb::viewer
