// Where workers run: host threads or the blocks of 1..N GPUs.
#pragma once

#include <optional>
#include <string_view>

namespace gpulb {

enum class Backend { Cpu, Cuda };
inline constexpr Backend kBackends[] = {Backend::Cpu, Backend::Cuda};

inline std::string_view to_string(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }
inline std::optional<Backend> parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  return std::nullopt;
}

}  // namespace gpulb
