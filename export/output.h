// Writing export files where `laasctl export -o` is told to: administrators point it at live
// configuration (/etc/opensm/partitions.conf, which OpenSM re-reads at any heavy sweep and
// treats as "everyone a full member" when it does not parse), so a reader must never see a
// half-written file, and a failed write must never look like success.
#pragma once

#include <map>
#include <string>

namespace laas::exports {

// Replaces `path` with `content`. A regular file (or a missing one) is replaced by a new file:
// written to a temporary file in the same directory (created O_EXCL|O_NOFOLLOW, mode 0666 less
// the umask, owned by the caller -- never the old file's owner or set-id bits), fsync'ed,
// renamed over it and the directory fsync'ed. A symbolic link is refused (it may have been
// planted to redirect the write), so are sockets and block devices. A character device such as
// /dev/full or a FIFO cannot be replaced by rename: it is written in place, every write, the
// fsync (where the device supports one) and the close checked. Throws std::runtime_error
// "cannot write PATH: reason"; a regular file is then left as it was.
void write_output_file(const std::string& path, const std::string& content);

// Writes each file (name -> content) into directory `dir`, created (mode 0755) if missing,
// each one atomically as above; `dir` itself must not be a symbolic link. Throws
// std::runtime_error naming the directory or file.
void write_output_dir(const std::string& dir, const std::map<std::string, std::string>& files);

}  // namespace laas::exports
