// Writing output files so that no half-written file is ever left behind.
//
// A file is written without a name (O_TMPFILE) where the file system allows, linked as
// "<target>.tmp-<pid>" beside its target once complete, and renamed into place: a process killed
// while writing (SIGKILL included) leaves nothing. Elsewhere the temporary has its name from the
// start. Either way it is removed on every failure path (the AtomicWrite destructor) and on every
// signal that ends a process by default (a fixed registry of live temporary paths, registered
// before the file exists, that a signal handler unlinks with async-signal-safe calls before
// re-raising the signal under its previous disposition). A name too long for the suffix is cut
// and hashed, so that any valid output name can be written.
//
// Paths are checked before anything is written: a directory, a device (-o /dev/null), a FIFO or a
// socket is refused, never replaced; a symbolic link is followed and its target written.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

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

// Throws OutputPathError where `output` is one of `inputs` (the same file, also through a link or
// another name): a program never writes over what it reads. `what` names the output's option.
void refuse_inputs(const std::filesystem::path& output,
                   const std::vector<std::filesystem::path>& inputs, const std::string& what);

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
