#include "export/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
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

// `owner`: the replaced file's (uid, gid), kept where we may (root); nullptr for a new file.
void replace_atomically(const std::string& path, const std::string& content, mode_t mode,
                        const struct stat* owner) {
  const auto slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = dir + "/." + base + ".laas-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(path, "creating a temporary file in " + dir, errno);
  auto undo = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what, err);
  };
  if (::fchmod(fd, mode) != 0) undo("fchmod", errno);
  if (owner && (owner->st_uid != ::geteuid() || owner->st_gid != ::getegid()) &&
      ::fchown(fd, owner->st_uid, owner->st_gid) != 0 && errno != EPERM)
    undo("fchown", errno);
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
  std::string target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved)) target = resolved;  // dangling: replace the link
  }
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) fail(path, "stat", errno);
    replace_atomically(target, content, 0644, nullptr);
    return;
  }
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path + ": is a directory");
  if (S_ISREG(st.st_mode))
    replace_atomically(target, content, st.st_mode & 07777, &st);
  else
    write_in_place(target, content);
}

void write_output_dir(const std::string& dir, const std::map<std::string, std::string>& files) {
  if (dir.empty()) throw std::runtime_error("cannot write into an empty directory name");
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || ::mkdir(dir.c_str(), 0755) != 0)
      throw std::runtime_error("cannot create directory " + dir + ": " + strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error("cannot write into " + dir + ": not a directory");
  }
  for (const auto& [name, content] : files) write_output_file(dir + "/" + name, content);
}

}  // namespace laas::exports
