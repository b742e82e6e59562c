#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <imgui.h>
#include <malloc.h>

#include "app.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "platform.hpp"
#include "synthetic.hpp"

namespace gpulb::viewer {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// CPU time of the whole process (all threads), in ms: on a shared machine the wall time of a load
// says as much about the other processes as about this one.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Stats {
  double mean_ms = 0, p99_ms = 0;
};
Stats summarise(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  Stats s;
  for (const double v : t) s.mean_ms += v;
  s.mean_ms /= static_cast<double>(t.size());
  s.p99_ms =
      t[std::min(t.size() - 1, static_cast<std::size_t>(static_cast<double>(t.size()) * 0.99))];
  return s;
}

// A frame is the viewer's work (the views build their ImGui draw lists: what level of detail
// bounds) and then OpenGL's (rasterising them; glFinish waits for it). They are timed apart
// because under Xvfb the second is Mesa's software rasteriser on the CPU, which a GPU does in
// well under a millisecond; "frame" is their sum, without vsync.
struct FrameStats {
  Stats build, render, total;
};
// What happens to the timeline before each frame: nothing (a still view, which may redraw what
// it kept from the frame before), a drag by a few pixels (the heat maps compute the columns it
// uncovers, the counter tracks all theirs), or a zoom step at the middle (everything recomputed).
enum class Motion { Still, Pan, Zoom };
FrameStats measure(Platform& platform, App& app, int frames, Motion motion) {
  std::vector<double> build, render, total;
  for (int i = 0; i < frames + 3; ++i) {
    TimeAxis& axis = app.view_state().axis;
    if (motion == Motion::Pan)
      axis.pan(i % 2 ? 7.0 : -5.0);  // drifts 1 px a frame pair: stays over the run
    if (motion == Motion::Zoom) axis.zoom_at(axis.x0_px + 600.0, i % 2 ? 1.02 : 1 / 1.02);
    const auto start = Clock::now();
    platform.begin_frame();
    app.frame(0.0f);
    ImGui::Render();
    const double b = ms_since(start);
    platform.render();
    platform.finish();
    const double t = ms_since(start);
    platform.present();
    if (i < 3) continue;
    build.push_back(b);
    render.push_back(t - b);
    total.push_back(t);
  }
  return {summarise(build), summarise(render), summarise(total)};
}

// Bytes the heap holds now, over every malloc arena (the model is built on worker threads, whose
// blocks mallinfo2 does not count): glibc's malloc_info totals, memory from the system less its
// free chunks, plus mmapped blocks. The model's size is the difference before and after loading.
std::uint64_t heap_in_use() {
  char* text = nullptr;
  std::size_t length = 0;
  FILE* f = open_memstream(&text, &length);
  if (!f) return 0;
  malloc_info(0, f);
  std::fclose(f);
  const std::string xml(text, length);
  std::free(text);
  // The totals over all arenas come last, after the per-arena sections.
  auto last = [&xml](const std::string& tag) -> std::uint64_t {
    const std::size_t at = xml.rfind(tag);
    if (at == std::string::npos) return 0;
    const std::size_t size = xml.find("size=\"", at);
    return size == std::string::npos ? 0 : std::strtoull(xml.c_str() + size + 6, nullptr, 10);
  };
  const std::uint64_t system = last("<system type=\"current\""),
                      fast = last("<total type=\"fast\"");
  const std::uint64_t rest = last("<total type=\"rest\""), mmapped = last("<total type=\"mmap\"");
  return system - std::min(system, fast + rest) + mmapped;
}

trace::Trace bench_trace(const BenchOptions& o, std::string& what) {
  if (o.tmpl == "synthetic") {
    SyntheticSpec spec;
    spec.events = o.events;
    what = "regular synthetic trace";
    return make_synthetic_trace(spec);
  }
  std::filesystem::path path = o.tmpl;
  if (!std::filesystem::exists(path)) {
    if (const auto shipped = builtin::find_shipped_trace(o.tmpl)) path = *shipped;
  }
  const trace::Trace real = trace::read_trace(path);
  what = "the event mix of " + path.filename().string() + " (" +
         std::to_string(real.event_count()) + " events), repeated";
  return make_tiled_trace(real, o.events);
}

}  // namespace

int run_bench(const BenchOptions& o) {
  std::printf("gpulb-viewer frame bench: %llu events, window %dx%d, %d frames a case\n",
              static_cast<unsigned long long>(o.events), o.width, o.height, o.frames);
  auto t0 = Clock::now();
  std::string what;
  trace::Trace generated = bench_trace(o, what);
  const double gen_ms = ms_since(t0);
  const std::uint64_t events = generated.event_count();

  t0 = Clock::now();
  std::vector<std::uint8_t> bytes = trace::encode_trace(generated);
  const double encode_ms = ms_since(t0);
  generated = trace::Trace{};  // what the viewer sees is what came back from the file format
  const double bytes_per_event = static_cast<double>(bytes.size()) / static_cast<double>(events);
  const double file_mb = static_cast<double>(bytes.size()) / 1e6;

  malloc_trim(0);
  const std::uint64_t heap_before = heap_in_use();
  const double cpu0 = cpu_ms();
  t0 = Clock::now();
  trace::Trace decoded = trace::decode_trace(bytes, "bench");
  const double decode_ms = ms_since(t0);
  t0 = Clock::now();
  auto doc = make_document(std::move(decoded), "bench 10M");
  const double model_ms = ms_since(t0);
  const double load_ms = decode_ms + model_ms;
  const double load_cpu_ms = cpu_ms() - cpu0;
  std::vector<std::uint8_t>().swap(bytes);  // the file's bytes are not kept after loading
  const std::uint64_t heap_after = heap_in_use();
  const double model_bytes = static_cast<double>(heap_after) - static_cast<double>(heap_before);
  const double memory_per_event = model_bytes / static_cast<double>(events);
  const TraceModel& model = *doc->model;

  std::printf("trace       %llu events, %llu tasks, %zu lanes: %s (generated in %.0f ms)\n",
              static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(model.task_count()), model.lanes().size(),
              what.c_str(), gen_ms);
  std::printf("file        %.2f MB, %.2f bytes an event (real traces: 2-5)  [encode %.0f ms]\n",
              file_mb, bytes_per_event, encode_ms);
  std::printf(
      "load        %.0f ms = decode %.0f ms + model %.0f ms (target <= 2000); CPU time %.0f ms "
      "(all threads)\n",
      load_ms, decode_ms, model_ms, load_cpu_ms);
  std::printf(
      "memory      %.0f MB on the heap for the loaded trace, %.1f bytes an event (target <= 32)\n",
      model_bytes / 1e6, memory_per_event);
  const TraceModel::Bytes parts = doc->model->bytes_by_part();
  const double ev = static_cast<double>(events);
  std::printf(
      "            of which events %.1f, lanes (zones, idle, markers) %.1f, series %.1f bytes an "
      "event\n",
      static_cast<double>(parts.events) / ev, static_cast<double>(parts.lanes) / ev,
      static_cast<double>(parts.series) / ev);

  if (o.frames <= 0) return memory_per_event <= 32.0 && load_ms <= 2000 ? 0 : 1;

  Platform platform(PlatformOptions{o.width, o.height, false, "gpulb-viewer bench"});
  App app(builtin::registry());
  app.add(std::move(doc));
  ViewState& vs = app.view_state();

  struct Case {
    const char* name;
    const char* view;  // --view name (panels.hpp)
    double zoom;       // 1: the whole run; 10: a tenth of it, at the middle
    bool expanded;
    Motion motion = Motion::Still;
  };
  const Case cases[] = {
      {"timeline, whole run, SMs folded", "timeline", 1, false},
      {"timeline, whole run, folded, panning", "timeline", 1, false, Motion::Pan},
      {"timeline, whole run, folded, zooming", "timeline", 1, false, Motion::Zoom},
      {"timeline, whole run, all lanes", "timeline", 1, true},
      {"timeline, 1/10 of the run", "timeline", 10, true},
      {"timeline, 1/100", "timeline", 100, true},
      {"timeline, 1/10,000 (arrows)", "timeline", 1e4, true},
      {"timeline, 1/1,000,000", "timeline", 1e6, true},
      {"histograms, whole run", "histograms", 1, false},
      {"occupancy, whole run", "occupancy", 1, false},
      {"occupancy, replay mid-run", "occupancy", 1, false},
  };
  std::printf("\n%-34s %18s %18s %18s\n", "", "views (CPU)", "GL raster", "frame");
  std::printf("%-34s %9s %8s %9s %8s %9s %8s\n", "time in ms", "mean", "p99", "mean", "p99", "mean",
              "p99");
  bool frames_ok = true;
  const double begin = static_cast<double>(model.begin_ns()),
               end = static_cast<double>(model.end_ns());
  for (const Case& c : cases) {
    if (!o.only.empty() && std::string(c.name).find(o.only) == std::string::npos) continue;
    app.set_view(c.view);
    vs.timeline.defaults_set = true;
    vs.timeline.collapsed.clear();
    if (!c.expanded) vs.timeline.defaults_set = false;  // back to the default: SM groups folded
    const double mid = (begin + end) / 2, half = (end - begin) / c.zoom / 2;
    vs.pending_range = Selection{mid - half, mid + half};
    vs.playhead = Playhead{};
    if (std::string(c.name).find("replay") != std::string::npos)
      vs.playhead = Playhead{mid, true, false, 1.0f};
    const FrameStats s = measure(platform, app, o.frames, c.motion);
    frames_ok = frames_ok && s.build.p99_ms <= 16.0;
    std::printf("%-34s %9.2f %8.2f %9.2f %8.2f %9.2f %8.2f\n", c.name, s.build.mean_ms,
                s.build.p99_ms, s.render.mean_ms, s.render.p99_ms, s.total.mean_ms, s.total.p99_ms);
  }
  const bool memory_ok = memory_per_event <= 32.0;
  const bool ok = frames_ok && load_ms <= 2000 && memory_ok;
  std::printf("\ntargets     view p99 <= 16 ms: %s; load <= 2 s: %s; <= 32 B/event in memory: %s\n",
              frames_ok ? "met" : "MISSED", load_ms <= 2000 ? "met" : "MISSED",
              memory_ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}

}  // namespace gpulb::viewer
