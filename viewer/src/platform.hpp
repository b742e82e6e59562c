// The window: GLFW, an OpenGL 3 context and Dear ImGui's GLFW/OpenGL 3 backends. Also reads the
// framebuffer back for PNG export and screenshots.
#pragma once

#include <string>
#include <vector>

#include "export.hpp"

struct GLFWwindow;

namespace gpulb::viewer {

struct PlatformOptions {
  int width = 1600, height = 1000;
  bool vsync = true;  // off for the frame-time bench
  std::string title = "gpulb-viewer";
};

// The viewer's style and font, on the current ImGui context: the window's, and the headless
// tests' (so that they measure text as the window draws it).
void apply_look(float pixel_scale);

class Platform {
 public:
  // Throws std::runtime_error with a message a user can act on (no display, no OpenGL 3).
  explicit Platform(const PlatformOptions& options);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  bool should_close() const;
  void begin_frame();         // poll events, start an ImGui frame
  void render();              // draw the ImGui frame into the back buffer
  void present();             // swap buffers
  void finish();              // wait for the GPU (benchmarks)
  Image read_back() const;    // the back buffer just rendered, top row first
  float pixel_scale() const;  // framebuffer pixels per window unit (HiDPI)
  std::vector<std::string> take_dropped_paths();

 private:
  GLFWwindow* window_ = nullptr;
};

}  // namespace gpulb::viewer
