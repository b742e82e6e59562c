// An event's payload as the exports write it: each used field under its name (event_arg_names),
// the victim's device of a steal decoded from its aux.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpulb/tracing/event_kinds.hpp"

namespace gpulb::trace::detail {

struct NamedArg {
  std::string_view name;
  std::uint64_t value;
};

struct NamedArgs {
  NamedArg items[2];
  int count = 0;
  const NamedArg* begin() const { return items; }
  const NamedArg* end() const { return items + count; }
};

inline NamedArgs named_args(const Event& e, std::uint32_t track_device) {
  const EventArgNames names = event_arg_names(e.kind);
  NamedArgs out;
  if (*names.arg) out.items[out.count++] = {names.arg, e.arg};
  if (*names.aux) {
    const bool steal = e.kind == EventKind::Steal || e.kind == EventKind::StealFailed;
    out.items[out.count++] = {names.aux,
                              steal ? steal_victim_device(e, track_device) : std::uint64_t{e.aux}};
  }
  return out;
}

}  // namespace gpulb::trace::detail
