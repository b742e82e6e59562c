// Export: PNG pictures of the window or of one view (stb_image_write), and the trace or a time
// range of it as Chrome JSON or CSV (tracing/export.hpp, the same code as `gpulb export`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/trace.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

// RGBA pixels, top row first.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};

// The part of `image` inside [x, x + w) x [y, y + h), clamped to the image.
Image crop(const Image& image, int x, int y, int w, int h);
// Writes through trace::AtomicWrite: a complete file or none. Throws trace::OutputPathError for a
// path that must not be written (a device, a directory, a missing directory) and trace::WriteError
// for a failed write (disk full); both name the path and the cause.
void write_png(const std::filesystem::path& path, const Image& image);

// Writes the trace (or the selected range of it); returns the files written.
std::vector<std::filesystem::path> export_trace_as(const trace::Trace& trace,
                                                   trace::ExportFormat format,
                                                   const std::filesystem::path& path,
                                                   const std::optional<Selection>& range);

}  // namespace gpulb::viewer
