// Writing export files where `laasctl export -o` is told to: administrators point it at live
// configuration (/etc/opensm/partitions.conf, which OpenSM re-reads at any heavy sweep and
// treats as "everyone a full member" when it does not parse), so a reader must never see a
// half-written file, and a failed write must never look like success.
#pragma once

#include <map>
#include <string>

namespace laas::exports {

// Replaces `path` with `content`. A regular file (or a new one; a symlink is followed to its
// target) is written to a temporary file in the same directory, fsync'ed, renamed over it
// (mode and, where permitted, owner kept; 0644 for a new file) and the directory fsync'ed.
// Anything else -- a character device such as /dev/stdout or /dev/full, a FIFO -- cannot be
// replaced by rename: it is written in place, every write, the fsync (where the device
// supports one) and the close checked. Throws std::runtime_error "cannot write PATH: reason";
// a regular file is then left as it was.
void write_output_file(const std::string& path, const std::string& content);

// Writes each file (name -> content) into directory `dir`, created (mode 0755) if missing,
// each one atomically as above. Throws std::runtime_error naming the directory or file.
void write_output_dir(const std::string& dir, const std::map<std::string, std::string>& files);

}  // namespace laas::exports
