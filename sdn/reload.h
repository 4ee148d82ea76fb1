// Telling the SM to read the new files: `sdn.reload` is an argv (`kill -HUP PID`, `systemctl
// reload opensm`, a UFM call), run without a shell -- nothing in it is expanded or re-split, so
// no value in the configuration can turn into a second command.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace laas::sdn {

struct ReloadResult {
  bool started = false;    // the program ran (false: missing, not executable, empty argv)
  bool timed_out = false;  // killed (its process group) after the timeout
  int exit_code = -1;      // its exit status when it exited, else -1
  int signal = 0;          // the signal that ended it, 0 if it exited
  std::string error;       // why it did not start, or why it failed, one line
  std::string err;         // its standard error (at most kMaxCapture bytes, then cut)
  std::string out;         // its standard output, when asked for (run_command)
  bool out_cut = false;    // the output passed kMaxOutput bytes: the rest was dropped
  double seconds = 0;      // how long it ran
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // One line for the log: "reload 'kill -HUP 42': ok in 0.01 s" or why not, with its stderr.
  std::string summary(const std::vector<std::string>& argv) const;
};

constexpr std::size_t kMaxCapture = 16 * 1024;
// ibnetdiscover's output of a fabric of some ten thousand nodes is a few MiB.
constexpr std::size_t kMaxOutput = 256 * 1024 * 1024;

// Runs argv[0] (looked up in PATH when it has no '/') with argv, standard input /dev/null,
// standard output discarded and standard error captured, in a process group of its own. At
// `timeout` the group gets SIGTERM, a second later SIGKILL. Never throws for what the program
// does; the result says it.
ReloadResult run_reload(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// The same, with standard output captured into `out` (at most kMaxOutput bytes) instead of
// discarded: for a tool whose output is the answer (ibnetdiscover, sdn/discovery.h).
ReloadResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Its standard error's last non-empty line ("" when none): what a failing tool said last.
std::string last_line(const std::string& text);

}  // namespace laas::sdn
