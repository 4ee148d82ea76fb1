// The one way the project replaces a file: a new file next to it, written and synced, renamed
// over it, the directory synced. The state directory, tables.bin, the exports and every
// generated file go through it, so a crash leaves the old file or the new, never a mix.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace laas::util {

// The new content is in place (the rename happened) but the directory could not be synced:
// readers see the new file, a crash may bring back the old one.
class NotDurableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The mode of a new file: exactly these bits, or (nullopt) 0666 less the umask, as any program
// that creates a file gets (the exports, which administrators' tools read).
using FileMode = std::optional<unsigned>;

// Replaces `path` with `content` durably. Throws NotDurableError when only the last step
// failed, std::runtime_error (the old file intact, nothing left behind) otherwise; both name
// the file.
void write_file_atomically(const std::string& path, const std::string& content, FileMode mode);
// Atomically (readers see the old or the new file) but not durably: no fsync, so it is cheap
// under a lock. For files rewritten often and regenerated after a crash anyway.
void replace_file(const std::string& path, const std::string& content, FileMode mode);

// The two halves, for a writer that decides late whether the new content stands (a fenced
// write): stage_durably writes and syncs a new file of its own next to `path` (created with
// O_EXCL, never through a link planted at its name; writers on several hosts sharing a
// directory never write into each other's) and returns its name; publish_durably renames it
// over `path` and syncs the directory (the temporary file is gone either way when it throws).
std::string stage_durably(const std::string& path, const std::string& content, FileMode mode);
void publish_durably(const std::string& staged, const std::string& path);

// For tests: replaces fsync(2) of the files and directories written here (nullptr: fsync).
using FsyncFn = int (*)(int fd, bool directory);
void set_fsync_for_tests(FsyncFn fn);

}  // namespace laas::util
