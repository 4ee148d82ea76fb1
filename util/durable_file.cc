#include "util/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace laas::util {
namespace {

std::atomic<FsyncFn> fsync_hook{nullptr};

int sync_fd(int fd, bool directory) {
  const FsyncFn hook = fsync_hook.load();
  return hook ? hook(fd, directory) : ::fsync(fd);
}

std::string errno_text(int err) { return std::strerror(err); }

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A new file beside `path`, `.NAME.laas-XXXXXXXX`, created by us with O_EXCL | O_NOFOLLOW:
// nothing planted at the name is opened, and nothing of a file it replaces (owner, set-id
// bits) is carried over. Sets `tmp`; returns the descriptor or -1 (errno set).
int create_beside(const std::string& path, FileMode mode, std::string* tmp) {
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
    *tmp = directory_of(path) + "/." + base + ".laas-" + suffix;
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          mode ? *mode : 0666);
    if (fd < 0 && errno == EEXIST) continue;
    // The umask took bits of an exact mode away: put them back.
    if (fd >= 0 && mode && ::fchmod(fd, *mode) != 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp->c_str());
      errno = err;
      return -1;
    }
    return fd;
  }
  errno = EEXIST;
  return -1;
}

// write(2) until done; errno, 0 on success.
int write_all(int fd, const std::string& content) {
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

std::string stage(const std::string& path, const std::string& content, FileMode mode,
                  bool durable) {
  std::string tmp;
  const int fd = create_beside(path, mode, &tmp);
  if (fd < 0)
    throw std::runtime_error("cannot create a new file beside " + path + " (" + tmp +
                             "): " + errno_text(errno));
  int err = write_all(fd, content);
  const char* step = "write";
  if (!err && durable && sync_fd(fd, false) != 0) {
    err = errno;
    step = "fsync";
  }
  if (::close(fd) != 0 && !err) {
    err = errno;
    step = "close";
  }
  if (err) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + step + " of " + tmp + ": " +
                             errno_text(err));
  }
  return tmp;
}

void publish(const std::string& staged, const std::string& path, bool durable) {
  if (::rename(staged.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(staged.c_str());
    throw std::runtime_error("cannot replace " + path + ": " + errno_text(err));
  }
  if (!durable) return;
  // The rename is durable only once the directory entry is on disk. From here on the new
  // content is what readers see: failures say so.
  const std::string directory = directory_of(path);
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    throw NotDurableError(path + " was replaced but " + directory +
                          " could not be opened to sync it: " + errno_text(errno));
  const int rc = sync_fd(dir, true);
  const int err = errno;
  ::close(dir);
  if (rc != 0)
    throw NotDurableError(path + " was replaced but " + directory +
                          " could not be synced: " + errno_text(err));
}

}  // namespace

void set_fsync_for_tests(FsyncFn fn) { fsync_hook = fn; }

std::string stage_durably(const std::string& path, const std::string& content, FileMode mode) {
  return stage(path, content, mode, true);
}

void publish_durably(const std::string& staged, const std::string& path) {
  publish(staged, path, true);
}

void write_file_atomically(const std::string& path, const std::string& content, FileMode mode) {
  publish(stage(path, content, mode, true), path, true);
}

void replace_file(const std::string& path, const std::string& content, FileMode mode) {
  publish(stage(path, content, mode, false), path, false);
}

}  // namespace laas::util
