#include "platform.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <filesystem>
#include <stdexcept>

namespace gpulb::viewer {
namespace {

std::vector<std::string> g_dropped;  // GLFW's drop callback has no user pointer of its own

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

std::string g_glfw_error;
void on_error(int, const char* description) { g_glfw_error = description; }

void apply_style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0.0f;
  s.FrameRounding = 4.0f;
  s.ChildRounding = 4.0f;
  s.GrabRounding = 4.0f;
  s.TabRounding = 4.0f;
  s.FramePadding = ImVec2(8, 4);
  s.ItemSpacing = ImVec2(8, 6);
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.105f, 0.113f, 0.133f, 1.0f);
  c[ImGuiCol_ChildBg] = ImVec4(0.125f, 0.135f, 0.16f, 1.0f);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.15f, 0.16f, 0.19f, 1.0f);
  c[ImGuiCol_Header] = ImVec4(0.22f, 0.30f, 0.45f, 1.0f);
  c[ImGuiCol_Tab] = ImVec4(0.17f, 0.19f, 0.24f, 1.0f);
  c[ImGuiCol_TabActive] = ImVec4(0.25f, 0.38f, 0.62f, 1.0f);
  c[ImGuiCol_TabHovered] = ImVec4(0.32f, 0.46f, 0.72f, 1.0f);
}

void load_font(float pixel_scale) {
  ImGuiIO& io = ImGui::GetIO();
  // A real TrueType font reads far better than the built-in bitmap one, on screen and in PNGs.
  for (const char* path :
       {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"}) {
    if (std::filesystem::exists(path) && io.Fonts->AddFontFromFileTTF(path, 15.0f * pixel_scale)) {
      io.FontGlobalScale = 1.0f / pixel_scale;
      return;
    }
  }
  io.Fonts->AddFontDefault();
}

}  // namespace

void apply_look(float pixel_scale) {
  apply_style();
  load_font(pixel_scale);
}

Platform::Platform(const PlatformOptions& o) {
  glfwSetErrorCallback(on_error);
  if (!glfwInit()) {
    throw std::runtime_error(
        "cannot open a window: " +
        (g_glfw_error.empty() ? std::string("GLFW failed to start") : g_glfw_error) +
        " (no display? run under xvfb-run -a, or set DISPLAY)");
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  window_ = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
  if (!window_) {
    glfwTerminate();
    throw std::runtime_error("cannot create an OpenGL 3.3 window: " + g_glfw_error);
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(o.vsync ? 1 : 0);
  glfwSetDropCallback(window_, on_drop);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // screenshots must not depend on a previous session
  apply_look(pixel_scale());
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

Platform::~Platform() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window_);
  glfwTerminate();
}

bool Platform::should_close() const { return glfwWindowShouldClose(window_); }

void Platform::begin_frame() {
  glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Platform::render() {
  if (!ImGui::GetDrawData() || !ImGui::GetDrawData()->Valid) ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.1f, 0.11f, 0.13f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Platform::present() { glfwSwapBuffers(window_); }
void Platform::finish() { glFinish(); }

Image Platform::read_back() const {
  Image img;
  glfwGetFramebufferSize(window_, &img.width, &img.height);
  img.rgba.resize(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, img.width, img.height, GL_RGBA, GL_UNSIGNED_BYTE, img.rgba.data());
  // OpenGL's rows run bottom-up; PNG's top-down.
  const std::size_t row = static_cast<std::size_t>(img.width) * 4;
  std::vector<std::uint8_t> tmp(row);
  for (int y = 0; y < img.height / 2; ++y) {
    std::uint8_t* a = img.rgba.data() + static_cast<std::size_t>(y) * row;
    std::uint8_t* b = img.rgba.data() + static_cast<std::size_t>(img.height - 1 - y) * row;
    std::copy(a, a + row, tmp.data());
    std::copy(b, b + row, a);
    std::copy(tmp.data(), tmp.data() + row, b);
  }
  for (std::size_t i = 3; i < img.rgba.size(); i += 4)
    img.rgba[i] = 255;  // opaque, whatever GL left in alpha
  return img;
}

float Platform::pixel_scale() const {
  int fw = 0, ww = 0, h = 0;
  glfwGetFramebufferSize(window_, &fw, &h);
  glfwGetWindowSize(window_, &ww, &h);
  return ww > 0 ? static_cast<float>(fw) / static_cast<float>(ww) : 1.0f;
}

std::vector<std::string> Platform::take_dropped_paths() {
  std::vector<std::string> out;
  out.swap(g_dropped);
  return out;
}

}  // namespace gpulb::viewer
