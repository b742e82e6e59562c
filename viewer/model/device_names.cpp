#include "device_names.hpp"

#include "display_text.hpp"

namespace gpulb::viewer {

std::string device_line(const trace::Device& d) {
  const std::string name = d.kind == trace::DeviceKind::Gpu
                               ? "GPU " + std::to_string(d.index) + ": " + display_label(d.name)
                               : display_label(d.name);
  return name + " (" + std::to_string(d.workers) + " workers, " + std::to_string(d.sm_count) +
         (d.kind == trace::DeviceKind::Gpu ? " SMs)" : " hw threads)");
}

}  // namespace gpulb::viewer
