#include "export.hpp"

#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpulb/tracing/safe_write.hpp"

namespace gpulb::viewer {

Image crop(const Image& image, int x, int y, int w, int h) {
  const int x0 = std::clamp(x, 0, image.width), y0 = std::clamp(y, 0, image.height);
  const int x1 = std::clamp(x + w, x0, image.width), y1 = std::clamp(y + h, y0, image.height);
  Image out{x1 - x0, y1 - y0, {}};
  out.rgba.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 4);
  for (int r = 0; r < out.height; ++r) {
    std::memcpy(out.rgba.data() + static_cast<std::size_t>(r) * out.width * 4,
                image.rgba.data() + (static_cast<std::size_t>(y0 + r) * image.width + x0) * 4,
                static_cast<std::size_t>(out.width) * 4);
  }
  return out;
}

void write_png(const std::filesystem::path& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0)
    throw trace::WriteError(path.string() + ": nothing to write (empty image)");
  // Encoded in memory, then written by the tracing layer's safe writer: stbi_write_png's own file
  // output ignores fwrite's errors, so a full disk left a truncated PNG and reported success.
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, image.width, image.height, 4, image.rgba.data(),
                              image.width * 4)) {
    throw trace::WriteError(path.string() + ": cannot encode the PNG");
  }
  trace::AtomicWrite file(path);  // refuses devices, directories and missing directories
  file.out().write(png.data(), static_cast<std::streamsize>(png.size()));
  file.commit();  // throws WriteError naming the path and the cause; the temporary file is removed
}

std::vector<std::filesystem::path> export_trace_as(const trace::Trace& trace,
                                                   trace::ExportFormat format,
                                                   const std::filesystem::path& path,
                                                   const std::optional<Selection>& range) {
  trace::TimeRange r;
  if (range) {
    r.begin_ns = static_cast<std::uint64_t>(std::max(0.0, std::floor(range->begin_ns)));
    r.end_ns = static_cast<std::uint64_t>(std::max(0.0, std::ceil(range->end_ns)));
  }
  return trace::export_trace(trace, format, path, r);
}

}  // namespace gpulb::viewer
