#include "sdn/reload.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

extern char** environ;

namespace laas::sdn {

namespace {

using Clock = std::chrono::steady_clock;

struct Spawn {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  Spawn() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~Spawn() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

// Its own process group (so a timeout ends what it started too), default signal handling and
// an empty mask whatever the daemon ignores or blocks; stdin and stdout on /dev/null, stderr
// into the pipe.
int start(const std::vector<std::string>& argv, int err_fd, pid_t* pid) {
  Spawn s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&s.actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&s.actions, err_fd, 2);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setflags(&s.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return posix_spawnp(pid, args[0], &s.actions, &s.attr, args.data(), environ);
}

// Appends what the pipe has now; false at end of file (or an error).
bool drain(int fd, std::string& err) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const std::size_t room = kMaxCapture > err.size() ? kMaxCapture - err.size() : 0;
      err.append(buf, std::min(room, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

void record_status(int status, ReloadResult& r) {
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

// SIGTERM to the group, SIGKILL a second later if the program is still there; reaps it.
void stop_group(pid_t pid, ReloadResult& r) {
  ::kill(-pid, SIGTERM);
  int status = 0;
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < until) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return record_status(status, r);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  record_status(status, r);
}

// Reads stderr until the program exits or the deadline. A program that exits while something
// it started still holds its stderr is done when it exits: what is in the pipe is kept.
void watch(pid_t pid, int fd, Clock::time_point deadline, ReloadResult& r) {
  bool open = true;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (open) drain(fd, r.err);
      return record_status(status, r);
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      return stop_group(pid, r);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const int wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 20));
    if (!open) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) > 0) open = drain(fd, r.err);
  }
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

ReloadResult run_reload(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ReloadResult r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "sdn.reload is empty: no program to run";
    return r;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("cannot make a pipe: ") + strerror(errno);
    return r;
  }
  // Our end only: the program's stderr stays a blocking pipe.
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  const auto t0 = Clock::now();
  pid_t pid = -1;
  const int rc = start(argv, fds[1], &pid);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.error = "cannot run " + argv[0] + ": " + strerror(rc);
    return r;
  }
  r.started = true;
  watch(pid, fds[0], t0 + timeout, r);
  ::close(fds[0]);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (r.timed_out)
    r.error = "timed out after " + std::to_string(timeout.count()) + " ms";
  else if (r.signal != 0)
    r.error = std::string("killed by signal ") + strsignal(r.signal);
  else if (r.exit_code != 0)
    r.error = "exit status " + std::to_string(r.exit_code);
  return r;
}

std::string ReloadResult::summary(const std::vector<std::string>& argv) const {
  char took[32];
  std::snprintf(took, sizeof took, "%.2f", seconds);
  std::string out = "reload '" + joined(argv) + "': ";
  out += ok() ? std::string("ok in ") + took + " s" : error;
  std::string text = err;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  for (char& c : text)
    if (c == '\n') c = '|';
  if (!text.empty()) out += "; stderr: " + text;
  return out;
}

}  // namespace laas::sdn
