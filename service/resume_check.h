// The administrator's resume_check, run as a hardened call. The check decides
// whether a drained host returns to the free pool, and runs with OpenSM's rights; the host's
// own root controls its node description. So:
//   - it is called as `CHECK -- PORT_GUID HOST_NAME`: the GUID identifies the host; the name is
//     only the host's own claim, passed when it is a plain name (check_host_name), after "--"
//     so that no name can become an option;
//   - it is spawned, not forked from OpenSM, with stdin on /dev/null, stdout and stderr on a
//     pipe, no other descriptor, a minimal environment, in a process group of its own that is
//     killed whole when it is done or times out (run_check);
//   - a program that anyone but root could change is never run (check_program_refusal).
#pragma once

#include <atomic>
#include <string>

namespace laas::service {

// The name to pass for a host: its node description when it is made of [A-Za-z0-9._:@+-] and
// does not start with '-', else "unnamed". Resumes never depend on it: hosts are resumed by
// GUID, and a check must identify them by GUID, since a host's root may claim any name.
std::string check_host_name(const std::string& node_description);

// Why `program` must not be run as the resume check ("resume_check PATH is writable by ...:
// refused"), or "" when it may: it must be a regular file, and it and every directory on its
// path (as given and resolved) must be owned by root and writable by nobody else -- a directory
// others may write is accepted only with the sticky bit (/tmp). Not running as root (tests),
// files of this process's user are accepted as well.
std::string check_program_refusal(const std::string& program);

// Set once, for good, when the service stops: a running check is killed at once rather than
// keeping its request (and the shutdown of OpenSM waiting for that request) for up to
// resume_check_timeout_s. A check watches the descriptor; without one (eventfd refused, out
// of descriptors) it looks at the flag every 100 ms.
class CancelSignal {
 public:
  CancelSignal();
  ~CancelSignal();
  CancelSignal(const CancelSignal&) = delete;
  CancelSignal& operator=(const CancelSignal&) = delete;
  void cancel();
  bool cancelled() const { return cancelled_; }
  int fd() const { return fd_; }  // readable once cancelled; -1: none

 private:
  int fd_ = -1;
  std::atomic<bool> cancelled_{false};
};

struct CheckRun {
  int status = -1;         // the exit status; -1: could not run, timed out or killed by a signal
  std::string output;      // the first 4 KiB of its stdout and stderr, or why it did not run
  bool cancelled = false;  // killed (or never started) because `cancel` was set
};

// Runs `program -- guid name` as the header says and waits at most `timeout_ms` for it, or
// until `cancel` (when given) is set.
CheckRun run_check(const std::string& program, const std::string& guid, const std::string& name,
                   int timeout_ms, const CancelSignal* cancel = nullptr);

}  // namespace laas::service
