// Runs the gpulb command line as a user does, in a child process through the shell: the exit
// code and everything it printed. The test target defines GPULB_CLI (the binary's path).
#pragma once

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace gpulb::testing {

struct Outcome {
  int exit_code;    // -1 when killed by a signal
  std::string out;  // stdout and stderr together
};

// Runs a shell command line, its stderr with its stdout.
inline Outcome shell(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  Outcome o{-1, ""};
  if (!pipe) return o;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) o.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// Runs `prefix GPULB_CLI args` (a prefix may set limits, traps or a timeout first).
inline Outcome shell_gpulb(const std::string& prefix, const std::string& args) {
  return shell(prefix + std::string(GPULB_CLI) + " " + args);
}

inline Outcome gpulb(const std::string& args) { return shell_gpulb("", args); }

}  // namespace gpulb::testing
