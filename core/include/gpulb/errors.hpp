// The two ways a run fails, each with a message meant for the user.
#pragma once

#include <stdexcept>

namespace gpulb {

// A bad parameter, scenario, policy or combination of them (the CLI exits 2).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run that failed while running: watchdog, capacity, device error (the CLI exits 1).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulb
