// The choices a policy option offers, as enums: `--param victim=round-robin` is parsed once into
// VictimChoice::RoundRobin, and the runtime compares enums, never strings. Each enum's values are
// named once, in Choices<E>::names (the enum's order); --param, `gpulb list` and messages read them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpulb {

enum class QueueVariant : std::uint8_t { Paper, Modern };       // task-queue on CUDA
enum class QueueFeed : std::uint8_t { Copy, Mapped };           // task-queue modern on CUDA
enum class VictimChoice : std::uint8_t { Random, RoundRobin };  // work-stealing
enum class DequeOverflow : std::uint8_t { Spill, Fail };        // work-stealing
enum class TaskPer : std::uint8_t { Block, Lane };              // work-stealing on CUDA
enum class RemoteMode : std::uint8_t { Steal, Request };        // work-stealing across GPUs
enum class PeerMemory : std::uint8_t { Auto, On, Off };         // work-stealing across GPUs
enum class RequestStrategy : std::uint8_t {
  Adaptive,
  Static,
  Eager
};  // combining (all), hybrid (adaptive, static)
enum class RequestTransfer : std::uint8_t { Redundant, Reuse, ReuseSorted };  // combining, hybrid

template <class E>
struct Choices;
template <>
struct Choices<QueueVariant> {
  static constexpr std::array<std::string_view, 2> names{"paper", "modern"};
};
template <>
struct Choices<QueueFeed> {
  static constexpr std::array<std::string_view, 2> names{"copy", "mapped"};
};
template <>
struct Choices<VictimChoice> {
  static constexpr std::array<std::string_view, 2> names{"random", "round-robin"};
};
template <>
struct Choices<DequeOverflow> {
  static constexpr std::array<std::string_view, 2> names{"spill", "fail"};
};
template <>
struct Choices<TaskPer> {
  static constexpr std::array<std::string_view, 2> names{"block", "lane"};
};
template <>
struct Choices<RemoteMode> {
  static constexpr std::array<std::string_view, 2> names{"steal", "request"};
};
template <>
struct Choices<PeerMemory> {
  static constexpr std::array<std::string_view, 3> names{"auto", "on", "off"};
};
template <>
struct Choices<RequestStrategy> {
  static constexpr std::array<std::string_view, 3> names{"adaptive", "static", "eager"};
};
template <>
struct Choices<RequestTransfer> {
  static constexpr std::array<std::string_view, 3> names{"redundant", "reuse", "reuse-sorted"};
};

// The name --param takes for `e`.
template <class E>
constexpr std::string_view choice_name(E e) {
  return Choices<E>::names[static_cast<std::size_t>(e)];
}
template <class E>
std::string choice_text(E e) {
  return std::string(choice_name(e));
}

// The value named `name`, or nothing where no value has that name.
template <class E>
constexpr std::optional<E> choice_named(std::string_view name) {
  for (std::size_t i = 0; i < Choices<E>::names.size(); ++i) {
    if (Choices<E>::names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace gpulb
