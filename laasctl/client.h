// One request, one reply over the control socket.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace laas::ctl {

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
// "Exit status:" and one line per code, for --help.
std::string exit_status_help();

// How long the service may wait for OpenSM to re-route: the client's own timeout less a
// margin for the reply to arrive, bounded by what the service accepts (timeout_ms).
int server_wait_ms(int client_timeout_ms);

class ClientError : public std::runtime_error {
 public:
  ClientError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Sends {"v":1,"id":..,"method":..,"params":..} and returns the reply object.
// Throws ClientError (unreachable / permission) when the socket cannot be used.
nlohmann::json call(const std::string& socket_path, const std::string& method,
                    const nlohmann::json& params, int timeout_ms);

// Sends `lines` verbatim (a debugging aid: malformed requests included) and returns every
// reply line received until the service closes the connection or stays silent for timeout_ms.
std::string call_raw(const std::string& socket_path, const std::string& lines, int timeout_ms);

// The exit code for an error reply's code.
int exit_code_for(const std::string& error_code);

}  // namespace laas::ctl
