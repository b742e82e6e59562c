#include "cli_common.hpp"

#include <chrono>
#include <cstdio>

#include <unistd.h>

#include "gpulb/errors.hpp"

namespace gpulb::tools {

ProgressFn progress_line(const std::string& label) {
  if (!::isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [label, start](std::uint64_t done, std::uint64_t expected) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s < 1.0) return;
    if (expected > 0) {
      std::fprintf(stderr, "\r%s: %llu / %llu tasks (%.0f%%), %.1f s   ", label.c_str(),
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(expected),
                   100.0 * static_cast<double>(done) / static_cast<double>(expected), s);
    } else {
      std::fprintf(stderr, "\r%s: %llu tasks, %.1f s   ", label.c_str(),
                   static_cast<unsigned long long>(done), s);
    }
    std::fflush(stderr);
  };
}

// --param name=value, each name once: a repeated name is refused (keeping the last one silently ran
// a configuration the user did not ask for).
ParamMap parse_params(const std::vector<std::string>& params) {
  ParamMap out;
  for (const std::string& kv : params) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--param '" + kv + "': expected name=value");
    const std::string name = kv.substr(0, eq);
    const auto [it, inserted] = out.emplace(name, kv.substr(eq + 1));
    if (!inserted) {
      throw ConfigError("--param " + name + " is given twice ('" + it->second + "' and '" +
                        kv.substr(eq + 1) + "'); give each parameter once");
    }
  }
  return out;
}

trace::ReadLimits read_limits(const std::string& max_memory) {
  trace::ReadLimits limits;
  if (max_memory.empty()) return limits;
  const auto bytes = trace::parse_byte_size(max_memory);
  if (!bytes)
    throw ConfigError("--max-memory '" + max_memory + "': expected a size such as 512M or 2G");
  limits.max_memory = *bytes;
  return limits;
}

}  // namespace gpulb::tools
