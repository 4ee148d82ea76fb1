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
// an empty mask whatever the daemon ignores or blocks; stdin on /dev/null, stdout into its
// pipe (out_fd; -1: /dev/null), stderr into the other.
int start(const std::vector<std::string>& argv, int out_fd, int err_fd, pid_t* pid) {
  Spawn s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2(&s.actions, out_fd, 1);
  else
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

// One pipe from the program: its read end (-1: closed or none), what came, how much may.
struct Pipe {
  int fd = -1;
  std::string* text = nullptr;
  std::size_t limit = 0;
  bool* cut = nullptr;
};

// Appends what the pipe has now; false at end of file (or an error).
bool drain(const Pipe& pipe) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(pipe.fd, buf, sizeof buf);
    if (n > 0) {
      std::string& text = *pipe.text;
      const std::size_t room = pipe.limit > text.size() ? pipe.limit - text.size() : 0;
      if (room < static_cast<std::size_t>(n) && pipe.cut) *pipe.cut = true;
      text.append(buf, std::min(room, static_cast<std::size_t>(n)));
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

// Reads the pipes until the program exits or the deadline. A program that exits while
// something it started still holds a pipe is done when it exits: what is in the pipe is kept.
void watch(pid_t pid, Pipe (&pipes)[2], Clock::time_point deadline, ReloadResult& r) {
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      for (auto& p : pipes)
        if (p.fd >= 0) drain(p);
      return record_status(status, r);
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      return stop_group(pid, r);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const int wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 20));
    pollfd fds[2];
    nfds_t n = 0;
    for (auto& p : pipes)
      if (p.fd >= 0) fds[n++] = {p.fd, POLLIN, 0};
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    if (::poll(fds, n, wait_ms) <= 0) continue;
    for (auto& p : pipes)
      if (p.fd >= 0 && !drain(p)) p.fd = -1;  // closed by run(), not here
  }
}

// A pipe whose write end goes to the program (close-on-exec here; the spawn dup2s it) and
// whose read end, ours, does not block; false with `error` set when it cannot be made.
bool make_pipe(int fds[2], std::string& error) {
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("cannot make a pipe: ") + strerror(errno);
    return false;
  }
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return true;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

namespace {

ReloadResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                 bool capture) {
  ReloadResult r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "no program to run (the command is empty)";
    return r;
  }
  int err[2] = {-1, -1}, out[2] = {-1, -1};
  if (!make_pipe(err, r.error)) return r;
  if (capture && !make_pipe(out, r.error)) {
    ::close(err[0]);
    ::close(err[1]);
    return r;
  }
  const auto t0 = Clock::now();
  pid_t pid = -1;
  const int rc = start(argv, out[1], err[1], &pid);
  ::close(err[1]);
  if (out[1] >= 0) ::close(out[1]);
  Pipe pipes[2] = {{err[0], &r.err, kMaxCapture, nullptr},
                   {out[0], &r.out, kMaxOutput, &r.out_cut}};
  if (rc == 0) {
    r.started = true;
    watch(pid, pipes, t0 + timeout, r);
  }
  ::close(err[0]);
  if (out[0] >= 0) ::close(out[0]);
  if (rc != 0) {
    r.error = "cannot run " + argv[0] + ": " + strerror(rc);
    return r;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (r.timed_out)
    r.error = "timed out after " + std::to_string(timeout.count()) + " ms";
  else if (r.signal != 0)
    r.error = std::string("killed by signal ") + strsignal(r.signal);
  else if (r.exit_code != 0)
    r.error = "exit status " + std::to_string(r.exit_code);
  return r;
}

}  // namespace

ReloadResult run_reload(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ReloadResult r = run(argv, timeout, false);
  if (argv.empty() || argv[0].empty()) r.error = "sdn.reload is empty: no program to run";
  return r;
}

ReloadResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  return run(argv, timeout, true);
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) --end;
  const std::size_t begin = text.rfind('\n', end == 0 ? 0 : end - 1);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1));
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
