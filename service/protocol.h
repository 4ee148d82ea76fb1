// The control socket's protocol, as both ends speak it: the service (service/) and laasctl
// include this one header, so a method name, an error code, the exit status laasctl returns for
// it, the socket's default path or a limit is written once. Plain constants only: laasctl
// includes it without linking the service.
#pragma once

#include <cstddef>
#include <string>

namespace laas::service {

constexpr int kProtocolVersion = 1;
// Where OpenSM's plugin serves the socket unless laas.yaml says otherwise (laasctl -s).
constexpr const char* kDefaultSocketPath = "/run/opensm/laas.sock";
constexpr std::size_t kMaxRequestBytes = 64 * 1024;
// The longest a request may ask to wait for OpenSM to re-route (timeout_ms).
constexpr int kMaxWaitMs = 600000;

// The methods a request may name ("method"), as laasctl sends them.
namespace method {
constexpr const char* kStatus = "status";
constexpr const char* kTopology = "topology";
constexpr const char* kTenantAdd = "tenant.add";
constexpr const char* kTenantRemove = "tenant.remove";
constexpr const char* kTenantList = "tenant.list";
constexpr const char* kTenantGet = "tenant.get";
constexpr const char* kTenantPlan = "tenant.plan";
constexpr const char* kHostList = "host.list";
constexpr const char* kHostGet = "host.get";
constexpr const char* kHostDrain = "host.drain";
constexpr const char* kHostResume = "host.resume";
constexpr const char* kHostAccept = "host.accept";
constexpr const char* kLinkList = "link.list";
constexpr const char* kLinkDrain = "link.drain";
constexpr const char* kLinkResume = "link.resume";
constexpr const char* kSwitchList = "switch.list";
constexpr const char* kSwitchDrain = "switch.drain";
constexpr const char* kSwitchResume = "switch.resume";
constexpr const char* kSmList = "sm.list";
constexpr const char* kSmAccept = "sm.accept";
constexpr const char* kSmForget = "sm.forget";
constexpr const char* kMetrics = "metrics";
constexpr const char* kAudit = "audit";
constexpr const char* kExport = "export";
// The tenant state's changes, long-polled: {"since": N, "wait_ms": T} (service/events.h).
constexpr const char* kEvents = "events";
constexpr const char* kReroute = "reroute";
}  // namespace method

// sysexits-style codes laasctl returns: one code per condition, whichever side notices it.
constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;       // the service said no (no room, no such tenant, ...)
constexpr int kExitUsage = 2;         // bad command line or bad_request
constexpr int kExitNotMaster = 3;     // this SM is not the master: the message names it
constexpr int kExitUnreachable = 69;  // EX_UNAVAILABLE: no service at the socket, or it hung up
constexpr int kExitInternal = 70;     // EX_SOFTWARE: the service failed (e.g. state not saved)
constexpr int kExitBusy = 75;         // EX_TEMPFAIL: try again (see kExitStatuses)
constexpr int kExitPermission = 77;   // EX_NOPERM
constexpr int kExitTimeout = 124;     // no reply within --timeout (outcome unknown), as timeout(1)

// The one table of laasctl's exit statuses: `laasctl --help` prints it, and laasctl(8)'s EXIT
// STATUS lists the same codes (the test admin.exit_codes compares them). 75 is every "try again".
struct ExitStatus {
  int code;
  const char* meaning;
};
inline constexpr ExitStatus kExitStatuses[] = {
    {kExitOk, "done"},
    {kExitRefused,
     "refused: no placement, unknown or duplicate tenant, no fat-tree recognized, state blocked"},
    {kExitUsage, "usage: bad arguments or a malformed request"},
    {kExitNotMaster, "not the master SM: the message names the master; send the change there"},
    {kExitUnreachable, "the service is unreachable, or hung up without an answer"},
    {kExitInternal, "the service failed (state not saved): the message says if the change is made"},
    {kExitBusy,
     "try again: a connection or audit limit, a master not taken over yet, a state directory "
     "not answering"},
    {kExitPermission, "permission denied (groups laas and laas-read)"},
    {kExitTimeout, "no reply within --timeout: the change may or may not be made"},
};

// The error codes of a reply ({"ok": false, "error": {"code", "message"}}).
namespace error {
constexpr const char* kBadRequest = "bad_request";
constexpr const char* kRefused = "refused";
constexpr const char* kNotFound = "not_found";
constexpr const char* kDuplicate = "duplicate";
constexpr const char* kUnavailable = "unavailable";  // no fat-tree, state blocked
constexpr const char* kPermission = "permission_denied";
constexpr const char* kInternal = "internal";
// A limit reached, not taken over yet, state directory hung: try again.
constexpr const char* kBusy = "busy";
constexpr const char* kNotMaster = "not_master";  // ask the master SM (named)
}  // namespace error

// Each error code with the exit status laasctl returns for it.
struct ErrorExit {
  const char* code;
  int exit_status;
};
inline constexpr ErrorExit kErrorExits[] = {
    {error::kBadRequest, kExitUsage},    {error::kRefused, kExitRefused},
    {error::kNotFound, kExitRefused},    {error::kDuplicate, kExitRefused},
    {error::kUnavailable, kExitRefused}, {error::kPermission, kExitPermission},
    {error::kInternal, kExitInternal},   {error::kBusy, kExitBusy},
    {error::kNotMaster, kExitNotMaster},
};

// The exit status for a reply's error code; a code this side does not know is a refusal.
inline int exit_status_for(const std::string& code) {
  for (const auto& e : kErrorExits)
    if (code == e.code) return e.exit_status;
  return kExitRefused;
}

}  // namespace laas::service
