// One request, one reply over the control socket.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "service/protocol.h"

namespace laas::ctl {

// The exit statuses and their table live with the protocol (service/protocol.h).
using service::ExitStatus;
using service::kExitBusy;
using service::kExitInternal;
using service::kExitNotMaster;
using service::kExitOk;
using service::kExitPermission;
using service::kExitRefused;
using service::kExitStatuses;
using service::kExitTimeout;
using service::kExitUnreachable;
using service::kExitUsage;
using service::kMaxWaitMs;

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
