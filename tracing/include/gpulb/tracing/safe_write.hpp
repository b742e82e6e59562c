// Writing output files so that no half-written file is ever left behind.
//
// A file is written to "<target>.tmp-<pid>" beside its target and renamed into place once
// complete. The temporary file is removed on every failure path (the AtomicWrite destructor) and
// on SIGINT/SIGTERM (a fixed registry of live temporary paths that a signal handler unlinks with
// async-signal-safe calls before re-raising the signal under its previous disposition).
//
// Paths are checked before anything is written: a directory, a device (-o /dev/null), a FIFO or a
// socket is refused, never replaced; a symbolic link is followed and its target written.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

namespace gpulb::trace {

// A write that failed: cannot create, disk full, cannot rename. The CLI exits 1.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// An output path that must not be written at all (a device, a directory, the input itself, a
// missing directory). The CLI exits 2: a bad argument.
class OutputPathError : public WriteError {
 public:
  using WriteError::WriteError;
};

// The file a write to `path` replaces: symbolic links resolved. Throws OutputPathError (naming
// `path`) where that is not a regular file or cannot be created.
std::filesystem::path resolve_output(const std::filesystem::path& path);

// resolve_output, then creates and removes the temporary file a write would use: for checking an
// output before hours of work go into what it will hold. Throws OutputPathError (naming `path`,
// the directory and the reason) where the file could not be written: no permission, a read-only
// file system, a name too long.
void check_writable(const std::filesystem::path& path);

class AtomicWrite {
 public:
  explicit AtomicWrite(const std::filesystem::path& path);
  ~AtomicWrite();  // removes the temporary file unless commit() ran
  AtomicWrite(const AtomicWrite&) = delete;
  AtomicWrite& operator=(const AtomicWrite&) = delete;

  std::ostream& out();
  // Flushes and closes the temporary file; throws WriteError (disk full, ...) naming the path.
  void finish();
  // finish(), then renames the temporary file onto the target.
  void commit();

  const std::filesystem::path& temporary() const { return tmp_; }

 private:
  struct Impl;
  std::filesystem::path requested_, target_, tmp_;
  std::unique_ptr<Impl> impl_;
  int slot_ = -1;
  bool committed_ = false;
};

}  // namespace gpulb::trace
