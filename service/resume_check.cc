#include "service/resume_check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

// posix_spawn_file_actions_addclosefrom_np and _addchdir_np.
#if !defined(__GLIBC__) || __GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 34)
#error "resume_check needs glibc 2.34 or later (posix_spawn_file_actions_addclosefrom_np)"
#endif

namespace laas::service {
namespace {

constexpr size_t kMaxOutput = 4096;
char kPath[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
char kLang[] = "LANG=C";

bool safe_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '@' || c == '+' || c == '-';
}

std::string mode_text(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Who but root (or `self`) may change what this file or directory holds; "" when nobody.
// Others may add entries to a sticky directory (/tmp) but not replace one they do not own,
// and the owner of the next step on the path is checked on its own.
std::string other_writers(const struct stat& st, uid_t self) {
  if (st.st_uid != 0 && st.st_uid != self)
    return "uid " + std::to_string(st.st_uid) + " (its owner)";
  if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)) return "";
  if (st.st_mode & S_IWOTH) return "everyone (mode " + mode_text(st.st_mode) + ")";
  if (st.st_mode & S_IWGRP)
    return "group " + std::to_string(st.st_gid) + " (mode " + mode_text(st.st_mode) + ")";
  return "";
}

// "/a/b/c" -> "/a/b", "/a", "/".
std::vector<std::string> directories_of(std::string path) {
  std::vector<std::string> out;
  for (auto slash = path.find_last_of('/'); slash != std::string::npos;
       slash = path.find_last_of('/')) {
    path = slash == 0 ? "/" : path.substr(0, slash);
    out.push_back(path);
    if (path == "/") break;
  }
  return out;
}

// The file actions and attributes of one spawn, released on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// The child's descriptors: stdin /dev/null, stdout and stderr the pipe `out`, nothing else.
// OpenSM and its libraries open descriptors without O_CLOEXEC, and its other threads open more
// while this one spawns, so marking ours close-on-exec is not enough: every descriptor from 3
// up is closed in the child itself, after the dup2s and before exec (glibc does it with
// close_range(2), or by walking /proc/self/fd where the kernel lacks it).
int set_descriptors(posix_spawn_file_actions_t* a, int out) {
  int rc;
  if ((rc = posix_spawn_file_actions_adddup2(a, out, 1)) != 0) return rc;
  if ((rc = posix_spawn_file_actions_adddup2(a, out, 2)) != 0) return rc;
  if ((rc = posix_spawn_file_actions_addopen(a, 0, "/dev/null", O_RDONLY, 0)) != 0) return rc;
  if ((rc = posix_spawn_file_actions_addclosefrom_np(a, 3)) != 0) return rc;
  return posix_spawn_file_actions_addchdir_np(a, "/");  // not wherever OpenSM was started
}

// A process group of its own (its pid), so that whatever it starts is killed with it; every
// signal at its default and none blocked, since exec keeps what OpenSM's threads ignore or
// block.
int set_attributes(posix_spawnattr_t* attr) {
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  int rc;
  if ((rc = posix_spawnattr_setflags(
           attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0)
    return rc;
  if ((rc = posix_spawnattr_setpgroup(attr, 0)) != 0) return rc;
  if ((rc = posix_spawnattr_setsigmask(attr, &none)) != 0) return rc;
  return posix_spawnattr_setsigdefault(attr, &all);
}

// A pipe end that landed on 0, 1 or 2 (OpenSM started with one of them closed) would be
// overwritten by the child's own: moved above them. False when it cannot be.
bool above_stdio(int& fd) {
  if (fd > 2) return true;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  fd = moved;
  return moved >= 0;
}

enum class Outcome { kExited, kTimedOut, kLost, kCancelled };

// Whether the child has exited, without reaping it: until it is reaped its pid, and so its
// process group's id, cannot be reused, and the group can still be killed safely. kLost: it
// cannot be waited for (SIGCHLD ignored, the kernel reaped it), its pid may be anyone's now.
std::optional<Outcome> ended(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD ? std::optional<Outcome>(Outcome::kLost) : std::nullopt;
  if (info.si_pid == pid) return Outcome::kExited;
  return std::nullopt;
}

// A descriptor readable once the child has exited (pidfd, Linux 5.3), or -1.
int exit_descriptor(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// Reads what the pipe holds; false at its end. Beyond kMaxOutput the output is read and
// dropped, so that a talkative check never blocks on a full pipe.
bool read_some(int fd, std::string* output) {
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  if (output->size() < kMaxOutput)
    output->append(buf, std::min(static_cast<size_t>(n), kMaxOutput - output->size()));
  return true;
}

// What is left in the pipe once the child has exited (bounded: what it started may write on).
void drain(int fd, std::string* output) {
  for (int i = 0; i < 64; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !read_some(fd, output)) return;
  }
}

using Clock = std::chrono::steady_clock;

// Reads the child's output until it exits, the deadline passes or `cancel` is set.
Outcome wait_for(pid_t pid, int out, int timeout_ms, const CancelSignal* cancel,
                 std::string* output) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const int exit_fd = exit_descriptor(pid);
  const int cancel_fd = cancel ? cancel->fd() : -1;
  bool reading = true;
  Outcome outcome = Outcome::kTimedOut;
  for (;;) {
    if (const auto end = ended(pid)) {
      if (reading) drain(out, output);
      outcome = *end;
      break;
    }
    if (cancel && cancel->cancelled()) {
      outcome = Outcome::kCancelled;
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    std::vector<pollfd> fds;
    if (reading) fds.push_back({out, POLLIN, 0});
    if (exit_fd >= 0) fds.push_back({exit_fd, POLLIN, 0});
    if (cancel_fd >= 0) fds.push_back({cancel_fd, POLLIN, 0});
    // Without a pidfd its exit is looked for every 50 ms; without the cancel descriptor the
    // flag every 100 ms.
    long wait = exit_fd >= 0 ? left : std::min<long>(left, 50);
    if (cancel && cancel_fd < 0) wait = std::min<long>(wait, 100);
    const int ready = poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(wait, INT_MAX)));
    if (ready > 0 && reading && fds[0].revents) reading = read_some(out, output);
  }
  if (exit_fd >= 0) close(exit_fd);
  return outcome;
}

}  // namespace

CancelSignal::CancelSignal() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

CancelSignal::~CancelSignal() {
  if (fd_ >= 0) close(fd_);
}

void CancelSignal::cancel() {
  cancelled_ = true;
  // Never read: the count stays above zero, so the descriptor stays readable for every check.
  const std::uint64_t one = 1;
  if (fd_ >= 0) (void)!write(fd_, &one, sizeof one);
}

std::string check_host_name(const std::string& node_description) {
  const std::string& n = node_description;
  if (n.empty() || n.front() == '-' || !std::all_of(n.begin(), n.end(), safe_name_char))
    return "unnamed";
  return n;
}

std::string check_program_refusal(const std::string& program) {
  const std::string head = "resume_check " + program;
  char buf[PATH_MAX];
  if (program.empty() || program.front() != '/') return head + " is not an absolute path: refused";
  if (!realpath(program.c_str(), buf))
    return head + " cannot be resolved (" + std::strerror(errno) + "): refused";
  const std::string resolved = buf;
  struct stat st;
  if (stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return head + " is not a regular file: refused";
  // Root, or the user the service runs as when that is not root (tests).
  const uid_t self = geteuid();
  if (const auto who = other_writers(st, self); !who.empty())
    return head + " is writable by " + who + ": refused";
  // Whoever may write a directory on the path may put another program in its place.
  for (const auto& path : {program, resolved})
    for (const auto& dir : directories_of(path)) {
      if (stat(dir.c_str(), &st) != 0)
        return head + ": " + dir + " cannot be read (" + std::strerror(errno) + "): refused";
      if (const auto who = other_writers(st, self); !who.empty())
        return head + " is writable by " + who + " through its directory " + dir + ": refused";
    }
  return "";
}

CheckRun run_check(const std::string& program, const std::string& guid, const std::string& name,
                   int timeout_ms, const CancelSignal* cancel) {
  CheckRun r;
  if (cancel && cancel->cancelled()) {
    r.cancelled = true;
    r.output = "not run: the service is stopping";
    return r;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.output = std::string("cannot make a pipe: ") + std::strerror(errno);
    return r;
  }
  int& in = pipe_fds[0];
  int& out = pipe_fds[1];
  pid_t pid = -1;
  int rc = above_stdio(in) && above_stdio(out) ? 0 : errno;
  if (rc == 0) {
    SpawnSetup setup;
    std::string arg0 = program, dashes = "--", arg_guid = guid, arg_name = name;
    char* argv[] = {arg0.data(), dashes.data(), arg_guid.data(), arg_name.data(), nullptr};
    char* envp[] = {kPath, kLang, nullptr};
    rc = set_descriptors(&setup.actions, out);
    if (rc == 0) rc = set_attributes(&setup.attr);
    if (rc == 0) rc = posix_spawn(&pid, program.c_str(), &setup.actions, &setup.attr, argv, envp);
  }
  if (out >= 0) close(out);
  if (rc != 0) {
    if (in >= 0) close(in);
    r.output = "cannot run it: " + std::string(std::strerror(rc));
    return r;
  }
  const Outcome outcome = wait_for(pid, in, timeout_ms, cancel, &r.output);
  close(in);
  if (outcome == Outcome::kLost) {
    r.output += "its exit status was lost (is SIGCHLD ignored?)";
    return r;
  }
  // Its whole group goes: on a timeout the check and what it started, otherwise whatever it
  // left behind. The check is not reaped yet, so the group's id is still its own.
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (outcome == Outcome::kTimedOut) {
    r.output =
        "no answer within " + std::to_string(timeout_ms) + " ms (killed with its process group)";
    return r;
  }
  if (outcome == Outcome::kCancelled) {
    r.cancelled = true;
    r.output = "interrupted: the service is stopping (killed with its process group)";
    return r;
  }
  if (WIFEXITED(status)) {
    r.status = WEXITSTATUS(status);
  } else {
    r.output += "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return r;
}

}  // namespace laas::service
