// Output files: never half-written, never over a device, through links, cleaned up on signals.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

namespace fs = std::filesystem;

class SafeWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpulb-safe-write-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path path(const std::string& name) const { return dir_ / name; }
  // Names of what is left in the directory that looks like a temporary file.
  std::vector<std::string> temporaries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().find(".tmp-") != std::string::npos)
        out.push_back(e.path().filename().string());
    }
    return out;
  }
  template <class Fn>
  std::string refusal(Fn fn) {
    try {
      fn();
      return "";
    } catch (const OutputPathError& e) {
      return e.what();
    }
  }
  fs::path dir_;
};

TEST_F(SafeWrite, ChromeExportIntoADirectoryIsRefusedAndLeavesNothing) {
  fs::create_directory(path("out.json"));
  const std::string msg = refusal(
      [&] { export_trace(testing::make_trace(2, 3, 10), ExportFormat::Chrome, path("out.json")); });
  EXPECT_NE(msg.find(path("out.json").string() + ": is a directory; refusing to replace it"),
            std::string::npos)
      << msg;
  EXPECT_TRUE(fs::is_directory(path("out.json")));
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
}

TEST_F(SafeWrite, CsvExportWhoseSecondFileIsRefusedWritesNeitherFile) {
  fs::create_directory(path("t.workers.csv"));
  const std::string msg = refusal(
      [&] { export_trace(testing::make_trace(2, 3, 10), ExportFormat::Csv, path("t.csv")); });
  EXPECT_NE(msg.find("t.workers.csv: is a directory"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(path("t.csv")));
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
}

TEST_F(SafeWrite, AnAbandonedWriteRemovesItsTemporaryFile) {
  try {
    AtomicWrite w(path("a.gpulb"));
    w.out() << "half a trace";
    w.out().flush();
    EXPECT_FALSE(fs::exists(path("a.gpulb"))) << "nothing under the target's name before commit";
    throw std::runtime_error("the exporter failed");
  } catch (const std::runtime_error&) {}
  EXPECT_FALSE(fs::exists(path("a.gpulb")));
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
}

TEST_F(SafeWrite, ADeviceIsNeverReplaced) {
  const std::string msg = refusal([] { write_trace("/dev/null", testing::make_trace(1, 1, 1)); });
  EXPECT_NE(msg.find("/dev/null: is a character device; refusing to replace it"), std::string::npos)
      << msg;
  EXPECT_EQ(fs::status("/dev/null").type(), fs::file_type::character);
}

TEST_F(SafeWrite, ASymlinkIsFollowedAndKept) {
  const Trace t = testing::make_trace(2, 3, 10);
  std::ofstream(path("real.gpulb")) << "old";
  fs::create_symlink("real.gpulb", path("link.gpulb"));
  write_trace(path("link.gpulb"), t);
  EXPECT_TRUE(fs::is_symlink(path("link.gpulb")));
  EXPECT_TRUE(read_trace(path("real.gpulb")) == t);
  // A dangling link creates its target.
  fs::create_symlink("new.gpulb", path("dangling.gpulb"));
  write_trace(path("dangling.gpulb"), t);
  EXPECT_TRUE(fs::is_symlink(path("dangling.gpulb")));
  EXPECT_TRUE(read_trace(path("new.gpulb")) == t);
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
}

// Ctrl-C (or a kill) in the middle of a write: the process dies of the signal, and the
// temporary file goes with it.
void interrupted_write(const fs::path& p, int sig) {
  AtomicWrite w(p);
  w.out() << std::string(1 << 20, 'x');
  w.out().flush();
  std::raise(sig);
}

TEST_F(SafeWrite, SigintDuringAWriteRemovesTheTemporaryFile) {
  EXPECT_EXIT(interrupted_write(path("c.gpulb"), SIGINT), ::testing::KilledBySignal(SIGINT), "");
  EXPECT_EXIT(interrupted_write(path("c.gpulb"), SIGTERM), ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_FALSE(fs::exists(path("c.gpulb")));
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
}

// Every signal that ends a process by default, SIGKILL included (no handler sees it: the file has
// no name until it is complete). SIGHUP, SIGQUIT, SIGPIPE and SIGUSR1 left "*.tmp-PID" behind, and
// so did SIGKILL.
TEST_F(SafeWrite, EveryTerminatingSignalDuringAWriteLeavesNoTemporaryFile) {
  for (int sig : {SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGKILL}) {
    struct sigaction now {};
    ::sigaction(sig, nullptr, &now);
    if (now.sa_handler == SIG_IGN)
      continue;  // ignored here (nohup, a harness): raising it ends nothing
    EXPECT_EXIT(interrupted_write(path("d.gpulb"), sig), ::testing::KilledBySignal(sig), "")
        << strsignal(sig);
    EXPECT_EQ(temporaries(), std::vector<std::string>{}) << strsignal(sig);
  }
  EXPECT_FALSE(fs::exists(path("d.gpulb")));
}

// A signal between check_writable's test file and its removal leaves nothing either.
TEST_F(SafeWrite, CheckWritableLeavesNoFile) {
  check_writable(path("e.gpulb"));
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace gpulb::trace
