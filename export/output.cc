#include "export/output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <stdexcept>

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

// A new file next to `path`, created by us (O_EXCL, O_NOFOLLOW: nothing planted at the name
// is opened) with mode 0666 less the umask, owned by the caller: nothing of a file it replaces
// -- owner, set-id bits -- is carried over. Returns its descriptor; `tmp` gets its name.
int create_temporary(const std::string& dir, const std::string& base, std::string* tmp) {
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
    *tmp = dir + "/." + base + ".laas-" + suffix;
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes `content` into a new file and renames it over `path` (a new inode: a reader holding
// the old file keeps the old content), then syncs the directory.
void replace_atomically(const std::string& path, const std::string& content) {
  const auto slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp;
  const int fd = create_temporary(dir, base, &tmp);
  if (fd < 0) fail(path, "creating a temporary file in " + dir, errno);
  auto undo = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what, err);
  };
  if (int err = write_all(fd, content)) undo("write", err);
  if (::fsync(fd) != 0) undo("fsync", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "close", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "rename", err);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail(path, "opening its directory to fsync it", errno);
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0) fail(path, "fsync of its directory", err);
}

}  // namespace

void write_output_file(const std::string& path, const std::string& content) {
  if (path.empty()) throw std::runtime_error("cannot write an empty path");
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) fail(path, "lstat", errno);
    replace_atomically(path, content);
    return;
  }
  // A link may have been planted to make us write where it points (run as root, into a
  // directory others can write): name the file itself.
  if (S_ISLNK(st.st_mode))
    throw std::runtime_error("cannot write " + path +
                             ": it is a symbolic link; give the path of the file itself");
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path + ": is a directory");
  if (S_ISREG(st.st_mode))
    replace_atomically(path, content);
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
