#include "export/output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "util/durable_file.h"

namespace laas::exports {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw std::runtime_error("cannot write " + path + ": " + what + (what.empty() ? "" : ": ") +
                           strerror(err));
}

// write(2) until done; returns errno, 0 on success.
int write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

void write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0) fail(path, "open", errno);
  if (int err = write_all(fd, content)) {
    ::close(fd);
    fail(path, "write", err);
  }
  // Devices and pipes without fsync answer EINVAL/EROFS/ENOTSUP: nothing more to flush there.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) {
    const int err = errno;
    ::close(fd);
    fail(path, "fsync", err);
  }
  if (::close(fd) != 0) fail(path, "close", errno);
}

}  // namespace

void write_output_file(const std::string& path, const std::string& content) {
  if (path.empty()) throw std::runtime_error("cannot write an empty path");
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) fail(path, "lstat", errno);
    util::write_file_atomically(path, content, std::nullopt);
    return;
  }
  // A link may have been planted to make us write where it points (run as root, into a
  // directory others can write): name the file itself.
  if (S_ISLNK(st.st_mode))
    throw std::runtime_error("cannot write " + path +
                             ": it is a symbolic link; give the path of the file itself");
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path + ": is a directory");
  if (S_ISREG(st.st_mode))
    util::write_file_atomically(path, content, std::nullopt);
  else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
    write_in_place(path, content);
  else
    throw std::runtime_error("cannot write " + path +
                             ": not a regular file, character device or FIFO");
}

void write_output_dir(const std::string& dir, const std::map<std::string, std::string>& files) {
  if (dir.empty()) throw std::runtime_error("cannot write into an empty directory name");
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || ::mkdir(dir.c_str(), 0755) != 0)
      throw std::runtime_error("cannot create directory " + dir + ": " + strerror(errno));
  } else if (S_ISLNK(st.st_mode)) {
    throw std::runtime_error("cannot write into " + dir +
                             ": it is a symbolic link; give the path of the directory itself");
  } else if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error("cannot write into " + dir + ": not a directory");
  }
  for (const auto& [name, content] : files) write_output_file(dir + "/" + name, content);
}

}  // namespace laas::exports
