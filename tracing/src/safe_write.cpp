// Atomic output files: see safe_write.hpp.
//
// [SECTION] Signal-time cleanup registry
// [SECTION] Paths
// [SECTION] AtomicWrite
#include "gpulb/tracing/safe_write.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <mutex>
#include <streambuf>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpulb::trace {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Signal-time cleanup registry
// ---------------------------------------------------------------------------------------------
// Fixed storage, lock-free atomics and unlink/sigaction/raise only: all a signal handler may use.
// A path that does not fit (too many live files, too long) still gets the RAII cleanup.

constexpr int kSlots = 32;
constexpr std::size_t kMaxPath = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};
Slot g_slots[kSlots];

// Every signal whose default action ends the process (SIGKILL aside, which nothing can catch:
// there an unnamed O_TMPFILE leaves nothing behind, see AtomicWrite).
constexpr int kSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,   SIGUSR1,
                            SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};
constexpr int kSignalCount = static_cast<int>(std::size(kSignals));
struct sigaction g_previous[kSignalCount];
std::atomic<bool> g_armed[kSignalCount];
std::mutex g_arm_mutex;
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void on_signal(int sig) {
  const int saved_errno = errno;
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) == kLive) ::unlink(s.path);
  }
  for (int i = 0; i < kSignalCount; ++i) {
    if (kSignals[i] != sig) continue;
    // The signal is blocked while this runs: raise() leaves it pending, and it is delivered under
    // the previous disposition (default: terminate) as soon as this handler returns.
    ::sigaction(sig, &g_previous[i], nullptr);
    g_armed[i].store(false);
  }
  ::raise(sig);
  errno = saved_errno;
}

void arm_handlers() {
  std::lock_guard<std::mutex> lock(g_arm_mutex);
  for (int i = 0; i < kSignalCount; ++i) {
    if (g_armed[i].load()) continue;
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    // An ignored signal stays ignored (nohup, background jobs): cleaning up on it would delete a
    // file the process goes on writing.
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_handler = on_signal;
    sigemptyset(&ours.sa_mask);
    ::sigaction(kSignals[i], &ours, &g_previous[i]);
    g_armed[i].store(true);
  }
}

int register_temporary(const std::filesystem::path& path) {
  const std::string s = std::filesystem::absolute(path).string();
  if (s.size() >= kMaxPath) return -1;
  arm_handlers();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel))
      continue;
    std::memcpy(g_slots[i].path, s.c_str(), s.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_slots[slot].state.store(kFree, std::memory_order_release);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Paths
// ---------------------------------------------------------------------------------------------

const char* kind_of(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

}  // namespace

// An unbuffered-by-the-library stream over a file descriptor: errors keep their errno, so a full
// disk says so. Outside the anonymous namespace: AtomicWrite::Impl, of external linkage, holds one.
namespace detail {
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    while (p < pptr() && error_ == 0) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        error_ = n < 0 ? errno : EIO;
      else
        p += n;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return error_ == 0;
  }
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};
}  // namespace detail

std::filesystem::path resolve_output(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  // Symbolic links are followed: the file a link points to is replaced and the link kept, as a
  // shell's `>` does. Renaming onto the link itself would silently turn it into a regular file.
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) throw OutputPathError(path.string() + ": too many levels of symbolic links");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec)
      throw OutputPathError(path.string() + ": cannot read the symbolic link (" + ec.message() +
                            ")");
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  const fs::file_status st = fs::status(p, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw OutputPathError(path.string() + ": is " + kind_of(st.type()) +
                          "; refusing to replace it (name a regular file to write)");
  }
  const fs::path dir = fs::absolute(p).parent_path();
  if (!fs::is_directory(dir, ec))
    throw OutputPathError(path.string() + ": directory " + dir.string() + " does not exist");
  return p;
}

void refuse_inputs(const std::filesystem::path& output,
                   const std::vector<std::filesystem::path>& inputs, const std::string& what) {
  for (const std::filesystem::path& input : inputs) {
    std::error_code ec;  // an output that does not exist yet is no input
    if (std::filesystem::equivalent(input, output, ec)) {
      throw OutputPathError(what + " " + output.string() + ": is the input " + input.string() +
                            "; refusing to write over it (name another file)");
    }
  }
}

namespace {
std::filesystem::path directory_of(const std::filesystem::path& file) {
  return file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
}

// Links an unnamed O_TMPFILE into its directory as `name`; 0, or the errno. Through /proc (any
// user), else by the descriptor itself (AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH).
int give_name(int fd, const std::filesystem::path& name) {
  ::unlink(name.c_str());
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  return errno;
}

// "<name>.tmp-<pid>" beside the target; where that would pass a file name's 255 bytes (a valid
// 250-byte name), the name is cut and a hash of the whole name keeps two such targets apart.
std::filesystem::path temporary_for(const std::filesystem::path& target) {
  constexpr std::size_t kNameMax = 255;
  const std::string suffix = ".tmp-" + std::to_string(::getpid());
  std::string name = target.filename().string();
  if (name.size() + suffix.size() > kNameMax) {
    char hash[20];
    std::snprintf(hash, sizeof hash, "-%016zx", std::hash<std::string>{}(name));
    name.resize(kNameMax - suffix.size() - std::strlen(hash));
    name += hash;
  }
  return target.parent_path() / (name + suffix);
}
}  // namespace

void check_writable(const std::filesystem::path& path) {
  const std::filesystem::path tmp = temporary_for(resolve_output(path));
  // Permission bits do not tell (root ignores them; a read-only mount ignores them): try it, with
  // a file that has no name where the file system allows (nothing a signal could leave behind),
  // else with the temporary's name, registered first so that a signal removes it.
  int fd = ::open(directory_of(tmp).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  int slot = -1;
  if (fd < 0) {
    slot = register_temporary(tmp);
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  }
  const int open_errno = errno;
  if (fd >= 0) ::close(fd);
  if (slot >= 0) ::unlink(tmp.c_str());
  unregister_temporary(slot);
  if (fd < 0) {
    throw OutputPathError(path.string() + ": cannot write in " +
                          std::filesystem::absolute(tmp).parent_path().string() + " (" +
                          std::strerror(open_errno) + ")");
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] AtomicWrite
// ---------------------------------------------------------------------------------------------

struct AtomicWrite::Impl {
  Impl(int fd, bool unnamed) : fd(fd), unnamed(unnamed), buf(fd), stream(&buf) {}
  int fd;
  bool unnamed;  // an O_TMPFILE: it gets the temporary's name only once written in full
  detail::FdBuf buf;
  std::ostream stream;
};

AtomicWrite::AtomicWrite(const std::filesystem::path& path)
    : requested_(path), target_(resolve_output(path)) {
  tmp_ = temporary_for(target_);
  // Registered before any file exists: a signal from here on removes whatever has the name.
  slot_ = register_temporary(tmp_);
  // Where the file system allows, the file has no name while it is written: a SIGKILL (which no
  // handler sees) leaves nothing. Else O_EXCL|O_NOFOLLOW after removing our own stale temporary:
  // never write through a link planted under the temporary name.
  int fd = ::open(directory_of(tmp_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  const bool unnamed = fd >= 0;
  if (!unnamed) {
    ::unlink(tmp_.c_str());
    fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  }
  if (fd < 0) {
    const int e = errno;
    unregister_temporary(slot_);
    throw WriteError(requested_.string() + ": cannot write (" + std::strerror(e) + ")");
  }
  impl_ = std::make_unique<Impl>(fd, unnamed);
}

AtomicWrite::~AtomicWrite() {
  if (impl_ && impl_->fd >= 0) ::close(impl_->fd);
  if (!committed_) ::unlink(tmp_.c_str());
  unregister_temporary(slot_);
}

std::ostream& AtomicWrite::out() { return impl_->stream; }

void AtomicWrite::finish() {
  if (impl_->fd < 0) return;
  impl_->stream.flush();
  int err = impl_->buf.error();
  if (err == 0 && impl_->stream && impl_->unnamed) err = give_name(impl_->fd, tmp_);
  const int closed = ::close(impl_->fd);
  const int close_err = closed == 0 ? 0 : errno;
  impl_->fd = -1;
  if (err != 0 || close_err != 0 || !impl_->stream) {
    const int e = err ? err : close_err;
    ::unlink(tmp_.c_str());  // a name given before close failed
    throw WriteError(requested_.string() + ": write failed (" +
                     (e ? std::strerror(e) : "stream error") + ")");
  }
}

void AtomicWrite::commit() {
  finish();
  std::error_code ec;
  // A replaced file keeps its permissions.
  const auto st = std::filesystem::status(target_, ec);
  if (!ec && std::filesystem::exists(st)) std::filesystem::permissions(tmp_, st.permissions(), ec);
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    throw WriteError(requested_.string() + ": cannot rename the finished file into place (" +
                     std::strerror(errno) + ")");
  }
  committed_ = true;
}

}  // namespace gpulb::trace
